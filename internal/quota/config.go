package quota

import (
	"maps"
	"math/big"
	"strings"
)

// Config is a hyperpod_compute_quota as the user configured it.
//
// A nil pointer means "not configured" (null in Terraform): Defaults fills it. Decimal numbers
// are exact rationals; the Terraform layer converts its float64 values with DecimalFromFloat so
// that memory_in_gib = 2.9 means exactly 2.9.
//
// Unknown values (terraform plan with values known only after apply) are passed as nil/zero
// together with a mark in Unknown, set with MarkUnknown. Validate skips every check that needs
// an unknown value, and Defaults leaves entries with unknown inputs unresolved.
type Config struct {
	Name        string
	Description string
	Team        string

	ActivationState  *string // Enabled | Disabled; nil = default Enabled
	PreemptTeamTasks *string // LowerPriority | Never; nil = default LowerPriority
	Cohort           *string // nil = default hyperpod-cohort; "" is invalid
	FairShareWeight  int64   // 0-100

	Sharing   Sharing
	Resources []Entry

	// Tags are the tags the quota's object carries (tags_all: the resource's own merged over
	// the provider's default tags); nil when it carries none.
	Tags map[string]string

	// Unknown holds the attribute paths (PathKey) whose values are unknown at plan time.
	Unknown map[string]bool
}

// Sharing is the resource_sharing block.
type Sharing struct {
	Strategy             *string // LendAndBorrow | Lend | DontLend; nil = default LendAndBorrow
	BorrowLimit          *int64  // percent; nil = default (50 when the strategy borrows)
	AbsoluteBorrowLimits []AbsoluteBorrowLimit
}

// AbsoluteBorrowLimit caps borrowing for one instance type regardless of the percentage: the
// SageMaker API's ComputeQuotaResourceConfig in ResourceSharingConfig.AbsoluteBorrowLimits.
// Count caps every resource of the instance type (accelerators, cpu, memory, EFA) at Count
// instances' worth; Accelerators, VCPU and MemoryGiB cap their resource, winning over Count;
// Partition caps the MIG resource of its profile. A resource none of them caps is left to
// borrow_limit.
type AbsoluteBorrowLimit struct {
	InstanceType string
	Count        *int64
	Accelerators *int64
	VCPU         *big.Rat
	MemoryGiB    *big.Rat
	Partition    *Partition
}

// Partition is an accelerator_partition block: Count MIG partitions of profile Type.
type Partition struct {
	Type  string // MIG profile, e.g. "mig-1g.5gb"
	Count int64
}

// Entry is one element of resources. A nil field is not configured.
type Entry struct {
	InstanceType string
	Count        *int64
	Accelerators *int64
	EFA          *int64
	VCPU         *big.Rat
	MemoryGiB    *big.Rat
	Partition    *Partition
}

// PathKey joins attribute path steps into a Config.Unknown key, e.g.
// PathKey("resources", "0", "count") or PathKey("resource_sharing", "strategy"). List elements
// are their decimal index. Marking a path marks everything below it.
func PathKey(steps ...string) string { return strings.Join(steps, ".") }

// MarkUnknown records that the attribute at path is unknown at plan time. Typical marks:
// "resources" (the whole list), "resources.<i>" or "resources.<i>.<attribute>",
// "resources.<i>.accelerator_partition[.type|.count]", "resource_sharing[.strategy|.borrow_limit|
// .absolute_borrow_limits[.<i>[.<attribute>|.accelerator_partition[.type|.count]]]]", "team", "name",
// "cohort", "fair_share_weight", "activation_state", "preempt_team_tasks".
// "resources.<i>.capacity" (and "resource_sharing.absolute_borrow_limits.<i>.capacity") says
// that the per-instance capacity of the element's (known) instance type is not known yet: it is
// checked only for what does not depend on its type, and an entry's computed amounts stay unknown.
func (c *Config) MarkUnknown(steps ...string) {
	if c.Unknown == nil {
		c.Unknown = map[string]bool{}
	}
	c.Unknown[PathKey(steps...)] = true
}

// IsUnknown reports whether the value at path, or any attribute containing it, is marked unknown.
func (c Config) IsUnknown(steps ...string) bool {
	if len(c.Unknown) == 0 {
		return false
	}
	for i := 1; i <= len(steps); i++ {
		if c.Unknown[PathKey(steps[:i]...)] {
			return true
		}
	}
	return false
}

// hasUnknownWithin reports whether path or anything below or above it is unknown.
func (c Config) hasUnknownWithin(steps ...string) bool {
	if c.IsUnknown(steps...) {
		return true
	}
	prefix := PathKey(steps...) + "."
	for k := range c.Unknown {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }

func cloneRat(r *big.Rat) *big.Rat {
	if r == nil {
		return nil
	}
	return new(big.Rat).Set(r)
}

func cloneInt(p *int64) *int64 {
	if p == nil {
		return nil
	}
	return ptr(*p)
}

func cloneStr(p *string) *string {
	if p == nil {
		return nil
	}
	return ptr(*p)
}

// clone returns a deep copy of e.
func (e Entry) clone() Entry {
	out := Entry{InstanceType: e.InstanceType, Count: cloneInt(e.Count), Accelerators: cloneInt(e.Accelerators),
		EFA: cloneInt(e.EFA), VCPU: cloneRat(e.VCPU), MemoryGiB: cloneRat(e.MemoryGiB)}
	if e.Partition != nil {
		p := *e.Partition
		out.Partition = &p
	}
	return out
}

func (a AbsoluteBorrowLimit) clone() AbsoluteBorrowLimit {
	return AbsoluteBorrowLimit{InstanceType: a.InstanceType, Count: cloneInt(a.Count), Accelerators: cloneInt(a.Accelerators),
		VCPU: cloneRat(a.VCPU), MemoryGiB: cloneRat(a.MemoryGiB), Partition: clonePartition(a.Partition)}
}

func clonePartition(p *Partition) *Partition {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// Clone returns a deep copy of c.
func (c Config) Clone() Config {
	out := c
	out.ActivationState, out.PreemptTeamTasks, out.Cohort = cloneStr(c.ActivationState), cloneStr(c.PreemptTeamTasks), cloneStr(c.Cohort)
	out.Sharing = Sharing{Strategy: cloneStr(c.Sharing.Strategy), BorrowLimit: cloneInt(c.Sharing.BorrowLimit)}
	if c.Sharing.AbsoluteBorrowLimits != nil {
		out.Sharing.AbsoluteBorrowLimits = make([]AbsoluteBorrowLimit, len(c.Sharing.AbsoluteBorrowLimits))
		for i, a := range c.Sharing.AbsoluteBorrowLimits {
			out.Sharing.AbsoluteBorrowLimits[i] = a.clone()
		}
	}
	if c.Resources != nil {
		out.Resources = make([]Entry, len(c.Resources))
		for i, e := range c.Resources {
			out.Resources[i] = e.clone()
		}
	}
	out.Tags = maps.Clone(c.Tags)
	if c.Unknown != nil {
		out.Unknown = make(map[string]bool, len(c.Unknown))
		for k, v := range c.Unknown {
			out.Unknown[k] = v
		}
	}
	return out
}
