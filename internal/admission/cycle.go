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

// run runs scheduling cycles until no ClusterQueue has a Workload to try, or the cycle budget
// is spent (then the Workloads still waiting are Undetermined).
func (s *state) run() {
	budget := 100 + 20*len(s.workloads)
	for cycle := 0; ; cycle++ {
		if cycle >= budget {
			for _, cq := range s.cqs {
				for _, w := range slices.Concat(cq.pending, cq.inadmissible) {
					if cq.active && w.undetermined == nil {
						w.undetermined = &Undetermined{Workload: w.ref, Reason: NoFixpoint, Detail: "scheduling did not settle"}
					}
				}
			}
			return
		}
		heads := s.heads()
		if len(heads) == 0 {
			return
		}
		s.cycle(heads)
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
func (s *state) heads() []*workload {
	var heads []*workload
	for _, cq := range s.cqs {
		if !cq.active || len(cq.pending) == 0 {
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
	d := s.process(snap, s.nominate(snap, heads))
	s.apply(d)
}

// nominate computes each head's flavors and preemption targets.
func (s *state) nominate(snap *ledger, heads []*workload) []*entry {
	entries := make([]*entry, 0, len(heads))
	for _, w := range heads {
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
// borrow first, then by priority, then by age; with fair sharing, within each cohort the entry
// whose queue would have the lowest share after admitting it, recomputed after every entry.
func (s *state) order(snap *ledger, entries []*entry) func(yield func(*entry) bool) {
	if !s.fairSharing {
		slices.SortStableFunc(entries, func(a, b *entry) int {
			return cmp.Or(cmp.Compare(a.a.borrow, b.a.borrow), queueLess(a.w, b.w))
		})
		return slices.Values(entries)
	}
	return func(yield func(*entry) bool) {
		rest := slices.Clone(entries)
		slices.SortStableFunc(rest, func(a, b *entry) int {
			return cmp.Or(cmp.Compare(cohortName(a.w.cq), cohortName(b.w.cq)), queueLess(a.w, b.w))
		})
		for len(rest) > 0 {
			first := rest[0]
			best := 0
			if first.w.cq.cohort != nil {
				shares := map[*entry]drs{}
				for _, e := range rest {
					if e.w.cq.cohort == first.w.cq.cohort {
						shares[e] = snap.drsWith(e.w.cq, e.a.usage)
					}
				}
				for i, e := range rest {
					if _, ok := shares[e]; ok && s.fairLess(e, rest[best], shares) {
						best = i
					}
				}
			}
			e := rest[best]
			rest = slices.Delete(rest, best, best+1)
			if !yield(e) {
				return
			}
		}
	}
}

func cohortName(cq *clusterQueue) string {
	if cq.cohort == nil {
		return ""
	}
	return cq.cohort.name
}

// fairLess is Kueue's fair-sharing tournament comparison.
func (s *state) fairLess(a, b *entry, shares map[*entry]drs) bool {
	if a == b {
		return false
	}
	da, db := shares[a], shares[b]
	if s.version >= V0_19 {
		// FairSharingPrioritizeNonBorrowing: an entry that does not borrow goes first.
		ab, bb := da.borrowingOn(a.a.usage), db.borrowingOn(b.a.usage)
		if ab != bb {
			return !ab
		}
	}
	if c := compareDRS(da, db); c != 0 {
		return c < 0
	}
	return queueLess(a.w, b.w) < 0
}

func podSetFlavors(name string, count int32, flavors map[corev1.ResourceName]string) PodSetFlavors {
	p := PodSetFlavors{Name: name, Count: count}
	for _, r := range sortedResources(flavors) {
		p.Flavors = append(p.Flavors, ResourceFlavor{Resource: string(r), Flavor: flavors[r]})
	}
	return p
}
