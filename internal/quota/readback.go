package quota

import (
	"fmt"
	"math/big"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// cellValues is one resource of one flavor, as exact numbers (cores, bytes or devices).
type cellValues struct {
	nominal      *big.Rat
	borrow, lend *big.Rat // nil when unset
}

type flavorTable struct {
	name  string
	order []string
	cells map[string]cellValues
}

func (f flavorTable) nominal(res string) *big.Rat {
	if c, ok := f.cells[res]; ok {
		return c.nominal
	}
	return new(big.Rat)
}

func optRat(q *resource.Quantity) *big.Rat {
	if q == nil {
		return nil
	}
	return ratFromQuantity(*q)
}

// tableOf flattens the resource groups; a flavor listed in several groups (which Kueue forbids)
// is taken from its first group.
func tableOf(spec kueue.ClusterQueueSpec) []flavorTable {
	var out []flavorTable
	index := map[string]int{}
	for _, g := range spec.ResourceGroups {
		for _, f := range g.Flavors {
			i, ok := index[f.Name]
			if !ok {
				i = len(out)
				index[f.Name] = i
				out = append(out, flavorTable{name: f.Name, cells: map[string]cellValues{}})
			}
			ft := &out[i]
			for _, r := range f.Resources {
				name := string(r.Name)
				if _, dup := ft.cells[name]; dup {
					continue
				}
				ft.order = append(ft.order, name)
				ft.cells[name] = cellValues{nominal: ratFromQuantity(r.NominalQuota),
					borrow: optRat(r.BorrowingLimit), lend: optRat(r.LendingLimit)}
			}
		}
	}
	return out
}

func isAcceleratorColumn(res string) bool {
	if res == ResourceCPU || res == ResourceMemory || res == ResourceEFA {
		return false
	}
	_, mig := migProfileOf(res)
	return !mig
}

// FromClusterQueue maps a ClusterQueue back to the resource's attributes: Config says what the
// user configured (nil = computed), ResolvedConfig holds every value as the cluster has it.
//
// Resolved values always come from the spec (quantity -> exact decimal), so out-of-band changes
// show up as differences. With the provider's annotations present, Config restores which
// attributes were configured and the values the spec cannot express (count, name, description,
// the strategy and borrow_limit when the spec's limits still match them); a configured value
// the spec does express is taken from the spec. Without them (a queue someone else made, or a
// corrupt annotation) every value is inferred as configured: accelerators (or the partition
// from a non-zero nvidia.com/mig-* quota), vcpu, memory_in_gib and efa of every flavor; the
// strategy DontLend when any lendingLimit is set, Lend when every borrowingLimit is 0, else
// LendAndBorrow with the borrow_limit (preferring 50) that reproduces every borrowingLimit, or,
// when no single percentage does, absolute_borrow_limits for the cpu, memory and accelerator
// limits that differ (vcpu, memory_in_gib, accelerators) and for the first MIG resource whose
// limit differs (accelerator_partition, unless accelerators is inferred: the two conflict).
// Count is never inferred: the explicit amounts say the same. Name is "" without the name annotation.
//
// It is best effort: a spec the attributes cannot express (a second resource group, an unknown
// resource, a non-zero quota in another accelerator column, a fractional device count, ...)
// still maps to the nearest configuration. Callers detect that case with
// SpecDrift(RenderClusterQueue(cat, rc).Spec, cq.Spec) and plan an update that restores the
// rendered spec. The error is for annotations written by a newer provider and numbers that do
// not fit the attribute types.
//
// For every valid config c: FromClusterQueue(RenderClusterQueue(Defaults(c))) returns c and
// the same resolved values.
func FromClusterQueue(cat *catalog.Catalog, cq kueue.ClusterQueue) (Config, ResolvedConfig, error) {
	spec := cq.Spec
	ann, err := decodeConfigAnnotation(cq.Annotations[AnnotationConfiguration])
	if err != nil {
		return Config{}, ResolvedConfig{}, fmt.Errorf("ClusterQueue %s: %w", cq.Name, err)
	}

	cfg := Config{Name: cq.Annotations[AnnotationName], Description: cq.Annotations[AnnotationDescription], Team: teamOf(cq)}
	if cfg.Tags, err = DecodeTags(cq.Annotations[AnnotationTags]); err != nil {
		return Config{}, ResolvedConfig{}, fmt.Errorf("ClusterQueue %s: %w", cq.Name, err)
	}
	if cfg.Name == "" {
		// A queue this provider did not write (by hand, or by HyperPod's add-on, which keeps the
		// quota's name in AWS) is named after its team, which the name rule always accepts.
		cfg.Name = cfg.Team
	}
	rc := ResolvedConfig{}

	rc.ActivationState = ActivationEnabled
	if effectiveStopPolicy(spec.StopPolicy) != kueue.StopPolicyNone {
		rc.ActivationState = ActivationDisabled
	}
	rc.PreemptTeamTasks = PreemptNever
	if spec.Preemption != nil && spec.Preemption.WithinClusterQueue == kueue.PreemptionLowerPriority {
		rc.PreemptTeamTasks = PreemptLowerPriority
	}
	rc.Cohort = spec.CohortName
	w := effectiveWeight(spec.FairSharing)
	if rc.FairShareWeight, err = toInt64(ratFromQuantity(w), "fairSharing.weight"); err != nil {
		return Config{}, ResolvedConfig{}, fmt.Errorf("ClusterQueue %s: %w", cq.Name, err)
	}
	cfg.FairShareWeight = rc.FairShareWeight
	configured := func(annotated *string, value string) *string {
		if ann != nil && annotated == nil {
			return nil
		}
		return ptr(value)
	}
	var annActivation, annPreempt, annCohort *string
	if ann != nil {
		annActivation, annPreempt, annCohort = ann.ActivationState, ann.PreemptTeamTasks, ann.Cohort
	}
	cfg.ActivationState = configured(annActivation, rc.ActivationState)
	cfg.PreemptTeamTasks = configured(annPreempt, rc.PreemptTeamTasks)
	cfg.Cohort = configured(annCohort, rc.Cohort)

	table := tableOf(spec)
	annEntries := annotatedEntries(ann)
	for _, f := range table {
		e, r, err := entryFromFlavor(cat, f, annEntries)
		if err != nil {
			return Config{}, ResolvedConfig{}, fmt.Errorf("ClusterQueue %s: flavor %s: %w", cq.Name, f.name, err)
		}
		cfg.Resources = append(cfg.Resources, e)
		rc.Resources = append(rc.Resources, r)
	}

	sharing, strategy, borrowLimit := readSharing(cat, ann, cfg, rc, table)
	cfg.Sharing = sharing
	rc.Strategy, rc.BorrowLimit = strategy, borrowLimit
	rc.AbsoluteBorrowLimits = sharing.AbsoluteBorrowLimits
	rc.Config = cfg.Clone()
	return cfg, rc, nil
}

// NotRepresented lists what an apply of rc, the configuration FromClusterQueue read from cq,
// would change in cq's spec, in SpecDrift's words: what the resource's attributes cannot hold
// (a second resource group, a resource the rendering does not cover or covers besides, ...).
// Empty when rc renders to cq's spec exactly.
func NotRepresented(cat *catalog.Catalog, cq kueue.ClusterQueue, rc ResolvedConfig) []string {
	want, err := RenderClusterQueue(cat, rc)
	if err != nil {
		return []string{"the configuration read from the spec cannot be rendered: " + err.Error()}
	}
	return SpecDrift(want.Spec, cq.Spec)
}

// annotatedEntries are the annotation's resources entries by instance type (the first of each).
func annotatedEntries(ann *configAnnotation) map[string]annotationEntry {
	out := map[string]annotationEntry{}
	if ann == nil {
		return out
	}
	for _, e := range ann.Resources {
		if _, dup := out[e.InstanceType]; !dup {
			out[e.InstanceType] = e
		}
	}
	return out
}

// readSharing is resource_sharing as configured, and the strategy and borrow limit in force:
// the annotated sharing when it explains the spec's limits, else the one the limits imply.
func readSharing(cat *catalog.Catalog, ann *configAnnotation, cfg Config, rc ResolvedConfig, table []flavorTable) (Sharing, string, *int64) {
	sharing, strategy, borrowLimit := inferSharing(table, rc.Resources)
	if ann == nil {
		return sharing, strategy, borrowLimit
	}
	s, ok := annotatedSharing(ann)
	if !ok {
		return sharing, strategy, borrowLimit
	}
	cand := rc
	cand.Strategy = DefaultStrategy
	if s.Strategy != nil {
		cand.Strategy = *s.Strategy
	}
	cand.BorrowLimit = nil
	if cand.Strategy == StrategyLendAndBorrow {
		cand.BorrowLimit = cloneInt(s.BorrowLimit)
		if cand.BorrowLimit == nil {
			cand.BorrowLimit = ptr(DefaultBorrowLimit)
		}
	}
	cand.AbsoluteBorrowLimits = s.AbsoluteBorrowLimits
	if annotatedLimitsHold(cat, cfg, s, cand, table) {
		return s, cand.Strategy, cand.BorrowLimit
	}
	return sharing, strategy, borrowLimit
}

// teamOf is the team named by the queue's name, which is how the queue was found: labels and
// the namespace selector are values to compare (drift), never where identity comes from.
func teamOf(cq kueue.ClusterQueue) string {
	t, _ := TeamFromClusterQueueName(cq.Name)
	return t
}

// entryFromFlavor maps one flavor to an entry. A flavor the annotation does not list (a queue
// without the annotation, or a flavor added out of band) is inferred with every value set.
func entryFromFlavor(cat *catalog.Catalog, f flavorTable, annEntries map[string]annotationEntry) (Entry, Resolved, error) {
	it, known := cat.Lookup(f.name)
	accel := it.AcceleratorResource
	if !known {
		for _, res := range f.order {
			if isAcceleratorColumn(res) && f.cells[res].nominal.Sign() != 0 {
				accel = res
				break
			}
		}
	}
	r := Resolved{AcceleratorResource: accel}
	var err error
	if accel != "" {
		if r.Accelerators, err = toInt64(f.nominal(accel), accel); err != nil {
			return Entry{}, Resolved{}, err
		}
	}
	if r.EFA, err = toInt64(f.nominal(ResourceEFA), ResourceEFA); err != nil {
		return Entry{}, Resolved{}, err
	}
	r.VCPU = cloneRat(f.nominal(ResourceCPU))
	r.MemoryGiB = bytesToGiB(f.nominal(ResourceMemory))

	// A partition in the spec: the first non-zero MIG quota.
	var specPart *Partition
	for _, res := range f.order {
		if p, ok := migProfileOf(res); ok && f.cells[res].nominal.Sign() != 0 {
			n, err := toInt64(f.cells[res].nominal, res)
			if err != nil {
				return Entry{}, Resolved{}, err
			}
			specPart = &Partition{Type: p, Count: n}
			break
		}
	}

	ae, annotated := annEntries[f.name]
	e, err := configuredEntry(f, r, ae, annotated, specPart)
	if err != nil {
		return Entry{}, Resolved{}, err
	}
	r.Configured = e.clone()
	return e, r, nil
}

// configuredEntry is the entry as configured: the attributes the annotation entry ae records,
// with values from the spec where it has them, or, for a flavor the annotation does not list
// (or lists corruptly), every value inferred from the spec.
func configuredEntry(f flavorTable, r Resolved, ae annotationEntry, annotated bool, specPart *Partition) (Entry, error) {
	e := Entry{InstanceType: f.name}
	if annotated {
		var err error
		if e.Count, err = parseIntPtr(ae.Count); err != nil {
			annotated = false // a corrupt entry is inferred like one the annotation lacks
		}
	}
	if !annotated {
		switch {
		case specPart != nil:
			e.Partition = specPart
		case r.AcceleratorResource != "":
			e.Accelerators = ptr(r.Accelerators)
		}
		e.VCPU, e.MemoryGiB, e.EFA = cloneRat(r.VCPU), cloneRat(r.MemoryGiB), ptr(r.EFA)
		return e, nil
	}
	if ae.Accelerators != nil {
		e.Accelerators = ptr(r.Accelerators)
	}
	if ae.VCPU != nil {
		e.VCPU = cloneRat(r.VCPU)
	}
	if ae.MemoryInGiB != nil {
		e.MemoryGiB = cloneRat(r.MemoryGiB)
	}
	if ae.EFA != nil {
		e.EFA = ptr(r.EFA)
	}
	if ap := ae.Partition; ap != nil {
		p := Partition{Type: ap.Type}
		if c, has := f.cells[MIGResourceName(ap.Type)]; has {
			var err error
			if p.Count, err = toInt64(c.nominal, MIGResourceName(ap.Type)); err != nil {
				return Entry{}, err
			}
		} else if n, err := strconv.ParseInt(ap.Count, 10, 64); err == nil {
			p.Count = n
		}
		e.Partition = &p
	}
	return e, nil
}

// annotatedLimitsHold reports whether the annotated sharing explains the spec's limits, computed
// either from the spec's nominal quotas or from the nominal quotas the configuration asks for.
// The second case is a hand-edited nominal quota with the limits left alone: the sharing is
// unchanged, so it should not read back as inferred absolute limits and clutter the plan.
func annotatedLimitsHold(cat *catalog.Catalog, cfg Config, s Sharing, cand ResolvedConfig, table []flavorTable) bool {
	if _, flavors, err := renderFlavors(cat, cand); err == nil && limitsMatch(flavors, table) {
		return true
	}
	want := cfg.Clone()
	want.Sharing = s
	if len(validateEntries(cat, want)) > 0 {
		return false
	}
	_, flavors, err := renderFlavors(cat, Defaults(cat, want))
	return err == nil && limitsMatch(flavors, table)
}

// limitsMatch reports whether the rendered borrowing and lending limits equal the spec's in
// every cell both have.
func limitsMatch(rendered []kueue.FlavorQuotas, table []flavorTable) bool {
	byName := map[string]kueue.FlavorQuotas{}
	for _, f := range rendered {
		byName[f.Name] = f
	}
	for _, f := range table {
		rf, ok := byName[f.name]
		if !ok {
			continue
		}
		for _, rq := range rf.Resources {
			c, ok := f.cells[string(rq.Name)]
			if !ok {
				continue
			}
			if !ratPtrEqual(optRat(rq.BorrowingLimit), c.borrow) || !ratPtrEqual(optRat(rq.LendingLimit), c.lend) {
				return false
			}
		}
	}
	return true
}

// percentRange is the set of integer percentages [lo, hi]; empty when lo > hi.
type percentRange struct{ lo, hi int64 }

func fullRange() percentRange { return percentRange{0, MaxBorrowLimit} }

func (p percentRange) empty() bool { return p.lo > p.hi }

func (p percentRange) choose() int64 {
	if p.lo <= DefaultBorrowLimit && DefaultBorrowLimit <= p.hi {
		return DefaultBorrowLimit
	}
	return p.lo
}

// cellRange narrows p to the percentages whose rendering gives borrow for nominal n:
// floor(n/unit x p/100) = borrow/unit.
func cellRange(p percentRange, res string, c cellValues) percentRange {
	if c.borrow == nil || c.lend != nil {
		return percentRange{1, 0}
	}
	unit := unitOf(res)
	n := new(big.Rat).Quo(c.nominal, unit)
	b := new(big.Rat).Quo(c.borrow, unit)
	switch {
	case !b.IsInt() || b.Sign() < 0 || n.Sign() < 0:
		return percentRange{1, 0}
	case n.Sign() == 0:
		if b.Sign() != 0 {
			return percentRange{1, 0}
		}
		return p
	}
	// 100 b / n <= p < 100 (b+1) / n
	hundred := ratInt(100)
	lo := ceilInt(new(big.Rat).Quo(new(big.Rat).Mul(hundred, b), n))
	hiEx := ceilInt(new(big.Rat).Quo(new(big.Rat).Mul(hundred, new(big.Rat).Add(b, ratInt(1))), n))
	hiEx.Sub(hiEx, big.NewInt(1))
	if lo.Cmp(big.NewInt(p.lo)) > 0 {
		if !lo.IsInt64() {
			return percentRange{1, 0}
		}
		p.lo = lo.Int64()
	}
	if hiEx.Cmp(big.NewInt(p.hi)) < 0 {
		if !hiEx.IsInt64() {
			return percentRange{1, 0}
		}
		p.hi = hiEx.Int64()
	}
	return p
}

// inferSharing reads resource_sharing from the limits alone (see FromClusterQueue).
func inferSharing(table []flavorTable, res []Resolved) (Sharing, string, *int64) {
	anyLend, allZero, cells := false, true, 0
	for _, f := range table {
		for _, c := range f.cells {
			cells++
			if c.lend != nil {
				anyLend = true
			}
			if c.borrow == nil || c.borrow.Sign() != 0 {
				allZero = false
			}
		}
	}
	switch {
	case anyLend:
		return Sharing{Strategy: ptr(StrategyDontLend)}, StrategyDontLend, nil
	case cells > 0 && allZero:
		return Sharing{Strategy: ptr(StrategyLend)}, StrategyLend, nil
	}

	// rest: the resources an absolute limit cannot cap, which the percentage must explain.
	all, rest := fullRange(), fullRange()
	for i, f := range table {
		for name, c := range f.cells {
			all = cellRange(all, name, c)
			_, mig := migProfileOf(name)
			if name != ResourceCPU && name != ResourceMemory && name != res[i].AcceleratorResource && !mig {
				rest = cellRange(rest, name, c)
			}
		}
	}
	if !all.empty() {
		p := all.choose()
		return Sharing{Strategy: ptr(StrategyLendAndBorrow), BorrowLimit: ptr(p)}, StrategyLendAndBorrow, ptr(p)
	}
	p := DefaultBorrowLimit
	if !rest.empty() {
		p = rest.choose()
	}
	exact := percentRange{p, p}
	var limits []AbsoluteBorrowLimit
	for i, f := range table {
		a := AbsoluteBorrowLimit{InstanceType: f.name}
		differs := func(name string) (cellValues, bool) {
			c, ok := f.cells[name]
			return c, ok && c.borrow != nil && cellRange(exact, name, c).empty()
		}
		if c, d := differs(ResourceCPU); d {
			a.VCPU = floorTo(c.borrow, 1000)
		}
		if c, d := differs(ResourceMemory); d {
			a.MemoryGiB = bytesToGiB(c.borrow)
		}
		if acc := res[i].AcceleratorResource; acc != "" {
			if c, d := differs(acc); d {
				a.Accelerators = ptr(satInt64(c.borrow))
			}
		}
		// The first MIG resource the percentage does not explain; a limit caps one profile.
		for _, name := range f.order {
			if p, mig := migProfileOf(name); mig {
				if c, d := differs(name); d && a.Accelerators == nil {
					a.Partition = &Partition{Type: p, Count: satInt64(c.borrow)}
					break
				}
			}
		}
		if a.VCPU != nil || a.MemoryGiB != nil || a.Accelerators != nil || a.Partition != nil {
			limits = append(limits, a)
		}
	}
	return Sharing{Strategy: ptr(StrategyLendAndBorrow), BorrowLimit: ptr(p), AbsoluteBorrowLimits: limits},
		StrategyLendAndBorrow, ptr(p)
}
