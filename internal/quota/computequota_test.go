package quota

import (
	"strings"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

// A configuration sent to the API and read back is the smallest configuration that plans to the
// same amounts: what the user wrote, less any amount set to its own default.
func TestComputeQuotaRoundTrip(t *testing.T) {
	cat := catalog.Builtin()
	tests := []struct {
		name string
		in   Config
		want Config // nil: the same as in
	}{
		{name: "count", in: base(Entry{InstanceType: "ml.g5.12xlarge", Count: i64(2)})},
		{name: "accelerators", in: base(Entry{InstanceType: "ml.p5.48xlarge", Accelerators: i64(4)})},
		{name: "count with vcpu override", in: base(Entry{InstanceType: "ml.g5.12xlarge", Count: i64(1), VCPU: dec("40")})},
		{name: "partition", in: base(Entry{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 2}})},
		{name: "vcpu on a cpu type", in: base(Entry{InstanceType: "ml.c5n.9xlarge", VCPU: dec("5")})},
		{name: "memory on a cpu type", in: base(Entry{InstanceType: "ml.c5.9xlarge", MemoryGiB: dec("2.9")})},
		{name: "vcpu on a gpu type leaves accelerators 0", in: base(Entry{InstanceType: "ml.g5.12xlarge", VCPU: dec("12")})},
		{
			name: "an amount equal to its default reads back unset",
			in:   base(Entry{InstanceType: "ml.g5.12xlarge", Accelerators: i64(2), VCPU: dec("24")}),
			want: base(Entry{InstanceType: "ml.g5.12xlarge", Accelerators: i64(2)}),
		},
		{
			name: "quota-level attributes other than their defaults",
			in: Config{Name: "q", Description: "for ML", Team: "ml", FairShareWeight: 40,
				ActivationState: str(ActivationDisabled), PreemptTeamTasks: str(PreemptNever),
				Sharing: Sharing{BorrowLimit: i64(100),
					AbsoluteBorrowLimits: []AbsoluteBorrowLimit{{InstanceType: "ml.g5.12xlarge", Accelerators: i64(4)}}},
				Resources: []Entry{{InstanceType: "ml.g5.12xlarge", Count: i64(1)}}},
		},
		{
			name: "defaults written out read back unset",
			in: Config{Name: "q", Team: "ml", ActivationState: str(ActivationEnabled), PreemptTeamTasks: str(PreemptLowerPriority),
				Sharing:   Sharing{Strategy: str(StrategyLendAndBorrow), BorrowLimit: i64(DefaultBorrowLimit)},
				Resources: []Entry{{InstanceType: "ml.g5.12xlarge", Count: i64(1)}}},
			want: Config{Name: "q", Team: "ml", Resources: []Entry{{InstanceType: "ml.g5.12xlarge", Count: i64(1)}}},
		},
		{
			name: "absolute limits by count and by partition",
			in: Config{Name: "q", Team: "ml", Sharing: Sharing{AbsoluteBorrowLimits: []AbsoluteBorrowLimit{
				{InstanceType: "ml.g5.12xlarge", Count: i64(2), VCPU: dec("10")},
				{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 3}},
			}}, Resources: []Entry{{InstanceType: "ml.g5.12xlarge", Count: i64(1)}, {InstanceType: "ml.p4d.24xlarge", Count: i64(1)}}},
		},
		{name: "lend only", in: Config{Name: "q", Team: "ml", Sharing: Sharing{Strategy: str(StrategyLend)},
			Resources: []Entry{{InstanceType: "ml.g5.12xlarge", Count: i64(1)}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, problems := Plan(cat, tt.in)
			if len(problems) > 0 {
				t.Fatalf("the test's configuration does not plan: %v", problems)
			}
			cfg, back, err := ConfigFromComputeQuota(cat, ComputeQuotaOf(rc))
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want.Name == "" {
				want = tt.in
			}
			if got, w := dumpConfig(cfg), dumpConfig(want); got != w {
				t.Errorf("configuration read back:\n%s\nwant\n%s", got, w)
			}
			if got, w := dumpResolved(back), dumpResolved(rc); got != w {
				t.Errorf("read back, it resolves to\n%s\nwant\n%s", got, w)
			}
		})
	}
}

