package admission

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// Effect is what a change does: the outcome from next, the state after the change, less what
// Simulate predicts from now without it. A pending Workload that Kueue would admit anyway
// (it has not yet had its turn) is not the change's effect, and neither is a ClusterQueue that
// already ran over its nominal quota of a flavor-resource whose nominal quota stays the same.
// It cannot be stopped: EffectContext and Planner.Effect can.
func Effect(now, next Cluster) Outcome {
	return difference(Simulate(now), Simulate(next))
}

// difference is after less base, as Effect describes it.
func difference(base, after Outcome) Outcome {
	out := Outcome{Version: after.Version}
	for _, t := range after.Teams {
		was := base.Team(t.ClusterQueue)
		t.Admitted = without(t.Admitted, was.Admitted, func(a Admitted) WorkloadRef { return a.Workload })
		t.Preempted = without(t.Preempted, was.Preempted, func(p Preempted) WorkloadRef { return p.Workload })
		t.Undetermined = without(t.Undetermined, was.Undetermined, func(u Undetermined) WorkloadRef { return u.Workload })
		var over []OverNominal
		for _, n := range t.OverNominal {
			if !overBefore(was.OverNominal, n) {
				over = append(over, n)
			}
		}
		t.OverNominal = over
		if !t.Empty() {
			out.Teams = append(out.Teams, t)
		}
	}
	return out
}

func without[T any](list, seen []T, ref func(T) WorkloadRef) []T {
	known := map[WorkloadRef]bool{}
	for _, s := range seen {
		known[ref(s)] = true
	}
	var out []T
	for _, e := range list {
		if !known[ref(e)] {
			out = append(out, e)
		}
	}
	return out
}

func overBefore(before []OverNominal, n OverNominal) bool {
	for _, b := range before {
		if b.Flavor == n.Flavor && b.Resource == n.Resource && b.Nominal == n.Nominal {
			return true
		}
	}
	return false
}

// WithQueue is c with its ClusterQueue name replaced by next, or marked deleted when next is
// nil: Kueue then admits nothing more to it, and its running Workloads keep running. A next
// with no ClusterQueue of its name in c is added.
func (c Cluster) WithQueue(name string, next *kueue.ClusterQueue) Cluster {
	out := make([]kueue.ClusterQueue, 0, len(c.ClusterQueues)+1)
	for _, q := range c.ClusterQueues {
		if q.Name != name {
			out = append(out, q)
			continue
		}
		if next == nil {
			q.DeletionTimestamp = &metav1.Time{Time: time.Unix(0, 0)}
			out = append(out, q)
		}
	}
	if next != nil {
		out = append(out, *next)
	}
	c.ClusterQueues = out
	return c
}

// WithLocalQueue is c with lq, unless c has a LocalQueue of that namespace and name already.
func (c Cluster) WithLocalQueue(lq kueue.LocalQueue) Cluster {
	if slices.ContainsFunc(c.LocalQueues, func(q kueue.LocalQueue) bool { return q.Namespace == lq.Namespace && q.Name == lq.Name }) {
		return c
	}
	c.LocalQueues = append(slices.Clip(c.LocalQueues), lq)
	return c
}

// CohortOf is the part of c that admission in the cohorts of the named ClusterQueues depends
// on: those cohorts' ClusterQueues (a ClusterQueue without a cohort is one of its own), the
// LocalQueues that feed them and their Workloads. Kueue admits and preempts within a cohort
// only, so simulating this part predicts the same for it as simulating all of c. When that part
// is all of c (one cohort, as task governance makes), it is c itself, not a copy: a plan takes
// it for every change it previews.
func (c Cluster) CohortOf(names ...string) Cluster {
	inQueue := c.members(names)
	queues := make(map[string]bool, len(c.ClusterQueues))
	nQueues := 0
	for i, in := range inQueue {
		if in {
			queues[c.ClusterQueues[i].Name] = true
			nQueues++
		}
	}
	inLocal := make([]bool, len(c.LocalQueues))
	local := map[[2]string]bool{}
	nLocal := 0
	for i, lq := range c.LocalQueues {
		if queues[lq.Spec.ClusterQueue] {
			inLocal[i] = true
			local[[2]string{lq.Namespace, lq.Name}] = true
			nLocal++
		}
	}
	inWorkload := make([]bool, len(c.Workloads))
	nWorkloads := 0
	for i := range c.Workloads {
		w := &c.Workloads[i]
		admittedHere := w.Status.Admission != nil && queues[w.Status.Admission.ClusterQueue]
		if admittedHere || local[[2]string{w.Namespace, w.Spec.QueueName}] {
			inWorkload[i] = true
			nWorkloads++
		}
	}
	if nQueues == len(c.ClusterQueues) && nLocal == len(c.LocalQueues) && nWorkloads == len(c.Workloads) {
		return c
	}
	out := c
	out.ClusterQueues = kept(c.ClusterQueues, inQueue, nQueues)
	out.LocalQueues = kept(c.LocalQueues, inLocal, nLocal)
	out.Workloads = kept(c.Workloads, inWorkload, nWorkloads)
	return out
}

// members marks the ClusterQueues of c that are named, or in the cohort of one named.
func (c Cluster) members(names []string) []bool {
	named := make(map[string]bool, len(names))
	for _, n := range names {
		named[n] = true
	}
	cohorts := map[string]bool{}
	for i := range c.ClusterQueues {
		q := &c.ClusterQueues[i]
		if named[q.Name] && q.Spec.CohortName != "" {
			cohorts[q.Spec.CohortName] = true
		}
	}
	in := make([]bool, len(c.ClusterQueues))
	for i := range c.ClusterQueues {
		q := &c.ClusterQueues[i]
		in[i] = named[q.Name] || (q.Spec.CohortName != "" && cohorts[q.Spec.CohortName])
	}
	return in
}

// memberNames are the names of the ClusterQueues members marks.
func (c Cluster) memberNames(names []string) []string {
	var out []string
	for i, in := range c.members(names) {
		if in {
			out = append(out, c.ClusterQueues[i].Name)
		}
	}
	return out
}

// kept is the elements of all that keep marks, n of them, in order.
func kept[T any](all []T, keep []bool, n int) []T {
	if n == 0 {
		return nil
	}
	out := make([]T, 0, n)
	for i := range all {
		if keep[i] {
			out = append(out, all[i])
		}
	}
	return out
}
