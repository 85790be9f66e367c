package quota

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

type namedConfig struct {
	name string
	cfg  Config
	// lossy: the spec alone (without annotations) cannot express the config (a partition of
	// 0, EFA borrowing limits set by an absolute limit's count), or its resolved values exceed
	// the input limits once made explicit (count 10000000).
	lossy bool
}

func roundTripConfigs() []namedConfig {
	with := func(c Config, mut func(*Config)) Config { mut(&c); return c }
	worked := []Entry{
		{InstanceType: "ml.g5.12xlarge", Count: i64(1)},
		{InstanceType: "ml.g6e.48xlarge", Accelerators: i64(4)},
		{InstanceType: "ml.g5.xlarge", MemoryGiB: dec("8")},
		{InstanceType: "ml.trn1.32xlarge", Accelerators: i64(8)},
		{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 2}},
		{InstanceType: "ml.g5.24xlarge", Accelerators: i64(16), VCPU: dec("200"), MemoryGiB: dec("2")},
		{InstanceType: "ml.c5.9xlarge", MemoryGiB: DecimalFromFloat(2.9)},
	}
	var out []namedConfig
	for _, e := range worked {
		out = append(out, namedConfig{name: "worked " + dumpEntry(e), cfg: base(e)})
	}
	fifteen := func() []Entry {
		types := []string{"ml.g5.xlarge", "ml.g5.12xlarge", "ml.g6.48xlarge", "ml.gr6.8xlarge", "ml.g6e.24xlarge", "ml.p4d.24xlarge",
			"ml.p4de.24xlarge", "ml.p5.48xlarge", "ml.p5e.48xlarge", "ml.p6-b200.48xlarge", "ml.trn1n.32xlarge", "ml.trn2.48xlarge",
			"ml.c5n.large", "ml.m5.4xlarge", "ml.t3.medium"}
		var es []Entry
		for i, ty := range types {
			e := Entry{InstanceType: ty}
			switch i % 5 {
			case 0:
				e.Count = i64(int64(i))
			case 1:
				e.VCPU = DecimalFromFloat(float64(i) + 0.125)
			case 2:
				e.MemoryGiB = DecimalFromFloat(float64(i) * 1.7)
			case 3:
				e.Count, e.EFA = i64(1), i64(0)
			case 4:
				e.VCPU, e.MemoryGiB = dec("1"), dec("3")
			}
			es = append(es, e)
		}
		es[5] = Entry{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-3g.20gb", Count: 5}}
		es[8] = Entry{InstanceType: "ml.p5e.48xlarge", Partition: &Partition{Type: "mig-7g.141gb", Count: 3}, VCPU: dec("0.5")}
		return es
	}
	out = append(out,
		namedConfig{name: "all worked examples", cfg: base(worked...)},
		namedConfig{name: "fifteen types", cfg: base(fifteen()...)},
		namedConfig{name: "fifteen types DontLend", cfg: with(base(fifteen()...), func(c *Config) { c.Sharing.Strategy = str(StrategyDontLend) })},
		namedConfig{name: "Lend", cfg: with(base(worked...), func(c *Config) { c.Sharing.Strategy = str(StrategyLend) })},
		namedConfig{name: "DontLend", cfg: with(base(worked[0], worked[3]), func(c *Config) { c.Sharing.Strategy = str(StrategyDontLend) })},
		namedConfig{name: "LendAndBorrow explicit", cfg: with(base(worked[0]), func(c *Config) { c.Sharing.Strategy = str(StrategyLendAndBorrow) })},
		namedConfig{name: "LendAndBorrow 0", cfg: with(base(worked...), func(c *Config) {
			c.Sharing.Strategy, c.Sharing.BorrowLimit = str(StrategyLendAndBorrow), i64(0)
		})},
		namedConfig{name: "borrow 1", cfg: with(base(worked...), func(c *Config) { c.Sharing.BorrowLimit = i64(1) })},
		namedConfig{name: "borrow 33", cfg: with(base(fifteen()...), func(c *Config) { c.Sharing.BorrowLimit = i64(33) })},
		namedConfig{name: "borrow 50 configured", cfg: with(base(worked...), func(c *Config) { c.Sharing.BorrowLimit = i64(50) })},
		namedConfig{name: "borrow 100", cfg: with(base(worked...), func(c *Config) { c.Sharing.BorrowLimit = i64(100) })},
		namedConfig{name: "borrow 10000", cfg: with(base(worked...), func(c *Config) { c.Sharing.BorrowLimit = i64(10000) })},
		namedConfig{name: "absolute limits", cfg: with(base(worked...), func(c *Config) {
			c.Sharing.AbsoluteBorrowLimits = []AbsoluteBorrowLimit{
				{InstanceType: "ml.c5.9xlarge", VCPU: dec("0.001"), MemoryGiB: DecimalFromFloat(2.9)},
				{InstanceType: "ml.g5.12xlarge", Accelerators: i64(8)},
				{InstanceType: "ml.p4d.24xlarge", Accelerators: i64(1), MemoryGiB: dec("0")},
			}
		})},
		namedConfig{name: "absolute limits and percentage", cfg: with(base(worked[0], worked[1]), func(c *Config) {
			c.Sharing.BorrowLimit = i64(200)
			c.Sharing.AbsoluteBorrowLimits = []AbsoluteBorrowLimit{{InstanceType: "ml.g6e.48xlarge", VCPU: dec("12.5")}}
		})},
		namedConfig{name: "absolute limits by count and partition", cfg: with(base(worked...), func(c *Config) {
			c.Sharing.AbsoluteBorrowLimits = []AbsoluteBorrowLimit{
				{InstanceType: "ml.g5.12xlarge", Count: i64(3)},
				{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 5}},
				{InstanceType: "ml.g6e.48xlarge", Count: i64(1), VCPU: dec("12.5")},
				{InstanceType: "ml.c5.9xlarge", Count: i64(0)},
			}
		}), lossy: true},
		namedConfig{name: "absolute limit by a partition the entry does not use", cfg: with(base(
			Entry{InstanceType: "ml.p4d.24xlarge", Count: i64(1)},
		), func(c *Config) {
			c.Sharing.AbsoluteBorrowLimits = []AbsoluteBorrowLimit{{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-3g.20gb", Count: 2}, VCPU: dec("4")}}
		})},
		namedConfig{name: "config level", cfg: with(base(worked[0]), func(c *Config) {
			c.Name, c.Description, c.Team = "A-1--b", `GPUs for "research" — ünïcode`, "r-and-d"
			c.ActivationState, c.PreemptTeamTasks, c.Cohort, c.FairShareWeight = str(ActivationDisabled), str(PreemptNever), str("research.cohort"), 100
		})},
		namedConfig{name: "config level defaults explicit", cfg: with(base(worked[0]), func(c *Config) {
			c.ActivationState, c.PreemptTeamTasks, c.Cohort, c.FairShareWeight = str(ActivationEnabled), str(PreemptLowerPriority), str(DefaultCohort), 1
		})},
		namedConfig{name: "configured efa and zero accelerators", cfg: base(
			Entry{InstanceType: "ml.c5.xlarge", Accelerators: i64(0), VCPU: dec("4"), EFA: i64(3)},
			Entry{InstanceType: "ml.g5.12xlarge", Accelerators: i64(0), VCPU: dec("4")},
			Entry{InstanceType: "ml.p5.48xlarge", Count: i64(2), EFA: i64(1)},
		)},
		namedConfig{name: "partition of 0", cfg: base(Entry{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-7g.40gb", Count: 0}}), lossy: true},
		namedConfig{name: "zero everything", cfg: base(Entry{InstanceType: "ml.g5.12xlarge", Count: i64(0)}, Entry{InstanceType: "ml.c5.large", VCPU: dec("0")})},
		namedConfig{name: "tiny and huge", cfg: base(
			Entry{InstanceType: "ml.c5.large", MemoryGiB: dec("0.000000001")},
			Entry{InstanceType: "ml.p5.48xlarge", Count: i64(MaxAmount)},
			Entry{InstanceType: "ml.m5.large", MemoryGiB: dec("10000000"), VCPU: dec("9999999.999")},
			Entry{InstanceType: "ml.c5n.large", MemoryGiB: dec("9999999.999999999")},
		), lossy: true},
		namedConfig{name: "huge borrow", cfg: with(base(Entry{InstanceType: "ml.p5.48xlarge", Count: i64(MaxAmount)}), func(c *Config) {
			c.Sharing.BorrowLimit = i64(MaxBorrowLimit)
		}), lossy: true},
		namedConfig{name: "mixed kinds", cfg: with(base(
			Entry{InstanceType: "ml.g5.12xlarge", Count: i64(2)},
			Entry{InstanceType: "ml.trn2.48xlarge", Accelerators: i64(4)},
			Entry{InstanceType: "ml.m5.large", Count: i64(2)},
			Entry{InstanceType: "ml.p5.48xlarge", Partition: &Partition{Type: "mig-3g.40gb", Count: 1}},
			Entry{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 2}},
		), func(c *Config) { c.Sharing.BorrowLimit = i64(75) })},
	)
	return out
}

func TestRoundTrip(t *testing.T) {
	cat := catalog.Builtin()
	for _, tc := range roundTripConfigs() {
		t.Run(tc.name, func(t *testing.T) { checkRoundTrip(t, cat, tc.cfg) })
	}
}

// Without the provider's annotations (a queue someone else made), FromClusterQueue infers a
// valid configuration with every value set that renders the same spec.
func TestFromClusterQueueWithoutAnnotations(t *testing.T) {
	cat := catalog.Builtin()
	for _, tc := range roundTripConfigs() {
		t.Run(tc.name, func(t *testing.T) {
			rc, cq := mustRender(t, cat, tc.cfg)
			cq.Annotations = nil
			c2, rc2, err := FromClusterQueue(cat, throughAPIServer(t, cq))
			if err != nil {
				t.Fatal(err)
			}
			// Named after the team: a valid name, which generated configuration can keep.
			if c2.Name != tc.cfg.Team || c2.Team != tc.cfg.Team {
				t.Fatalf("name %q team %q, want both %q", c2.Name, c2.Team, tc.cfg.Team)
			}
			for _, e := range c2.Resources {
				if e.Count != nil || e.VCPU == nil || e.MemoryGiB == nil || e.EFA == nil || (e.Accelerators == nil) == (e.Partition == nil) &&
					!strings.HasPrefix(e.InstanceType, "ml.c5") && !strings.HasPrefix(e.InstanceType, "ml.m5") && !strings.HasPrefix(e.InstanceType, "ml.t3") {
					t.Errorf("not explicit: %s", dumpEntry(e))
				}
			}
			if tc.lossy {
				return
			}
			if ps := Validate(cat, c2); len(ps) > 0 {
				t.Fatalf("inferred config invalid: %v\n%s", ps, dumpConfig(c2))
			}
			rc3, cq3 := mustRender(t, cat, c2)
			if !specEqual(cq.Spec, cq3.Spec) {
				t.Fatalf("inferred config renders another spec:\n%s", dumpConfig(c2))
			}
			// The resolved values are the same as the original's (the strategy may be spelled differently).
			for i := range rc.Resources {
				a, b := rc.Resources[i], rc3.Resources[i]
				if a.Accelerators != b.Accelerators || a.VCPU.Cmp(b.VCPU) != 0 || a.MemoryGiB.Cmp(b.MemoryGiB) != 0 || a.EFA != b.EFA {
					t.Fatalf("resolved entry %d differs", i)
				}
			}
			if dumpResolved(rc2) != dumpResolved(rc3) {
				t.Fatalf("read back and re-resolved differ:\n%s\n%s", dumpResolved(rc2), dumpResolved(rc3))
			}
		})
	}
}

// A queue that looks like what HyperPod's task-governance add-on makes: three covered resources,
// BorrowLimit=100.
func TestFromClusterQueueForeign(t *testing.T) {
	cat := catalog.Builtin()
	q := func(s string) *resource.Quantity { v := mustQ(s); return &v }
	rq := func(name, nominal, borrow, lend string) kueue.ResourceQuota {
		r := kueue.ResourceQuota{Name: corev1.ResourceName(name), NominalQuota: mustQ(nominal)}
		if borrow != "" {
			r.BorrowingLimit = q(borrow)
		}
		if lend != "" {
			r.LendingLimit = q(lend)
		}
		return r
	}
	cq := func(flavors ...kueue.FlavorQuotas) kueue.ClusterQueue {
		return kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "hyperpod-ns-ml-clusterqueue"},
			Spec: kueue.ClusterQueueSpec{CohortName: "shared", ResourceGroups: []kueue.ResourceGroup{{
				CoveredResources: covered(flavors[0]), Flavors: flavors}}}}
	}
	tests := []struct {
		name     string
		cq       kueue.ClusterQueue
		config   string
		resolved string
	}{
		{"HyperPod readout", cq(kueue.FlavorQuotas{Name: "ml.g5.12xlarge", Resources: []kueue.ResourceQuota{
			rq("cpu", "48", "48", ""), rq("memory", "192Gi", "192Gi", ""), rq("nvidia.com/gpu", "4", "4", "")}}),
			`name="ml" desc="" team="ml" act="Enabled" pre="Never" cohort="shared" w=1 strategy="LendAndBorrow" bl=100 abs=[]
{ml.g5.12xlarge count=- acc=4 vcpu=48 mem=192 efa=0 part=-}
`, ""},
		{"DontLend", cq(kueue.FlavorQuotas{Name: "ml.c5.xlarge", Resources: []kueue.ResourceQuota{
			rq("cpu", "4000m", "0", "0"), rq("memory", "8192Mi", "0", "0")}}),
			`name="ml" desc="" team="ml" act="Enabled" pre="Never" cohort="shared" w=1 strategy="DontLend" bl=- abs=[]
{ml.c5.xlarge count=- acc=- vcpu=4 mem=8 efa=0 part=-}
`, ""},
		{"Lend", cq(kueue.FlavorQuotas{Name: "ml.c5.xlarge", Resources: []kueue.ResourceQuota{
			rq("cpu", "4", "0", ""), rq("memory", "8Gi", "0", "")}}),
			`name="ml" desc="" team="ml" act="Enabled" pre="Never" cohort="shared" w=1 strategy="Lend" bl=- abs=[]
{ml.c5.xlarge count=- acc=- vcpu=4 mem=8 efa=0 part=-}
`, ""},
		{"no limits at all", cq(kueue.FlavorQuotas{Name: "ml.c5.xlarge", Resources: []kueue.ResourceQuota{
			rq("cpu", "4", "", ""), rq("memory", "8Gi", "", "")}}),
			`name="ml" desc="" team="ml" act="Enabled" pre="Never" cohort="shared" w=1 strategy="LendAndBorrow" bl=50 abs=[]
{ml.c5.xlarge count=- acc=- vcpu=4 mem=8 efa=0 part=-}
`, ""},
		{"percentage that is not 50", cq(kueue.FlavorQuotas{Name: "ml.g5.12xlarge", Resources: []kueue.ResourceQuota{
			rq("cpu", "48", "12", ""), rq("memory", "192Gi", "48Gi", ""), rq("nvidia.com/gpu", "4", "1", "")}}),
			`name="ml" desc="" team="ml" act="Enabled" pre="Never" cohort="shared" w=1 strategy="LendAndBorrow" bl=25 abs=[]
{ml.g5.12xlarge count=- acc=4 vcpu=48 mem=192 efa=0 part=-}
`, ""},
		{"mixed limits become absolute", cq(kueue.FlavorQuotas{Name: "ml.g5.12xlarge", Resources: []kueue.ResourceQuota{
			rq("cpu", "48", "10500m", ""), rq("memory", "192Gi", "96Gi", ""), rq("nvidia.com/gpu", "4", "3", ""), rq("vpc.amazonaws.com/efa", "1", "0", "")}}),
			`name="ml" desc="" team="ml" act="Enabled" pre="Never" cohort="shared" w=1 strategy="LendAndBorrow" bl=50 abs=[{ml.g5.12xlarge count=- acc=3 vcpu=10.5 mem=- part=-}]
{ml.g5.12xlarge count=- acc=4 vcpu=48 mem=192 efa=1 part=-}
`, ""},
		{"MIG quota becomes a partition", cq(kueue.FlavorQuotas{Name: "ml.p4d.24xlarge", Resources: []kueue.ResourceQuota{
			rq("cpu", "3428m", "0", ""), rq("memory", "42130Mi", "0", ""), rq("nvidia.com/gpu", "0", "0", ""), rq("nvidia.com/mig-1g.5gb", "2", "0", "")}}),
			`name="ml" desc="" team="ml" act="Enabled" pre="Never" cohort="shared" w=1 strategy="Lend" bl=- abs=[]
{ml.p4d.24xlarge count=- acc=- vcpu=3.428 mem=41.142578125 efa=0 part=mig-1g.5gb x 2}
`, ""},
		{"unknown flavor with an accelerator", cq(kueue.FlavorQuotas{Name: "gpu-nodes", Resources: []kueue.ResourceQuota{
			rq("cpu", "8", "0", ""), rq("memory", "1Gi", "0", ""), rq("nvidia.com/gpu", "0", "0", ""), rq("example.com/tpu", "2", "0", "")}}),
			`name="ml" desc="" team="ml" act="Enabled" pre="Never" cohort="shared" w=1 strategy="Lend" bl=- abs=[]
{gpu-nodes count=- acc=2 vcpu=8 mem=1 efa=0 part=-}
`, "example.com/tpu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, rc, err := FromClusterQueue(cat, tt.cq)
			if err != nil {
				t.Fatal(err)
			}
			if got := dumpConfig(c); got != tt.config {
				t.Fatalf("config\n got %s\nwant %s", got, tt.config)
			}
			if tt.resolved != "" && rc.Resources[0].AcceleratorResource != tt.resolved {
				t.Fatalf("accelerator resource %q", rc.Resources[0].AcceleratorResource)
			}
			// The provider would rewrite these queues: their shape is not the rendered one.
			rc.Config.Name = "x"
			if rendered, err := RenderClusterQueue(cat, rc); err == nil && specEqual(rendered.Spec, tt.cq.Spec) {
				t.Fatal("a foreign shape compares equal to the rendered one")
			}
		})
	}
}

