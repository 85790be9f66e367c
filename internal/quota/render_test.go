package quota

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

var baseCovered = []string{"cpu", "memory", "nvidia.com/gpu", "aws.amazon.com/neurondevice", "vpc.amazonaws.com/efa"}

func names(rs []corev1.ResourceName) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return out
}

// checkFlavor asserts one flavor row: names, nominal quotas, borrowing and lending limits
// ("" = unset), comparing quantities by value.
func checkFlavor(t *testing.T, f kueue.FlavorQuotas, name string, covered, nominal, borrow, lend []string) {
	t.Helper()
	if f.Name != name {
		t.Fatalf("flavor %q, want %q", f.Name, name)
	}
	if len(f.Resources) != len(covered) {
		t.Fatalf("flavor %s has %d resources, want %d", name, len(f.Resources), len(covered))
	}
	qp := func(s string) *resource.Quantity {
		if s == "" {
			return nil
		}
		q := mustQ(s)
		return &q
	}
	for i, r := range f.Resources {
		if string(r.Name) != covered[i] {
			t.Errorf("%s resource %d is %s, want %s", name, i, r.Name, covered[i])
		}
		if r.NominalQuota.Cmp(mustQ(nominal[i])) != 0 {
			t.Errorf("%s %s nominal %s, want %s", name, r.Name, r.NominalQuota.String(), nominal[i])
		}
		if !quantityPtrEqual(r.BorrowingLimit, qp(borrow[i])) {
			t.Errorf("%s %s borrowingLimit %v, want %q", name, r.Name, r.BorrowingLimit, borrow[i])
		}
		if !quantityPtrEqual(r.LendingLimit, qp(lend[i])) {
			t.Errorf("%s %s lendingLimit %v, want %q", name, r.Name, r.LendingLimit, lend[i])
		}
	}
}

func none(n int) []string { return make([]string, n) }

func zeros(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "0"
	}
	return out
}

func render(t *testing.T, cat *catalog.Catalog, c Config) kueue.ClusterQueue {
	t.Helper()
	_, cq := mustRender(t, cat, c)
	return cq
}

func TestRenderLendAndBorrowDefault(t *testing.T) {
	c := base(g512(1))
	c.Description = "GPU quota"
	cq := render(t, catalog.Builtin(), c)

	if cq.APIVersion != "kueue.x-k8s.io/v1beta2" || cq.Kind != "ClusterQueue" {
		t.Errorf("TypeMeta %+v", cq.TypeMeta)
	}
	if cq.Name != "hyperpod-ns-team-a-clusterqueue" || cq.Namespace != "" {
		t.Errorf("name %q/%q", cq.Namespace, cq.Name)
	}
	wantLabels := map[string]string{"app.kubernetes.io/managed-by": "terraform-provider-hyperpod", "sagemaker.amazonaws.com/quota-allocation-id": "team-a"}
	if len(cq.Labels) != 2 || cq.Labels["app.kubernetes.io/managed-by"] != wantLabels["app.kubernetes.io/managed-by"] ||
		cq.Labels["sagemaker.amazonaws.com/quota-allocation-id"] != "team-a" {
		t.Errorf("labels %v", cq.Labels)
	}
	if cq.Annotations[AnnotationName] != "team-a-quota" || cq.Annotations[AnnotationDescription] != "GPU quota" {
		t.Errorf("annotations %v", cq.Annotations)
	}
	if got, want := cq.Annotations[AnnotationConfiguration], `{"version":1,"resources":[{"instance_type":"ml.g5.12xlarge","count":"1"}]}`; got != want {
		t.Errorf("configuration annotation\n got %s\nwant %s", got, want)
	}
	s := cq.Spec
	if s.CohortName != "hyperpod-cohort" {
		t.Errorf("cohort %q", s.CohortName)
	}
	if s.NamespaceSelector == nil || len(s.NamespaceSelector.MatchLabels) != 1 || s.NamespaceSelector.MatchLabels["sagemaker.amazonaws.com/quota-allocation-id"] != "team-a" ||
		len(s.NamespaceSelector.MatchExpressions) != 0 {
		t.Errorf("namespaceSelector %+v", s.NamespaceSelector)
	}
	if p := s.Preemption; p == nil || p.ReclaimWithinCohort != "Any" || p.BorrowWithinCohort == nil || p.BorrowWithinCohort.Policy != "Never" ||
		p.WithinClusterQueue != "LowerPriority" {
		t.Errorf("preemption %+v", s.Preemption)
	}
	if s.FairSharing == nil || s.FairSharing.Weight == nil || s.FairSharing.Weight.Cmp(mustQ("0")) != 0 {
		t.Errorf("fairSharing %+v", s.FairSharing)
	}
	if s.StopPolicy == nil || *s.StopPolicy != "None" {
		t.Errorf("stopPolicy %v", s.StopPolicy)
	}
	if len(s.ResourceGroups) != 1 {
		t.Fatalf("%d resource groups", len(s.ResourceGroups))
	}
	g := s.ResourceGroups[0]
	if !slices.Equal(names(g.CoveredResources), baseCovered) || len(g.Flavors) != 1 {
		t.Fatalf("group %+v", g)
	}
	// The figures AWS reports for Count=1 of ml.g5.12xlarge (48 cpu, 192Gi, 4 GPUs); the default borrow limit makes 50 % borrowable.
	checkFlavor(t, g.Flavors[0], "ml.g5.12xlarge", baseCovered,
		[]string{"48", "192Gi", "4", "0", "1"}, []string{"24", "96Gi", "2", "0", "0"}, none(5))
	// Canonical spellings on the wire.
	if got := g.Flavors[0].Resources[1].NominalQuota.String(); got != "192Gi" {
		t.Errorf("memory spelled %q", got)
	}
}

