package quota

import (
	"strings"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

// PlanEntry gives a lone entry the amounts of the documented ratio rule (worked
// by hand from the catalog figures) and fails where the resource's plan fails.
func TestPlanEntry(t *testing.T) {
	cat := catalog.Builtin()
	tests := []struct {
		name  string
		entry Entry
		acc   int64
		vcpu  string
		mem   string
		efa   int64
	}{
		// ml.p5.48xlarge: 8 GPUs, 192 vCPU, 2048 GiB, 32 EFA. r = 4/8: 96 vCPU, 1024 GiB, ceil(1/2) x 32 EFA.
		{"p5 accelerators 4", Entry{InstanceType: "ml.p5.48xlarge", Accelerators: i64(4)}, 4, "96", "1024", 32},
		// ml.p4d.24xlarge: 8 GPUs, 96 vCPU, 1152 GiB, 4 EFA. r = 2 x 1 / (8 x 7) = 1/28:
		// vcpu 96/28 = 3.4285.. -> 3.428; memory 1152/28 = 41.1428.. GiB = 42130.28 MiB -> 42130/1024.
		{"p4d 2 x mig-1g.5gb", Entry{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 2}},
			0, "3.428", "41.142578125", 4},
		// ml.c5n.9xlarge: 36 vCPU, 96 GiB, 1 EFA. r = 5/36: memory 13.333.. GiB = 13653.33 MiB -> 13653/1024.
		{"c5n.9xlarge vcpu 5", Entry{InstanceType: "ml.c5n.9xlarge", VCPU: dec("5")}, 0, "5", "13.3330078125", 1},
		// ml.c5.9xlarge: 36 vCPU, 72 GiB. r = 2.9/72: vcpu 36 x 2.9 / 72 = 1.45 exactly.
		{"c5.9xlarge memory 2.9", Entry{InstanceType: "ml.c5.9xlarge", MemoryGiB: DecimalFromFloat(2.9)}, 0, "1.45", "2.9", 0},
		// ml.g5.12xlarge: 4 GPUs, 48 vCPU, 192 GiB, 1 EFA; count 1 is one instance.
		{"g5.12xlarge count 1", Entry{InstanceType: "ml.g5.12xlarge", Count: i64(1)}, 4, "48", "192", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ps := PlanEntry(cat, tt.entry)
			if len(ps) > 0 {
				t.Fatalf("problems: %v", ps)
			}
			if r.Accelerators != tt.acc || r.VCPU.Cmp(dec(tt.vcpu)) != 0 || r.MemoryGiB.Cmp(dec(tt.mem)) != 0 || r.EFA != tt.efa {
				t.Fatalf("got acc=%d vcpu=%s mem=%s efa=%d, want acc=%d vcpu=%s mem=%s efa=%d",
					r.Accelerators, RatString(r.VCPU), RatString(r.MemoryGiB), r.EFA, tt.acc, tt.vcpu, tt.mem, tt.efa)
			}
		})
	}
}

// Each step the plan runs (Validate, Defaults, CheckRanges) stops PlanEntry with its own
// problems, and an entry needs no name, team or sibling to be checked.
func TestPlanEntryProblems(t *testing.T) {
	cat := catalog.Builtin()
	tests := []struct {
		name  string
		entry Entry
		path  string
		sum   string
	}{
		{"validate: conflict", Entry{InstanceType: "ml.g5.12xlarge", Count: i64(1), Accelerators: i64(2)}, "accelerators", "Conflicting attributes"},
		{"validate: negative", Entry{InstanceType: "ml.c5.xlarge", VCPU: dec("-1")}, "vcpu", "Negative value"},
		{"validate: profile not offered", Entry{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-1g.18gb", Count: 1}},
			"accelerator_partition.type", "MIG profile not offered"},
		{"validate: no size", Entry{InstanceType: "ml.g5.12xlarge"}, "", "No quota size"},
		{"validate: unknown type", Entry{InstanceType: "ml.g5.13xlarge", Count: i64(1)}, "instance_type", "Unknown instance type"},
		// 10000000 x 8 GPUs of ml.p5.48xlarge is past the API's 10000000.
		{"ranges: computed too large", Entry{InstanceType: "ml.p5.48xlarge", Count: i64(10_000_000)}, "accelerators", "Computed value too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ps := PlanEntry(cat, tt.entry)
			if len(ps) == 0 {
				t.Fatal("no problem reported")
			}
			if ps[0].Summary != tt.sum || strings.Join(ps[0].Path, ".") != tt.path || ps[0].Entry != 0 {
				t.Fatalf("first problem %+v, want %q at %q", ps[0], tt.sum, tt.path)
			}
			// The same entry in a whole quota fails the plan with the same first problem.
			_, want := Plan(cat, base(tt.entry))
			if len(want) == 0 || want[0].Summary != ps[0].Summary || want[0].Detail != ps[0].Detail {
				t.Fatalf("the plan of a quota with this entry reports %v, PlanEntry %v", want, ps)
			}
		})
	}
}
