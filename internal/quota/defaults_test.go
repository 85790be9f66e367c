package quota

import (
	"math"
	"math/big"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

func TestResolveWorkedExamples(t *testing.T) {
	cat := catalog.Builtin()
	tests := []struct {
		name  string
		entry Entry
		acc   int64
		vcpu  string
		mem   string
		efa   int64
	}{
		// The worked examples of the ratio rule, as the product documents them.
		{"g5.12xlarge count 1", Entry{InstanceType: "ml.g5.12xlarge", Count: i64(1)}, 4, "48", "192", 1},
		{"g6e.48xlarge accelerators 4", Entry{InstanceType: "ml.g6e.48xlarge", Accelerators: i64(4)}, 4, "96", "768", 4},
		{"g5.xlarge memory 8", Entry{InstanceType: "ml.g5.xlarge", MemoryGiB: dec("8")}, 0, "2", "8", 0},
		{"trn1.32xlarge accelerators 8", Entry{InstanceType: "ml.trn1.32xlarge", Accelerators: i64(8)}, 8, "64", "256", 8},
		{"p4d partition mig-1g.5gb x 2", Entry{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 2}},
			0, "3.428", "41.142578125", 4},
		{"g5.24xlarge all configured", Entry{InstanceType: "ml.g5.24xlarge", Accelerators: i64(16), VCPU: dec("200"), MemoryGiB: dec("2")},
			16, "200", "2", 4},
		{"c5.9xlarge memory 2.9 (exact decimal)", Entry{InstanceType: "ml.c5.9xlarge", MemoryGiB: DecimalFromFloat(2.9)}, 0, "1.45", "2.9", 0},

		// More cases.
		{"count 3 multiplies everything", Entry{InstanceType: "ml.p5.48xlarge", Count: i64(3)}, 24, "576", "6144", 96},
		{"count 0", Entry{InstanceType: "ml.p5.48xlarge", Count: i64(0)}, 0, "0", "0", 0},
		{"vcpu source", Entry{InstanceType: "ml.g5.12xlarge", VCPU: dec("12")}, 0, "12", "48", 1},
		{"vcpu source, memory floored to a MiB", Entry{InstanceType: "ml.c5n.large", VCPU: dec("1")}, 0, "1", "2.625", 0},
		{"memory source, vcpu floored to a millicore", Entry{InstanceType: "ml.c5.xlarge", MemoryGiB: dec("1")}, 0, "0.5", "1", 0},
		{"vcpu floor", Entry{InstanceType: "ml.g5.12xlarge", MemoryGiB: dec("1")}, 0, "0.25", "1", 1},
		{"efa = ceil(r) x C.efa", Entry{InstanceType: "ml.p5.48xlarge", Accelerators: i64(9)}, 9, "216", "2304", 64},
		{"configured efa wins", Entry{InstanceType: "ml.p5.48xlarge", Accelerators: i64(8), EFA: i64(0)}, 8, "192", "2048", 0},
		{"accelerators 0 on a GPU type is a ratio of 0", Entry{InstanceType: "ml.g5.12xlarge", Accelerators: i64(0), VCPU: dec("4")}, 0, "4", "0", 0},
		{"judgement call: accelerators 0 on a CPU type is skipped", Entry{InstanceType: "ml.c5.xlarge", Accelerators: i64(0), VCPU: dec("4")}, 0, "4", "8", 0},
		{"partition beats vcpu", Entry{InstanceType: "ml.p5.48xlarge", Partition: &Partition{Type: "mig-3g.40gb", Count: 7}, VCPU: dec("1")},
			0, "1", "768", 32},
		{"count beats accelerators", Entry{InstanceType: "ml.g5.12xlarge", Count: i64(2), Accelerators: i64(1)}, 1, "96", "384", 2},
		{"CPU-only count", Entry{InstanceType: "ml.m5.24xlarge", Count: i64(2)}, 0, "192", "768", 0},
		{"neuron trn2 count", Entry{InstanceType: "ml.trn2.3xlarge", Count: i64(5)}, 5, "60", "640", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := resolve(cat, tt.entry, floorExact)
			if r.Accelerators != tt.acc || r.VCPU.Cmp(dec(tt.vcpu)) != 0 || r.MemoryGiB.Cmp(dec(tt.mem)) != 0 || r.EFA != tt.efa {
				t.Fatalf("got acc=%d vcpu=%s mem=%s efa=%d, want acc=%d vcpu=%s mem=%s efa=%d",
					r.Accelerators, RatString(r.VCPU), RatString(r.MemoryGiB), r.EFA, tt.acc, tt.vcpu, tt.mem, tt.efa)
			}
			if got, want := dumpEntry(r.Configured), dumpEntry(tt.entry); got != want {
				t.Fatalf("configured entry changed: %s, want %s", got, want)
			}
		})
	}
}

