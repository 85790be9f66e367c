package sagemakerbackend

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sagemaker"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakerclient"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

func plannedNamed(t *testing.T, name, team string, accelerators int64) quota.ResolvedConfig {
	t.Helper()
	rc, ps := quota.Plan(catalog.Builtin(), quota.Config{Name: name, Team: team,
		Resources: []quota.Entry{{InstanceType: "ml.g5.12xlarge", Accelerators: &accelerators}}})
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	return rc
}

// liveQuotas are the emulator's quotas not being deleted.
func liveQuotas(e *sagemakeremulator.Emulator) []sagemakeremulator.ComputeQuota {
	var out []sagemakeremulator.ComputeQuota
	for _, q := range e.Quotas() {
		if q.Status != sagemakeremulator.StatusDeleting {
			out = append(out, q)
		}
	}
	return out
}

// A create whose outcome is unknown is resolved by looking the quota up: adopted when it landed
// as sent, sent again when it did not, refused when another quota holds its name or its team.
// A 4xx of a first attempt proves the API did not act and stays an error.
func TestCreateOfUnknownOutcome(t *testing.T) {
	const create = "CreateComputeQuota"
	tests := []struct {
		name string
		// before puts what another writer made, with b, before the faults are set.
		before  func(t *testing.T, b backend.Backend)
		faults  func(e *sagemakeremulator.Emulator)
		creates int
		// wantErr is the outcome of a failed Put; nil means it succeeds with the one quota ml-quota of team ml.
		wantErr error
	}{
		{name: "5xx after acting: adopted", faults: func(e *sagemakeremulator.Emulator) { e.ServerErrorAfterNext(1, create) }, creates: 1},
		{name: "lost answer: adopted", faults: func(e *sagemakeremulator.Emulator) { e.LoseAnswerNext(1, create) }, creates: 1},
		{name: "5xx before acting: created again", faults: func(e *sagemakeremulator.Emulator) { e.ServerErrorNext(1, create) }, creates: 2},
		{name: "5xx before acting, then the second answer lost: adopted", faults: func(e *sagemakeremulator.Emulator) {
			e.ServerErrorNext(1, create)
			e.LoseAnswerNext(1, create)
		}, creates: 2},
		{name: "throttled: retried by the client", faults: func(e *sagemakeremulator.Emulator) { e.ThrottleNext(2, create) }, creates: 3},
		{name: "answer lost and the look-up throttled: adopted", faults: func(e *sagemakeremulator.Emulator) {
			e.LoseAnswerNext(1, create)
			e.ThrottleNext(1, "ListComputeQuotas")
		}, creates: 1},
		{
			name:   "another quota of the name, answered at once: an error",
			before: func(t *testing.T, b backend.Backend) { put(t, b, plannedNamed(t, "ml-quota", "other", 1)) },
			faults: func(*sagemakeremulator.Emulator) {}, creates: 1, wantErr: backend.ErrExists,
		},
		{
			name:   "another quota of the name after a 5xx: not adopted, not created again",
			before: func(t *testing.T, b backend.Backend) { put(t, b, plannedNamed(t, "ml-quota", "other", 1)) },
			faults: func(e *sagemakeremulator.Emulator) { e.ServerErrorNext(1, create) }, creates: 1, wantErr: backend.ErrExists,
		},
		{
			name:   "the same name and team with other amounts after a 5xx: not adopted",
			before: func(t *testing.T, b backend.Backend) { put(t, b, plannedNamed(t, "ml-quota", "ml", 3)) },
			faults: func(e *sagemakeremulator.Emulator) { e.ServerErrorNext(1, create) }, creates: 1, wantErr: backend.ErrExists,
		},
		{
			name:   "a quota of the team under another name after a 5xx: no second quota for the team",
			before: func(t *testing.T, b backend.Backend) { put(t, b, plannedNamed(t, "ml-other", "ml", 1)) },
			faults: func(e *sagemakeremulator.Emulator) { e.ServerErrorNext(1, create) }, creates: 1, wantErr: backend.ErrExists,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startEmulator(t)
			b := newBackend(t, e)
			if tt.before != nil {
				tt.before(t, b)
			}
			existing := liveQuotas(e)
			e.ResetCalls()
			tt.faults(e)
			rec, _, err := b.Quotas.Put(context.Background(), plannedNamed(t, "ml-quota", "ml", 2), "", nil)
			if got := e.CallCounts()[create]; got != tt.creates {
				t.Errorf("%d CreateComputeQuota requests, want %d", got, tt.creates)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Put: %v, want %v", err, tt.wantErr)
				}
				if got := liveQuotas(e); len(got) != len(existing) {
					t.Errorf("%d quotas after the refused create, want the %d there before", len(got), len(existing))
				}
				return
			}
			if err != nil {
				t.Fatalf("Put: %v", err)
			}
			qs := liveQuotas(e)
			if len(qs) != 1 || qs[0].ID != rec.ID || qs[0].Name != "ml-quota" || *qs[0].Target.TeamName != "ml" ||
				*qs[0].Config.ComputeQuotaResources[0].Accelerators != 2 || rec.Status != "Created" {
				t.Fatalf("the API holds %+v, the record is %+v; want one quota ml-quota of team ml with 2 accelerators, recorded as Created", qs, rec)
			}
		})
	}
}

