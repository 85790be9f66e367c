package admission

import (
	"cmp"
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
