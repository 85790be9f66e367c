package admission

import (
	"cmp"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// mode is how a flavor assignment can be admitted, from worst to best (Kueue's
// FlavorAssignmentMode).
type mode int

const (
	modeNoFit mode = iota
	modePreempt
	modeFit
)

// preemptionMode refines mode inside the flavor assigner, from worst to best.
type preemptionMode int

const (
	pmNoFit preemptionMode = iota
	pmNoCandidates
	pmPreempt
	pmReclaim
	pmFit
)

func (p preemptionMode) mode() mode {
	switch p {
	case pmNoFit:
		return modeNoFit
	case pmFit:
		return modeFit
	}
	return modePreempt
}

// granular is a flavor's preemption mode and borrowing level.
type granular struct {
	pm     preemptionMode
	borrow int
}

var (
	worstGranular = granular{pm: pmNoFit, borrow: 1 << 30}
	bestGranular  = granular{pm: pmFit}
)

// preferred reports whether a is a better flavor than b under the default flavorFungibility
// (no preference: borrowing over preemption). A flavor whose preemption finds no candidates
// ranks below every viable one.
func preferred(a, b granular) bool {
	if a.pm == pmNoFit {
		return false
	}
	if b.pm == pmNoFit {
		return true
	}
	if (a.pm == pmNoCandidates) != (b.pm == pmNoCandidates) {
		return a.pm != pmNoCandidates
	}
	if a.pm != b.pm {
		return a.pm > b.pm
	}
	return a.borrow < b.borrow
}

// tryNextFlavor is Kueue's shouldTryNextFlavor for the default flavorFungibility
// (whenCanBorrow MayStopSearch, whenCanPreempt TryNextFlavor): stop at the first flavor that
// fits, borrowing or not.
func tryNextFlavor(g granular) bool {
	return g.pm != pmFit
}

type flavorChoice struct {
	flavor string
	mode   mode
	borrow int
}

// assignment is the flavors chosen for a Workload and what admitting it would need.
type assignment struct {
	podSets []map[corev1.ResourceName]flavorChoice
	mode    mode
	borrow  int
	usage   quantities
	// targets are the Workloads to preempt (mode Preempt).
	targets []target
	// resume is where the next attempt's flavor scan starts, by pod set and resource group:
	// after the flavor chosen, unless it was the last (Kueue v0.19's flavor scan progress).
	resume map[scanKey]int
}

// scanKey is a pod set's index and a resource group's index.
type scanKey struct{ podSet, group int }

// needPreemption are the flavor-resources assigned in mode Preempt.
func (a *assignment) needPreemption() map[flavorResource]bool {
	out := map[flavorResource]bool{}
	for _, ps := range a.podSets {
		for r, f := range ps {
			if f.mode == modePreempt {
				out[flavorResource{f.flavor, r}] = true
			}
		}
	}
	return out
}

// assign is Kueue's flavor assigner for the whole Workload, followed by the search for
// preemption targets when it needs preemption (getInitialAssignments without partial admission).
func (s *state) assign(l *ledger, w *workload) assignment {
	a := assignment{usage: quantities{}, mode: modeFit, resume: map[scanKey]int{}}
	s.searched = searched{}
	resume := w.resume
	w.resume = nil
	for i := range w.podSets {
		ps := &w.podSets[i]
		chosen := map[corev1.ResourceName]flavorChoice{}
		noFit := false
		for _, r := range sortedResources(ps.total) {
			if _, done := chosen[r]; done {
				continue
			}
			g := w.cq.group(r)
			if g == nil {
				if ps.total[r] == 0 {
					continue
				}
				noFit = true
				break
			}
			key := scanKey{i, slices.IndexFunc(w.cq.groups, func(x resourceGroup) bool { return x.covers(r) })}
			flavors, next, ok := s.findFlavor(l, w, ps, g, a.usage, resume[key])
			a.resume[key] = next
			if !ok {
				noFit = true
				break
			}
			maps.Copy(chosen, flavors)
		}
		if noFit {
			a.mode = modeNoFit
			return a
		}
		a.podSets = append(a.podSets, chosen)
		for r, f := range chosen {
			a.borrow = max(a.borrow, f.borrow)
			a.usage[flavorResource{f.flavor, r}] += ps.total[r]
			a.mode = min(a.mode, f.mode)
		}
	}
	if len(a.podSets) == 0 {
		a.mode = modeNoFit
	}
	if a.mode == modePreempt {
		need := a.needPreemption()
		if fr := s.searched.fr; s.searched.done && len(need) == 1 && need[fr] && len(a.usage) == 1 && a.usage[fr] == s.searched.val {
			// The flavor assigner searched this very request (Kueue searches it again).
			a.targets = s.searched.targets
		} else {
			a.targets = s.targets(l, w, need, a.usage)
		}
	}
	return a
}

// searched is the last preemption search of a flavor assignment: the targets that make val of
// fr fit, on the snapshot that the whole assignment reads.
type searched struct {
	done    bool
	fr      flavorResource
	val     int64
	targets []target
}

// findFlavor tries the group's flavors in order, from start, for the pod set's resources that
// the group covers, and returns the chosen flavor of each (false when none can be used) and
// where a next attempt would start.
func (s *state) findFlavor(l *ledger, w *workload, ps *podSet, g *resourceGroup, assumed quantities, start int) (map[corev1.ResourceName]flavorChoice, int, bool) {
	var requests []corev1.ResourceName
	for _, r := range sortedResources(ps.total) {
		if g.covers(r) {
			requests = append(requests, r)
		}
	}
	var best map[corev1.ResourceName]flavorChoice
	bestMode := worstGranular
	next := func(i int) int {
		if i >= len(g.flavors)-1 {
			return 0
		}
		return i + 1
	}
	for i := start; i < len(g.flavors); i++ {
		f := g.flavors[i]
		if !s.flavorMatches(f, ps) {
			continue
		}
		choice := make(map[corev1.ResourceName]flavorChoice, len(requests))
		rep := bestGranular
		for _, r := range requests {
			fr := flavorResource{f, r}
			pm, borrow := s.fitsQuota(l, w, fr, assumed[fr]+ps.total[r])
			m := granular{pm, borrow}
			if preferred(rep, m) {
				rep = m
			}
			if rep.pm == pmNoFit {
				break
			}
			choice[r] = flavorChoice{flavor: f, mode: pm.mode(), borrow: borrow}
		}
		if !tryNextFlavor(rep) {
			return choice, next(i), true
		}
		if preferred(rep, bestMode) {
			best, bestMode = choice, rep
		}
	}
	return best, 0, best != nil
}

// fitsQuota is Kueue's fitsResourceQuota: whether val of fr fits now, could fit after
// preemption, or can never fit.
func (s *state) fitsQuota(l *ledger, w *workload, fr flavorResource, val int64) (preemptionMode, int) {
	cq := w.cq
	if val > potentialAvailable(cq, fr) {
		return pmNoFit, 0
	}
	borrow := l.borrowLevel(cq, fr, val)
	if val <= l.available(cq, fr) {
		return pmFit, borrow
	}
	if cq.quotas[fr].nominal >= val || s.canPreemptWhileBorrowing(cq) {
		return s.simulatePreemption(l, w, fr, val)
	}
	return pmNoFit, borrow
}

func (s *state) canPreemptWhileBorrowing(cq *clusterQueue) bool {
	return cq.borrowWithinCohort != "Never" || (s.fairSharing && cq.reclaimWithinCohort != "Never")
}

// simulatePreemption is Kueue's preemption oracle: whether preempting could make val of fr
// fit, and the borrowing level after it.
func (s *state) simulatePreemption(l *ledger, w *workload, fr flavorResource, val int64) (preemptionMode, int) {
	targets := s.targets(l, w, map[flavorResource]bool{fr: true}, quantities{fr: val})
	s.searched = searched{done: true, fr: fr, val: val, targets: targets}
	if len(targets) == 0 {
		return pmNoCandidates, l.borrowLevel(w.cq, fr, val)
	}
	for _, t := range targets {
		l.removeWorkload(t.w)
	}
	borrow := l.borrowLevel(w.cq, fr, val)
	for _, t := range targets {
		l.restoreWorkload(t.w)
	}
	for _, t := range targets {
		if t.w.cq == w.cq {
			return pmPreempt, borrow
		}
	}
	return pmReclaim, borrow
}

func sortedResources[V any](m map[corev1.ResourceName]V) []corev1.ResourceName {
	out := slices.Collect(maps.Keys(m))
	slices.Sort(out)
	return out
}

func sortedFRs[V any](m map[flavorResource]V) []flavorResource {
	out := slices.Collect(maps.Keys(m))
	slices.SortFunc(out, func(a, b flavorResource) int {
		return cmp.Or(cmp.Compare(a.flavor, b.flavor), cmp.Compare(a.resource, b.resource))
	})
	return out
}
