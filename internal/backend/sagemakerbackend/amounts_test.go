package sagemakerbackend

import (
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// A quota planned for this backend's store limits is held by the API's float32s as planned:
// through the SDK and back, the next run reads the amounts of the plan, fractions, a MIG
// partition's share and amounts beyond a float32's millicores and MiB alike.
func TestAmountsReadBackAsPlanned(t *testing.T) {
	var groups []sagemakeremulator.InstanceGroup
	for _, it := range []string{"ml.c5.9xlarge", "ml.p4d.24xlarge", "ml.c5n.large"} {
		groups = append(groups, sagemakeremulator.InstanceGroup{Name: strings.ReplaceAll(it[3:], ".", "-"), InstanceType: it, Count: 1})
	}
	e, err := sagemakeremulator.Start(sagemakeremulator.Options{Clusters: []sagemakeremulator.Cluster{{Name: "ml", InstanceGroups: groups}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	ctx := context.Background()
	write := newBackend(t, e)
	ratio := func(s string) *big.Rat { r, _ := new(big.Rat).SetString(s); return r }
	cfg := quota.Config{Name: "exact-quota", Team: "exact", Resources: []quota.Entry{
		{InstanceType: "ml.c5.9xlarge", MemoryGiB: ratio("2.9")},
		{InstanceType: "ml.p4d.24xlarge", Partition: &quota.Partition{Type: "mig-1g.5gb", Count: 10001}},
		{InstanceType: "ml.c5n.large", Count: ptrTo(int64(1904761))},
	}, Sharing: quota.Sharing{AbsoluteBorrowLimits: []quota.AbsoluteBorrowLimit{
		{InstanceType: "ml.c5.9xlarge", VCPU: ratio("20000.002"), MemoryGiB: ratio("16384.5")},
	}}}
	rc, problems := quota.PlanOn(catalog.Builtin(), cfg, write.Traits.StoreLimits)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if _, _, err := write.Quotas.Put(ctx, rc, "", nil); err != nil {
		t.Fatal(err)
	}
	q, err := newBackend(t, e).Quotas.Get(ctx, "exact", nil)
	if err != nil || q == nil || q.ConfigErr != nil {
		t.Fatalf("Get = %v, %v", q, err)
	}
	if got, want := documentText(quota.ComputeQuotaOf(q.Config)), documentText(quota.ComputeQuotaOf(rc)); got != want {
		t.Errorf("read back as\n%s\nwant the plan\n%s", got, want)
	}
}

func ptrTo[T any](v T) *T { return &v }

// documentText shows every amount of a document exactly.
func documentText(q quota.ComputeQuota) string {
	s := ""
	show := func(r *big.Rat) string {
		if r == nil {
			return "-"
		}
		return quota.RatString(r)
	}
	for _, l := range q.AbsoluteBorrowLimits {
		s += "limit " + l.InstanceType + " vcpu=" + show(l.VCPU) + " memory=" + show(l.MemoryGiB) + "\n"
	}
	for _, r := range q.Resources {
		s += r.InstanceType + " vcpu=" + show(r.VCPU) + " memory=" + show(r.MemoryGiB) + "\n"
	}
	return s
}
