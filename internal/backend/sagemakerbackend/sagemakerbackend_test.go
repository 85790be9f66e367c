package sagemakerbackend

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/retrypolicy"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakerclient"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// newBackend is a run of the backend against e's cluster, with fast polls.
func newBackend(t *testing.T, e *sagemakeremulator.Emulator) backend.Backend {
	t.Helper()
	return newBackendRetrying(t, e, retrypolicy.Settings{})
}

// newBackendRetrying is newBackend with the client's retries set (zero fields: the defaults).
func newBackendRetrying(t *testing.T, e *sagemakeremulator.Emulator, retry retrypolicy.Settings) backend.Backend {
	t.Helper()
	c, err := sagemakerclient.New(context.Background(), sagemakerclient.Settings{
		ClusterARN: e.ClusterARN("ml"), Endpoint: e.URL(), AccessKey: "test", SecretKey: "test", Retry: retry,
	})
	if err != nil {
		t.Fatal(err)
	}
	return New(c, e.ClusterARN("ml"), catalog.Builtin(), sagemakerclient.Poll{Min: time.Millisecond, Max: 5 * time.Millisecond}, nil)
}

func startEmulator(t *testing.T) *sagemakeremulator.Emulator {
	t.Helper()
	e, err := sagemakeremulator.Start(sagemakeremulator.Options{Clusters: []sagemakeremulator.Cluster{{Name: "ml",
		InstanceGroups: []sagemakeremulator.InstanceGroup{{Name: "gpu", InstanceType: "ml.g5.12xlarge", Count: 4}}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func planned(t *testing.T, team string, accelerators int64) quota.ResolvedConfig {
	t.Helper()
	rc, ps := quota.Plan(catalog.Builtin(), quota.Config{Name: team + "-quota", Description: "for " + team, Team: team,
		Resources: []quota.Entry{{InstanceType: "ml.g5.12xlarge", Accelerators: &accelerators}}})
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	return rc
}

// A refresh of N quotas costs one ListComputeQuotas and describes only the quotas whose version
// moved since the state saw them; what it reads back is what was written.
func TestRefreshReadsTheList(t *testing.T) {
	e := startEmulator(t)
	ctx := context.Background()
	write := newBackend(t, e)
	seen := map[string]*backend.Quota{}
	for i := range 5 {
		team := fmt.Sprintf("team-%d", i)
		rec, _, err := write.Quotas.Put(ctx, planned(t, team, 1), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		q := &backend.Quota{Record: rec}
		q.Config.Config.Description = "for " + team
		seen[team] = q
	}
	changed, _ := e.Quota(seen["team-3"].ID)
	if err := e.UpdateQuota(changed.ID, func(q *sagemakeremulator.ComputeQuota) { q.Description = "edited" }); err != nil {
		t.Fatal(err)
	}
	e.ResetCalls()

	refresh := newBackend(t, e) // a new provider run
	for team, last := range seen {
		q, err := refresh.Quotas.Get(ctx, team, last)
		if err != nil || q == nil {
			t.Fatalf("Get(%s) = %v, %v", team, q, err)
		}
		want := "for " + team
		if team == "team-3" {
			want = "edited"
		}
		if q.Config.Config.Description != want || q.Config.Resources[0].Accelerators != 1 || q.ConfigErr != nil {
			t.Errorf("%s read back as %q with %d accelerators (%v), want %q with 1", team, q.Config.Config.Description,
				q.Config.Resources[0].Accelerators, q.ConfigErr, want)
		}
	}
	calls := e.CallCounts()
	if calls["ListComputeQuotas"] != 1 || calls["DescribeComputeQuota"] != 1 || len(calls) != 2 {
		t.Errorf("a refresh of 5 quotas, one changed outside, made %v; want 1 ListComputeQuotas and 1 DescribeComputeQuota", calls)
	}
}

// An update names the version the state saw: one changed since is refused with ErrChanged.
func TestUpdateOverAStaleVersion(t *testing.T) {
	e := startEmulator(t)
	ctx := context.Background()
	b := newBackend(t, e)
	rec, _, err := b.Quotas.Put(ctx, planned(t, "ml", 1), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.UpdateQuota(rec.ID, func(q *sagemakeremulator.ComputeQuota) { q.Description = "edited" }); err != nil {
		t.Fatal(err)
	}
	_, _, err = b.Quotas.Put(ctx, planned(t, "ml", 2), "", &rec)
	if !errors.Is(err, backend.ErrChanged) {
		t.Fatalf("update over version %s after an outside change: %v, want ErrChanged", rec.Version, err)
	}
	current, err := b.Quotas.Get(ctx, "ml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Quotas.Put(ctx, planned(t, "ml", 2), "", &current.Record); err != nil {
		t.Fatalf("update over the current version %s: %v", current.Version, err)
	}
}

// deleteThatFails creates team ml's quota and deletes it with SageMaker set to fail the delete
// (DeleteFailed, because the team still has running tasks); it returns the delete's error.
func deleteThatFails(t *testing.T) (*sagemakeremulator.Emulator, backend.Record, error) {
	t.Helper()
	ctx := context.Background()
	e := startEmulator(t)
	b := newBackend(t, e)
	rec, _, err := b.Quotas.Put(ctx, planned(t, "ml", 1), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.FailDelete(rec.Name, "the quota's team still has running tasks")
	return e, rec, b.Quotas.Delete(ctx, &backend.Quota{Record: rec})
}

// A delete SageMaker fails (DeleteFailed) is an error carrying its FailureReason, not "still
// exists": nothing holds the quota that waiting longer would release.
func TestDeleteFailedCarriesTheReason(t *testing.T) {
	_, _, err := deleteThatFails(t)
	var re *backend.RequestError
	if !errors.As(err, &re) || re.Op != backend.OpDelete || errors.Is(err, backend.ErrStillExists) ||
		!strings.Contains(err.Error(), "DeleteFailed: the quota's team still has running tasks") {
		t.Fatalf("a delete SageMaker failed: %v, want a delete RequestError with the FailureReason, not ErrStillExists", err)
	}
}

// A failed delete leaves the version as it was, and the list carries no FailureReason: a refresh
// that knew the version still describes the quota, so its drift gives SageMaker's reason.
func TestRefreshGivesAFailedQuotasReason(t *testing.T) {
	ctx := context.Background()
	e, rec, err := deleteThatFails(t)
	if err == nil {
		t.Fatal("the delete SageMaker failed succeeded")
	}
	last := &backend.Quota{Record: rec}
	refresh := newBackend(t, e)
	q, err := refresh.Quotas.Get(ctx, "ml", last)
	if err != nil || q == nil {
		t.Fatalf("Get after a failed delete = %v, %v", q, err)
	}
	if q.Version != rec.Version {
		t.Fatalf("a failed delete moved the version from %s to %s; this test needs it unchanged", rec.Version, q.Version)
	}
	drift, err := refresh.QuotaDetails.Drift(ctx, q, quota.ResolvedConfig{}, "", false)
	if err != nil || len(drift) != 1 || !strings.Contains(drift[0], "DeleteFailed: the quota's team still has running tasks") {
		t.Fatalf("drift after a failed delete = %q, %v; want the status with SageMaker's reason", drift, err)
	}
}

// A delete still under way when the time runs out is ErrStillExists.
func TestDeleteNotDoneInTime(t *testing.T) {
	ctx := context.Background()
	// Transitions complete only when the test settles them.
	e, err := sagemakeremulator.Start(sagemakeremulator.Options{Settle: &sagemakeremulator.SettleRule{Observations: -1},
		Clusters: []sagemakeremulator.Cluster{{Name: "ml", InstanceGroups: []sagemakeremulator.InstanceGroup{{Name: "gpu", InstanceType: "ml.g5.12xlarge", Count: 4}}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	b := newBackend(t, e)
	// The time runs out as the wait begins: when the emulator is about to answer its first
	// DescribeComputeQuota, after the create or the delete was answered.
	short := expireBeforeNext(e, "DescribeComputeQuota")
	rec, _, _ := b.Quotas.Put(short, planned(t, "ml", 1), "", nil)
	if rec.ID == "" {
		t.Fatal("the create sent no quota")
	}
	if err := e.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	short = expireBeforeNext(e, "DescribeComputeQuota")
	if err := b.Quotas.Delete(short, &backend.Quota{Record: rec}); !errors.Is(err, backend.ErrStillExists) {
		t.Fatalf("a delete not finished in time: %v, want ErrStillExists", err)
	}
}

// expireBeforeNext returns a context whose time runs out (context.DeadlineExceeded), just before
// the emulator serves the next request of operation op.
func expireBeforeNext(e *sagemakeremulator.Emulator, op string) context.Context {
	ctx := &expiringContext{Context: context.Background(), done: make(chan struct{})}
	e.BeforeNext(op, func() { close(ctx.done) })
	return ctx
}

// expiringContext is a context that ends as a deadline does, when done is closed.
type expiringContext struct {
	context.Context
	done chan struct{}
}

func (c *expiringContext) Done() <-chan struct{} { return c.done }

func (c *expiringContext) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// Two resources of one team in one apply (one provider run, so one backend) both find no quota
// in the run's list, since both checks run before either creates. The claim lets only one
// create: the other is refused with ErrExists and then reads the first's quota, which the
// provider refuses as any existing quota; the API holds one quota for the team.
func TestTwoCreatesOfOneTeam(t *testing.T) {
	e := startEmulator(t)
	// Bounded: a create that never released the team would hold the other's claim forever.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := newBackend(t, e)
	type outcome struct {
		checkErr, claimErr, putErr error
		created                    backend.Record
		refusedBy                  *backend.Quota
	}
	names := []string{"ml-a", "ml-b"}
	outcomes := make([]outcome, len(names))
	var checked, finished sync.WaitGroup
	bothChecked := make(chan struct{})
	checked.Add(len(names))
	finished.Add(len(names))
	for i, name := range names {
		go func() {
			defer finished.Done()
			o := &outcomes[i]
			// The provider's create: the check, the claim, the write.
			existing, err := b.Quotas.Get(ctx, "ml", nil)
			if err == nil && existing != nil {
				err = fmt.Errorf("found quota %s", existing.ID)
			}
			o.checkErr = err
			checked.Done()
			<-bothChecked
			if o.checkErr != nil {
				return
			}
			owner := "owner-" + name
			if _, o.claimErr = b.Quotas.Claim(ctx, "ml", owner); o.claimErr != nil {
				o.refusedBy, _ = b.Quotas.Get(ctx, "ml", nil)
				return
			}
			rc := planned(t, "ml", 1)
			rc.Config.Name = name
			o.created, _, o.putErr = b.Quotas.Put(ctx, rc, owner, nil)
		}()
	}
	checked.Wait()
	close(bothChecked)
	finished.Wait()

	var created, refused []outcome
	for i, o := range outcomes {
		switch {
		case o.checkErr != nil || o.putErr != nil:
			t.Fatalf("create %s: check %v, write %v; want the check to find nothing and the write to succeed", names[i], o.checkErr, o.putErr)
		case o.claimErr == nil:
			created = append(created, o)
		default:
			refused = append(refused, o)
		}
	}
	if len(created) != 1 || len(refused) != 1 {
		t.Fatalf("%d creates went through and %d were refused; want one of each", len(created), len(refused))
	}
	if r := refused[0]; !errors.Is(r.claimErr, backend.ErrExists) || r.refusedBy == nil || r.refusedBy.ID != created[0].created.ID {
		t.Errorf("the second create's claim: %v, then read %+v; want ErrExists and the first's quota %s", r.claimErr, r.refusedBy, created[0].created.ID)
	}
	var held []string
	for _, q := range e.Quotas() {
		if q.Target.TeamName != nil && *q.Target.TeamName == "ml" {
			held = append(held, q.Name)
		}
	}
	if len(held) != 1 {
		t.Errorf("the API holds quotas %v for team ml, want one", held)
	}
}

// A create that ends before it writes (its context ends: a plan problem, an interrupt) releases
// the team, so a later create of it is not held up; while the claim is held, the later one
// waits, and gives up with the create's own context.
func TestClaimReleasedWhenTheCreateEnds(t *testing.T) {
	e := startEmulator(t)
	b := newBackend(t, e)
	// Claims wait on channels only: the bubble's clock and synctest.Wait tell when one waits.
	synctest.Test(t, func(t *testing.T) {
		first, endFirst := context.WithCancel(context.Background())
		if _, err := b.Quotas.Claim(first, "ml", "first"); err != nil {
			t.Fatal(err)
		}
		impatient, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		var problem backend.Problem
		if _, err := b.Quotas.Claim(impatient, "ml", "impatient"); !errors.As(err, &problem) || !strings.Contains(problem.Detail, `team "ml"`) {
			t.Fatalf("a claim while another create holds the team, ended by its own timeout: %v, want the problem naming the team", err)
		}
		claimed := make(chan error, 1)
		go func() {
			_, err := b.Quotas.Claim(context.Background(), "ml", "second")
			claimed <- err
		}()
		synctest.Wait() // the second claim waits for the first
		select {
		case err := <-claimed:
			t.Fatalf("a second claim returned %v while the first create still held the team", err)
		default:
		}
		endFirst()
		if err := <-claimed; err != nil {
			t.Fatalf("the claim after the first create ended without writing: %v, want it to succeed", err)
		}
	})
}