func TestRenderStrategies(t *testing.T) {
	cat := catalog.Builtin()
	tests := []struct {
		name         string
		sharing      Sharing
		borrow, lend []string
	}{
		{"LendAndBorrow 100", Sharing{BorrowLimit: i64(100)}, []string{"48", "192Gi", "4", "0", "1"}, none(5)},
		{"LendAndBorrow 0", Sharing{Strategy: str(StrategyLendAndBorrow), BorrowLimit: i64(0)}, zeros(5), none(5)},
		{"LendAndBorrow 10000", Sharing{BorrowLimit: i64(10000)}, []string{"4800", "19200Gi", "400", "0", "100"}, none(5)},
		{"LendAndBorrow 33 rounds down per unit", Sharing{BorrowLimit: i64(33)}, []string{"15840m", "64880Mi", "1", "0", "0"}, none(5)},
		{"Lend", Sharing{Strategy: str(StrategyLend)}, zeros(5), none(5)},
		{"DontLend", Sharing{Strategy: str(StrategyDontLend)}, zeros(5), zeros(5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base(g512(1))
			c.Sharing = tt.sharing
			cq := render(t, cat, c)
			checkFlavor(t, cq.Spec.ResourceGroups[0].Flavors[0], "ml.g5.12xlarge", baseCovered,
				[]string{"48", "192Gi", "4", "0", "1"}, tt.borrow, tt.lend)
		})
	}
}

func TestRenderConfigLevel(t *testing.T) {
	c := base(g512(1))
	c.ActivationState, c.PreemptTeamTasks, c.Cohort, c.FairShareWeight = str(ActivationDisabled), str(PreemptNever), str("research"), 7
	cq := render(t, catalog.Builtin(), c)
	s := cq.Spec
	if *s.StopPolicy != "Hold" || s.Preemption.WithinClusterQueue != "Never" || s.Preemption.ReclaimWithinCohort != "Any" ||
		s.CohortName != "research" || s.FairSharing.Weight.Cmp(mustQ("7")) != 0 {
		t.Fatalf("spec %+v", s)
	}
	if cq.Annotations[AnnotationDescription] != "" {
		t.Fatal("description")
	}
	if _, ok := cq.Annotations[AnnotationDescription]; !ok {
		t.Fatal("an empty description must still be written, so server-side apply keeps owning it")
	}
}

