package admission

import (
	"cmp"
	"slices"
)

// outcome reports what changed, per ClusterQueue.
func (s *state) outcome() Outcome {
	teams := map[*clusterQueue]*TeamOutcome{}
	team := func(cq *clusterQueue) *TeamOutcome {
		t := teams[cq]
		if t == nil {
			t = &TeamOutcome{ClusterQueue: cq.name}
			teams[cq] = t
		}
		return t
	}
	for _, w := range s.workloads {
		t := team(w.cq)
		switch {
		case w.undetermined != nil:
			t.Undetermined = append(t.Undetermined, *w.undetermined)
		case w.initiallyAdmitted && w.preempted != nil:
			p := Preempted{Workload: w.ref, Priority: w.priority, Reason: w.preempted.reason}
			if by := w.preempted.by; by != nil {
				p.By, p.ByClusterQueue = by.ref, by.cq.name
			}
			if w.admitted {
				p.Readmitted = w.assigned
			}
			t.Preempted = append(t.Preempted, p)
		case w.initiallyAdmitted:
		case w.admitted && w.checks:
			t.Undetermined = append(t.Undetermined, Undetermined{Workload: w.ref, Reason: AdmissionChecks,
				Detail: "quota would be reserved; admission checks decide the admission"})
		case w.admitted:
			t.Admitted = append(t.Admitted, Admitted{Workload: w.ref, Priority: w.priority, PodSets: w.assigned,
				Borrowing: w.borrowing, Preempting: w.afterPreemption})
		case w.partial:
			t.Undetermined = append(t.Undetermined, Undetermined{Workload: w.ref, Reason: PartialAdmission,
				Detail: "does not fit whole; Kueue may admit it with fewer pods"})
		}
	}
	for _, cq := range s.cqs {
		frs := map[flavorResource]bool{}
		for fr := range cq.quotas {
			frs[fr] = true
		}
		for fr := range s.live.cq[cq] {
			frs[fr] = true
		}
		for _, fr := range sortedFRs(frs) {
			used, nominal := s.live.usage(cq, fr), cq.quotas[fr].nominal
			if used <= nominal {
				continue
			}
			n := OverNominal{Flavor: fr.flavor, Resource: string(fr.resource), Used: used, Nominal: nominal}
			for _, w := range preemptionOrder(cq) {
				if w.usage[fr] > 0 {
					n.Workloads = append(n.Workloads, w.ref)
				}
			}
			team(cq).OverNominal = append(team(cq).OverNominal, n)
		}
	}
	out := Outcome{Version: s.version}
	for _, t := range teams {
		if t.Empty() {
			continue
		}
		byRef := func(a, b WorkloadRef) int {
			return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
		}
		slices.SortFunc(t.Admitted, func(a, b Admitted) int { return byRef(a.Workload, b.Workload) })
		slices.SortFunc(t.Preempted, func(a, b Preempted) int { return byRef(a.Workload, b.Workload) })
		slices.SortFunc(t.Undetermined, func(a, b Undetermined) int { return byRef(a.Workload, b.Workload) })
		out.Teams = append(out.Teams, *t)
	}
	slices.SortFunc(out.Teams, func(a, b TeamOutcome) int { return cmp.Compare(a.ClusterQueue, b.ClusterQueue) })
	return out
}

// preemptionOrder is the ClusterQueue's admitted Workloads in Kueue's candidate order, which
// is the same for a preemptor of this queue and of another: the lowest priority first, then
// the most recently admitted (by the time of the quota reservation, then by UID).
func preemptionOrder(cq *clusterQueue) []*workload {
	out := slices.Clone(cq.admitted)
	slices.SortFunc(out, candidateOrder(cq))
	return out
}
