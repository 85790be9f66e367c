package admission

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// Effect is what a change does: the outcome from next, the state after the change, less what
// Simulate predicts from now without it. A pending Workload that Kueue would admit anyway
// (it has not yet had its turn) is not the change's effect, and neither is a ClusterQueue that
// already ran over its nominal quota of a flavor-resource whose nominal quota stays the same.
func Effect(now, next Cluster) Outcome {
	base, after := Simulate(now), Simulate(next)
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