func TestRenderAbsoluteBorrowLimits(t *testing.T) {
	c := base(g512(1), Entry{InstanceType: "ml.c5.9xlarge", Count: i64(1)})
	c.Sharing = Sharing{BorrowLimit: i64(50), AbsoluteBorrowLimits: []AbsoluteBorrowLimit{
		{InstanceType: "ml.g5.12xlarge", Accelerators: i64(1), VCPU: dec("2.5"), MemoryGiB: DecimalFromFloat(2.9)},
		{InstanceType: "ml.c5.9xlarge", VCPU: dec("100")},
	}}
	cq := render(t, catalog.Builtin(), c)
	fl := cq.Spec.ResourceGroups[0].Flavors
	checkFlavor(t, fl[0], "ml.g5.12xlarge", baseCovered,
		[]string{"48", "192Gi", "4", "0", "1"}, []string{"2500m", "3113851289600m", "1", "0", "0"}, none(5))
	checkFlavor(t, fl[1], "ml.c5.9xlarge", baseCovered,
		[]string{"36", "72Gi", "0", "0", "0"}, []string{"100", "36Gi", "0", "0", "0"}, none(5))
	if !strings.Contains(cq.Annotations[AnnotationConfiguration],
		`"resource_sharing":{"borrow_limit":"50","absolute_borrow_limits":[{"instance_type":"ml.g5.12xlarge","accelerators":"1","vcpu":"2.5","memory_in_gib":"2.9"},{"instance_type":"ml.c5.9xlarge","vcpu":"100"}]}`) {
		t.Errorf("annotation %s", cq.Annotations[AnnotationConfiguration])
	}
}

// An absolute limit's count caps every resource of its flavor at count instances' worth, an
// explicit amount beside it wins, and a partition caps its MIG resource, which the group then
// covers even where no entry uses it.
func TestRenderAbsoluteBorrowLimitsByCountAndPartition(t *testing.T) {
	cat := catalog.Builtin()
	p4d := Entry{InstanceType: "ml.p4d.24xlarge", Count: i64(1)}
	covered := append(slices.Clone(baseCovered), "nvidia.com/mig-1g.5gb")
	tests := []struct {
		name   string
		limits []AbsoluteBorrowLimit
		g5, p  []string // borrowing limits of ml.g5.12xlarge and ml.p4d.24xlarge, in covered order
	}{
		{"count", []AbsoluteBorrowLimit{{InstanceType: "ml.g5.12xlarge", Count: i64(2)}},
			[]string{"96", "384Gi", "8", "0", "2", "0"}, []string{"48", "576Gi", "4", "0", "2", "0"}},
		{"count 0 stops borrowing", []AbsoluteBorrowLimit{{InstanceType: "ml.g5.12xlarge", Count: i64(0)}},
			zeros(6), []string{"48", "576Gi", "4", "0", "2", "0"}},
		{"explicit vcpu and memory win over count", []AbsoluteBorrowLimit{
			{InstanceType: "ml.g5.12xlarge", Count: i64(2), VCPU: dec("10"), MemoryGiB: dec("1.5")}},
			[]string{"10", "1536Mi", "8", "0", "2", "0"}, []string{"48", "576Gi", "4", "0", "2", "0"}},
		{"partition", []AbsoluteBorrowLimit{{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 3}}},
			[]string{"24", "96Gi", "2", "0", "0", "0"}, []string{"48", "576Gi", "4", "0", "2", "3"}},
		{"partition and vcpu", []AbsoluteBorrowLimit{{InstanceType: "ml.p4d.24xlarge", VCPU: dec("0.5"), Partition: &Partition{Type: "mig-1g.5gb", Count: 7}}},
			[]string{"24", "96Gi", "2", "0", "0", "0"}, []string{"500m", "576Gi", "4", "0", "2", "7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base(g512(1), p4d)
			c.Sharing.AbsoluteBorrowLimits = tt.limits
			cq := render(t, cat, c)
			g := cq.Spec.ResourceGroups[0]
			want, g5, p := covered, tt.g5, tt.p
			if !slices.ContainsFunc(tt.limits, func(a AbsoluteBorrowLimit) bool { return a.Partition != nil }) {
				want, g5, p = baseCovered, g5[:5], p[:5] // no partition anywhere: no MIG resource
			}
			if !slices.Equal(names(g.CoveredResources), want) {
				t.Fatalf("covered %v, want %v", g.CoveredResources, want)
			}
			nominalG5 := []string{"48", "192Gi", "4", "0", "1", "0"}[:len(want)]
			nominalP4d := []string{"96", "1152Gi", "8", "0", "4", "0"}[:len(want)]
			checkFlavor(t, g.Flavors[0], "ml.g5.12xlarge", want, nominalG5, g5, none(len(want)))
			checkFlavor(t, g.Flavors[1], "ml.p4d.24xlarge", want, nominalP4d, p, none(len(want)))
		})
	}
}