// Amounts changed outside the provider read back as a configuration that plans to them, so a
// refresh shows them as a diff instead of failing.
func TestConfigFromComputeQuotaChangedByHand(t *testing.T) {
	cat := catalog.Builtin()
	rc, _ := Plan(cat, base(Entry{InstanceType: "ml.g5.12xlarge", Count: i64(2)}))
	q := ComputeQuotaOf(rc)
	q.Resources[0].Accelerators = 6 // count 2 would give 8
	cfg, back, err := ConfigFromComputeQuota(cat, q)
	if err != nil {
		t.Fatal(err)
	}
	if e := cfg.Resources[0]; e.Count != nil || e.Accelerators == nil || *e.Accelerators != 6 {
		t.Errorf("entry read back as %s, want accelerators 6 without count", dumpEntry(e))
	}
	if r := back.Resources[0]; r.Accelerators != 6 || r.VCPU.Cmp(dec("96")) != 0 || r.MemoryGiB.Cmp(dec("384")) != 0 {
		t.Errorf("it resolves to %s, want 6 accelerators, 96 vCPU and 384 GiB as the API holds them", dumpResolved(back))
	}

	q.Resources[0].InstanceType = "ml.nonexistent.type"
	if _, _, err := ConfigFromComputeQuota(cat, q); err == nil {
		t.Error("an instance type the catalog lacks read back without an error")
	}
}

// Amounts the API holds as float32 read back as the values sent: grid points of the computed
// defaults and the short decimals users write. Longer decimals do not survive.
func TestDecimalFromFloat32(t *testing.T) {
	tests := []struct {
		value    string
		grid     int64
		survives bool
	}{
		{"41.142578125", MemoryGrid, true}, // a computed memory default: 42130 MiB
		{"2.9", MemoryGrid, true},
		{"2969.6", MemoryGrid, true},
		{"20480", MemoryGrid, true},
		{"0", MemoryGrid, true},
		{"41.142578", MemoryGrid, false}, // the same float32 as 41.142578125
		{"1.45", VCPUGrid, true},
		{"3.428", VCPUGrid, true},
		{"1234.567", VCPUGrid, true},
		{"12.5", VCPUGrid, true},
		{"10000000", VCPUGrid, true},
		{"16384.001", VCPUGrid, false}, // float32 spacing there is about 0.002
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			if got := SurvivesFloat32(dec(tt.value), tt.grid); got != tt.survives {
				t.Errorf("SurvivesFloat32(%s) = %v, want %v", tt.value, got, tt.survives)
			}
		})
	}
}

func TestCheckStore(t *testing.T) {
	cat := catalog.Builtin()
	limits := StoreLimits{Float32Amounts: true, Unsupported: map[string]string{"cohort": "no cohort field", "resources.efa": "no EFA field"}}
	tests := []struct {
		name string
		cfg  Config
		want []string // Error() of each problem, by prefix
	}{
		{"nothing the store lacks", base(Entry{InstanceType: "ml.g5.12xlarge", Count: i64(1)}), nil},
		{"cohort", Config{Name: "q", Team: "ml", Cohort: str("c"), Resources: []Entry{{InstanceType: "ml.g5.12xlarge", Count: i64(1)}}},
			[]string{"cohort: Not available on this cluster: cohort is set, but no cohort field."}},
		{"efa of the second entry", base(Entry{InstanceType: "ml.g5.12xlarge", Count: i64(1)}, Entry{InstanceType: "ml.p5.48xlarge", Accelerators: i64(8), EFA: i64(32)}),
			[]string{"resources[1].efa: Not available on this cluster: efa is set, but no EFA field."}},
		{"memory with too many digits", base(Entry{InstanceType: "ml.c5.9xlarge", MemoryGiB: dec("41.142578")}),
			[]string{"resources[0].memory_in_gib: Amount the SageMaker API cannot hold: memory_in_gib = 41.142578 cannot be held exactly by the SageMaker API, which stores it as a 32-bit float: it would read back as 41.142578125."}},
		{"absolute borrow limit with too many digits", Config{Name: "q", Team: "ml", Resources: []Entry{{InstanceType: "ml.c5.9xlarge", Count: i64(1)}},
			Sharing: Sharing{AbsoluteBorrowLimits: []AbsoluteBorrowLimit{{InstanceType: "ml.c5.9xlarge", VCPU: dec("20000.001"), MemoryGiB: dec("2.9")}}}},
			[]string{"resource_sharing.absolute_borrow_limits[0].vcpu: Amount the SageMaker API cannot hold: vcpu = 20000.001 cannot be held exactly by the SageMaker API, which stores it as a 32-bit float: it would read back as 20000.002."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, problems := Plan(cat, tt.cfg)
			if len(problems) > 0 {
				t.Fatalf("the test's configuration does not plan: %v", problems)
			}
			got := CheckStore(tt.cfg, rc, limits)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems %v, want %d", len(got), got, len(tt.want))
			}
			for i, p := range got {
				if !strings.HasPrefix(p.Error(), tt.want[i]) {
					t.Errorf("problem %d = %q, want it to start with %q", i, p.Error(), tt.want[i])
				}
			}
			if len(CheckStore(tt.cfg, rc, StoreLimits{})) != 0 {
				t.Error("a store without limits reported problems")
			}
		})
	}
}
