package provider

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// The constructors word each error as the hand-written messages they replaced did: tests and
// users match the permission hint ("need <verb> permission on <resource>").
func TestKubeErrorConstructors(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "kueue.x-k8s.io", Resource: "x"}, "n", errors.New("no"))
	cq, rf := clusterQueueKind.object("", "cq"), resourceFlavorKind.object("", "ml.p5.48xlarge")
	ns, lq := namespaceKind.object("", "hyperpod-ns-a"), localQueueKind.object("hyperpod-ns-a", "lq")
	wpc := priorityClassKind.object("", "training-priority")
	for _, c := range []struct {
		got                   kubeError
		summary, detailAction string
		verb, resource        string
	}{
		{cq.readFailed(forbidden), "Cannot read the ClusterQueue", `Reading ClusterQueue "cq"`, "get", "clusterqueues.kueue.x-k8s.io"},
		{cq.createFailed(forbidden), "Cannot create the ClusterQueue", `Creating ClusterQueue "cq"`, "create", "clusterqueues.kueue.x-k8s.io"},
		{cq.applyFailed(forbidden), "Cannot apply the ClusterQueue", `Server-side apply of ClusterQueue "cq"`, "patch", "clusterqueues.kueue.x-k8s.io"},
		{rf.readFailed(forbidden), "Cannot read the ResourceFlavor", `Reading ResourceFlavor "ml.p5.48xlarge"`, "get", "resourceflavors.kueue.x-k8s.io"},
		{rf.createFailed(forbidden), "Cannot create the ResourceFlavor", `Creating ResourceFlavor "ml.p5.48xlarge"`, "create and patch", "resourceflavors.kueue.x-k8s.io"},
		{ns.readFailed(forbidden), "Cannot read Namespace", `Reading Namespace "hyperpod-ns-a"`, "get", "namespaces"},
		{ns.createFailed(forbidden), "Cannot create Namespace", `Creating Namespace "hyperpod-ns-a"`, "create", "namespaces"},
		{ns.applyFailed(forbidden), "Cannot apply Namespace", `Server-side apply of Namespace "hyperpod-ns-a"`, "patch", "namespaces"},
		{lq.readFailed(forbidden), "Cannot read LocalQueue", fmt.Sprintf(`Reading %s LocalQueue "lq" in namespace "hyperpod-ns-a"`, kueue.GroupVersion), "get", "localqueues.kueue.x-k8s.io"},
		{lq.applyFailed(forbidden), "Cannot apply LocalQueue", fmt.Sprintf(`Server-side apply of %s LocalQueue "lq" in namespace "hyperpod-ns-a"`, kueue.GroupVersion), "create and patch", "localqueues.kueue.x-k8s.io"},
		{wpc.readFailed(forbidden), "Cannot read WorkloadPriorityClass", fmt.Sprintf(`Reading %s WorkloadPriorityClass "training-priority"`, kueue.GroupVersion), "get", "workloadpriorityclasses.kueue.x-k8s.io"},
		{wpc.createFailed(forbidden), "Cannot create WorkloadPriorityClass", `Creating WorkloadPriorityClass "training-priority"`, "create", "workloadpriorityclasses.kueue.x-k8s.io"},
		{wpc.applyFailed(forbidden), "Cannot apply WorkloadPriorityClass", `Server-side apply of WorkloadPriorityClass "training-priority"`, "patch", "workloadpriorityclasses.kueue.x-k8s.io"},
		{wpc.deleteFailed(forbidden), "Cannot delete WorkloadPriorityClass", `Deleting WorkloadPriorityClass "training-priority"`, "delete", "workloadpriorityclasses.kueue.x-k8s.io"},
		{ns.adoptFailed(forbidden), "Cannot adopt Namespace", fmt.Sprintf(`Removing the %s annotation of Namespace "hyperpod-ns-a"`, quota.AnnotationUnconfirmed), "patch", "namespaces"},
	} {
		wantDetail := fmt.Sprintf("%s failed: %s. The provider's credentials need %s permission on %s (see the provider documentation's permissions table).",
			c.detailAction, forbidden, c.verb, c.resource)
		if c.got.summary != c.summary || c.got.detail != wantDetail {
			t.Errorf("got\n  %q\n  %q\nwant\n  %q\n  %q", c.got.summary, c.got.detail, c.summary, wantDetail)
		}
	}
}

// A backend's failed request is worded by the kind it names, as the provider's own requests are,
// and keeps what the failure means for errors.Is.
func TestStoreError(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "kueue.x-k8s.io", Resource: "x"}, "n", errors.New("no"))
	for _, c := range []struct {
		err  error
		want kubeError
	}{
		{&backend.RequestError{Op: backend.OpRead, Kind: "ClusterQueue", Name: "cq", Err: forbidden},
			clusterQueueKind.object("", "cq").readFailed(forbidden)},
		{&backend.RequestError{Op: backend.OpCreate, Kind: "ResourceFlavor", Name: "ml.c5.large", Err: forbidden},
			resourceFlavorKind.object("", "ml.c5.large").createFailed(forbidden)},
		{&backend.RequestError{Op: backend.OpApply, Kind: "WorkloadPriorityClass", Name: "a-priority", Err: forbidden},
			priorityClassKind.object("", "a-priority").applyFailed(forbidden)},
		{&backend.RequestError{Op: backend.OpDelete, Kind: "WorkloadPriorityClass", Name: "a-priority", Err: forbidden},
			priorityClassKind.object("", "a-priority").deleteFailed(forbidden)},
		{backend.Problem{Summary: "S", Detail: "D"}, kubeError{"S", "D"}},
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

// A failed delete on the SageMaker API says the API's reason and what to do: run destroy again
// after fixing the cause, or, when it only ran out of time, raise timeouts.delete.
func TestAPIDeleteError(t *testing.T) {
	failed := &backend.RequestError{Op: backend.OpDelete, Kind: "SageMaker compute quota", Name: "abcdefabcdef",
		Err: errors.New("compute quota abcdefabcdef is DeleteFailed: the team has running tasks")}
	slow := &backend.RequestError{Op: backend.OpDelete, Kind: "SageMaker compute quota", Name: "abcdefabcdef",
		Err: errors.New("compute quota abcdefabcdef is still Deleting after 10m"), Outcome: backend.ErrStillExists}
	for _, c := range []struct {
		err          error
		want, absent string
	}{
		{failed, `SageMaker compute quota "abcdefabcdef": compute quota abcdefabcdef is DeleteFailed: the team has running tasks. ` +
			"It stays in state: fix what the reason names, then run destroy again.", "timeouts.delete"},
		{slow, "within timeouts.delete (10m). It stays in state: run destroy again once SageMaker has deleted it, or raise timeouts.delete.",
			"fix what the reason names"},
	} {
		got := apiDeleteError(c.err, 10*time.Minute)
		if got.summary != "Cannot delete the SageMaker compute quota" || !strings.Contains(got.detail, c.want) || strings.Contains(got.detail, c.absent) {
			t.Errorf("apiDeleteError(%v) = %q: %q\nwant the summary \"Cannot delete the SageMaker compute quota\" and %q, without %q",
				c.err, got.summary, got.detail, c.want, c.absent)
		}
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
	if got.summary != "Cluster scheduler config changed outside Terraform" || got.detail != want {
		t.Errorf("changedOutside = %q: %q\nwant the summary given and %q", got.summary, got.detail, want)
	}
}