func TestRenderMIGPartition(t *testing.T) {
	c := base(Entry{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 2}})
	cq := render(t, catalog.Builtin(), c)
	g := cq.Spec.ResourceGroups[0]
	covered := append(slices.Clone(baseCovered), "nvidia.com/mig-1g.5gb")
	if !slices.Equal(names(g.CoveredResources), covered) {
		t.Fatalf("covered %v", g.CoveredResources)
	}
	// vcpu 3.428, memory 41.142578125 GiB = 42130 MiB; 50 %: 1714m, 21065Mi, 2 EFA, 1 partition.
	checkFlavor(t, g.Flavors[0], "ml.p4d.24xlarge", covered,
		[]string{"3428m", "42130Mi", "0", "0", "4", "2"}, []string{"1714m", "21065Mi", "0", "0", "2", "1"}, none(6))
}

func TestRenderCPUOnlyExactMemory(t *testing.T) {
	c := base(Entry{InstanceType: "ml.c5.9xlarge", MemoryGiB: DecimalFromFloat(2.9)})
	cq := render(t, catalog.Builtin(), c)
	f := cq.Spec.ResourceGroups[0].Flavors[0]
	// 2.9 GiB = 2969.6 MiB = 3113851289.6 bytes; the borrowing limit rounds 1484.8 MiB down.
	checkFlavor(t, f, "ml.c5.9xlarge", baseCovered,
		[]string{"1450m", "3113851289600m", "0", "0", "0"}, []string{"725m", "1484Mi", "0", "0", "0"}, none(5))
	if got := f.Resources[1].NominalQuota.String(); got != "3113851289600m" {
		t.Errorf("memory spelled %q", got)
	}
	b, _ := json.Marshal(f.Resources[0])
	if string(b) != `{"name":"cpu","nominalQuota":"1450m","borrowingLimit":"725m"}` {
		t.Errorf("json %s", b)
	}
}

func TestRenderMixedAccelerators(t *testing.T) {
	c := base(
		g512(1),
		Entry{InstanceType: "ml.trn1.32xlarge", Accelerators: i64(8)},
		Entry{InstanceType: "ml.m5.large", Count: i64(2)},
		Entry{InstanceType: "ml.p5.48xlarge", Partition: &Partition{Type: "mig-3g.40gb", Count: 1}},
		Entry{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 2}},
	)
	c.Sharing.Strategy = str(StrategyDontLend)
	cq := render(t, catalog.Builtin(), c)
	g := cq.Spec.ResourceGroups[0]
	covered := append(slices.Clone(baseCovered), "nvidia.com/mig-1g.5gb", "nvidia.com/mig-3g.40gb")
	if !slices.Equal(names(g.CoveredResources), covered) {
		t.Fatalf("covered %v", g.CoveredResources)
	}
	if len(g.Flavors) != 5 {
		t.Fatalf("%d flavors", len(g.Flavors))
	}
	z := zeros(7)
	checkFlavor(t, g.Flavors[0], "ml.g5.12xlarge", covered, []string{"48", "192Gi", "4", "0", "1", "0", "0"}, z, z)
	checkFlavor(t, g.Flavors[1], "ml.trn1.32xlarge", covered, []string{"64", "256Gi", "0", "8", "8", "0", "0"}, z, z)
	checkFlavor(t, g.Flavors[2], "ml.m5.large", covered, []string{"4", "16Gi", "0", "0", "0", "0", "0"}, z, z)
	// p5.48xlarge 1 x 3g: r = 3/56 -> vcpu 10.285, memory 109.7142... -> 112347 MiB, efa 32.
	checkFlavor(t, g.Flavors[3], "ml.p5.48xlarge", covered, []string{"10285m", "112347Mi", "0", "0", "32", "0", "1"}, z, z)
	checkFlavor(t, g.Flavors[4], "ml.p4d.24xlarge", covered, []string{"3428m", "42130Mi", "0", "0", "4", "2", "0"}, z, z)
}

