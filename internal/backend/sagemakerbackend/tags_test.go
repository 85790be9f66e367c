package sagemakerbackend

import (
	"context"
	"maps"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Tags go with the create, change by key without an update of the definition when nothing else
// changes, change beside an update when something does, and are read only on request.
func TestQuotaTags(t *testing.T) {
	e := startEmulator(t)
	ctx := context.Background()
	b := newBackend(t, e)
	rc := planned(t, "ml", 1)
	rc.Config.Tags = map[string]string{"team": "ml", "env": "prod"}
	rec, _, err := b.Quotas.Put(ctx, rc, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := e.TagsOf(rec.ARN); !maps.Equal(got, rc.Config.Tags) || !maps.Equal(rec.Tags, rc.Config.Tags) {
		t.Fatalf("created with tags %v (record %v), want %v", got, rec.Tags, rc.Config.Tags)
	}

	apply := newBackend(t, e) // an apply reads the quota before it writes (Update's ownership check)
	q, err := apply.Quotas.Get(ctx, "ml", nil)
	if err != nil || q == nil || q.Config.Config.Tags != nil {
		t.Fatalf("Get = %+v, %v; want the quota without its tags (a request of their own)", q, err)
	}
	e.ResetCalls()
	over := rec
	over.Tags = rc.Config.Tags
	rc.Config.Tags = map[string]string{"team": "ml-research", "cost-center": "42"}
	written, _, err := apply.Quotas.Put(ctx, rc, "", &over)
	if err != nil {
		t.Fatal(err)
	}
	calls := e.CallCounts()
	if calls["UpdateComputeQuota"] != 0 || calls["AddTags"] != 1 || calls["DeleteTags"] != 1 || written.Version != rec.Version {
		t.Errorf("a change of tags alone made %v and version %s (was %s)", calls, written.Version, rec.Version)
	}
	if got, _ := e.TagsOf(rec.ARN); !maps.Equal(got, rc.Config.Tags) {
		t.Errorf("tags %v, want %v", got, rc.Config.Tags)
	}

	// Something else changes too: the update, then the tags.
	q, _ = apply.Quotas.Get(ctx, "ml", nil)
	over = q.Record
	over.Tags = rc.Config.Tags
	changed := planned(t, "ml", 2)
	changed.Config.Tags = map[string]string{"team": "ml-research"}
	e.ResetCalls()
	written, _, err = apply.Quotas.Put(ctx, changed, "", &over)
	if err != nil {
		t.Fatal(err)
	}
	if calls := e.CallCounts(); calls["UpdateComputeQuota"] != 1 || calls["AddTags"] != 0 || calls["DeleteTags"] != 1 || written.Version == rec.Version {
		t.Errorf("an update with a tag removed made %v, version %s", calls, written.Version)
	}
	tags, err := apply.QuotaDetails.Tags(ctx, &backend.Quota{Record: written})
	if err != nil || !maps.Equal(tags, changed.Config.Tags) {
		t.Errorf("Tags = %v, %v; want %v", tags, err, changed.Config.Tags)
	}
}

func TestSchedulerConfigTags(t *testing.T) {
	e := startEmulator(t)
	ctx := context.Background()
	b := newBackend(t, e)
	p := quota.SchedulerPolicy{PriorityClasses: []quota.PriorityClass{{Name: "high", Weight: 10}}, FairShare: quota.ActivationEnabled,
		Tags: map[string]string{"owner": "platform"}}
	rec, err := configsOf(b).put(ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	// An apply that has not read the config: one Describe tells that only the tags change.
	apply := newBackend(t, e)
	e.ResetCalls()
	over := rec
	over.Tags = p.Tags
	p.Tags = map[string]string{"owner": "ml"}
	written, err := configsOf(apply).put(ctx, p, &over)
	if err != nil {
		t.Fatal(err)
	}
	calls := e.CallCounts()
	if calls["UpdateClusterSchedulerConfig"] != 0 || calls["AddTags"] != 1 || calls["DescribeClusterSchedulerConfig"] != 1 || written.Version != rec.Version {
		t.Errorf("a change of tags alone made %v, version %s (was %s)", calls, written.Version, rec.Version)
	}
	c, err := configsOf(apply).get(ctx)
	if err != nil || c == nil {
		t.Fatal(c, err)
	}
	if tags, err := configsOf(apply).tags(ctx, c); err != nil || !maps.Equal(tags, p.Tags) {
		t.Errorf("Tags = %v, %v; want %v", tags, err, p.Tags)
	}
}
