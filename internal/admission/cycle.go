package admission

import (
	"cmp"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

func simulate(c Cluster) Outcome {
	s := newState(c)
	s.run()
	return s.outcome()
}

// reserve accounts an admitted Workload's quota in the live ledger.
func (s *state) reserve(w *workload) {
	w.admitted = true
	w.cq.admitted = append(w.cq.admitted, w)
	s.live.addAll(w.cq, w.usage, 1)
}

// release takes an evicted Workload's quota out of the live ledger.
func (s *state) release(w *workload) {
	w.admitted = false
	if i := slices.Index(w.cq.admitted, w); i >= 0 {
		w.cq.admitted = slices.Delete(w.cq.admitted, i, i+1)
	}
	s.live.addAll(w.cq, w.usage, -1)
}

// run runs scheduling cycles until no ClusterQueue has a Workload to try, or the context is
// done. Each cohort (or ClusterQueue without one) settles on its own, as Kueue admits and
// preempts within it, with a budget of cycles of its own: once it is spent, the Workloads still
// waiting there are Undetermined.
func (s *state) run() {
	components := s.components()
	for cycle := 1; ; cycle++ {
		if s.stop.stopped() {
			return
		}
		heads := s.heads(components, cycle)
		if len(heads) == 0 {
			return
		}
		s.cycle(heads)
	}
}

// component is a cohort, or a ClusterQueue without one, and its cycle budget.
type component struct {
	cqs []*clusterQueue
	// budget is how many cycles it may take part in; cycles how many it did, last the latest.
	budget, cycles, last int
	exhausted            bool
}

func (s *state) components() map[*clusterQueue]*component {
	out := make(map[*clusterQueue]*component, len(s.cqs))
	byCohort := map[*cohort]*component{}
	for _, cq := range s.cqs {
		c := byCohort[cq.cohort]
		if c == nil || cq.cohort == nil {
			c = &component{budget: 100}
			if cq.cohort != nil {
				byCohort[cq.cohort] = c
			}
		}
		c.cqs = append(c.cqs, cq)
		out[cq] = c
	}
	for _, w := range s.workloads {
		out[w.cq].budget += 20
	}
	return out
}

// exhaust marks the Workloads still waiting in a component whose budget is spent.
func (c *component) exhaust() {
	c.exhausted = true
	for _, cq := range c.cqs {
		for _, w := range slices.Concat(cq.pending, cq.inadmissible) {
			if cq.active && w.undetermined == nil {
				w.undetermined = &Undetermined{Workload: w.ref, Reason: NoFixpoint, Detail: "scheduling did not settle"}
			}
		}
	}
}

// queueLess is the order of a ClusterQueue's queue under BestEffortFIFO: higher priority
// first, then older (Kueue orders by creation time, also after an eviction), then by UID, as
// Kueue v0.19's queue breaks ties of equal priority created in the same second.
func queueLess(a, b *workload) int {
	return cmp.Or(cmp.Compare(b.priority, a.priority), a.created.Compare(b.created), cmp.Compare(a.uid, b.uid), cmp.Compare(a.key, b.key))
}

// heads pops the head of every active ClusterQueue: the Workload that issued preemptions if it
// still waits, else the first in queue order.
func (s *state) heads(components map[*clusterQueue]*component, cycle int) []*workload {
	var heads []*workload
	for _, cq := range s.cqs {
		if !cq.active || len(cq.pending) == 0 {
			continue
		}
		c := components[cq]
		if c.last != cycle && !c.exhausted {
			if c.cycles >= c.budget {
				c.exhaust()
			}
			c.cycles, c.last = c.cycles+1, cycle
		}
		if c.exhausted {
			continue
		}
		i := slices.Index(cq.pending, cq.sticky)
		if i < 0 {
			i = 0
			for j := range cq.pending {
				if queueLess(cq.pending[j], cq.pending[i]) < 0 {
					i = j
				}
			}
		}
		heads = append(heads, cq.pending[i])
		cq.pending = slices.Delete(cq.pending, i, i+1)
	}
	return heads
}

type entry struct {
	w *workload
	a assignment
}

// eviction is a preemption decided in a cycle.
type eviction struct {
	victim *workload
	by     *workload
	reason string
}

// decisions are what one cycle decided for its entries.
type decisions struct {
	admitted, requeue, inadmissible []*entry
	evictions                       []eviction
}

// cycle is one scheduling cycle (Kueue's Scheduler.schedule) on a copy of the live ledger.
func (s *state) cycle(heads []*workload) {
	snap := s.live.clone()
	if s.afterCycle != nil {
		before := s.live.clone()
		defer s.afterCycle(before)
	}
	entries := s.nominate(snap, heads)
	if s.stop.stopped() {
		return
	}
	s.apply(s.process(snap, entries))
}

// nominate computes each head's flavors and preemption targets.
func (s *state) nominate(snap *ledger, heads []*workload) []*entry {
	entries := make([]*entry, 0, len(heads))
	if s.fairSharing {
		s.fairIndex = newFairIndex()
		defer func() { s.fairIndex = nil }()
	}
	for _, w := range heads {
		if s.stop.stopped() {
			return nil
		}
		e := &entry{w: w, a: s.assign(snap, w)}
		if e.a.mode == modeNoFit || (e.a.mode == modePreempt && len(e.a.targets) == 0) {
			for _, ps := range w.podSets {
				if ps.minCount {
					w.partial = true
				}
			}
		}
		entries = append(entries, e)
	}
	return entries
}

// process goes through the entries in Kueue's order (Scheduler.processEntry): admit what
// fits, issue preemptions, and skip what no longer fits after the entries before it.
func (s *state) process(snap *ledger, entries []*entry) decisions {
	var d decisions
	preempting := map[*workload]bool{}
	for e := range s.order(snap, entries) {
		cq := e.w.cq
		switch {
		case e.a.mode == modeNoFit:
			d.inadmissible = append(d.inadmissible, e)
			continue
		case e.a.mode == modePreempt && len(e.a.targets) == 0:
			if cq.reclaimWithinCohort != kueue.PreemptionAny {
				// Kueue keeps the quota it may not get back from lower-priority Workloads of other cohorts' queues.
				snap.addAll(cq, s.toReserve(snap, e), 1)
			}
			d.inadmissible = append(d.inadmissible, e)
			continue
		case slices.ContainsFunc(e.a.targets, func(t target) bool { return preempting[t.w] }),
			!fitsAfter(snap, cq, e.a.usage, preempting, e.a.targets):
			if s.version >= V0_19 && e.a.mode == modeFit {
				e.w.resume = e.a.resume
			}
			d.requeue = append(d.requeue, e)
			continue
		}
		for _, t := range e.a.targets {
			preempting[t.w] = true
		}
		snap.addAll(cq, e.a.usage, 1)
		if e.a.mode == modePreempt {
			for _, t := range e.a.targets {
				d.evictions = append(d.evictions, eviction{t.w, e.w, t.reason})
			}
			e.w.afterPreemption = true
			cq.sticky = e.w
			d.requeue = append(d.requeue, e)
			continue
		}
		d.admitted = append(d.admitted, e)
	}
	return d
}

// apply makes a cycle's decisions live: admissions, evictions, and the queues.
func (s *state) apply(d decisions) {
	for _, e := range d.admitted {
		s.admit(e)
	}
	touched := map[*clusterQueue]bool{}
	for _, ev := range d.evictions {
		if !ev.victim.admitted {
			continue
		}
		if ev.victim.preempted == nil && ev.victim.initiallyAdmitted {
			ev.victim.preempted = &preemption{by: ev.by, reason: ev.reason}
		}
		s.release(ev.victim)
		ev.victim.cq.pending = append(ev.victim.cq.pending, ev.victim)
		touched[ev.victim.cq] = true
	}
	for _, e := range d.requeue {
		e.w.cq.pending = append(e.w.cq.pending, e.w)
	}
	for _, e := range d.inadmissible {
		e.w.cq.inadmissible = append(e.w.cq.inadmissible, e.w)
	}
	// Released quota sends every inadmissible Workload of the cohort back to its queue.
	for _, cq := range s.cqs {
		if !touched[cq] {
			continue
		}
		members := []*clusterQueue{cq}
		if cq.cohort != nil {
			members = cq.cohort.cqs
		}
		for _, m := range members {
			m.pending = append(m.pending, m.inadmissible...)
			m.inadmissible = nil
		}
	}
}

// admit records an entry's admission.
func (s *state) admit(e *entry) {
	w := e.w
	flavors := make([]map[corev1.ResourceName]string, len(e.a.podSets))
	w.assigned = make([]PodSetFlavors, len(e.a.podSets))
	for i, ps := range e.a.podSets {
		flavors[i] = map[corev1.ResourceName]string{}
		for r, f := range ps {
			flavors[i][r] = f.flavor
		}
		w.assigned[i] = podSetFlavors(w.podSets[i].name, w.podSets[i].count, flavors[i])
	}
	w.setFlavors(flavors)
	w.usage = e.a.usage
	w.borrowing = e.a.borrow > 0
	w.reservedAt = s.tick()
	w.seq = s.nextSeq
	s.nextSeq++
	if w.cq.sticky == w {
		w.cq.sticky = nil
	}
	s.reserve(w)
}

// tick advances the simulated clock: every admission happens after the previous one.
func (s *state) tick() time.Time {
	s.clock = s.clock.Add(time.Second)
	return s.clock
}

// fitsAfter is Kueue's fits: whether usage fits once this cycle's and the entry's preemption
// targets are gone.
func fitsAfter(l *ledger, cq *clusterQueue, usage quantities, preempting map[*workload]bool, targets []target) bool {
	var removed []*workload
	for w := range preempting {
		if !l.removed[w] {
			l.removeWorkload(w)
			removed = append(removed, w)
		}
	}
	for _, t := range targets {
		if !l.removed[t.w] {
			l.removeWorkload(t.w)
			removed = append(removed, t.w)
		}
	}
	ok := l.fits(cq, usage)
	for _, w := range removed {
		l.restoreWorkload(w)
	}
	return ok
}

// toReserve is Kueue's quotaResourcesToReserve for an entry that needs preemption but has no
// targets: the quota up to what the queue may still use.
func (s *state) toReserve(l *ledger, e *entry) quantities {
	cq := e.w.cq
	out := quantities{}
	for fr, v := range e.a.usage {
		q := cq.quotas[fr]
		switch {
		case e.a.borrow > 0 && q.borrowingLimit == nil:
			out[fr] = v
		case e.a.borrow > 0:
			out[fr] = min(v, q.nominal+*q.borrowingLimit-l.usage(cq, fr))
		default:
			out[fr] = max(0, min(v, q.nominal-l.usage(cq, fr)))
		}
	}
	return out
}

// order yields the cycle's entries in Kueue's order: without fair sharing, those that do not
// borrow first, then by priority, then by age; with fair sharing, cohort by cohort, the entry
// whose queue would have the lowest share after admitting it first (Kueue's tournament, run
// again after every entry). An entry changes only its own queue's usage, and no other entry of
// the cycle is in that queue: the shares Kueue compares at each pick are those before the
// first, so one sort on them gives its order.
func (s *state) order(snap *ledger, entries []*entry) func(yield func(*entry) bool) {
	if !s.fairSharing {
		slices.SortStableFunc(entries, func(a, b *entry) int {
			return cmp.Or(cmp.Compare(a.a.borrow, b.a.borrow), queueLess(a.w, b.w))
		})
		return slices.Values(entries)
	}
	shares := make(map[*entry]drs, len(entries))
	for _, e := range entries {
		if e.w.cq.cohort != nil {
			shares[e] = snap.drsWith(e.w.cq, e.a.usage, 1)
		}
	}
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b *entry) int {
		if c := cmp.Compare(cohortName(a.w.cq), cohortName(b.w.cq)); c != 0 || a.w.cq.cohort == nil {
			return cmp.Or(c, queueLess(a.w, b.w))
		}
		return s.fairCompare(a, b, shares)
	})
	return slices.Values(sorted)
}

func cohortName(cq *clusterQueue) string {
	if cq.cohort == nil {
		return ""
	}
	return cq.cohort.name
}

// fairCompare is Kueue's fair-sharing tournament comparison of two entries of a cohort.
func (s *state) fairCompare(a, b *entry, shares map[*entry]drs) int {
	da, db := shares[a], shares[b]
	if s.version >= V0_19 {
		// FairSharingPrioritizeNonBorrowing: an entry that does not borrow goes first.
		ab, bb := da.borrowingOn(a.a.usage), db.borrowingOn(b.a.usage)
		if ab != bb {
			if ab {
				return 1
			}
			return -1
		}
	}
	return cmp.Or(compareDRS(da, db), queueLess(a.w, b.w))
}

func podSetFlavors(name string, count int32, flavors map[corev1.ResourceName]string) PodSetFlavors {
	p := PodSetFlavors{Name: name, Count: count}
	for _, r := range sortedResources(flavors) {
		p.Flavors = append(p.Flavors, ResourceFlavor{Resource: string(r), Flavor: flavors[r]})
	}
	return p
}