func put(t *testing.T, b backend.Backend, rc quota.ResolvedConfig) backend.Record {
	t.Helper()
	rec, _, err := b.Quotas.Put(context.Background(), rc, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// An update whose answer did not come is retried by the client over the same version; the retry
// of one that landed is refused, and reading the quota shows it was ours.
func TestUpdateOfUnknownOutcome(t *testing.T) {
	for name, fault := range map[string]func(e *sagemakeremulator.Emulator){
		"5xx after acting": func(e *sagemakeremulator.Emulator) { e.ServerErrorAfterNext(1, "UpdateComputeQuota") },
		"lost answer":      func(e *sagemakeremulator.Emulator) { e.LoseAnswerNext(1, "UpdateComputeQuota") },
	} {
		t.Run(name, func(t *testing.T) {
			e := startEmulator(t)
			b := newBackend(t, e)
			rec := put(t, b, plannedNamed(t, "ml-quota", "ml", 1))
			fault(e)
			got, _, err := b.Quotas.Put(context.Background(), plannedNamed(t, "ml-quota", "ml", 2), "", &rec)
			if err != nil {
				t.Fatalf("update: %v", err)
			}
			q, _ := e.Quota(rec.ID)
			if got.Version != "2" || q.Version != 2 || *q.Config.ComputeQuotaResources[0].Accelerators != 2 {
				t.Errorf("recorded version %s; the API holds version %d with %d accelerators; want version 2 with 2", got.Version, q.Version,
					*q.Config.ComputeQuotaResources[0].Accelerators)
			}
		})
	}
	// Someone else's update over the same version is not taken for ours.
	e := startEmulator(t)
	b := newBackend(t, e)
	rec := put(t, b, plannedNamed(t, "ml-quota", "ml", 1))
	e.BeforeNext("UpdateComputeQuota", func() {
		_ = e.UpdateQuota(rec.ID, func(q *sagemakeremulator.ComputeQuota) { q.Description = "edited" })
	})
	e.ServerErrorNext(1, "UpdateComputeQuota")
	if _, _, err := b.Quotas.Put(context.Background(), plannedNamed(t, "ml-quota", "ml", 2), "", &rec); err == nil {
		t.Fatal("an update refused after another writer's change succeeded")
	}
}

// unknownDelete is an API whose deletes act and then fail as a retry of a delete that landed may:
// with an error whose outcome is unknown.
type unknownDelete struct{ sagemakerclient.API }

var errUnknown = &sagemakerclient.OperationError{Operation: "Delete", Code: "ConflictException", OutcomeUnknown: true, Err: errors.New("conflict")}

func (a unknownDelete) DeleteComputeQuota(ctx context.Context, in *sagemaker.DeleteComputeQuotaInput, optFns ...func(*sagemaker.Options)) (*sagemaker.DeleteComputeQuotaOutput, error) {
	_, _ = a.API.DeleteComputeQuota(ctx, in, optFns...)
	return nil, errUnknown
}

func (a unknownDelete) DeleteClusterSchedulerConfig(ctx context.Context, in *sagemaker.DeleteClusterSchedulerConfigInput, optFns ...func(*sagemaker.Options)) (*sagemaker.DeleteClusterSchedulerConfigOutput, error) {
	_, _ = a.API.DeleteClusterSchedulerConfig(ctx, in, optFns...)
	return nil, errUnknown
}

// A delete of unknown outcome succeeds when the object is gone or being deleted.
func TestDeleteOfUnknownOutcome(t *testing.T) {
	e := startEmulator(t)
	c, err := sagemakerclient.New(context.Background(), sagemakerclient.Settings{
		ClusterARN: e.ClusterARN("ml"), Endpoint: e.URL(), AccessKey: "test", SecretKey: "test",
	})
	if err != nil {
		t.Fatal(err)
	}
	b := New(unknownDelete{c}, e.ClusterARN("ml"), catalog.Builtin(), sagemakerclient.Poll{Min: time.Millisecond, Max: 5 * time.Millisecond}, nil)
	rec := put(t, b, plannedNamed(t, "ml-quota", "ml", 1))
	sc, err := configsOf(b).put(context.Background(), quota.SchedulerPolicy{FairShare: quota.ActivationEnabled}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Quotas.Delete(context.Background(), &backend.Quota{Record: rec}); err != nil {
		t.Errorf("quota delete: %v", err)
	}
	if err := configsOf(b).deleteConfig(context.Background(), sc); err != nil {
		t.Errorf("scheduler config delete: %v", err)
	}
	if qs, cs := e.Quotas(), e.SchedulerConfigs(); len(qs)+len(cs) > 0 {
		t.Errorf("left: %+v, %+v", qs, cs)
	}
	// A delete that did not land stays an error.
	fail := New(unknownDelete{failingDelete{c}}, e.ClusterARN("ml"), catalog.Builtin(), sagemakerclient.Poll{Min: time.Millisecond, Max: 5 * time.Millisecond}, nil)
	rec = put(t, fail, plannedNamed(t, "ml-quota", "ml", 1))
	if err := fail.Quotas.Delete(context.Background(), &backend.Quota{Record: rec}); err == nil {
		t.Error("a delete that did not land succeeded")
	}
}

// failingDelete deletes nothing.
type failingDelete struct{ sagemakerclient.API }

func (failingDelete) DeleteComputeQuota(context.Context, *sagemaker.DeleteComputeQuotaInput, ...func(*sagemaker.Options)) (*sagemaker.DeleteComputeQuotaOutput, error) {
	return nil, errors.New("not sent")
}

// The scheduler config, one per cluster: a create or an update whose answer did not come is
// resolved by reading the cluster's config.
func TestSchedulerConfigOfUnknownOutcome(t *testing.T) {
	e := startEmulator(t)
	b := newBackend(t, e)
	ctx := context.Background()
	e.LoseAnswerNext(1, "CreateClusterSchedulerConfig")
	rec, err := configsOf(b).put(ctx, quota.SchedulerPolicy{FairShare: quota.ActivationEnabled}, nil)
	if err != nil {
		t.Fatalf("create with its answer lost: %v", err)
	}
	if cs := e.SchedulerConfigs(); len(cs) != 1 || cs[0].ID != rec.ID {
		t.Fatalf("the API holds %+v, the record is %+v", cs, rec)
	}
	e.ServerErrorAfterNext(1, "UpdateClusterSchedulerConfig")
	if rec, err = configsOf(b).put(ctx, quota.SchedulerPolicy{FairShare: quota.ActivationDisabled}, &rec); err != nil || rec.Version != "2" {
		t.Fatalf("update with a 5xx after acting: %v, version %s", err, rec.Version)
	}
	// Another config in place after a 5xx: refused, not adopted.
	if err := configsOf(b).deleteConfig(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if _, err := configsOf(b).put(ctx, quota.SchedulerPolicy{FairShare: quota.ActivationDisabled}, nil); err != nil {
		t.Fatal(err)
	}
	e.ServerErrorNext(1, "CreateClusterSchedulerConfig")
	if _, err := configsOf(b).put(ctx, quota.SchedulerPolicy{FairShare: quota.ActivationEnabled}, nil); !errors.Is(err, backend.ErrExists) {
		t.Errorf("create over another config after a 5xx: %v, want ErrExists", err)
	}
	if n := len(e.SchedulerConfigs()); n != 1 {
		t.Errorf("%d scheduler configs, want 1", n)
	}
}
