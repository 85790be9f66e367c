package admission

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission/admissiontest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

const fuzzGPU = "nvidia.com/gpu"

// randomCluster builds a cohort of up to five teams with random quotas, limits, policies and
// jobs, some admitted (possibly over what the quotas now allow, as after a lowered quota).
func randomCluster(seed uint64) Cluster {
	r := rand.New(rand.NewPCG(seed, seed>>32|1))
	c := Cluster{
		Version:         []Version{V0_15, V0_19}[r.IntN(2)],
		FairSharing:     r.IntN(3) == 0,
		ResourceFlavors: []kueue.ResourceFlavor{admissiontest.MakeResourceFlavor("p4", "type", "p4"), admissiontest.MakeResourceFlavor("p5", "type", "p5")},
		WorkloadPriorityClasses: []kueue.WorkloadPriorityClass{
			admissiontest.MakePriorityClass("low", 0), admissiontest.MakePriorityClass("high", int32(r.IntN(3)*50)),
		},
	}
	teams := 1 + r.IntN(5)
	policies := []string{kueue.PreemptionNever, kueue.PreemptionLowerPriority, kueue.PreemptionAny}
	for i := range teams {
		name := string(rune('a' + i))
		cq := admissiontest.MakeClusterQueue(name)
		if r.IntN(6) != 0 {
			cq.Cohort("c")
		}
		var flavors []kueue.FlavorQuotas
		for _, f := range []string{"p4", "p5"}[:1+r.IntN(2)] {
			limits := []string{strconv.Itoa(r.IntN(9))}
			if r.IntN(3) == 0 {
				limits = append(limits, strconv.Itoa(r.IntN(3)))
			}
			flavors = append(flavors, admissiontest.MakeFlavorQuotas(f).Resource(fuzzGPU, strconv.Itoa(r.IntN(9)), limits...).Obj())
		}
		// lendingLimit must not exceed nominal, as Kueue's webhook requires.
		for fi := range flavors {
			for ri := range flavors[fi].Resources {
				rq := &flavors[fi].Resources[ri]
				if rq.LendingLimit != nil && rq.LendingLimit.Cmp(rq.NominalQuota) > 0 {
					rq.LendingLimit = nil
				}
			}
		}
		cq.ResourceGroup(flavors...)
		cq.Preemption(policies[r.IntN(2)], policies[r.IntN(3)], policies[r.IntN(2)])
		switch r.IntN(8) {
		case 0:
			cq.StopPolicy(kueue.StopPolicyHold)
		case 1:
			cq.StopPolicy(stopPolicyHoldAndDrain)
		}
		cq.FairWeight(strconv.Itoa(r.IntN(4)))
		c.ClusterQueues = append(c.ClusterQueues, cq.Obj())
		c.LocalQueues = append(c.LocalQueues, admissiontest.MakeLocalQueue("lq", "ns-"+name, name))
	}
	for j := range r.IntN(14) {
		cq := c.ClusterQueues[r.IntN(teams)]
		w := admissiontest.MakeWorkload(fmt.Sprintf("w%d", j), "ns-"+cq.Name).Queue("lq").
			Created(time.Duration(r.IntN(5))*time.Minute).Count(int32(1+r.IntN(2))).Request(fuzzGPU, strconv.Itoa(1+r.IntN(4)))
		if r.IntN(2) == 0 {
			w.PriorityClass([]string{"low", "high"}[r.IntN(2)], int32(r.IntN(2)*10))
		} else {
			w.Priority(int32(r.IntN(3) * 10))
		}
		if r.IntN(2) == 0 {
			flavors := cq.Spec.ResourceGroups[0].Flavors
			w.AdmitOn(cq.Name, flavors[r.IntN(len(flavors))].Name)
		}
		c.Workloads = append(c.Workloads, w.Obj())
	}
	return c
}

