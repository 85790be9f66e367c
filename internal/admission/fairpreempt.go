package admission

import (
	"container/heap"
	"math"
	"slices"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// Fair-sharing preemption (Kueue's fairPreemptions with the default strategies) takes
// candidates ClusterQueue by ClusterQueue, the highest share first. Kueue gathers and sorts
// every candidate of the cohort and compares every queue's share at each step, for each head
// and each flavor tried; here the searches of one cycle share an index of the cycle's snapshot
// (which every search starts from and restores), and a search orders only the queues it
// reaches and skips those whose Workloads cannot pass a strategy, with the outcome Kueue's
// would have (see fairSearch.nextQueue).

// fairIndex is what the fair-sharing searches of one scheduling cycle share, from the cycle's
// snapshot: per cohort its borrowing ClusterQueues grouped by equal share, highest first; per
// ClusterQueue its admitted Workloads in candidate order and the highest share it keeps after
// giving up one of them.
type fairIndex struct {
	cohorts map[*cohort][]shareRun
	queues  map[*clusterQueue]*indexedQueue
}

type indexedQueue struct {
	// admitted are in candidate order: lower priority first, then the most recently admitted.
	admitted []*workload
	// bound is the highest share the queue has with one of its Workloads taken out: no
	// Workload of a queue passes LessThanOrEqualToFinalShare for a preemptor whose share is above it.
	bound drs
}

// shareRun is the borrowing ClusterQueues of a cohort that have one share.
type shareRun struct {
	share drs
	cqs   []*clusterQueue
	// bound is the highest of the members' bounds.
	bound drs
}

func newFairIndex() *fairIndex {
	return &fairIndex{cohorts: map[*cohort][]shareRun{}, queues: map[*clusterQueue]*indexedQueue{}}
}

// borrows is whether a queue with share d can be a target: Kueue v0.19 asks whether it uses
// more than its quota of anything, v0.15 whether its share is above zero.
func (s *state) borrows(d drs) bool {
	if s.version < V0_19 {
		return !d.zero()
	}
	return len(d.borrowed) > 0
}

func (x *fairIndex) queue(l *ledger, c *clusterQueue) *indexedQueue {
	if q := x.queues[c]; q != nil {
		return q
	}
	q := &indexedQueue{admitted: slices.Clone(c.admitted), bound: drs{weight: c.fairWeight}}
	slices.SortFunc(q.admitted, candidateOrder(c))
	for _, w := range q.admitted {
		if d := l.drsWith(c, w.usage, -1); compareDRS(d, q.bound) > 0 {
			q.bound = d
		}
	}
	x.queues[c] = q
	return q
}

func (x *fairIndex) runs(s *state, l *ledger, co *cohort) []shareRun {
	if r, ok := x.cohorts[co]; ok {
		return r
	}
	var borrowing []*clusterQueue
	for _, c := range co.cqs {
		if c.active && s.borrows(l.drs(c)) {
			borrowing = append(borrowing, c)
		}
	}
	slices.SortStableFunc(borrowing, func(a, b *clusterQueue) int { return compareDRS(l.drs(b), l.drs(a)) })
	var runs []shareRun
	for _, c := range borrowing {
		d, bound := l.drs(c), x.queue(l, c).bound
		if n := len(runs); n > 0 && compareDRS(runs[n-1].share, d) == 0 {
			runs[n-1].cqs = append(runs[n-1].cqs, c)
			if compareDRS(bound, runs[n-1].bound) > 0 {
				runs[n-1].bound = bound
			}
			continue
		}
		runs = append(runs, shareRun{share: d, cqs: []*clusterQueue{c}, bound: bound})
	}
	x.cohorts[co] = runs
	return runs
}

// fairQueue is a ClusterQueue a search reached, and its candidates not yet taken or passed over.
type fairQueue struct {
	cq    *clusterQueue
	cands []*workload
	// served: a candidate was taken from it, so its share is no longer the snapshot's.
	served bool
}

// fairSearch is one strategy's walk over a cohort's ClusterQueues, highest share first (Kueue's
// TargetClusterQueueOrdering in a flat cohort): the snapshot's runs of equal share are ordered
// only once the walk reaches them.
type fairSearch struct {
	s    *state
	l    *ledger
	x    *fairIndex
	w    *workload
	need map[flavorResource]bool
	runs []shareRun
	next int
	// reached are the queues the walk ordered; nil for one without candidates.
	reached map[*clusterQueue]*fairQueue
	heap    fairHeap
}

func (s *state) newFairSearch(l *ledger, w *workload, need map[flavorResource]bool) *fairSearch {
	x := s.fairIndex
	if x == nil {
		x = newFairIndex()
	}
	f := &fairSearch{s: s, l: l, x: x, w: w, need: need, reached: map[*clusterQueue]*fairQueue{}}
	f.heap.f = f
	if co := w.cq.cohort; co != nil && w.cq.reclaimWithinCohort != kueue.PreemptionNever {
		f.runs = x.runs(s, l, co)
	}
	return f
}

// candidates are the Workloads of c the preemptor may take, in candidate order: its own
// queue's under withinClusterQueue, another's under reclaimWithinCohort while that queue uses
// more than its nominal quota of a needed flavor-resource.
func (f *fairSearch) candidates(c *clusterQueue) []*workload {
	cq := f.w.cq
	policy := cq.reclaimWithinCohort
	if c == cq {
		policy = cq.withinClusterQueue
	} else if !c.active || f.l.withinNominal(c, f.need) {
		return nil
	}
	if policy == kueue.PreemptionNever {
		return nil
	}
	var out []*workload
	for _, v := range f.x.queue(f.l, c).admitted {
		if !f.l.removed[v] && v.usesAny(f.need) && satisfiesPolicy(f.w, v, policy) {
			out = append(out, v)
		}
	}
	return out
}

// reach orders a queue the walk has come to, unless it has no candidates.
func (f *fairSearch) reach(c *clusterQueue, cands []*workload, served bool) {
	if len(cands) == 0 {
		f.reached[c] = nil
		return
	}
	q := &fairQueue{cq: c, cands: cands, served: served}
	f.reached[c] = q
	heap.Push(&f.heap, q)
}

// nextQueue is the queue to take from next, nil when the walk is over. With skip (the first
// strategy, when shares are compared), it ends once every queue left has a share below the
// preemptor's, where Kueue's first strategy stops and its second never takes, and passes over
// queues none of whose Workloads can pass the first strategy (the bounds), which Kueue tries
// one by one and keeps for the second strategy, as the candidates left here are. The
// preemptor's share changes only when its own queue is served, which comes after every other
// queue of equal share: it holds while a run is passed over. With above, it ends at the first
// queue whose share is not above that (the second strategy).
func (f *fairSearch) nextQueue(skip bool, above *drs) *fairQueue {
	for {
		if f.s.stop.stopped() {
			return nil
		}
		for f.next < len(f.runs) {
			run := &f.runs[f.next]
			if f.heap.Len() > 0 && compareDRS(run.share, f.share(f.heap.items[0])) < 0 {
				break
			}
			if above != nil && compareDRS(run.share, *above) <= 0 {
				break
			}
			if skip {
				p := f.l.drs(f.w.cq)
				if compareDRS(p, run.share) > 0 {
					return nil
				}
				if compareDRS(p, run.bound) > 0 {
					f.next++
					continue
				}
			}
			for _, c := range run.cqs {
				if _, done := f.reached[c]; !done {
					f.reach(c, f.candidates(c), false)
				}
			}
			f.next++
		}
		if f.heap.Len() == 0 {
			return nil
		}
		top := f.heap.items[0]
		d := f.share(top)
		if above != nil && compareDRS(d, *above) <= 0 {
			return nil
		}
		if len(top.cands) == 0 || !top.cq.active || (!f.s.borrows(d) && top.cq != f.w.cq) {
			heap.Pop(&f.heap)
			continue
		}
		if skip && top.cq != f.w.cq {
			p := f.l.drs(f.w.cq)
			if compareDRS(p, d) > 0 {
				return nil
			}
			if !top.served && compareDRS(p, f.x.queue(f.l, top.cq).bound) > 0 {
				heap.Pop(&f.heap)
				continue
			}
		}
		return top
	}
}

func (f *fairSearch) share(q *fairQueue) drs { return f.l.drs(q.cq) }

// take removes the first candidate of the queue at the top, and reorders the queue.
func (f *fairSearch) take(q *fairQueue) *workload {
	v := f.pop(q)
	f.l.removeWorkload(v)
	q.served = true
	heap.Fix(&f.heap, 0)
	return v
}

func (f *fairSearch) pop(q *fairQueue) *workload {
	v := q.cands[0]
	q.cands = q.cands[1:]
	return v
}

// fairHeap orders the reached queues: the highest share first, then the queue whose first
// candidate comes first.
type fairHeap struct {
	f     *fairSearch
	items []*fairQueue
}

func (h *fairHeap) Len() int { return len(h.items) }

func (h *fairHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if c := compareDRS(h.f.share(a), h.f.share(b)); c != 0 {
		return c > 0
	}
	if len(a.cands) == 0 || len(b.cands) == 0 {
		return len(b.cands) == 0 && len(a.cands) > 0
	}
	return candidateOrder(h.f.w.cq)(a.cands[0], b.cands[0]) < 0
}

func (h *fairHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }

func (h *fairHeap) Push(x any) { h.items = append(h.items, x.(*fairQueue)) }

func (h *fairHeap) Pop() any {
	last := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return last
}

// fairTargets is Kueue's fair-sharing preemption in a flat cohort with the default
// strategies: LessThanOrEqualToFinalShare, then LessThanInitialShare.
func (s *state) fairTargets(l *ledger, w *workload, need map[flavorResource]bool, usage quantities) []target {
	cq := w.cq
	f := s.newFairSearch(l, w, need)
	// The preemptor's queue is ordered by its share with the Workload admitted; its index
	// entry is the snapshot's, as for the other searches of the cycle.
	own := f.candidates(cq)
	l.addAll(cq, usage, 1)
	f.reach(cq, own, false)
	// Kueue v0.19 (FairSharingPreemptWithinNominal): a queue that stays within its nominal
	// quota with the Workload reclaims without comparing shares.
	withinNominal := s.version >= V0_19 && l.withinNominal(cq, need)
	fits, targets := f.firstStrategy(usage, withinNominal)
	if !fits {
		fits, targets = f.secondStrategy(usage, targets)
	}
	l.addAll(cq, usage, -1)
	if !fits || s.stop.stopped() {
		restore(l, targets)
		return nil
	}
	targets = fillBack(l, cq, usage, targets, true)
	restore(l, targets)
	return targets
}

func (s *state) fairFits(l *ledger, cq *clusterQueue, usage quantities) bool {
	l.addAll(cq, usage, -1)
	defer l.addAll(cq, usage, 1)
	return workloadFits(l, cq, usage, true)
}

// firstStrategy takes, queue by queue, the first Workload whose removal leaves its queue's
// share at least the preemptor's (LessThanOrEqualToFinalShare), until the preemptor fits.
// The preemptor's own Workloads, and every Workload while it stays within nominal quota, are
// taken without comparing shares.
func (f *fairSearch) firstStrategy(usage quantities, withinNominal bool) (bool, []target) {
	cq, l := f.w.cq, f.l
	var targets []target
	for {
		c := f.nextQueue(!withinNominal, nil)
		if c == nil {
			return false, targets
		}
		if c.cq == cq || withinNominal {
			reason := kueue.InClusterQueueReason
			if c.cq != cq {
				reason = kueue.InCohortReclamationReason
			}
			targets = append(targets, target{f.take(c), reason})
			if f.s.fairFits(l, cq, usage) {
				return true, targets
			}
			continue
		}
		preemptorNew, targetOld := l.drs(cq), l.drs(c.cq)
		if f.s.version >= V0_19 && math.IsInf(preemptorNew.share(), 1) && !math.IsInf(targetOld.share(), 1) {
			// Kueue skips a queue none of whose Workloads can pass; they stay for the second strategy.
			c.cands = nil
			continue
		}
		for len(c.cands) > 0 {
			if compareDRS(preemptorNew, l.drsWith(c.cq, c.cands[0].usage, -1)) <= 0 {
				targets = append(targets, target{f.take(c), kueue.InCohortFairSharingReason})
				if f.s.fairFits(l, cq, usage) {
					return true, targets
				}
				break
			}
			f.pop(c)
		}
	}
}

// secondStrategy takes, from each queue whose share is above the preemptor's, highest first,
// its first candidate left (LessThanInitialShare), until the preemptor fits. Its candidates are
// those the first strategy did not take: Kueue's retried ones, and those of the queues it
// passed over or did not reach, which could not pass the first strategy either.
func (f *fairSearch) secondStrategy(usage quantities, targets []target) (bool, []target) {
	cq, l := f.w.cq, f.l
	g := &fairSearch{s: f.s, l: l, x: f.x, w: f.w, need: f.need, runs: f.runs, reached: map[*clusterQueue]*fairQueue{}}
	g.heap.f = g
	for c, q := range f.reached {
		if q == nil || c == cq {
			// The preemptor's own queue has its share: never above it.
			g.reached[c] = nil
			continue
		}
		var left []*workload
		for _, v := range f.x.queue(l, c).admitted {
			if !l.removed[v] && wasCandidate(f, c, v) {
				left = append(left, v)
			}
		}
		g.reach(c, left, q.served)
	}
	preemptorNew := l.drs(cq)
	for {
		c := g.nextQueue(false, &preemptorNew)
		if c == nil {
			return false, targets
		}
		// Kueue takes one Workload of a queue, then drops the queue.
		heap.Pop(&g.heap)
		v := g.pop(c)
		l.removeWorkload(v)
		targets = append(targets, target{v, kueue.InCohortFairSharingReason})
		if f.s.fairFits(l, cq, usage) {
			return true, targets
		}
	}
}

// wasCandidate reports whether v, of a queue the first strategy reached, was one of its
// candidates: the queue's eligibility was settled when it was reached.
func wasCandidate(f *fairSearch, c *clusterQueue, v *workload) bool {
	policy := f.w.cq.reclaimWithinCohort
	if c == f.w.cq {
		policy = f.w.cq.withinClusterQueue
	}
	return v.usesAny(f.need) && satisfiesPolicy(f.w, v, policy)
}