func covered(f kueue.FlavorQuotas) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, r := range f.Resources {
		out = append(out, r.Name)
	}
	return out
}

// Out-of-band changes show up in the values read back, so the next plan shows them.
func TestFromClusterQueueDrift(t *testing.T) {
	cat := catalog.Builtin()
	c := base(g512(1), Entry{InstanceType: "ml.c5.9xlarge", MemoryGiB: dec("2.9")})
	c.Sharing.BorrowLimit = i64(100)
	_, cq := mustRender(t, cat, c)
	read := func(mut func(*kueue.ClusterQueue)) (Config, ResolvedConfig, kueue.ClusterQueue) {
		t.Helper()
		x := throughAPIServer(t, cq)
		mut(&x)
		c2, rc2, err := FromClusterQueue(cat, x)
		if err != nil {
			t.Fatal(err)
		}
		return c2, rc2, x
	}

	c2, rc2, _ := read(func(x *kueue.ClusterQueue) {
		x.Spec.ResourceGroups[0].Flavors[0].Resources[0].NominalQuota = mustQ("40")
	})
	if *c2.Resources[0].Count != 1 || rc2.Resources[0].VCPU.Cmp(dec("40")) != 0 || c2.Resources[0].VCPU != nil {
		t.Fatalf("nominal drift: %s %s", dumpConfig(c2), dumpResolved(rc2))
	}
	// The limits were left alone, so the sharing reads back as configured, not as absolute limits.
	if rc2.Strategy != StrategyLendAndBorrow || rc2.BorrowLimit == nil || *rc2.BorrowLimit != 100 ||
		len(rc2.AbsoluteBorrowLimits) != 0 || c2.Sharing.AbsoluteBorrowLimits != nil {
		t.Fatalf("nominal drift changed the sharing read back: %s", dumpResolved(rc2))
	}

	c2, rc2, x := read(func(x *kueue.ClusterQueue) {
		b := mustQ("7")
		x.Spec.ResourceGroups[0].Flavors[0].Resources[0].BorrowingLimit = &b
	})
	if rc2.Strategy != StrategyLendAndBorrow || *rc2.BorrowLimit != 100 || len(rc2.AbsoluteBorrowLimits) != 1 ||
		rc2.AbsoluteBorrowLimits[0].VCPU.Cmp(dec("7")) != 0 || len(c2.Sharing.AbsoluteBorrowLimits) != 1 {
		t.Fatalf("borrowing limit drift: %s", dumpResolved(rc2))
	}
	if r, err := RenderClusterQueue(cat, rc2); err != nil || !specEqual(r.Spec, x.Spec) {
		t.Fatalf("inferred limits do not reproduce the drifted spec: %v", err)
	}

	_, rc2, _ = read(func(x *kueue.ClusterQueue) {
		for i := range x.Spec.ResourceGroups[0].Flavors {
			for j := range x.Spec.ResourceGroups[0].Flavors[i].Resources {
				x.Spec.ResourceGroups[0].Flavors[i].Resources[j].BorrowingLimit = resource.NewQuantity(0, resource.DecimalSI)
			}
		}
	})
	if rc2.Strategy != StrategyLend || rc2.BorrowLimit != nil {
		t.Fatalf("strategy drift: %s", dumpResolved(rc2))
	}

	c2, rc2, _ = read(func(x *kueue.ClusterQueue) {
		x.Spec.StopPolicy = ptr("Hold")
		x.Spec.CohortName = "other"
		x.Spec.Preemption.WithinClusterQueue = "LowerOrNewerEqualPriority"
		x.Spec.FairSharing = nil
	})
	if rc2.ActivationState != ActivationDisabled || rc2.Cohort != "other" || rc2.PreemptTeamTasks != PreemptNever || rc2.FairShareWeight != 1 ||
		c2.ActivationState != nil || c2.Cohort != nil {
		t.Fatalf("config-level drift: %s %s", dumpConfig(c2), dumpResolved(rc2))
	}

	// Something the attributes cannot express: the caller sees it with SpecDrift.
	_, rc2, x = read(func(x *kueue.ClusterQueue) {
		x.Spec.ResourceGroups = append(x.Spec.ResourceGroups, kueue.ResourceGroup{
			CoveredResources: []corev1.ResourceName{"example.com/fpga"},
			Flavors:          []kueue.FlavorQuotas{{Name: "fpga", Resources: []kueue.ResourceQuota{{Name: "example.com/fpga", NominalQuota: mustQ("1")}}}},
		})
	})
	if r, err := RenderClusterQueue(cat, rc2); err != nil || specEqual(r.Spec, x.Spec) {
		t.Fatalf("an extra resource group went unnoticed: %v", err)
	}

	// A flavor removed out of band disappears from the configuration.
	c2, _, _ = read(func(x *kueue.ClusterQueue) {
		x.Spec.ResourceGroups[0].Flavors = x.Spec.ResourceGroups[0].Flavors[1:]
	})
	if len(c2.Resources) != 1 || c2.Resources[0].InstanceType != "ml.c5.9xlarge" || c2.Resources[0].MemoryGiB.Cmp(dec("2.9")) != 0 {
		t.Fatalf("removed flavor: %s", dumpConfig(c2))
	}
}