func FuzzSimulate(f *testing.F) {
	for seed := range uint64(64) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		c := randomCluster(seed)
		s := newState(c)
		s.afterCycle = func(before *ledger) { checkCohortGrowth(t, s, before) }
		s.run()
		checkLedger(t, s)
		checkLimits(t, s)
		o := s.outcome()
		if again := Simulate(c); !reflect.DeepEqual(o, again) || o.String() != again.String() {
			t.Fatalf("two runs differ:\n%s\n---\n%s", o, again)
		}
		checkOutcome(t, c, o)
		// Each cohort settles on its own: the Planner's baselines, made cohort by cohort,
		// are the whole cluster's prediction.
		if e, err := NewPlanner(c).Effect(context.Background(), c); err != nil || !e.Empty() {
			t.Fatalf("the effect of no change, cohort by cohort, is %v:\n%s", err, e)
		}
	})
}

// checkLedger: the live ledger is exactly the sum of the admitted Workloads' usage.
func checkLedger(t *testing.T, s *state) {
	t.Helper()
	want := newLedger(s)
	for _, w := range s.workloads {
		if w.admitted {
			want.addAll(w.cq, w.usage, 1)
		}
	}
	for _, cq := range s.cqs {
		for _, fr := range sortedFRs(cq.quotas) {
			if got, exp := s.live.usage(cq, fr), want.usage(cq, fr); got != exp {
				t.Fatalf("%s %v: ledger %d, admitted Workloads use %d", cq.name, fr, got, exp)
			}
		}
	}
	for _, co := range s.cohorts {
		for fr, v := range want.cohort[co] {
			if s.live.cohort[co][fr] != v {
				t.Fatalf("cohort %s %v: ledger %d, recomputed %d", co.name, fr, s.live.cohort[co][fr], v)
			}
		}
	}
}

// checkCohortGrowth: a cycle that makes a cohort use more of a flavor-resource leaves it within
// what its members lend (a cohort can start over it, after quotas were lowered).
func checkCohortGrowth(t *testing.T, s *state, before *ledger) {
	t.Helper()
	for _, co := range s.cohorts {
		for fr, v := range s.live.cohort[co] {
			if v > before.cohort[co][fr] && v > co.subtreeQuota[fr] {
				t.Fatalf("cohort %s: %v grew from %d to %d, over the %d lent", co.name, fr, before.cohort[co][fr], v, co.subtreeQuota[fr])
			}
		}
	}
}

// checkLimits: where the simulator admitted a Workload, the queue stays within its nominal
// quota plus borrowing limit.
func checkLimits(t *testing.T, s *state) {
	t.Helper()
	for _, w := range s.workloads {
		if !w.admitted || w.initiallyAdmitted && w.preempted == nil {
			continue
		}
		for fr := range w.usage {
			q := w.cq.quotas[fr]
			used := s.live.usage(w.cq, fr)
			if w.cq.cohort == nil && used > q.nominal {
				t.Fatalf("%s admitted %s: %v uses %d of nominal %d without a cohort", w.cq.name, w.key, fr, used, q.nominal)
			}
			if q.borrowingLimit != nil && used > q.nominal+*q.borrowingLimit {
				t.Fatalf("%s admitted %s: %v uses %d over nominal %d + borrowing limit %d", w.cq.name, w.key, fr, used, q.nominal, *q.borrowingLimit)
			}
		}
	}
}

