package provider

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
)

// A backend's failed request is worded as the backend worded it; one it did not word names the
// object and the store's answer; a request keeps what the failure means for errors.Is.
func TestStoreError(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "kueue.x-k8s.io", Resource: "x"}, "n", errors.New("no"))
	for _, c := range []struct {
		err  error
		want storeDiag
	}{
		{&backend.RequestError{Op: backend.OpRead, Kind: "ClusterQueue", Name: "cq", Err: forbidden,
			Problem: backend.Problem{Summary: "Cannot read the ClusterQueue", Detail: "worded by the backend"}},
			storeDiag{"Cannot read the ClusterQueue", "worded by the backend"}},
		{&backend.RequestError{Op: backend.OpRead, Kind: "SageMaker HyperPod cluster", Name: "arn", Err: errors.New("boom")},
			storeDiag{"Cannot read the SageMaker HyperPod cluster", `SageMaker HyperPod cluster "arn": boom.`}},
		{fmt.Errorf("wrapped: %w", backend.Problem{Summary: "S", Detail: "D"}), storeDiag{"S", "D"}},
		{errors.New("plain"), storeDiag{"Request failed", "plain"}},
	} {
		if got := storeError(c.err); got != c.want {
			t.Errorf("storeError(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	exists := &backend.RequestError{Op: backend.OpCreate, Kind: "ClusterQueue", Name: "cq", Err: forbidden, Outcome: backend.ErrExists}
	if !errors.Is(exists, backend.ErrExists) || errors.Is(exists, backend.ErrOutcomeUnknown) || !apierrors.IsForbidden(exists) {
		t.Errorf("errors.Is does not see the outcome and the cause of %v", exists)
	}
	if storeCause(exists) != forbidden {
		t.Errorf("storeCause(%v) = %v, want the request's own error", exists, storeCause(exists))
	}
}

// A write refused over a stale version names the object by its kind, which only the error
// carries (the record in state has the id and the version).
func TestChangedOutside(t *testing.T) {
	err := &backend.RequestError{Op: backend.OpApply, Kind: "SageMaker cluster scheduler config", Name: "abcdefabcdef",
		Err: errors.New("ConflictException"), Outcome: backend.ErrChanged}
	got := changedOutside("Cluster scheduler config changed outside Terraform", err, &backend.Record{ID: "abcdefabcdef", Version: "2"})
	want := "SageMaker cluster scheduler config abcdefabcdef was changed outside Terraform since the last refresh (it is no " +
		"longer at version 2), so this apply would overwrite that change blindly. Run terraform plan again to see the change, then apply."
	if got.Summary != "Cluster scheduler config changed outside Terraform" || got.Detail != want {
		t.Errorf("changedOutside = %q: %q\nwant the summary given and %q", got.Summary, got.Detail, want)
	}
}
