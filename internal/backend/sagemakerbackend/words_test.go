package sagemakerbackend

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/retrypolicy"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// A create answered with server errors is settled by looking the quota up. What cannot be
// settled names the quota, the operation and the API's error code, and says what the look-up
// found, in SageMaker's terms: there is no API server, ClusterQueue or finalizer.
func TestCreateServerErrorIsWordedInSageMakerTerms(t *testing.T) {
	fastRetries := retrypolicy.Settings{MaxAttempts: 2, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond}
	serverError := "InternalFailure: The request processing has failed because of an unknown error, exception or failure."
	for _, tc := range []struct {
		name        string
		faults      func(e *sagemakeremulator.Emulator)
		unknown     bool
		creates     int
		wantDetails []string
	}{
		{
			name: "the look-up fails too",
			faults: func(e *sagemakeremulator.Emulator) {
				e.ServerErrorNext(1000, "CreateComputeQuota", "ListComputeQuotas")
			},
			unknown: true, creates: 1,
			wantDetails: []string{`SageMaker compute quota "ml-quota": SageMaker CreateComputeQuota failed`, serverError,
				"That answer does not say whether SageMaker created the compute quota, and looking it up failed: SageMaker ListComputeQuotas failed"},
		},
		{
			name:    "no create ever lands",
			faults:  func(e *sagemakeremulator.Emulator) { e.ServerErrorNext(1000, "CreateComputeQuota") },
			creates: createRounds,
			wantDetails: []string{`SageMaker compute quota "ml-quota": SageMaker CreateComputeQuota failed`, serverError,
				fmt.Sprintf("The create was sent %d times without an answer, and each look-up afterwards found no compute quota: "+
					"SageMaker did not create it.", createRounds)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEmulator(t)
			b := newBackendRetrying(t, e, fastRetries)
			tc.faults(e)
			_, _, err := b.Quotas.Put(context.Background(), planned(t, "ml", 1), "owner", nil)
			var re *backend.RequestError
			if !errors.As(err, &re) || errors.Is(err, backend.ErrOutcomeUnknown) != tc.unknown {
				t.Fatalf("Put = %v, want a RequestError whose outcome is unknown: %v", err, tc.unknown)
			}
			if got := e.CallCounts()["CreateComputeQuota"]; got != tc.creates {
				t.Errorf("%d CreateComputeQuota sent, want %d", got, tc.creates)
			}
			p := re.Problem
			if p.Summary != "Cannot create the SageMaker compute quota" {
				t.Errorf("summary %q, want %q", p.Summary, "Cannot create the SageMaker compute quota")
			}
			for _, want := range tc.wantDetails {
				if !strings.Contains(p.Detail, want) {
					t.Errorf("detail %q does not say %q", p.Detail, want)
				}
			}
			for _, absent := range []string{"read", "API server", "ClusterQueue", "finalizer", "Kueue"} {
				if strings.Contains(p.Detail, absent) {
					t.Errorf("detail %q says %q", p.Detail, absent)
				}
			}
		})
	}
}

// A create that SageMaker failed names the quota by its name and id, and gives the status and
// its FailureReason.
func TestCreateFailedNamesTheQuotaAndItsID(t *testing.T) {
	e := startEmulator(t)
	b := newBackend(t, e)
	e.FailCreate("ml-quota", "the add-on is not ready")
	written, _, err := b.Quotas.Put(context.Background(), planned(t, "ml", 1), "owner", nil)
	var re *backend.RequestError
	if !errors.As(err, &re) || written.ID == "" {
		t.Fatalf("Put = %v, %+v; want a RequestError and the created quota's record", err, written)
	}
	want := `SageMaker compute quota "ml-quota" (id ` + written.ID + `): `
	if re.Problem.Summary != "Cannot create the SageMaker compute quota" || !strings.HasPrefix(re.Problem.Detail, want) ||
		!strings.Contains(re.Problem.Detail, "CreateFailed: the add-on is not ready") {
		t.Errorf("got %q: %q\nwant the create summary and a detail starting %q with the FailureReason", re.Problem.Summary, re.Problem.Detail, want)
	}
}

// A failed delete says the API's reason and what to do: run destroy again after fixing the
// cause, or, when it only ran out of time, raise timeouts.delete.
func TestNotDeleted(t *testing.T) {
	failed := requestError(backend.OpDelete, "abcdefabcdef", errors.New("compute quota abcdefabcdef is DeleteFailed: the team has running tasks"))
	slow := requestError(backend.OpDelete, "abcdefabcdef", errors.New("compute quota abcdefabcdef is still Deleting after 10m"))
	slow.(*backend.RequestError).Outcome = backend.ErrStillExists
	for _, c := range []struct {
		err          error
		want, absent string
	}{
		{failed, `SageMaker compute quota "abcdefabcdef": compute quota abcdefabcdef is DeleteFailed: the team has running tasks. ` +
			"It stays in state: fix what the reason names, then run destroy again.", "timeouts.delete"},
		{slow, "within timeouts.delete (10m). It stays in state: run destroy again once SageMaker has deleted it, or raise timeouts.delete.",
			"fix what the reason names"},
	} {
		got := words{}.NotDeleted(context.Background(), c.err, 10*time.Minute)
		if got.Summary != "Cannot delete the SageMaker compute quota" || !strings.Contains(got.Detail, c.want) || strings.Contains(got.Detail, c.absent) {
			t.Errorf("NotDeleted(%v) = %q: %q\nwant the summary \"Cannot delete the SageMaker compute quota\" and %q, without %q",
				c.err, got.Summary, got.Detail, c.want, c.absent)
		}
	}
}

// A failed look-up of the cluster's scheduler config, before any config is known (a plan
// without credentials), names the cluster whose config it looked for, never an empty name.
func TestSchedulerConfigGetFailureNamesTheCluster(t *testing.T) {
	e := startEmulator(t)
	b := newBackendRetrying(t, e, retrypolicy.Settings{MaxAttempts: 1, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	e.ServerErrorNext(1000, "ListClusterSchedulerConfigs")
	_, err := configsOf(b).get(context.Background())
	var re *backend.RequestError
	if !errors.As(err, &re) {
		t.Fatalf("Get = %v, want a RequestError", err)
	}
	want := "SageMaker cluster scheduler config of cluster " + e.ClusterARN("ml") + ": "
	if !strings.HasPrefix(re.Problem.Detail, want) || strings.Contains(re.Problem.Detail, `""`) {
		t.Errorf("detail = %q, want it to start with %q and name no empty name", re.Problem.Detail, want)
	}
}

// An object known by neither name nor id is named by its kind alone, not by an empty name.
func TestSubjectNamesWhatItKnows(t *testing.T) {
	for _, tc := range []struct{ key, id, want string }{
		{"ml", "", `SageMaker compute quota "ml"`},
		{"ml", "ml", `SageMaker compute quota "ml"`},
		{"ml", "q-1", `SageMaker compute quota "ml" (id q-1)`},
		{"", "q-1", `SageMaker compute quota (id q-1)`},
		{"", "", `SageMaker compute quota`},
	} {
		if got := subject(KindComputeQuota, tc.key, tc.id); got != tc.want {
			t.Errorf("subject(%q, %q) = %q, want %q", tc.key, tc.id, got, tc.want)
		}
	}
}
