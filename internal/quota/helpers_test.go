package quota

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

func dec(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic("bad decimal " + s)
	}
	return r
}

func i64(n int64) *int64   { return &n }
func str(s string) *string { return &s }

func mustQ(s string) resource.Quantity { return resource.MustParse(s) }

// base is a minimal valid quota around the given entries.
func base(entries ...Entry) Config {
	return Config{Name: "team-a-quota", Team: "team-a", Resources: entries}
}

func fmtInt(p *int64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func fmtRat(r *big.Rat) string {
	if r == nil {
		return "-"
	}
	return RatString(r)
}

func fmtStr(p *string) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%q", *p)
}

func dumpEntry(e Entry) string {
	p := "-"
	if e.Partition != nil {
		p = fmt.Sprintf("%s x %d", e.Partition.Type, e.Partition.Count)
	}
	return fmt.Sprintf("{%s count=%s acc=%s vcpu=%s mem=%s efa=%s part=%s}", e.InstanceType, fmtInt(e.Count),
		fmtInt(e.Accelerators), fmtRat(e.VCPU), fmtRat(e.MemoryGiB), fmtInt(e.EFA), p)
}

func dumpLimits(ls []AbsoluteBorrowLimit) string {
	var b strings.Builder
	for _, a := range ls {
		p := "-"
		if a.Partition != nil {
			p = fmt.Sprintf("%s x %d", a.Partition.Type, a.Partition.Count)
		}
		fmt.Fprintf(&b, "{%s count=%s acc=%s vcpu=%s mem=%s part=%s}", a.InstanceType, fmtInt(a.Count), fmtInt(a.Accelerators),
			fmtRat(a.VCPU), fmtRat(a.MemoryGiB), p)
	}
	return "[" + b.String() + "]"
}

// dumpConfig is a canonical text form: two configs are equal when their dumps are.
func dumpConfig(c Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name=%q desc=%q team=%q act=%s pre=%s cohort=%s w=%d strategy=%s bl=%s abs=%s\n",
		c.Name, c.Description, c.Team, fmtStr(c.ActivationState), fmtStr(c.PreemptTeamTasks), fmtStr(c.Cohort),
		c.FairShareWeight, fmtStr(c.Sharing.Strategy), fmtInt(c.Sharing.BorrowLimit), dumpLimits(c.Sharing.AbsoluteBorrowLimits))
	for _, e := range c.Resources {
		b.WriteString(dumpEntry(e) + "\n")
	}
	return b.String()
}

// dumpResolved is a canonical form of the resolved values (not the embedded Config).
func dumpResolved(rc ResolvedConfig) string {
	var b strings.Builder
	fmt.Fprintf(&b, "act=%s pre=%s cohort=%s w=%d strategy=%s bl=%s abs=%s\n", rc.ActivationState, rc.PreemptTeamTasks,
		rc.Cohort, rc.FairShareWeight, rc.Strategy, fmtInt(rc.BorrowLimit), dumpLimits(rc.AbsoluteBorrowLimits))
	for _, r := range rc.Resources {
		fmt.Fprintf(&b, "%s acc=%d vcpu=%s mem=%s efa=%d res=%q unknown=%v\n", r.Configured.InstanceType, r.Accelerators,
			fmtRat(r.VCPU), fmtRat(r.MemoryGiB), r.EFA, r.AcceleratorResource, r.Unknown)
	}
	return b.String()
}

// dumpComputeQuota is a canonical text form of an API document.
func dumpComputeQuota(q ComputeQuota) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name=%q desc=%q team=%q act=%s pre=%s w=%d strategy=%s bl=%s abs=%s\n", q.Name, q.Description, q.Team,
		q.ActivationState, q.PreemptTeamTasks, q.FairShareWeight, q.Strategy, fmtInt(q.BorrowLimit), dumpLimits(q.AbsoluteBorrowLimits))
	for _, r := range q.Resources {
		p := "-"
		if r.Partition != nil {
			p = fmt.Sprintf("%s x %d", r.Partition.Type, r.Partition.Count)
		}
		fmt.Fprintf(&b, "{%s count=%s acc=%d vcpu=%s mem=%s part=%s}\n", r.InstanceType, fmtInt(r.Count), r.Accelerators, fmtRat(r.VCPU), fmtRat(r.MemoryGiB), p)
	}
	return b.String()
}

// throughAPIServer serialises the object to JSON and back, as a write and a read would.
func throughAPIServer(t testing.TB, cq kueue.ClusterQueue) kueue.ClusterQueue {
	t.Helper()
	b, err := json.Marshal(cq)
	if err != nil {
		t.Fatal(err)
	}
	var out kueue.ClusterQueue
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// mustRender runs Validate, Defaults and RenderClusterQueue and fails on any problem.
func mustRender(t testing.TB, cat *catalog.Catalog, c Config) (ResolvedConfig, kueue.ClusterQueue) {
	t.Helper()
	if ps := Validate(cat, c); len(ps) > 0 {
		t.Fatalf("Validate: %v", ps)
	}
	rc := Defaults(cat, c)
	cq, err := RenderClusterQueue(cat, rc)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return rc, cq
}

// checkRoundTrip asserts the key property: for a valid config c, reading back the rendered
// ClusterQueue gives c and the same resolved values, and rendering that gives the same spec.
func checkRoundTrip(t testing.TB, cat *catalog.Catalog, c Config) {
	t.Helper()
	rc, cq := mustRender(t, cat, c)
	read := throughAPIServer(t, cq)
	c2, rc2, err := FromClusterQueue(cat, read)
	if err != nil {
		t.Fatalf("FromClusterQueue: %v", err)
	}
	if got, want := dumpConfig(c2), dumpConfig(c); got != want {
		t.Fatalf("config after round trip:\n got %s\nwant %s", got, want)
	}
	if got, want := dumpResolved(rc2), dumpResolved(rc); got != want {
		t.Fatalf("resolved after round trip:\n got %s\nwant %s", got, want)
	}
	if got, want := dumpConfig(rc2.Config), dumpConfig(c); got != want {
		t.Fatalf("rc.Config after round trip:\n got %s\nwant %s", got, want)
	}
	cq2, err := RenderClusterQueue(cat, rc2)
	if err != nil {
		t.Fatalf("Render after read: %v", err)
	}
	if !specEqual(cq.Spec, cq2.Spec) || !specEqual(cq.Spec, read.Spec) {
		t.Fatalf("spec after round trip differs:\n%+v\n%+v", cq.Spec, cq2.Spec)
	}
	if !managedMetadataEqual(cq.ObjectMeta, cq2.ObjectMeta) || !managedMetadataEqual(cq2.ObjectMeta, cq.ObjectMeta) {
		t.Fatalf("metadata after round trip differs:\n%v\n%v", cq.ObjectMeta, cq2.ObjectMeta)
	}
}

// specEqual and managedMetadataEqual hold when the drift functions find no difference.
func specEqual(want, got kueue.ClusterQueueSpec) bool { return len(SpecDrift(want, got)) == 0 }

func managedMetadataEqual(want, got metav1.ObjectMeta) bool {
	return len(MetadataDrift(want, got)) == 0
}