func TestFromClusterQueueAnnotations(t *testing.T) {
	cat := catalog.Builtin()
	_, cq := mustRender(t, cat, base(g512(1)))

	newer := throughAPIServer(t, cq)
	newer.Annotations[AnnotationConfiguration] = `{"version":2,"resources":[]}`
	if _, _, err := FromClusterQueue(cat, newer); err == nil || !strings.Contains(err.Error(), "upgrade the provider") {
		t.Fatalf("newer annotation: %v", err)
	}

	for _, bad := range []string{`{`, `{"version":1,"resources":[{"instance_type":"ml.g5.12xlarge","count":"one"}]}`, `{"resources":[]}`} {
		x := throughAPIServer(t, cq)
		x.Annotations[AnnotationConfiguration] = bad
		c, _, err := FromClusterQueue(cat, x)
		if err != nil {
			t.Fatalf("%s: %v", bad, err)
		}
		if e := c.Resources[0]; e.Count != nil || e.Accelerators == nil || *e.Accelerators != 4 {
			t.Fatalf("%s: corrupt annotation not read as absent: %s", bad, dumpEntry(e))
		}
	}

	// The team comes from the label, else the namespace selector, else the name.
	x := throughAPIServer(t, cq)
	delete(x.Labels, LabelQuotaAllocationID)
	if c, _, _ := FromClusterQueue(cat, x); c.Team != "team-a" {
		t.Fatal(c.Team)
	}
	x.Spec.NamespaceSelector = nil
	if c, _, _ := FromClusterQueue(cat, x); c.Team != "team-a" {
		t.Fatal(c.Team)
	}
}

