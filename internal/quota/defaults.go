package quota

import (
	"math/big"
	"strconv"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

// Resolved is one resources entry with every computed attribute filled by the ratio rule.
type Resolved struct {
	// Configured is the entry as the user wrote it.
	Configured Entry

	Accelerators int64
	VCPU         *big.Rat // a multiple of 0.001 unless configured
	MemoryGiB    *big.Rat // a multiple of 1/1024 unless configured
	EFA          int64

	// AcceleratorResource is the extended resource the accelerators count in (the catalog's or
	// the provider override's), "" for a type without accelerators.
	AcceleratorResource string

	// Unknown is set by Defaults when an input of the entry is unknown at plan time; the values
	// above are then not computed and the caller plans every unconfigured one as unknown.
	Unknown bool
}

// ResolvedConfig is a Config with every default applied: what is rendered into the cluster and
// stored in the Terraform state.
type ResolvedConfig struct {
	// Config is the configuration as given (Name, Description and Team are taken from it).
	Config Config

	ActivationState  string
	PreemptTeamTasks string
	Cohort           string
	FairShareWeight  int64
	Strategy         string
	// BorrowLimit is the percentage; nil unless Strategy is LendAndBorrow.
	BorrowLimit          *int64
	AbsoluteBorrowLimits []AbsoluteBorrowLimit
	// Resources has one element per Config.Resources entry, in the same order.
	Resources []Resolved
}

// Known reports whether every value of the resolved quota is known at plan time, so that what it
// renders is what apply writes.
func (rc ResolvedConfig) Known() bool {
	if len(rc.Config.Unknown) > 0 {
		return false
	}
	for _, r := range rc.Resources {
		if r.Unknown {
			return false
		}
	}
	return true
}

// Ratio sources, in the order they are tried: the first one set sizes the entry.
const (
	sourceCount        = "count"
	sourceAccelerators = "accelerators"
	sourcePartition    = "accelerator_partition"
	sourceVCPU         = "vcpu"
	sourceMemory       = "memory_in_gib"
)

// resolve fills every unset one of accelerators, vcpu, memory_in_gib and efa of e.
//
// The ratio r comes from the first of count, accelerators, accelerator_partition, vcpu,
// memory_in_gib that is set, against the capacity C of one instance of the type:
// accelerators = count x C.accelerators when r came from count, else 0; vcpu = r x C.vcpu
// rounded down to 0.001; memory_in_gib = r x C.memory rounded down to 1/1024; efa =
// ceil(r) x C.efa. Configured values always win. All arithmetic is exact. floor does the
// rounding down: on a store of 32-bit floats it goes on down to a value the store holds.
//
// Judgement call: on a type without accelerators, a configured accelerators (which Validate
// only accepts as 0) is not a ratio source; the next rule applies, so `accelerators = 0,
// vcpu = 4` on ml.c5.xlarge still gives memory 8.
//
// Validate has already rejected an entry that nothing sizes (unknown instance type, no ratio
// source, unusable partition); such an entry still resolves, with 0 where nothing is known.
func resolve(cat *catalog.Catalog, e Entry, floor amountFloor) Resolved {
	out := Resolved{Configured: e.clone()}
	it, known := cat.Lookup(e.InstanceType)
	out.AcceleratorResource = it.AcceleratorResource

	capVCPU, capMem := DecimalFromFloat(it.VCPU), DecimalFromFloat(it.MemoryGiB)
	if capVCPU == nil {
		capVCPU = new(big.Rat)
	}
	if capMem == nil {
		capMem = new(big.Rat)
	}

	var r *big.Rat
	source := ""
	if known {
		switch {
		case e.Count != nil:
			r, source = ratInt(*e.Count), sourceCount
		case e.Accelerators != nil && it.Accelerators > 0:
			r, source = new(big.Rat).SetFrac64(*e.Accelerators, it.Accelerators), sourceAccelerators
		case e.Partition != nil:
			if slices, err := catalog.MIGSlices(e.Partition.Type); err == nil && it.Accelerators > 0 {
				// r = count x N / (C.accelerators x 7)
				r = new(big.Rat).SetFrac(
					new(big.Int).Mul(big.NewInt(e.Partition.Count), big.NewInt(slices)),
					new(big.Int).Mul(big.NewInt(it.Accelerators), big.NewInt(7)))
				source = sourcePartition
			}
		case e.VCPU != nil:
			r, source = new(big.Rat).Quo(e.VCPU, capVCPU), sourceVCPU
		case e.MemoryGiB != nil:
			r, source = new(big.Rat).Quo(e.MemoryGiB, capMem), sourceMemory
		}
	}
	if r == nil {
		r = new(big.Rat)
	}

	switch {
	case e.Accelerators != nil:
		out.Accelerators = *e.Accelerators
	case source == sourceCount:
		out.Accelerators = satInt64(new(big.Rat).Mul(r, ratInt(it.Accelerators)))
	}
	if e.VCPU != nil {
		out.VCPU = cloneRat(e.VCPU)
	} else {
		out.VCPU = floor(new(big.Rat).Mul(r, capVCPU), VCPUGrid)
	}
	if e.MemoryGiB != nil {
		out.MemoryGiB = cloneRat(e.MemoryGiB)
	} else {
		out.MemoryGiB = floor(new(big.Rat).Mul(r, capMem), MemoryGrid)
	}
	if e.EFA != nil {
		out.EFA = *e.EFA
	} else {
		out.EFA = satInt64(new(big.Rat).Mul(new(big.Rat).SetInt(ceilInt(r)), ratInt(it.EFA)))
	}
	return out
}

// Defaults resolves every entry (resolve) and applies the configuration-level defaults:
// activation_state Enabled, preempt_team_tasks LowerPriority, cohort hyperpod-cohort, strategy
// LendAndBorrow, and borrow_limit 50 when the strategy is LendAndBorrow (nil for Lend and
// DontLend, which do not borrow). Unknown attributes (Config.Unknown) resolve to "" (strings),
// the configured value (borrow_limit when the strategy is unknown) or Resolved.Unknown.
//
// Defaults checks nothing: Plan runs Validate before it.
func Defaults(cat *catalog.Catalog, cfg Config) ResolvedConfig {
	return defaults(cat, cfg, floorExact)
}

// defaults is Defaults with computed amounts rounded down by floor.
func defaults(cat *catalog.Catalog, cfg Config, floor amountFloor) ResolvedConfig {
	rc := ResolvedConfig{Config: cfg.Clone(), FairShareWeight: cfg.FairShareWeight}
	str := func(v *string, def string, path ...string) string {
		switch {
		case cfg.IsUnknown(path...):
			return ""
		case v == nil:
			return def
		default:
			return *v
		}
	}
	rc.ActivationState = str(cfg.ActivationState, DefaultActivationState, "activation_state")
	rc.PreemptTeamTasks = str(cfg.PreemptTeamTasks, DefaultPreemptTeamTasks, "preempt_team_tasks")
	rc.Cohort = str(cfg.Cohort, DefaultCohort, "cohort")
	rc.Strategy = str(cfg.Sharing.Strategy, DefaultStrategy, "resource_sharing", "strategy")
	switch {
	case rc.Strategy == "" || cfg.IsUnknown("resource_sharing", "borrow_limit"):
		rc.BorrowLimit = cloneInt(cfg.Sharing.BorrowLimit)
	case rc.Strategy == StrategyLendAndBorrow:
		rc.BorrowLimit = cloneInt(cfg.Sharing.BorrowLimit)
		if rc.BorrowLimit == nil {
			rc.BorrowLimit = ptr(DefaultBorrowLimit)
		}
	}
	rc.AbsoluteBorrowLimits = rc.Config.Sharing.AbsoluteBorrowLimits

	rc.Resources = make([]Resolved, len(cfg.Resources))
	for i, e := range cfg.Resources {
		if cfg.hasUnknownWithin("resources", strconv.Itoa(i)) {
			rc.Resources[i] = Resolved{Configured: e.clone(), Unknown: true}
			continue
		}
		rc.Resources[i] = resolve(cat, e, floor)
	}
	return rc
}