// A provider override may name another accelerator resource: it is covered after the five
// standard resources and before the MIG resources.
func TestRenderOverrideAcceleratorResource(t *testing.T) {
	cat, errs := catalog.New(map[string]catalog.Override{"ml.trn2.48xlarge": {AcceleratorResource: str("aws.amazon.com/neuron")}})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	c := base(Entry{InstanceType: "ml.trn2.48xlarge", Accelerators: i64(4)},
		Entry{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 1}})
	c.Sharing.Strategy = str(StrategyLend)
	cq := render(t, cat, c)
	g := cq.Spec.ResourceGroups[0]
	covered := append(slices.Clone(baseCovered), "aws.amazon.com/neuron", "nvidia.com/mig-1g.5gb")
	if !slices.Equal(names(g.CoveredResources), covered) {
		t.Fatalf("covered %v", g.CoveredResources)
	}
	checkFlavor(t, g.Flavors[0], "ml.trn2.48xlarge", covered, []string{"48", "512Gi", "0", "0", "16", "4", "0"}, zeros(7), none(7))
	checkRoundTrip(t, cat, c)
}

func TestRenderErrors(t *testing.T) {
	cat := catalog.Builtin()
	good := func() ResolvedConfig {
		rc, ps := Plan(cat, base(g512(1)))
		if len(ps) > 0 {
			t.Fatal(ps)
		}
		return rc
	}
	tests := []struct {
		name string
		mut  func(*ResolvedConfig)
		want string
	}{
		{"no team", func(rc *ResolvedConfig) { rc.Config.Team = "" }, "without a team"},
		{"empty cohort", func(rc *ResolvedConfig) { rc.Cohort = "" }, "cohort is empty"},
		{"negative quota", func(rc *ResolvedConfig) { rc.Resources[0].Accelerators = -1 }, "negative"},
		{"negative vcpu", func(rc *ResolvedConfig) { rc.Resources[0].VCPU = dec("-1") }, "negative"},
		{"sub-millicore", func(rc *ResolvedConfig) { rc.Resources[0].VCPU = dec("0.0001") }, "millicores"},
		{"sub-nanobyte memory", func(rc *ResolvedConfig) { rc.Resources[0].MemoryGiB = dec("1/3") }, "exactly"},
		{"negative borrow limit", func(rc *ResolvedConfig) { rc.BorrowLimit = i64(-1) }, "negative"},
		{"negative absolute limit", func(rc *ResolvedConfig) {
			rc.AbsoluteBorrowLimits = []AbsoluteBorrowLimit{{InstanceType: "ml.g5.12xlarge", VCPU: dec("-1")}}
		}, "negative"},
		{"absolute limit for a missing type", func(rc *ResolvedConfig) {
			rc.AbsoluteBorrowLimits = []AbsoluteBorrowLimit{{InstanceType: "ml.c5.xlarge", VCPU: dec("1")}}
		}, "no quota"},
		{"absolute limit by count of an unknown type", func(rc *ResolvedConfig) {
			rc.Resources[0].Configured.InstanceType = "ml.x9.large"
			rc.AbsoluteBorrowLimits = []AbsoluteBorrowLimit{{InstanceType: "ml.x9.large", Count: i64(1)}}
		}, "instance type is unknown"},
		{"absolute limit by a bad partition", func(rc *ResolvedConfig) {
			rc.AbsoluteBorrowLimits = []AbsoluteBorrowLimit{{InstanceType: "ml.g5.12xlarge", Partition: &Partition{Type: "x", Count: 1}}}
		}, "MIG profile"},
		{"unknown strategy", func(rc *ResolvedConfig) { rc.Strategy = "Share" }, "strategy"},
		{"unknown activation", func(rc *ResolvedConfig) { rc.ActivationState = "" }, "activation_state"},
		{"unknown preemption", func(rc *ResolvedConfig) { rc.PreemptTeamTasks = "Always" }, "preempt_team_tasks"},
		{"negative weight", func(rc *ResolvedConfig) { rc.FairShareWeight = -1 }, "negative"},
		{"duplicate type", func(rc *ResolvedConfig) { rc.Resources = append(rc.Resources, rc.Resources[0]) }, "twice"},
		{"accelerator resource cpu", func(rc *ResolvedConfig) { rc.Resources[0].AcceleratorResource = "cpu" }, "cannot be an accelerator"},
		{"bad partition", func(rc *ResolvedConfig) { rc.Resources[0].Configured.Partition = &Partition{Type: "x", Count: 1} }, "MIG profile"},
	}
	for _, tt := range tests {
		rc := good()
		tt.mut(&rc)
		if _, err := RenderClusterQueue(cat, rc); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestRenderResourceFlavor(t *testing.T) {
	rf := RenderResourceFlavor("ml.g5.12xlarge")
	if rf.APIVersion != "kueue.x-k8s.io/v1beta2" || rf.Kind != "ResourceFlavor" || rf.Name != "ml.g5.12xlarge" ||
		rf.Labels[LabelManagedBy] != ManagedByValue || len(rf.Labels) != 1 ||
		len(rf.Spec.NodeLabels) != 1 || rf.Spec.NodeLabels["node.kubernetes.io/instance-type"] != "ml.g5.12xlarge" {
		t.Fatalf("%+v", rf)
	}
}

func TestNames(t *testing.T) {
	if NamespaceName("a") != "hyperpod-ns-a" || LocalQueueName("a") != "hyperpod-ns-a-localqueue" ||
		ClusterQueueName("a") != "hyperpod-ns-a-clusterqueue" || MIGResourceName("mig-1g.5gb") != "nvidia.com/mig-1g.5gb" {
		t.Fatal("names")
	}
	if team, ok := TeamFromClusterQueueName("hyperpod-ns-ml-a-clusterqueue"); !ok || team != "ml-a" {
		t.Fatal(team)
	}
	for _, n := range []string{"other", "hyperpod-ns--clusterqueue", "hyperpod-ns-a-localqueue"} {
		if _, ok := TeamFromClusterQueueName(n); ok {
			t.Fatal(n)
		}
	}
}

func TestExactQuantity(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0", "48": "48", "1.45": "1450m", "3113851289.6": "3113851289600m", "206158430208": "192Gi",
		// Beyond int64 in millis, still exact.
		"21990232555520000000": "21990232555520000000", "10737418240000000.5": "10737418240000000500m",
		"0.000000001": "1n",
	} {
		q, err := exactQuantity(dec(in), resource.DecimalSI)
		if in == "206158430208" {
			q, err = exactQuantity(dec(in), resource.BinarySI)
		}
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if q.Cmp(mustQ(want)) != 0 || ratFromQuantity(q).Cmp(dec(in)) != 0 {
			t.Errorf("%s -> %s (value %s), want %s", in, q.String(), RatString(ratFromQuantity(q)), want)
		}
	}
	if _, err := exactQuantity(dec("0.0000000001"), resource.DecimalSI); err == nil {
		t.Error("sub-nano accepted")
	}
}
