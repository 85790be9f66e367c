package sagemakerbackend

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// listAll lists with f and returns the teams page by page.
func listAll(t *testing.T, b backend.Backend, f quota.ListFilter) ([][]*backend.Quota, error) {
	t.Helper()
	var pages [][]*backend.Quota
	err := b.QuotaList.List(context.Background(), f, func(p []*backend.Quota) error {
		pages = append(pages, p)
		return nil
	})
	return pages, err
}

// The list pages through ListComputeQuotas (100 at a time, the most the API allows), describes
// each quota it selects as an import does, and reads back what was written; the team prefix and
// the instance type select by the list's summaries, before any describe.
func TestListQuotas(t *testing.T) {
	e, err := sagemakeremulator.Start(sagemakeremulator.Options{Clusters: []sagemakeremulator.Cluster{{Name: "ml",
		InstanceGroups: []sagemakeremulator.InstanceGroup{{Name: "gpu", InstanceType: "ml.g5.12xlarge", Count: 4},
			{Name: "cpu", InstanceType: "ml.c5.4xlarge", Count: 4}}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	ctx := context.Background()
	write := newBackend(t, e)
	for i := range 105 {
		rc := planned(t, fmt.Sprintf("team-%03d", i), 1)
		if i%10 == 0 {
			c := rc.Config
			c.Resources = append(c.Resources, quota.Entry{InstanceType: "ml.c5.4xlarge", VCPU: big.NewRat(2, 1)})
			var ps []quota.Problem
			if rc, ps = quota.PlanOn(catalog.Builtin(), c, write.Traits.StoreLimits); len(ps) > 0 {
				t.Fatal(ps)
			}
		}
		if _, _, err := write.Quotas.Put(ctx, rc, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	e.ResetCalls()
	pages, err := listAll(t, newBackend(t, e), quota.ListFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 2 || len(pages[0]) != 100 || len(pages[1]) != 5 {
		t.Fatalf("pages of %v quotas, want 100 and 5", pageSizes(pages))
	}
	q := pages[0][7]
	if q.Config.Config.Team != "team-007" || q.ConfigErr != nil || len(q.NotRepresented) > 0 ||
		q.Config.Config.Description != "for team-007" || q.ID == "" || q.Version == "" {
		t.Fatalf("listed quota: %+v, config error %v, not represented %v", q.Record, q.ConfigErr, q.NotRepresented)
	}
	if c := e.CallCounts(); c["ListComputeQuotas"] != 2 || c["DescribeComputeQuota"] != 105 {
		t.Errorf("calls %v: want 2 ListComputeQuotas pages and a describe per quota", c)
	}

	e.ResetCalls()
	pages, err = listAll(t, newBackend(t, e), quota.ListFilter{TeamPrefix: "team-01", InstanceType: "ml.c5.4xlarge"})
	if err != nil {
		t.Fatal(err)
	}
	if got := teamsOf(pages); !slices.Equal(got, []string{"team-010"}) {
		t.Fatalf("prefix team-01 and instance type ml.c5.4xlarge: %v", got)
	}
	if c := e.CallCounts(); c["DescribeComputeQuota"] != 1 {
		t.Errorf("calls %v: only the selected quota is described", c)
	}

	stop := errors.New("enough")
	e.ResetCalls()
	err = newBackend(t, e).QuotaList.List(ctx, quota.ListFilter{}, func([]*backend.Quota) error { return stop })
	if !errors.Is(err, stop) {
		t.Fatalf("the caller's error was not returned: %v", err)
	}
	if c := e.CallCounts(); c["DescribeComputeQuota"] != 100 {
		t.Errorf("calls %v: a list the caller stops after the first page describes that page only", c)
	}
}

// A team with two quotas cannot be one resource: both are listed with the reason, undescribed.
func TestListQuotasOfOneTeam(t *testing.T) {
	e := startEmulator(t)
	ctx := context.Background()
	write := newBackend(t, e)
	for _, name := range []string{"first", "second"} {
		rc := planned(t, "shared", 1)
		rc.Config.Name = name
		if _, _, err := write.Quotas.Put(ctx, rc, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	pages, err := listAll(t, newBackend(t, e), quota.ListFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 1 || len(pages[0]) != 2 {
		t.Fatalf("pages of %v quotas, want both", pageSizes(pages))
	}
	for _, q := range pages[0] {
		if len(q.NotRepresented) != 1 || !strings.Contains(q.NotRepresented[0], `team "shared" has 2 compute quotas`) {
			t.Errorf("%s: %v", q.Name, q.NotRepresented)
		}
	}
}

func pageSizes(pages [][]*backend.Quota) []int {
	var out []int
	for _, p := range pages {
		out = append(out, len(p))
	}
	return out
}

func teamsOf(pages [][]*backend.Quota) []string {
	var out []string
	for _, p := range pages {
		for _, q := range p {
			out = append(out, q.Config.Config.Team)
		}
	}
	return out
}

// documentDiff names the fields an update from the configuration would change.
func TestDocumentDiff(t *testing.T) {
	held := quota.ComputeQuotaOf(planned(t, "ml", 2))
	if d := documentDiff(held, held); len(d) > 0 {
		t.Fatalf("a document differs from itself: %v", d)
	}
	sent := held
	sent.Description = "other"
	if d := documentDiff(held, sent); len(d) != 1 || !strings.HasPrefix(d[0], `Description is "for ml"; an update would send "other"`) {
		t.Fatalf("description: %v", d)
	}
}
