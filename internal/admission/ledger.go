package admission

import (
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// ledger is the quota in use, by ClusterQueue and by cohort, as Kueue's cache and its
// per-cycle snapshot account it. A cohort's usage is what its members use beyond the quota
// their lending limits keep for themselves.
type ledger struct {
	cq     map[*clusterQueue]quantities
	cohort map[*cohort]quantities
	// removed are Workloads whose usage a preemption simulation has taken out.
	removed map[*workload]bool
	// shares caches each queue's dominant resource share until its usage changes.
	shares map[*clusterQueue]drs
}

func newLedger(s *state) *ledger {
	l := &ledger{cq: map[*clusterQueue]quantities{}, cohort: map[*cohort]quantities{}, removed: map[*workload]bool{}, shares: map[*clusterQueue]drs{}}
	for _, cq := range s.cqs {
		l.cq[cq] = quantities{}
	}
	for _, co := range s.cohorts {
		l.cohort[co] = quantities{}
	}
	return l
}

func (l *ledger) clone() *ledger {
	c := &ledger{cq: make(map[*clusterQueue]quantities, len(l.cq)), cohort: make(map[*cohort]quantities, len(l.cohort)), removed: map[*workload]bool{}, shares: map[*clusterQueue]drs{}}
	for k, v := range l.cq {
		c.cq[k] = v.clone()
	}
	for k, v := range l.cohort {
		c.cohort[k] = v.clone()
	}
	return c
}

func (l *ledger) add(cq *clusterQueue, fr flavorResource, v int64) {
	delete(l.shares, cq)
	old := l.cq[cq][fr]
	next := old + v
	l.cq[cq][fr] = next
	if cq.cohort != nil {
		lq := cq.localQuota(fr)
		l.cohort[cq.cohort][fr] += max(0, next-lq) - max(0, old-lq)
	}
}

func (l *ledger) addAll(cq *clusterQueue, q quantities, sign int64) {
	for fr, v := range q {
		l.add(cq, fr, sign*v)
	}
}

// removeWorkload takes an admitted Workload's usage out, as Kueue's snapshot does while it
// simulates preemption.
func (l *ledger) removeWorkload(w *workload) {
	if l.removed[w] {
		return
	}
	l.removed[w] = true
	l.addAll(w.cq, w.usage, -1)
}

func (l *ledger) restoreWorkload(w *workload) {
	if !l.removed[w] {
		return
	}
	delete(l.removed, w)
	l.addAll(w.cq, w.usage, 1)
}

func (l *ledger) usage(cq *clusterQueue, fr flavorResource) int64 { return l.cq[cq][fr] }

// localAvailable is the unused part of the quota the ClusterQueue keeps from lending.
func (l *ledger) localAvailable(cq *clusterQueue, fr flavorResource) int64 {
	return max(0, cq.localQuota(fr)-l.usage(cq, fr))
}

// available is how much more of fr the ClusterQueue can use now: its unused quota and what
// the cohort has unused, within the borrowing limit.
func (l *ledger) available(cq *clusterQueue, fr flavorResource) int64 {
	q := cq.quotas[fr]
	if cq.cohort == nil {
		return q.nominal - l.usage(cq, fr)
	}
	parent := cq.cohort.subtreeQuota[fr] - l.cohort[cq.cohort][fr]
	if q.borrowingLimit != nil {
		lq := cq.localQuota(fr)
		stored := q.nominal - lq
		usedInParent := max(0, l.usage(cq, fr)-lq)
		parent = min(stored-usedInParent+*q.borrowingLimit, parent)
	}
	return l.localAvailable(cq, fr) + parent
}

// potentialAvailable is the most of fr the ClusterQueue could ever use: its quota and all the
// cohort lends, within the borrowing limit.
func potentialAvailable(cq *clusterQueue, fr flavorResource) int64 {
	q := cq.quotas[fr]
	if cq.cohort == nil {
		return q.nominal
	}
	avail := cq.localQuota(fr) + cq.cohort.subtreeQuota[fr]
	if q.borrowingLimit != nil {
		avail = min(q.nominal+*q.borrowingLimit, avail)
	}
	return avail
}

// borrowingWith reports whether using v more of fr takes the ClusterQueue over its nominal quota.
func (l *ledger) borrowingWith(cq *clusterQueue, fr flavorResource, v int64) bool {
	return cq.quotas[fr].nominal < l.usage(cq, fr)+v
}

// borrowLevel is Kueue's borrowing level of using v more of fr in a flat cohort: 0 within
// the nominal quota (or without a cohort), 1 when borrowing from the cohort.
func (l *ledger) borrowLevel(cq *clusterQueue, fr flavorResource, v int64) int {
	if cq.cohort == nil || !l.borrowingWith(cq, fr, v) {
		return 0
	}
	return 1
}

// withinNominal reports whether the ClusterQueue uses at most its nominal quota of every frs.
func (l *ledger) withinNominal(cq *clusterQueue, frs map[flavorResource]bool) bool {
	for fr := range frs {
		if cq.quotas[fr].nominal < l.usage(cq, fr) {
			return false
		}
	}
	return true
}

// fits reports whether usage fits in what the ClusterQueue has available.
func (l *ledger) fits(cq *clusterQueue, usage quantities) bool {
	for fr, v := range usage {
		if l.available(cq, fr) < v {
			return false
		}
	}
	return true
}

// drs is Kueue's dominant resource share of a ClusterQueue: per resource, what it borrows
// beyond its nominal quota over what its cohort lends of that resource in all flavors, per
// mille; the largest, divided by the fair-sharing weight.
type drs struct {
	weight   float64
	ratio    float64
	resource corev1.ResourceName
	// borrowed are the flavor-resources used beyond nominal quota.
	borrowed []flavorResource
}

func (d drs) zero() bool { return d.ratio == 0 }

func (d drs) share() float64 {
	switch {
	case d.zero():
		return 0
	case d.weight == 0:
		return math.Inf(1)
	}
	return d.ratio / d.weight
}

func (d drs) zeroWeightBorrows() bool { return d.weight == 0 && !d.zero() }

// compareDRS orders shares as Kueue's CompareDRS does: a queue of weight zero that borrows is
// above every other.
func compareDRS(a, b drs) int {
	switch {
	case a.zeroWeightBorrows() && b.zeroWeightBorrows():
		return cmpFloat(a.ratio, b.ratio)
	case a.zeroWeightBorrows():
		return 1
	case b.zeroWeightBorrows():
		return -1
	}
	return cmpFloat(a.share(), b.share())
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// borrowingOn reports whether the share borrows any flavor-resource requested in req.
func (d drs) borrowingOn(req quantities) bool {
	for _, fr := range d.borrowed {
		if req[fr] > 0 {
			return true
		}
	}
	return false
}

func (l *ledger) drs(cq *clusterQueue) drs {
	if d, ok := l.shares[cq]; ok {
		return d
	}
	d := l.drsWith(cq, nil, 1)
	l.shares[cq] = d
	return d
}

// drsWith is the queue's share were it to use extra more (sign 1) or less (sign -1).
func (l *ledger) drsWith(cq *clusterQueue, extra quantities, sign int64) drs {
	d := drs{weight: cq.fairWeight}
	if cq.cohort == nil {
		return d
	}
	// A queue has a handful of resources: a slice beats a map here, where it runs most.
	type borrowed struct {
		resource corev1.ResourceName
		amount   int64
	}
	var borrowing []borrowed
	usage := l.cq[cq]
	for _, fr := range cq.frs {
		b := usage[fr] + sign*extra[fr] - cq.quotas[fr].nominal
		if b <= 0 {
			continue
		}
		d.borrowed = append(d.borrowed, fr)
		if i := slices.IndexFunc(borrowing, func(x borrowed) bool { return x.resource == fr.resource }); i >= 0 {
			borrowing[i].amount += b
		} else {
			borrowing = append(borrowing, borrowed{fr.resource, b})
		}
	}
	for _, b := range borrowing {
		lr := cq.cohort.lendable[b.resource]
		if lr <= 0 {
			continue
		}
		ratio := float64(b.amount) * 1000.0 / float64(lr)
		if ratio > d.ratio || (ratio == d.ratio && b.resource < d.resource) {
			d.ratio, d.resource = ratio, b.resource
		}
	}
	return d
}
