package admission

import (
	"cmp"
	"container/heap"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// target is a Workload to preempt and the rule that allows it.
type target struct {
	w      *workload
	reason string
}

// targets is Kueue's Preemptor.GetTargets: the admitted Workloads to evict so that usage fits,
// classical or fair sharing as the manager is configured; nil when no set of them makes it fit.
func (s *state) targets(l *ledger, w *workload, need map[flavorResource]bool, usage quantities) []target {
	if s.fairSharing {
		return s.fairTargets(l, w, need, usage)
	}
	return s.classicalTargets(l, w, need, usage)
}

// usesAny reports whether an admitted Workload uses any of the flavor-resources.
func (w *workload) usesAny(need map[flavorResource]bool) bool {
	for _, fr := range w.frs {
		if need[fr] {
			return true
		}
	}
	return false
}

// setFlavors records the flavors of an admission and the flavor-resources they make.
func (w *workload) setFlavors(flavors []map[corev1.ResourceName]string) {
	w.flavors = flavors
	w.frs = w.frs[:0]
	for _, ps := range flavors {
		for r, f := range ps {
			if fr := (flavorResource{f, r}); !slices.Contains(w.frs, fr) {
				w.frs = append(w.frs, fr)
			}
		}
	}
}

// satisfiesPolicy is Kueue's SatisfiesPreemptionPolicy.
func satisfiesPolicy(preemptor, candidate *workload, policy string) bool {
	lower := preemptor.priority > candidate.priority
	switch policy {
	case kueue.PreemptionLowerPriority:
		return lower
	case "LowerOrNewerEqualPriority":
		return lower || (preemptor.priority == candidate.priority && preemptor.created.Before(candidate.created))
	case kueue.PreemptionAny:
		return true
	}
	return false
}

// candidateOrder is Kueue's CandidatesOrdering: Workloads of other ClusterQueues first, then
// lower priority, then the most recently admitted, then by UID (here: then by name, so that
// the order is deterministic where Kueue's depends on generated UIDs).
func candidateOrder(cq *clusterQueue) func(a, b *workload) int {
	return func(a, b *workload) int {
		if (a.cq == cq) != (b.cq == cq) {
			if a.cq == cq {
				return 1
			}
			return -1
		}
		if a.priority != b.priority {
			return cmp.Compare(a.priority, b.priority)
		}
		return cmp.Compare(b.seq, a.seq)
	}
}

// variant is how a classical candidate may be preempted.
type variant int

const (
	variantWithinCQ variant = iota + 1
	variantReclaim
	variantReclaimWithoutBorrowing
	variantReclaimWhileBorrowing
)

func (v variant) reason() string {
	switch v {
	case variantWithinCQ:
		return kueue.InClusterQueueReason
	case variantReclaimWhileBorrowing:
		return kueue.InCohortReclaimWhileBorrowingReason
	}
	return kueue.InCohortReclamationReason
}

type candidate struct {
	w *workload
	v variant
}

// classicalTargets is Kueue's classical preemption in a flat cohort.
func (s *state) classicalTargets(l *ledger, w *workload, need map[flavorResource]bool, usage quantities) []target {
	cq := w.cq
	bwcForbidden := cq.borrowWithinCohort == kueue.PreemptionNever
	same, hierarchy, priority := classicalCandidates(l, w, need, usage)
	order := candidateOrder(cq)
	byOrder := func(a, b candidate) int { return order(a.w, b.w) }
	lists := [][]candidate{hierarchy, priority, same}

	attempts := []bool{true, false}
	switch {
	case len(hierarchy) == 0 && len(priority) == 0 || (bwcForbidden && !underNominal(l, cq, need)):
		attempts = []bool{true}
	case bwcForbidden && len(hierarchy) == 0:
		attempts = []bool{false, true}
	}
	for _, borrowing := range attempts {
		if !borrowing && !sameQueueCanUnborrow(l, cq, usage, same) {
			// Only the queue's own Workloads lower its usage: if all of them do not bring it
			// within nominal quota, this attempt finds nothing, as Kueue's would.
			continue
		}
		var targets []target
		// Candidates come in order, but usually a few are enough: a heap per list orders
		// only those taken.
		for _, list := range lists {
			if borrowing {
				// Never valid while borrowing: leave them out before ordering.
				list = slices.DeleteFunc(slices.Clone(list), func(c candidate) bool { return c.v == variantReclaimWithoutBorrowing })
			}
			h := newHeap(list, byOrder)
			for h.len() > 0 {
				c := h.pop()
				if !candidateValid(l, cq, c, borrowing, need) {
					continue
				}
				l.removeWorkload(c.w)
				targets = append(targets, target{c.w, c.v.reason()})
				if workloadFits(l, cq, usage, borrowing) {
					targets = fillBack(l, cq, usage, targets, borrowing)
					restore(l, targets)
					return targets
				}
			}
		}
		restore(l, targets)
	}
	return nil
}

// classicalCandidates are the workloads classical preemption may take for w, by kind: in w's
// own queue, reclaimed from a cohort queue over its nominal quota while w's request fits in its
// own nominal quota (hierarchy), and the other reclaims, which priority decides.
func classicalCandidates(l *ledger, w *workload, need map[flavorResource]bool, usage quantities) (same, hierarchy, priority []candidate) {
	cq := w.cq
	bwcForbidden := cq.borrowWithinCohort == kueue.PreemptionNever
	if cq.withinClusterQueue != kueue.PreemptionNever {
		for _, c := range cq.admitted {
			if !l.removed[c] && c.usesAny(need) && satisfiesPolicy(w, c, cq.withinClusterQueue) {
				same = append(same, candidate{c, variantWithinCQ})
			}
		}
	}
	if cq.cohort != nil && cq.reclaimWithinCohort != kueue.PreemptionNever {
		// hasAdvantage: the request fits in the queue's own nominal quota.
		advantage := true
		for fr, v := range usage {
			if cq.quotas[fr].nominal < l.usage(cq, fr)+v {
				advantage = false
			}
		}
		for _, other := range cq.cohort.cqs {
			if other == cq || !other.active || l.withinNominal(other, need) {
				continue
			}
			for _, c := range other.admitted {
				if l.removed[c] || !c.usesAny(need) || !satisfiesPolicy(w, c, cq.reclaimWithinCohort) {
					continue
				}
				switch {
				case advantage:
					hierarchy = append(hierarchy, candidate{c, variantReclaim})
				case bwcForbidden || c.priority >= w.priority:
					priority = append(priority, candidate{c, variantReclaimWithoutBorrowing})
				default:
					priority = append(priority, candidate{c, variantReclaimWhileBorrowing})
				}
			}
		}
	}
	return same, hierarchy, priority
}

// sameQueueCanUnborrow reports whether preempting every same-queue candidate would let usage
// fit within the queue's nominal quota.
func sameQueueCanUnborrow(l *ledger, cq *clusterQueue, usage quantities, same []candidate) bool {
	for fr, v := range usage {
		freed := int64(0)
		for _, c := range same {
			freed += c.w.usage[fr]
		}
		if l.usage(cq, fr)-freed+v > cq.quotas[fr].nominal {
			return false
		}
	}
	return true
}

func candidateValid(l *ledger, cq *clusterQueue, c candidate, borrowing bool, need map[flavorResource]bool) bool {
	if c.w.cq == cq {
		return true
	}
	if borrowing && c.v == variantReclaimWithoutBorrowing {
		return false
	}
	return !l.withinNominal(c.w.cq, need)
}

// underNominal reports whether the queue uses strictly less than its nominal quota of every need.
func underNominal(l *ledger, cq *clusterQueue, need map[flavorResource]bool) bool {
	for fr := range need {
		if cq.quotas[fr].nominal <= l.usage(cq, fr) {
			return false
		}
	}
	return true
}

func workloadFits(l *ledger, cq *clusterQueue, usage quantities, allowBorrowing bool) bool {
	for fr, v := range usage {
		if !allowBorrowing && l.borrowingWith(cq, fr, v) {
			return false
		}
		if v > l.available(cq, fr) {
			return false
		}
	}
	return true
}

// fillBack gives back, from the second-last target down, every target the Workload does not
// need after all (Kueue's fillBackWorkloads, including its reordering).
func fillBack(l *ledger, cq *clusterQueue, usage quantities, targets []target, allowBorrowing bool) []target {
	for i := len(targets) - 2; i >= 0; i-- {
		l.restoreWorkload(targets[i].w)
		if workloadFits(l, cq, usage, allowBorrowing) {
			targets[i] = targets[len(targets)-1]
			targets = targets[:len(targets)-1]
		} else {
			l.removeWorkload(targets[i].w)
		}
	}
	return targets
}

func restore(l *ledger, targets []target) {
	for _, t := range targets {
		l.restoreWorkload(t.w)
	}
}

// fairTargets is Kueue's fair-sharing preemption in a flat cohort with the default
// strategies: LessThanOrEqualToFinalShare, then LessThanInitialShare.
func (s *state) fairTargets(l *ledger, w *workload, need map[flavorResource]bool, usage quantities) []target {
	cq := w.cq
	var candidates []*workload
	if cq.withinClusterQueue != kueue.PreemptionNever {
		for _, c := range cq.admitted {
			if !l.removed[c] && c.usesAny(need) && satisfiesPolicy(w, c, cq.withinClusterQueue) {
				candidates = append(candidates, c)
			}
		}
	}
	if cq.cohort != nil && cq.reclaimWithinCohort != kueue.PreemptionNever {
		for _, other := range cq.cohort.cqs {
			if other == cq || !other.active || l.withinNominal(other, need) {
				continue
			}
			for _, c := range other.admitted {
				if !l.removed[c] && c.usesAny(need) && satisfiesPolicy(w, c, cq.reclaimWithinCohort) {
					candidates = append(candidates, c)
				}
			}
		}
	}
	if len(candidates) == 0 {
		return nil
	}

	l.addAll(cq, usage, 1)
	fits, targets, retry := s.firstFairStrategy(l, w, need, usage, candidates)
	if !fits {
		fits, targets = s.secondFairStrategy(l, w, usage, retry, targets)
	}
	l.addAll(cq, usage, -1)
	if !fits {
		restore(l, targets)
		return nil
	}
	targets = fillBack(l, cq, usage, targets, true)
	restore(l, targets)
	return targets
}

// fairOrdering yields the ClusterQueues to take candidates from, highest share first (Kueue's
// TargetClusterQueueOrdering in a flat cohort).
type fairOrdering struct {
	s         *state
	l         *ledger
	preemptor *clusterQueue
	byCQ      map[*clusterQueue][]*workload
	pruned    map[*clusterQueue]bool
	// queues are those with candidates, in cohort order: a queue without any is pruned at once.
	queues []*clusterQueue
	heap   *queueHeap
	// last is the queue next returned, to reorder once it has been served.
	last *clusterQueue
}

func (o *fairOrdering) share(c *clusterQueue) drs { return o.l.drs(c) }

// take removes a victim's usage (and so its queue's cached share).
func (o *fairOrdering) take(victim *workload) { o.l.removeWorkload(victim) }

func (s *state) newFairOrdering(l *ledger, cq *clusterQueue, candidates []*workload) *fairOrdering {
	o := &fairOrdering{s: s, l: l, preemptor: cq, byCQ: map[*clusterQueue][]*workload{}, pruned: map[*clusterQueue]bool{}}
	for _, c := range candidates {
		if len(o.byCQ[c.cq]) == 0 {
			o.queues = append(o.queues, c.cq)
		}
		o.byCQ[c.cq] = append(o.byCQ[c.cq], c)
	}
	slices.SortFunc(o.queues, func(a, b *clusterQueue) int { return cmp.Compare(a.name, b.name) })
	// Kueue sorts all candidates; only the order within each queue matters here.
	order := candidateOrder(cq)
	for _, q := range o.queues {
		slices.SortFunc(o.byCQ[q], order)
	}
	return o
}

// next returns the ClusterQueue to take from next, or nil when none is left. Kueue compares
// every queue's share at each step; a queue's share and first candidate change only when it is
// served, so a heap fixed after each step gives the same order.
func (o *fairOrdering) next() *clusterQueue {
	if o.preemptor.cohort == nil {
		if o.pruned[o.preemptor] || len(o.byCQ[o.preemptor]) == 0 {
			return nil
		}
		return o.preemptor
	}
	if o.heap == nil {
		o.heap = &queueHeap{o: o, pos: map[*clusterQueue]int{}, items: slices.Clone(o.queues)}
		for i, c := range o.heap.items {
			o.heap.pos[c] = i
		}
		heap.Init(o.heap)
	} else if i, ok := o.heap.pos[o.last]; ok {
		heap.Fix(o.heap, i)
	}
	o.last = nil
	for o.heap.Len() > 0 {
		c := o.heap.items[0]
		d := o.share(c)
		notBorrowing := len(d.borrowed) == 0
		if o.s.version < V0_19 {
			notBorrowing = d.zero()
		}
		if o.pruned[c] || !c.active || len(o.byCQ[c]) == 0 || (notBorrowing && c != o.preemptor) {
			// Pruned for good: a queue's usage only drops while preemption is simulated.
			o.pruned[c] = true
			heap.Pop(o.heap)
			continue
		}
		o.last = c
		return c
	}
	return nil
}

// queueHeap orders a fairOrdering's queues: the highest share first, then the queue whose first
// candidate comes first.
type queueHeap struct {
	o     *fairOrdering
	items []*clusterQueue
	pos   map[*clusterQueue]int
}

func (h *queueHeap) Len() int { return len(h.items) }

func (h *queueHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if c := compareDRS(h.o.share(a), h.o.share(b)); c != 0 {
		return c > 0
	}
	wa, wb := h.o.byCQ[a], h.o.byCQ[b]
	if len(wa) == 0 || len(wb) == 0 {
		return len(wb) == 0 && len(wa) > 0
	}
	return candidateOrder(h.o.preemptor)(wa[0], wb[0]) < 0
}

func (h *queueHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.pos[h.items[i]], h.pos[h.items[j]] = i, j
}

func (h *queueHeap) Push(x any) {
	c := x.(*clusterQueue)
	h.pos[c] = len(h.items)
	h.items = append(h.items, c)
}

func (h *queueHeap) Pop() any {
	last := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	delete(h.pos, last)
	return last
}

// rest takes every candidate left, queue by queue.
func (o *fairOrdering) rest() []*workload {
	var out []*workload
	for _, c := range o.queues {
		out = append(out, o.byCQ[c]...)
		o.byCQ[c] = nil
	}
	return out
}

func (o *fairOrdering) pop(c *clusterQueue) *workload {
	w := o.byCQ[c][0]
	o.byCQ[c] = o.byCQ[c][1:]
	return w
}

func (s *state) fairFits(l *ledger, cq *clusterQueue, usage quantities) bool {
	l.addAll(cq, usage, -1)
	defer l.addAll(cq, usage, 1)
	return workloadFits(l, cq, usage, true)
}

func (s *state) firstFairStrategy(l *ledger, w *workload, need map[flavorResource]bool, usage quantities, candidates []*workload) (bool, []target, []*workload) {
	cq := w.cq
	o := s.newFairOrdering(l, cq, candidates)
	var targets []target
	var retry []*workload
	// Kueue v0.19 (FairSharingPreemptWithinNominal): a queue that stays within its nominal
	// quota with the Workload reclaims without comparing shares.
	withinNominal := s.version >= V0_19 && l.withinNominal(cq, need)
	for c := o.next(); c != nil; c = o.next() {
		if c == cq || withinNominal {
			victim := o.pop(c)
			reason := kueue.InClusterQueueReason
			if c != cq {
				reason = kueue.InCohortReclamationReason
			}
			o.take(victim)
			targets = append(targets, target{victim, reason})
			if s.fairFits(l, cq, usage) {
				return true, targets, nil
			}
			continue
		}
		preemptorNew, targetOld := o.share(cq), o.share(c)
		if compareDRS(preemptorNew, targetOld) > 0 {
			// Taking a Workload never raises a share, and the queues come highest share
			// first: no Workload left passes this strategy. Kueue tries each in turn and
			// keeps them for the next strategy; so does this, at once.
			return false, targets, append(retry, o.rest()...)
		}
		if s.version >= V0_19 && math.IsInf(preemptorNew.share(), 1) && !math.IsInf(targetOld.share(), 1) {
			for len(o.byCQ[c]) > 0 {
				retry = append(retry, o.pop(c))
			}
			continue
		}
		for len(o.byCQ[c]) > 0 {
			victim := o.pop(c)
			l.removeWorkload(victim)
			targetNew := l.drs(c)
			l.restoreWorkload(victim)
			if compareDRS(preemptorNew, targetNew) <= 0 {
				o.take(victim)
				targets = append(targets, target{victim, kueue.InCohortFairSharingReason})
				if s.fairFits(l, cq, usage) {
					return true, targets, nil
				}
				break
			}
			retry = append(retry, victim)
		}
	}
	return false, targets, retry
}

func (s *state) secondFairStrategy(l *ledger, w *workload, usage quantities, retry []*workload, targets []target) (bool, []target) {
	cq := w.cq
	o := s.newFairOrdering(l, cq, retry)
	for c := o.next(); c != nil; c = o.next() {
		preemptorNew, targetOld := o.share(cq), o.share(c)
		if compareDRS(preemptorNew, targetOld) >= 0 {
			// The highest share left is not above the preemptor's: none passes.
			break
		}
		victim := o.pop(c)
		if compareDRS(preemptorNew, targetOld) < 0 {
			o.take(victim)
			targets = append(targets, target{victim, kueue.InCohortFairSharingReason})
			if s.fairFits(l, cq, usage) {
				return true, targets
			}
		}
		o.pruned[c] = true
	}
	return false, targets
}