// A borrowing limit set by an absolute limit's count or partition and changed out of band reads
// back as another resource_sharing, which plans an update that restores it; left alone, it reads
// back as configured.
func TestFromClusterQueueAbsoluteLimitDrift(t *testing.T) {
	cat := catalog.Builtin()
	c := base(g512(1), Entry{InstanceType: "ml.p4d.24xlarge", Count: i64(1)})
	c.Sharing.AbsoluteBorrowLimits = []AbsoluteBorrowLimit{
		{InstanceType: "ml.g5.12xlarge", Count: i64(2)},
		{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 3}},
	}
	_, cq := mustRender(t, cat, c)
	tests := []struct {
		name     string
		flavor   int
		resource string
		borrow   string // "": unchanged
	}{
		{"unchanged", 0, "", ""},
		{"cpu under a count", 0, "cpu", "10"},
		{"gpu under a count", 0, "nvidia.com/gpu", "1"},
		{"efa under a count", 0, "vpc.amazonaws.com/efa", "0"},
		{"partition", 1, "nvidia.com/mig-1g.5gb", "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := throughAPIServer(t, cq)
			if tt.borrow != "" {
				rs := x.Spec.ResourceGroups[0].Flavors[tt.flavor].Resources
				i := slices.IndexFunc(rs, func(r kueue.ResourceQuota) bool { return string(r.Name) == tt.resource })
				b := mustQ(tt.borrow)
				rs[i].BorrowingLimit = &b
			}
			c2, _, err := FromClusterQueue(cat, x)
			if err != nil {
				t.Fatal(err)
			}
			got, want := dumpLimits(c2.Sharing.AbsoluteBorrowLimits)+fmtInt(c2.Sharing.BorrowLimit), dumpLimits(c.Sharing.AbsoluteBorrowLimits)+fmtInt(c.Sharing.BorrowLimit)
			if (got == want) != (tt.borrow == "") {
				t.Fatalf("resource_sharing read back %s, configured %s", got, want)
			}
		})
	}
}
