package quota

import (
	"fmt"
	"math/big"
	"strconv"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

// ComputeQuota is a quota in the SageMaker API's terms (the fields of CreateComputeQuota), with
// no SDK type: the SageMaker backend converts it to and from the SDK, and the test emulator to
// and from the wire. Every amount is explicit, so the API's own ratio never runs and the
// cluster gets exactly what the plan showed.
type ComputeQuota struct {
	Name, Description, Team string
	FairShareWeight         int64
	ActivationState         string
	PreemptTeamTasks        string
	Strategy                string
	// BorrowLimit is the percentage; nil when the strategy does not borrow.
	BorrowLimit          *int64
	AbsoluteBorrowLimits []AbsoluteBorrowLimit
	Resources            []ComputeQuotaResource
}

// ComputeQuotaResource is one ComputeQuotaResources element.
type ComputeQuotaResource struct {
	InstanceType string
	// Count is set for an entry sized in whole instances.
	Count        *int64
	Accelerators int64
	VCPU         *big.Rat
	MemoryGiB    *big.Rat
	Partition    *Partition
}

// ComputeQuotaOf is the API document of a resolved configuration: every amount as resolved,
// Count and the partition as configured. It carries neither cohort nor EFA: the API has no
// field for them (the add-on decides both).
func ComputeQuotaOf(rc ResolvedConfig) ComputeQuota {
	q := ComputeQuota{
		Name: rc.Config.Name, Description: rc.Config.Description, Team: rc.Config.Team,
		FairShareWeight: rc.FairShareWeight, ActivationState: rc.ActivationState,
		PreemptTeamTasks: rc.PreemptTeamTasks, Strategy: rc.Strategy, BorrowLimit: cloneInt(rc.BorrowLimit),
	}
	for _, l := range rc.AbsoluteBorrowLimits {
		q.AbsoluteBorrowLimits = append(q.AbsoluteBorrowLimits, l.clone())
	}
	for _, r := range rc.Resources {
		e := r.Configured
		res := ComputeQuotaResource{
			InstanceType: e.InstanceType, Count: cloneInt(e.Count), Accelerators: r.Accelerators,
			VCPU: cloneRat(r.VCPU), MemoryGiB: cloneRat(r.MemoryGiB),
		}
		if e.Partition != nil {
			p := *e.Partition
			res.Partition = &p
		}
		q.Resources = append(q.Resources, res)
	}
	return q
}

// ConfigFromComputeQuota reads an API document back into the smallest configuration that plans
// to it on the API's store (computed amounts rounded as PlanOn rounds them for float32s): each
// entry keeps only its sizing attribute (count, accelerators, partition, vcpu or memory, in the
// order the ratio rule tries them) plus every amount that differs from what that attribute
// defaults it to, and the quota-level attributes that differ from their defaults. A
// configuration that set an amount equal to its default reads back without it; the plan is the
// same either way. The error says why no configuration plans to q.
func ConfigFromComputeQuota(cat *catalog.Catalog, q ComputeQuota) (Config, ResolvedConfig, error) {
	cfg := Config{Name: q.Name, Description: q.Description, Team: q.Team, FairShareWeight: q.FairShareWeight}
	cfg.ActivationState = unlessDefault(q.ActivationState, DefaultActivationState)
	cfg.PreemptTeamTasks = unlessDefault(q.PreemptTeamTasks, DefaultPreemptTeamTasks)
	cfg.Sharing.Strategy = unlessDefault(q.Strategy, DefaultStrategy)
	if q.BorrowLimit != nil && (q.Strategy != StrategyLendAndBorrow || *q.BorrowLimit != DefaultBorrowLimit) {
		cfg.Sharing.BorrowLimit = cloneInt(q.BorrowLimit)
	}
	for _, l := range q.AbsoluteBorrowLimits {
		cfg.Sharing.AbsoluteBorrowLimits = append(cfg.Sharing.AbsoluteBorrowLimits, l.clone())
	}
	for _, r := range q.Resources {
		cfg.Resources = append(cfg.Resources, smallestEntry(cat, r))
	}
	rc, problems := runPlan(cat, cfg, Validate, floorFloat32)
	if len(problems) > 0 {
		return Config{}, ResolvedConfig{}, fmt.Errorf("the quota as the API holds it does not plan: %s", problems[0].Detail)
	}
	return cfg, rc, nil
}

func unlessDefault(v, def string) *string {
	if v == "" || v == def {
		return nil
	}
	return &v
}

// smallestEntry is the entry with the fewest attributes that resolves to r: one sizing
// attribute (count, accelerators, partition, vcpu or memory, first in the order the ratio rule
// tries them on a tie) plus the amounts its defaults miss. A count r holds is always kept. Accelerators changed by hand under a count (no longer count x
// the instance's) rule count out, since count fixes them.
func smallestEntry(cat *catalog.Catalog, r ComputeQuotaResource) Entry {
	it, known := cat.Lookup(r.InstanceType)
	// A partition is its own field: every candidate keeps it.
	base := func() Entry {
		e := Entry{InstanceType: r.InstanceType}
		if r.Partition != nil {
			p := *r.Partition
			e.Partition = &p
		}
		return e
	}
	var sizes []Entry
	if r.Count != nil && r.Partition == nil {
		e := base()
		e.Count = cloneInt(r.Count)
		sizes = append(sizes, e)
	}
	if r.Accelerators > 0 && known && it.Accelerators > 0 {
		e := base()
		e.Accelerators = ptr(r.Accelerators)
		sizes = append(sizes, e)
	}
	if r.Partition != nil {
		sizes = append(sizes, base())
	}
	if r.VCPU != nil && r.VCPU.Sign() > 0 {
		e := base()
		e.VCPU = cloneRat(r.VCPU)
		sizes = append(sizes, e)
	}
	last := base()
	last.MemoryGiB = orZero(cloneRat(r.MemoryGiB))
	sizes = append(sizes, last)
	var best Entry
	bestSet := -1
	for _, e := range sizes {
		e.InstanceType = r.InstanceType
		d := resolve(cat, e, floorFloat32)
		if d.Accelerators != r.Accelerators {
			if e.Count != nil {
				continue // count fixes the accelerators
			}
			e.Accelerators = ptr(r.Accelerators)
		}
		if !ratPtrEqual(d.VCPU, orZero(r.VCPU)) {
			e.VCPU = orZero(cloneRat(r.VCPU))
		}
		if !ratPtrEqual(d.MemoryGiB, orZero(r.MemoryGiB)) {
			e.MemoryGiB = orZero(cloneRat(r.MemoryGiB))
		}
		// Setting an amount can change which attribute sizes the entry: check the result.
		if !resolvesTo(cat, e, r) {
			continue
		}
		if e.Count != nil {
			return e // the API holds the count: keep it whenever it still fits
		}
		if n := setAttributes(e); bestSet < 0 || n < bestSet {
			best, bestSet = e, n
		}
	}
	if bestSet < 0 {
		best = base()
		best.Accelerators, best.VCPU, best.MemoryGiB = ptr(r.Accelerators), orZero(cloneRat(r.VCPU)), orZero(cloneRat(r.MemoryGiB))
	}
	// The API holds no EFA: the entry resolves it from the instance type, as a plan does.
	return best
}

func resolvesTo(cat *catalog.Catalog, e Entry, r ComputeQuotaResource) bool {
	d := resolve(cat, e, floorFloat32)
	return d.Accelerators == r.Accelerators && ratPtrEqual(d.VCPU, orZero(r.VCPU)) && ratPtrEqual(d.MemoryGiB, orZero(r.MemoryGiB))
}

func setAttributes(e Entry) int {
	n := 0
	for _, set := range []bool{e.Count != nil, e.Accelerators != nil, e.Partition != nil, e.VCPU != nil, e.MemoryGiB != nil} {
		if set {
			n++
		}
	}
	return n
}

// StoreLimits is what a store cannot hold: attributes without a field (keyed "cohort",
// "resources.efa", with why) and, for a store of 32-bit floats, amounts that would not read
// back as written.
type StoreLimits struct {
	Unsupported    map[string]string
	Float32Amounts bool
}

// amountFloor rounds computed amounts down to values the store holds exactly.
func (l StoreLimits) amountFloor() amountFloor {
	if l.Float32Amounts {
		return floorFloat32
	}
	return floorExact
}

// CheckStore reports what cfg, resolved as rc, asks of a store that it cannot hold. Unknown
// values are checked once known.
func CheckStore(cfg Config, rc ResolvedConfig, limits StoreLimits) []Problem {
	var ps []Problem
	unsupported := func(entry int, attr, key string) {
		if why, ok := limits.Unsupported[key]; ok {
			ps = append(ps, Problem{Entry: entry, Path: []string{attr}, Summary: "Not available on this cluster",
				Detail: fmt.Sprintf("%s is set, but %s. Remove it: on this cluster the SageMaker API holds the quota "+
					"(the provider's task_governance block).", attr, why)})
		}
	}
	if cfg.Cohort != nil || cfg.IsUnknown("cohort") {
		unsupported(-1, "cohort", "cohort")
	}
	for i, e := range cfg.Resources {
		if e.EFA != nil || cfg.IsUnknown("resources", fmt.Sprint(i), "efa") {
			unsupported(i, "efa", "resources.efa")
		}
	}
	if !limits.Float32Amounts {
		return ps
	}
	float32Amount := func(entry int, path []string, v *big.Rat, grid int64) {
		if v == nil || SurvivesFloat32(v, grid) {
			return
		}
		attr := path[len(path)-1]
		back := RatString(DecimalFromFloat32(float32Of(v), grid))
		ps = append(ps, Problem{Entry: entry, Path: path, Summary: "Amount the SageMaker API cannot hold",
			Detail: fmt.Sprintf("%s = %s cannot be held exactly by the SageMaker API, which stores it as a 32-bit float: "+
				"it would read back as %s. Write %s, or a value with fewer digits.", attr, RatString(v), back, back)})
	}
	for i, r := range rc.Resources {
		if r.Unknown {
			continue
		}
		float32Amount(i, []string{"vcpu"}, r.VCPU, VCPUGrid)
		float32Amount(i, []string{"memory_in_gib"}, r.MemoryGiB, MemoryGrid)
	}
	for j, l := range cfg.Sharing.AbsoluteBorrowLimits {
		at := func(attr string) []string {
			return []string{"resource_sharing", "absolute_borrow_limits", strconv.Itoa(j), attr}
		}
		if !cfg.IsUnknown(at("vcpu")...) {
			float32Amount(-1, at("vcpu"), l.VCPU, VCPUGrid)
		}
		if !cfg.IsUnknown(at("memory_in_gib")...) {
			float32Amount(-1, at("memory_in_gib"), l.MemoryGiB, MemoryGrid)
		}
	}
	return ps
}
