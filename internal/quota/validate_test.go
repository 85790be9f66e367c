package quota

import (
	"strings"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

func equalPath(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func g512(count int64) Entry { return Entry{InstanceType: "ml.g5.12xlarge", Count: i64(count)} }

func TestValidateProblems(t *testing.T) {
	cat := catalog.Builtin()
	p4d := func(mut func(*Entry)) Entry {
		e := Entry{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 2}}
		mut(&e)
		return e
	}
	withSharing := func(s Sharing, entries ...Entry) Config {
		c := base(entries...)
		c.Sharing = s
		return c
	}
	// limit is a quota of ml.g5.12xlarge and ml.p4d.24xlarge with one absolute borrow limit.
	limit := func(a AbsoluteBorrowLimit) Config {
		return withSharing(Sharing{AbsoluteBorrowLimits: []AbsoluteBorrowLimit{a}}, g512(1), Entry{InstanceType: "ml.p4d.24xlarge", Count: i64(1)})
	}
	sixteen := func() Config {
		names := catalog.Builtin().Names()
		var es []Entry
		for _, n := range names[:16] {
			es = append(es, Entry{InstanceType: n, Count: i64(1)})
		}
		return base(es...)
	}
	tests := []struct {
		name    string
		cfg     Config
		entry   int
		path    []string
		summary string
		fix     []string // substrings the Detail must contain
	}{
		{"unknown instance type", base(Entry{InstanceType: "ml.g5.12xlarg", Count: i64(1)}), 0, []string{"instance_type"},
			"Unknown instance type", []string{`"ml.g5.12xlarge"`, "instance_types", "Did you mean"}},
		{"unknown type without prefix", base(Entry{InstanceType: "p5.48xlarge", Count: i64(1)}), 0, []string{"instance_type"},
			"Unknown instance type", []string{`"ml.p5.48xlarge"`}},
		{"missing instance type", base(Entry{Count: i64(1)}), 0, []string{"instance_type"}, "Missing instance_type", []string{"Set it"}},
		{"no size", base(Entry{InstanceType: "ml.g5.12xlarge"}), 0, nil, "No quota size", []string{"count = 1", "Set one of them"}},
		{"no size with only efa", base(Entry{InstanceType: "ml.g5.12xlarge", EFA: i64(1)}), 0, nil, "No quota size", []string{"Set one"}},
		{"accelerators 0 alone on a CPU type", base(Entry{InstanceType: "ml.c5.xlarge", Accelerators: i64(0)}), 0,
			[]string{"accelerators"}, "No quota size", []string{"Set count, vcpu or memory_in_gib instead"}},
		{"count and accelerators", base(Entry{InstanceType: "ml.g5.12xlarge", Count: i64(1), Accelerators: i64(2)}), 0,
			[]string{"accelerators"}, "Conflicting attributes", []string{"Remove one"}},
		{"count and partition", base(p4d(func(e *Entry) { e.Count = i64(1) })), 0,
			[]string{"accelerator_partition"}, "Conflicting attributes", []string{"Remove one"}},
		{"accelerators and partition", base(p4d(func(e *Entry) { e.Accelerators = i64(1) })), 0,
			[]string{"accelerator_partition"}, "Conflicting attributes", []string{"Remove one"}},
		{"accelerators on a CPU type", base(Entry{InstanceType: "ml.c5.xlarge", Accelerators: i64(2), VCPU: dec("1")}), 0,
			[]string{"accelerators"}, "Instance type has no accelerators", []string{"Remove accelerators", "count, vcpu or memory_in_gib"}},
		{"partition on a CPU type", base(Entry{InstanceType: "ml.c5.xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 1}}), 0,
			[]string{"accelerator_partition"}, "Instance type has no accelerators", []string{"Remove accelerator_partition", "ml.p4d.24xlarge"}},
		{"partition on Trainium", base(Entry{InstanceType: "ml.trn1.32xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 1}}), 0,
			[]string{"accelerator_partition"}, "Partitions need NVIDIA GPUs", []string{"aws.amazon.com/neurondevice", "use accelerators or count"}},
		{"profile not offered", base(p4d(func(e *Entry) { e.Partition.Type = "mig-1g.18gb" })), 0,
			[]string{"accelerator_partition", "type"}, "MIG profile not offered", []string{`"mig-1g.5gb", "mig-1g.10gb"`, "Use one of"}},
		{"GPU type without MIG", base(Entry{InstanceType: "ml.g5.12xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 1}}), 0,
			[]string{"accelerator_partition", "type"}, "No MIG profiles on this instance type", []string{"use accelerators or count", "mig_profiles"}},
		{"malformed profile", base(p4d(func(e *Entry) { e.Partition.Type = "1g.5gb" })), 0,
			[]string{"accelerator_partition", "type"}, "Invalid MIG profile", []string{`with the mig- prefix: "mig-1g.5gb"`}},
		{"garbage profile", base(p4d(func(e *Entry) { e.Partition.Type = "half" })), 0,
			[]string{"accelerator_partition", "type"}, "Invalid MIG profile", []string{"Use one of the profiles of ml.p4d.24xlarge"}},
		{"negative count", base(g512(-1)), 0, []string{"count"}, "Negative value", []string{"non-negative"}},
		{"negative accelerators", base(Entry{InstanceType: "ml.g5.12xlarge", Accelerators: i64(-4)}), 0, []string{"accelerators"}, "Negative value", []string{"non-negative"}},
		{"negative vcpu", base(Entry{InstanceType: "ml.g5.12xlarge", VCPU: dec("-1")}), 0, []string{"vcpu"}, "Negative value", []string{"non-negative"}},
		{"negative memory", base(Entry{InstanceType: "ml.g5.12xlarge", MemoryGiB: dec("-0.5")}), 0, []string{"memory_in_gib"}, "Negative value", []string{"non-negative"}},
		{"negative efa", base(Entry{InstanceType: "ml.g5.12xlarge", Count: i64(1), EFA: i64(-1)}), 0, []string{"efa"}, "Negative value", []string{"non-negative"}},
		{"negative partition count", base(p4d(func(e *Entry) { e.Partition.Count = -2 })), 0,
			[]string{"accelerator_partition", "count"}, "Negative value", []string{"non-negative"}},
		{"too large", base(g512(MaxAmount + 1)), 0, []string{"count"}, "Value too large", []string{"Set a smaller number"}},
		{"too large memory", base(Entry{InstanceType: "ml.g5.12xlarge", MemoryGiB: dec("10000000.5")}), 0, []string{"memory_in_gib"}, "Value too large", []string{"smaller"}},
		{"vcpu below a millicore", base(Entry{InstanceType: "ml.g5.12xlarge", VCPU: DecimalFromFloat(1.2345)}), 0, []string{"vcpu"},
			"Too many decimal places", []string{"millicores", "at most 3 decimal places, e.g. 1.234"}},
		{"memory below a nanobyte", base(Entry{InstanceType: "ml.g5.12xlarge", MemoryGiB: DecimalFromFloat(1e-10)}), 0, []string{"memory_in_gib"},
			"Too many decimal places", []string{"at most 9 decimal places"}},
		{"duplicate instance type", base(g512(1), Entry{InstanceType: "ml.c5.xlarge", Count: i64(1)}, g512(2)), 2, []string{"instance_type"},
			"Duplicate instance type", []string{"resources[0] and resources[2]", "Merge"}},
		{"more than 15 entries", sixteen(), -1, []string{"resources"}, "Too many resources", []string{"at most 15", "Split the quota"}},
		{"no entries", base(), -1, []string{"resources"}, "No resources", []string{"Add at least one entry"}},
		{"borrow_limit with Lend", withSharing(Sharing{Strategy: str(StrategyLend), BorrowLimit: i64(50)}, g512(1)), -1,
			[]string{"resource_sharing", "borrow_limit"}, "borrow_limit needs a strategy that borrows", []string{"Remove borrow_limit", `strategy = "LendAndBorrow"`}},
		{"borrow_limit with DontLend", withSharing(Sharing{Strategy: str(StrategyDontLend), BorrowLimit: i64(0)}, g512(1)), -1,
			[]string{"resource_sharing", "borrow_limit"}, "borrow_limit needs a strategy that borrows", []string{"Remove borrow_limit"}},
		{"absolute limits with Lend", withSharing(Sharing{Strategy: str(StrategyLend),
			AbsoluteBorrowLimits: []AbsoluteBorrowLimit{{InstanceType: "ml.g5.12xlarge", Accelerators: i64(1)}}}, g512(1)), -1,
			[]string{"resource_sharing", "absolute_borrow_limits"}, "absolute_borrow_limits needs a strategy that borrows", []string{"Remove absolute_borrow_limits"}},
		{"absolute limits with DontLend", withSharing(Sharing{Strategy: str(StrategyDontLend),
			AbsoluteBorrowLimits: []AbsoluteBorrowLimit{{InstanceType: "ml.g5.12xlarge", Accelerators: i64(1)}}}, g512(1)), -1,
			[]string{"resource_sharing", "absolute_borrow_limits"}, "absolute_borrow_limits needs a strategy that borrows", []string{"Remove absolute_borrow_limits"}},
		{"borrow_limit too large", withSharing(Sharing{BorrowLimit: i64(10001)}, g512(1)), -1,
			[]string{"resource_sharing", "borrow_limit"}, "borrow_limit out of range", []string{"from 0 to 10000"}},
		{"borrow_limit negative", withSharing(Sharing{BorrowLimit: i64(-1)}, g512(1)), -1,
			[]string{"resource_sharing", "borrow_limit"}, "borrow_limit out of range", []string{"from 0 to 10000"}},
		{"absolute limit for a type without quota", withSharing(Sharing{
			AbsoluteBorrowLimits: []AbsoluteBorrowLimit{{InstanceType: "ml.p5.48xlarge", Accelerators: i64(1)}}}, g512(1)), -1,
			[]string{"resource_sharing", "absolute_borrow_limits", "0", "instance_type"}, "Absolute borrow limit for an instance type without quota",
			[]string{`Add "ml.p5.48xlarge" to resources or remove this limit`}},
		{"absolute limit twice", withSharing(Sharing{AbsoluteBorrowLimits: []AbsoluteBorrowLimit{
			{InstanceType: "ml.g5.12xlarge", Accelerators: i64(1)}, {InstanceType: "ml.g5.12xlarge", VCPU: dec("2")}}}, g512(1)), -1,
			[]string{"resource_sharing", "absolute_borrow_limits", "1", "instance_type"}, "Duplicate absolute borrow limit", []string{"Merge them"}},
		{"empty absolute limit", withSharing(Sharing{AbsoluteBorrowLimits: []AbsoluteBorrowLimit{{InstanceType: "ml.g5.12xlarge"}}}, g512(1)), -1,
			[]string{"resource_sharing", "absolute_borrow_limits", "0"}, "Empty absolute borrow limit", []string{"Set at least one"}},
		{"absolute limit without instance type", withSharing(Sharing{AbsoluteBorrowLimits: []AbsoluteBorrowLimit{{VCPU: dec("1")}}}, g512(1)), -1,
			[]string{"resource_sharing", "absolute_borrow_limits", "0", "instance_type"}, "Missing instance_type", []string{"Set it to one of"}},
		{"absolute vcpu too precise", withSharing(Sharing{AbsoluteBorrowLimits: []AbsoluteBorrowLimit{{InstanceType: "ml.g5.12xlarge", VCPU: dec("0.0001")}}}, g512(1)), -1,
			[]string{"resource_sharing", "absolute_borrow_limits", "0", "vcpu"}, "Too many decimal places", []string{"at most 3 decimal places"}},
		{"absolute memory negative", withSharing(Sharing{AbsoluteBorrowLimits: []AbsoluteBorrowLimit{{InstanceType: "ml.g5.12xlarge", MemoryGiB: dec("-1")}}}, g512(1)), -1,
			[]string{"resource_sharing", "absolute_borrow_limits", "0", "memory_in_gib"}, "Negative value", []string{"non-negative"}},
		{"absolute accelerators negative", withSharing(Sharing{AbsoluteBorrowLimits: []AbsoluteBorrowLimit{{InstanceType: "ml.g5.12xlarge", Accelerators: i64(-1)}}}, g512(1)), -1,
			[]string{"resource_sharing", "absolute_borrow_limits", "0", "accelerators"}, "Negative value", []string{"non-negative"}},
		{"absolute accelerators on a CPU type", withSharing(Sharing{AbsoluteBorrowLimits: []AbsoluteBorrowLimit{{InstanceType: "ml.c5.xlarge", Accelerators: i64(1)}}},
			Entry{InstanceType: "ml.c5.xlarge", Count: i64(1)}), -1,
			[]string{"resource_sharing", "absolute_borrow_limits", "0", "accelerators"}, "Instance type has no accelerators", []string{"Remove accelerators"}},
		// The rules of a resources entry hold for an absolute borrow limit too, at its path.
		{"absolute count and accelerators", limit(AbsoluteBorrowLimit{InstanceType: "ml.g5.12xlarge", Count: i64(1), Accelerators: i64(2)}), -1,
			[]string{"resource_sharing", "absolute_borrow_limits", "0", "accelerators"}, "Conflicting attributes", []string{"Remove one"}},
		{"absolute count and partition", limit(AbsoluteBorrowLimit{InstanceType: "ml.p4d.24xlarge", Count: i64(1), Partition: &Partition{Type: "mig-1g.5gb", Count: 1}}), -1,
			[]string{"resource_sharing", "absolute_borrow_limits", "0", "accelerator_partition"}, "Conflicting attributes", []string{"Remove one"}},
		{"absolute accelerators and partition", limit(AbsoluteBorrowLimit{InstanceType: "ml.p4d.24xlarge", Accelerators: i64(1), Partition: &Partition{Type: "mig-1g.5gb", Count: 1}}), -1,
			[]string{"resource_sharing", "absolute_borrow_limits", "0", "accelerator_partition"}, "Conflicting attributes", []string{"Remove one"}},
		{"absolute partition on a CPU type", withSharing(Sharing{AbsoluteBorrowLimits: []AbsoluteBorrowLimit{
			{InstanceType: "ml.c5.xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 1}}}}, Entry{InstanceType: "ml.c5.xlarge", Count: i64(1)}), -1,
			[]string{"resource_sharing", "absolute_borrow_limits", "0", "accelerator_partition"}, "Instance type has no accelerators", []string{"Remove accelerator_partition"}},
		{"absolute profile not offered", limit(AbsoluteBorrowLimit{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-1g.18gb", Count: 1}}), -1,
			[]string{"resource_sharing", "absolute_borrow_limits", "0", "accelerator_partition", "type"}, "MIG profile not offered", []string{"Use one of"}},
		{"absolute malformed profile", limit(AbsoluteBorrowLimit{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "1g.5gb", Count: 1}}), -1,
			[]string{"resource_sharing", "absolute_borrow_limits", "0", "accelerator_partition", "type"}, "Invalid MIG profile", []string{"mig- prefix"}},
		{"absolute negative count", limit(AbsoluteBorrowLimit{InstanceType: "ml.g5.12xlarge", Count: i64(-1)}), -1,
			[]string{"resource_sharing", "absolute_borrow_limits", "0", "count"}, "Negative value", []string{"non-negative"}},
		{"absolute negative partition count", limit(AbsoluteBorrowLimit{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: -1}}), -1,
			[]string{"resource_sharing", "absolute_borrow_limits", "0", "accelerator_partition", "count"}, "Negative value", []string{"non-negative"}},
		{"absolute count too large", limit(AbsoluteBorrowLimit{InstanceType: "ml.g5.12xlarge", Count: i64(MaxAmount + 1)}), -1,
			[]string{"resource_sharing", "absolute_borrow_limits", "0", "count"}, "Value too large", []string{"smaller"}},
		{"absolute limit for an unknown instance type", limit(AbsoluteBorrowLimit{InstanceType: "ml.g5.12xlarg", Count: i64(1)}), -1,
			[]string{"resource_sharing", "absolute_borrow_limits", "0", "instance_type"}, "Unknown instance type", []string{`Did you mean "ml.g5.12xlarge"`}},
		{"absolute count with Lend", withSharing(Sharing{Strategy: str(StrategyLend),
			AbsoluteBorrowLimits: []AbsoluteBorrowLimit{{InstanceType: "ml.g5.12xlarge", Count: i64(1)}}}, g512(1)), -1,
			[]string{"resource_sharing", "absolute_borrow_limits"}, "absolute_borrow_limits needs a strategy that borrows", []string{"Remove absolute_borrow_limits"}},
		{"absolute partition twice", withSharing(Sharing{AbsoluteBorrowLimits: []AbsoluteBorrowLimit{
			{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 1}},
			{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-2g.10gb", Count: 1}}}}, Entry{InstanceType: "ml.p4d.24xlarge", Count: i64(1)}), -1,
			[]string{"resource_sharing", "absolute_borrow_limits", "1", "instance_type"}, "Duplicate absolute borrow limit", []string{"Merge them"}},
		{"fair share weight too large", func() Config { c := base(g512(1)); c.FairShareWeight = 101; return c }(), -1,
			[]string{"fair_share_weight"}, "fair_share_weight out of range", []string{"from 0 (lowest) to 100"}},
		{"fair share weight negative", func() Config { c := base(g512(1)); c.FairShareWeight = -1; return c }(), -1,
			[]string{"fair_share_weight"}, "fair_share_weight out of range", []string{"from 0 (lowest) to 100"}},
		{"unknown strategy", withSharing(Sharing{Strategy: str("lend")}, g512(1)), -1,
			[]string{"resource_sharing", "strategy"}, "Invalid strategy", []string{`"LendAndBorrow", "Lend" or "DontLend"`, "case-sensitive"}},
		{"unknown activation state", func() Config { c := base(g512(1)); c.ActivationState = str("enabled"); return c }(), -1,
			[]string{"activation_state"}, "Invalid activation_state", []string{`"Enabled" or "Disabled"`}},
		{"unknown preempt value", func() Config { c := base(g512(1)); c.PreemptTeamTasks = str("Always"); return c }(), -1,
			[]string{"preempt_team_tasks"}, "Invalid preempt_team_tasks", []string{`"LowerPriority" or "Never"`}},
		{"empty cohort", func() Config { c := base(g512(1)); c.Cohort = str(""); return c }(), -1,
			[]string{"cohort"}, "Empty cohort", []string{"Remove the cohort attribute", "hyperpod-cohort"}},
		{"invalid cohort", func() Config { c := base(g512(1)); c.Cohort = str("Team_Cohort"); return c }(), -1,
			[]string{"cohort"}, "Invalid cohort name", []string{"DNS subdomain"}},
		{"missing name", func() Config { c := base(g512(1)); c.Name = ""; return c }(), -1,
			[]string{"name"}, "Missing quota name", []string{"Set name"}},
		{"invalid name", func() Config { c := base(g512(1)); c.Name = "team a quota!"; return c }(), -1,
			[]string{"name"}, "Invalid quota name", []string{`name = "team-a-quota"`}},
		{"missing team", func() Config { c := base(g512(1)); c.Team = ""; return c }(), -1,
			[]string{"team"}, "Missing team", []string{"Set it to the team name"}},
		{"invalid team", func() Config { c := base(g512(1)); c.Team = "Team_A"; return c }(), -1,
			[]string{"team"}, "Invalid team name", []string{`team = "team-a"`}},
		{"team too long", func() Config { c := base(g512(1)); c.Team = strings.Repeat("a", 41); return c }(), -1,
			[]string{"team"}, "Invalid team name", []string{"at most 40"}},
		{"description too long", func() Config { c := base(g512(1)); c.Description = strings.Repeat("x", 1025); return c }(), -1,
			[]string{"description"}, "Description too long", []string{"shorten it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := Validate(cat, tt.cfg)
			if len(ps) != 1 {
				t.Fatalf("want exactly one problem, got %d: %v", len(ps), ps)
			}
			p := ps[0]
			if p.Entry != tt.entry || !equalPath(p.Path, tt.path) || p.Summary != tt.summary {
				t.Fatalf("got Entry=%d Path=%q Summary=%q, want Entry=%d Path=%q Summary=%q", p.Entry, p.Path, p.Summary, tt.entry, tt.path, tt.summary)
			}
			for _, s := range tt.fix {
				if !strings.Contains(p.Detail, s) {
					t.Errorf("Detail does not mention %q:\n%s", s, p.Detail)
				}
			}
			if p.Error() == "" {
				t.Error("empty Error()")
			}
		})
	}
}

func TestValidateUnknownType(t *testing.T) {
	ps := Validate(catalog.Builtin(), base(Entry{InstanceType: "ml.g5.12xlarg", Count: i64(1)}))
	if len(ps) != 1 {
		t.Fatal(ps)
	}
	// Up to three suggestions, best first.
	if !strings.Contains(ps[0].Detail, `Did you mean "ml.g5.12xlarge", "`) || strings.Count(ps[0].Detail, `"ml.g5.`) != 5 { // the name twice + 3 suggestions
		t.Errorf("closest names: %s", ps[0].Detail)
	}
	if got := ps[0].Error(); !strings.HasPrefix(got, "resources[0].instance_type: Unknown instance type: ") {
		t.Errorf("Error() = %q", got)
	}
}

func TestValidateProviderOverride(t *testing.T) {
	cat, errs := catalog.New(map[string]catalog.Override{
		"ml.trn2.48xlarge": {AcceleratorResource: str("aws.amazon.com/neuron")},
		"ml.x9.8xlarge":    {VCPU: ptr(32.0), MemoryGiB: ptr(128.0)},
	})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	c := base(Entry{InstanceType: "ml.x9.8xlarge", VCPU: dec("8")}, Entry{InstanceType: "ml.trn2.48xlarge", Accelerators: i64(4)})
	if ps := Validate(cat, c); len(ps) > 0 {
		t.Fatal(ps)
	}
	if ps := Validate(catalog.Builtin(), c); len(ps) != 1 || ps[0].Summary != "Unknown instance type" {
		t.Fatal(ps)
	}
}

func TestValidateValid(t *testing.T) {
	cat := catalog.Builtin()
	for _, c := range roundTripConfigs() {
		if ps := Validate(cat, c.cfg); len(ps) > 0 {
			t.Errorf("%s: %v", c.name, ps)
		}
	}
}

func TestValidateUnknownValues(t *testing.T) {
	cat := catalog.Builtin()
	tests := []struct {
		name string
		cfg  Config
		mark [][]string
		want int
	}{
		{"unknown count is maybe set", base(Entry{InstanceType: "ml.g5.12xlarge"}), [][]string{{"resources", "0", "count"}}, 0},
		{"unknown count does not conflict", base(Entry{InstanceType: "ml.g5.12xlarge", Accelerators: i64(2)}), [][]string{{"resources", "0", "count"}}, 0},
		{"unknown instance type skips type checks", base(Entry{Accelerators: i64(4)}), [][]string{{"resources", "0", "instance_type"}}, 0},
		{"unknown instance type still checks values", base(Entry{Accelerators: i64(-4)}), [][]string{{"resources", "0", "instance_type"}}, 1},
		{"unknown entry", base(Entry{}), [][]string{{"resources", "0"}}, 0},
		{"unknown resources", base(), [][]string{{"resources"}}, 0},
		{"unknown strategy", func() Config { c := base(g512(1)); c.Sharing.BorrowLimit = i64(5); return c }(), [][]string{{"resource_sharing", "strategy"}}, 0},
		{"unknown strategy but bad borrow limit", func() Config { c := base(g512(1)); c.Sharing.BorrowLimit = i64(-5); return c }(),
			[][]string{{"resource_sharing", "strategy"}}, 1},
		{"unknown team and name", func() Config { c := base(g512(1)); c.Team, c.Name = "", ""; return c }(), [][]string{{"team"}, {"name"}}, 0},
		{"absolute limit for a type in an unknown entry", func() Config {
			c := base(g512(1), Entry{Count: i64(1)})
			c.Sharing.AbsoluteBorrowLimits = []AbsoluteBorrowLimit{{InstanceType: "ml.p5.48xlarge", VCPU: dec("1")}}
			return c
		}(), [][]string{{"resources", "1", "instance_type"}}, 0},
		{"unknown partition type on a CPU type is still wrong", base(Entry{InstanceType: "ml.c5.xlarge", Partition: &Partition{Count: 1}}),
			[][]string{{"resources", "0", "accelerator_partition", "type"}}, 1},
		{"unknown partition profile skips profile checks", base(Entry{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Count: 1}}),
			[][]string{{"resources", "0", "accelerator_partition", "type"}}, 0},
		{"unknown absolute limit", func() Config {
			c := base(g512(1))
			c.Sharing.AbsoluteBorrowLimits = []AbsoluteBorrowLimit{{}}
			return c
		}(), [][]string{{"resource_sharing", "absolute_borrow_limits", "0"}}, 0},
		{"unknown cohort", func() Config { c := base(g512(1)); c.Cohort = str(""); return c }(), [][]string{{"cohort"}}, 0},
		{"unknown absolute count does not conflict", func() Config {
			c := base(g512(1))
			c.Sharing.AbsoluteBorrowLimits = []AbsoluteBorrowLimit{{InstanceType: "ml.g5.12xlarge", Accelerators: i64(2)}}
			return c
		}(), [][]string{{"resource_sharing", "absolute_borrow_limits", "0", "count"}}, 0},
		{"unknown absolute partition is maybe set", func() Config {
			c := base(g512(1))
			c.Sharing.AbsoluteBorrowLimits = []AbsoluteBorrowLimit{{InstanceType: "ml.g5.12xlarge", Partition: &Partition{}}}
			return c
		}(), [][]string{{"resource_sharing", "absolute_borrow_limits", "0", "accelerator_partition"}}, 0},
		{"absolute limit on a type whose capacity is pending", func() Config {
			c := base(Entry{InstanceType: "ml.x9.large", Count: i64(1)})
			c.Sharing.AbsoluteBorrowLimits = []AbsoluteBorrowLimit{{InstanceType: "ml.x9.large", Count: i64(1)}}
			return c
		}(), [][]string{{"resources", "0", "capacity"}, {"resource_sharing", "absolute_borrow_limits", "0", "capacity"}}, 0},
		{"unknown absolute partition type on a CPU type is still wrong", func() Config {
			c := base(Entry{InstanceType: "ml.c5.xlarge", Count: i64(1)})
			c.Sharing.AbsoluteBorrowLimits = []AbsoluteBorrowLimit{{InstanceType: "ml.c5.xlarge", Partition: &Partition{Count: 1}}}
			return c
		}(), [][]string{{"resource_sharing", "absolute_borrow_limits", "0", "accelerator_partition", "type"}}, 1},
	}
	for _, tt := range tests {
		c := tt.cfg
		for _, m := range tt.mark {
			c.MarkUnknown(m...)
		}
		if ps := Validate(cat, c); len(ps) != tt.want {
			t.Errorf("%s: want %d problems, got %v", tt.name, tt.want, ps)
		}
	}
}

func TestUnknownBuiltinTypeDetail(t *testing.T) {
	got := UnknownBuiltinTypeDetail(catalog.Builtin(), "ml.g5.13xlarge")
	for _, want := range []string{
		`instance type "ml.g5.13xlarge" is not in the provider's built-in catalog`,
		`Did you mean "ml.g5.12xlarge"`,
		// Families in name order, sizes smallest first (the c5 and t3 lines of the catalog).
		"ml.c5.{large, xlarge, 2xlarge, 4xlarge, 9xlarge, 12xlarge, 18xlarge, 24xlarge}; ml.c5n.{",
		"ml.t3.{medium, large, xlarge, 2xlarge}; ml.trn1.{32xlarge}",
		"ml.p6-b200.{48xlarge}",
		"hyperpod_instance_type_capacity",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("detail lacks %q:\n%s", want, got)
		}
	}
	// Every known name can be read back from the list.
	for _, n := range catalog.Builtin().Names() {
		i := strings.LastIndexByte(n, '.')
		family, size := n[:i], n[i+1:]
		at := strings.Index(got, family+".{")
		if at < 0 {
			t.Errorf("family %s missing", family)
			continue
		}
		group := got[at+len(family)+2:]
		group = group[:strings.IndexByte(group, '}')]
		found := false
		for _, s := range strings.Split(group, ", ") {
			found = found || s == size
		}
		if !found {
			t.Errorf("%s missing from %s.{%s}", n, family, group)
		}
	}
}