func checkOutcome(t *testing.T, c Cluster, o Outcome) {
	t.Helper()
	seen := map[WorkloadRef]string{}
	note := func(w WorkloadRef, what string) {
		if prev, dup := seen[w]; dup {
			t.Fatalf("%s is both %s and %s:\n%s", w, prev, what, o)
		}
		seen[w] = what
	}
	wasAdmitted := map[WorkloadRef]bool{}
	for _, w := range c.Workloads {
		if w.Status.Admission != nil {
			wasAdmitted[WorkloadRef{w.Namespace, w.Name}] = true
		}
	}
	if !slices.IsSortedFunc(o.Teams, func(a, b TeamOutcome) int { return compareStrings(a.ClusterQueue, b.ClusterQueue) }) {
		t.Fatalf("teams not sorted:\n%s", o)
	}
	reasons := []string{kueue.InClusterQueueReason, kueue.InCohortReclamationReason, kueue.InCohortReclaimWhileBorrowingReason,
		kueue.InCohortFairSharingReason, kueue.WorkloadEvictedByClusterQueueStopped, kueue.WorkloadEvictedByLocalQueueStopped}
	for _, team := range o.Teams {
		for _, a := range team.Admitted {
			note(a.Workload, "admitted")
			if wasAdmitted[a.Workload] {
				t.Fatalf("%s was already admitted but is reported admitted", a.Workload)
			}
		}
		for _, p := range team.Preempted {
			note(p.Workload, "preempted")
			if !wasAdmitted[p.Workload] {
				t.Fatalf("%s was not admitted but is reported preempted", p.Workload)
			}
			if !slices.Contains(reasons, p.Reason) {
				t.Fatalf("%s preempted for unknown reason %q", p.Workload, p.Reason)
			}
			if (p.ByClusterQueue == "") != (p.Reason == kueue.WorkloadEvictedByClusterQueueStopped || p.Reason == kueue.WorkloadEvictedByLocalQueueStopped) {
				t.Fatalf("%s: preemptor %q does not match reason %s", p.Workload, p.ByClusterQueue, p.Reason)
			}
			if p.Reason == kueue.InClusterQueueReason && p.ByClusterQueue != team.ClusterQueue {
				t.Fatalf("%s preempted InClusterQueue by a Workload of %s", p.Workload, p.ByClusterQueue)
			}
		}
		for _, u := range team.Undetermined {
			note(u.Workload, "undetermined")
			if !slices.Contains(UndeterminedReasons, u.Reason) {
				t.Fatalf("%s undetermined for unlisted reason %q", u.Workload, u.Reason)
			}
		}
		for _, n := range team.OverNominal {
			if n.Used <= n.Nominal || len(n.Workloads) == 0 {
				t.Fatalf("%s: over nominal entry %+v", team.ClusterQueue, n)
			}
		}
	}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// BenchmarkPreview1000Teams measures a preview over one cohort of 1000 teams, each with two
// admitted and two pending jobs, after one team's quota is lowered.
func BenchmarkPreview1000Teams(b *testing.B) { benchmarkPreview(b, 1000) }

func benchmarkPreview(b *testing.B, teams int) {
	var c Cluster
	c.ResourceFlavors = []kueue.ResourceFlavor{admissiontest.MakeResourceFlavor("p4", "type", "p4")}
	for i := range teams {
		name := fmt.Sprintf("team-%04d", i)
		c.ClusterQueues = append(c.ClusterQueues, admissiontest.MakeClusterQueue(name).Cohort("c").
			ResourceGroup(admissiontest.MakeFlavorQuotas("p4").Resource(fuzzGPU, "8", "4").Obj()).Obj())
		c.LocalQueues = append(c.LocalQueues, admissiontest.MakeLocalQueue("lq", "ns-"+name, name))
		for j := range 4 {
			w := admissiontest.MakeWorkload(fmt.Sprintf("job-%d", j), "ns-"+name).Queue("lq").
				Priority(int32(j%2*10)).Created(time.Duration(i*4+j)*time.Second).Request(fuzzGPU, "3")
			if j < 2 {
				w.AdmitOn(name, "p4")
			}
			c.Workloads = append(c.Workloads, w.Obj())
		}
	}
	planned := []kueue.ClusterQueue{admissiontest.MakeClusterQueue("team-0000").Cohort("c").
		ResourceGroup(admissiontest.MakeFlavorQuotas("p4").Resource(fuzzGPU, "2", "4").Obj()).Obj()}
	for _, fair := range []bool{false, true} {
		c.FairSharing = fair
		b.Run(fmt.Sprintf("fairSharing=%v", fair), func(b *testing.B) {
			for b.Loop() {
				Preview(c, planned)
			}
		})
	}
}