// Binary floats give 1.449 for the c5.9xlarge example; the decimal path must give 1.45.
func TestResolveExactDecimal(t *testing.T) {
	r := resolve(catalog.Builtin(), Entry{InstanceType: "ml.c5.9xlarge", MemoryGiB: DecimalFromFloat(2.9)}, floorExact)
	if RatString(r.VCPU) != "1.45" || FloatFromRat(r.VCPU) != 1.45 {
		t.Fatalf("vcpu = %s", RatString(r.VCPU))
	}
	memory, perInstance, vcpu := 2.9, 72.0, 36.0
	if naive := math.Floor(memory/perInstance*vcpu*1000) / 1000; naive != 1.449 {
		t.Fatalf("float arithmetic unexpectedly exact (%v); the test no longer shows the point", naive)
	}
}

// An entry that nothing sizes is rejected by the pipeline, and still resolves without nil values.
func TestResolveProblems(t *testing.T) {
	cat := catalog.Builtin()
	tests := []struct {
		entry Entry
		path  []string
		sum   string
	}{
		{Entry{InstanceType: "ml.g5.12xlarg", Count: i64(1)}, []string{"instance_type"}, "Unknown instance type"},
		{Entry{InstanceType: "ml.g5.12xlarge"}, nil, "No quota size"},
		{Entry{InstanceType: "ml.c5.xlarge", Accelerators: i64(0)}, []string{"accelerators"}, "No quota size"},
		{Entry{InstanceType: "ml.c5.xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 1}}, []string{"accelerator_partition"}, "Instance type has no accelerators"},
		{Entry{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "1g.5gb", Count: 1}}, []string{"accelerator_partition", "type"}, "Invalid MIG profile"},
	}
	for _, tt := range tests {
		_, ps := PlanEntry(cat, tt.entry)
		if len(ps) != 1 || ps[0].Summary != tt.sum || !equalPath(ps[0].Path, tt.path) || ps[0].Entry != 0 {
			t.Errorf("%s: problems %v", dumpEntry(tt.entry), ps)
		}
		if r := resolve(cat, tt.entry, floorExact); r.VCPU == nil || r.MemoryGiB == nil {
			t.Errorf("%s: nil values after a problem", dumpEntry(tt.entry))
		}
	}
}

func TestDefaultsConfigLevel(t *testing.T) {
	cat := catalog.Builtin()
	e := Entry{InstanceType: "ml.g5.12xlarge", Count: i64(1)}
	rc, ps := Plan(cat, base(e))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if rc.ActivationState != ActivationEnabled || rc.PreemptTeamTasks != PreemptLowerPriority || rc.Cohort != DefaultCohort ||
		rc.Strategy != StrategyLendAndBorrow || rc.BorrowLimit == nil || *rc.BorrowLimit != 50 || rc.FairShareWeight != 0 {
		t.Fatalf("defaults: %s", dumpResolved(rc))
	}
	for _, s := range []string{StrategyLend, StrategyDontLend} {
		c := base(e)
		c.Sharing.Strategy = str(s)
		rc := Defaults(cat, c)
		if rc.Strategy != s || rc.BorrowLimit != nil {
			t.Fatalf("%s: borrow limit %v", s, rc.BorrowLimit)
		}
	}
	c := base(e)
	c.ActivationState, c.PreemptTeamTasks, c.Cohort, c.FairShareWeight = str(ActivationDisabled), str(PreemptNever), str("shared"), 7
	c.Sharing.BorrowLimit = i64(250)
	rc = Defaults(cat, c)
	if rc.ActivationState != ActivationDisabled || rc.PreemptTeamTasks != PreemptNever || rc.Cohort != "shared" ||
		*rc.BorrowLimit != 250 || rc.FairShareWeight != 7 {
		t.Fatalf("configured: %s", dumpResolved(rc))
	}
	// The input is not modified, and the result shares no memory with it.
	*rc.Config.Resources[0].Count = 99
	if *c.Resources[0].Count != 1 {
		t.Fatal("Defaults aliases the input")
	}
}

func TestDefaultsUnknown(t *testing.T) {
	cat := catalog.Builtin()
	c := base(Entry{InstanceType: "ml.g5.12xlarge", Count: i64(1)}, Entry{InstanceType: "ml.c5.xlarge"})
	c.MarkUnknown("resources", "1", "vcpu")
	c.MarkUnknown("resource_sharing", "strategy")
	c.MarkUnknown("cohort")
	if ps := Validate(cat, c); len(ps) > 0 {
		t.Fatal(ps)
	}
	rc := Defaults(cat, c)
	if rc.Resources[0].Unknown || !rc.Resources[1].Unknown || rc.Resources[0].VCPU.Cmp(dec("48")) != 0 {
		t.Fatalf("resources: %s", dumpResolved(rc))
	}
	if rc.Strategy != "" || rc.BorrowLimit != nil || rc.Cohort != "" || rc.ActivationState != ActivationEnabled {
		t.Fatalf("unknown config-level values: %s", dumpResolved(rc))
	}
	if _, err := RenderClusterQueue(cat, rc); err == nil {
		t.Fatal("rendering unknown values succeeded")
	}
}

func TestDecimalFromFloat(t *testing.T) {
	a, b := 0.1, 0.2 // variables: constant arithmetic would be exact
	tests := []struct {
		in   float64
		want string
	}{
		{2.9, "29/10"}, {a + b, "30000000000000004/100000000000000000"}, {48, "48"}, {-1.5, "-3/2"},
		{1e21, "1000000000000000000000"}, {5e-324, "5/1000...0"}, {41.142578125, "42130/1024"},
	}
	for _, tt := range tests {
		got := DecimalFromFloat(tt.in)
		if tt.in == 5e-324 {
			if got.Sign() <= 0 || FloatFromRat(got) != 5e-324 {
				t.Errorf("DecimalFromFloat(5e-324) = %v", got)
			}
			continue
		}
		if got.Cmp(dec(tt.want)) != 0 {
			t.Errorf("DecimalFromFloat(%v) = %s, want %s", tt.in, got.RatString(), tt.want)
		}
		if FloatFromRat(got) != tt.in {
			t.Errorf("FloatFromRat(DecimalFromFloat(%v)) = %v", tt.in, FloatFromRat(got))
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if DecimalFromFloat(f) != nil {
			t.Errorf("DecimalFromFloat(%v) not nil", f)
		}
	}
	if FloatFromRat(nil) != 0 {
		t.Error("FloatFromRat(nil)")
	}
}

func TestRatString(t *testing.T) {
	for in, want := range map[string]string{
		"29/10": "2.9", "42130/1024": "41.142578125", "48": "48", "-3/2": "-1.5", "1/3": "1/3", "0": "0",
		"1/1000000000": "0.000000001", "7/6": "7/6",
	} {
		r := dec(in)
		if got := RatString(r); got != want {
			t.Errorf("RatString(%s) = %q, want %q", in, got, want)
		}
		if back, ok := parseRat(RatString(r)); !ok || back.Cmp(r) != 0 {
			t.Errorf("RatString(%s) does not parse back", in)
		}
	}
}

func TestFloorCeil(t *testing.T) {
	for _, tt := range []struct{ in, floor1000, ceil string }{
		{"3.4285714", "3.428", "4"}, {"-0.5", "-0.5", "0"}, {"-0.0005", "-0.001", "0"}, {"2", "2", "2"},
	} {
		if got := floorTo(dec(tt.in), 1000); got.Cmp(dec(tt.floor1000)) != 0 {
			t.Errorf("floorTo(%s) = %s", tt.in, RatString(got))
		}
		if got := ceilInt(dec(tt.in)); got.Cmp(dec(tt.ceil).Num()) != 0 {
			t.Errorf("ceil(%s) = %s", tt.in, got)
		}
	}
	if satInt64(new(big.Rat).SetFloat64(1e30)) != math.MaxInt64 || satInt64(new(big.Rat).SetFloat64(-1e30)) != math.MinInt64 {
		t.Error("satInt64 does not saturate")
	}
}
