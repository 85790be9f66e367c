package admission_test

import (
	"cmp"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	at "github.com/quotaworks/terraform-provider-hyperpod/internal/admission/admissiontest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

const gpu = "nvidia.com/gpu"

// summary flattens an outcome into one line per fact, so a test states what it expects
// without restating the structure.
func summary(o admission.Outcome) []string {
	var out []string
	for _, t := range o.Teams {
		for _, a := range t.Admitted {
			var flavors []string
			for _, ps := range a.PodSets {
				for _, f := range ps.Flavors {
					if !slices.Contains(flavors, f.Flavor) {
						flavors = append(flavors, f.Flavor)
					}
				}
			}
			out = append(out, fmt.Sprintf("%s admitted %s on %s", t.ClusterQueue, a.Workload, strings.Join(flavors, ",")))
		}
		for _, p := range t.Preempted {
			line := fmt.Sprintf("%s preempted %s by %s: %s", t.ClusterQueue, p.Workload, p.By, p.Reason)
			if p.ByClusterQueue == "" {
				line = fmt.Sprintf("%s evicted %s: %s", t.ClusterQueue, p.Workload, p.Reason)
			}
			if p.Readmitted != nil {
				line += " (readmitted)"
			}
			out = append(out, line)
		}
		for _, n := range t.OverNominal {
			var refs []string
			for _, w := range n.Workloads {
				refs = append(refs, w.String())
			}
			out = append(out, fmt.Sprintf("%s over %s %s %d/%d: %s", t.ClusterQueue, n.Flavor, n.Resource, n.Used, n.Nominal, strings.Join(refs, ",")))
		}
		for _, u := range t.Undetermined {
			out = append(out, fmt.Sprintf("%s undetermined %s: %s", t.ClusterQueue, u.Workload, u.Reason))
		}
	}
	return out
}

// team is a ClusterQueue "a".."z" in cohort "c" with a LocalQueue "lq" in namespace "ns-<name>".
func lq(team string) kueue.LocalQueue { return at.MakeLocalQueue("lq", "ns-"+team, team) }

func gpus(flavor, nominal string, limits ...string) kueue.FlavorQuotas {
	return at.MakeFlavorQuotas(flavor).Resource(gpu, nominal, limits...).Obj()
}

func pending(name, team string, n string, prio int32, age time.Duration) kueue.Workload {
	return at.MakeWorkload(name, "ns-"+team).Queue("lq").Priority(prio).Request(gpu, n).Created(-age).Obj()
}

func running(name, team, flavor string, n string, prio int32, admittedAgo time.Duration) kueue.Workload {
	w := at.MakeWorkload(name, "ns-"+team).Queue("lq").Priority(prio).Request(gpu, n).Created(-admittedAgo-time.Hour).AdmitOn(team, flavor).Obj()
	for i := range w.Status.Conditions {
		w.Status.Conditions[i].LastTransitionTime.Time = at.Epoch.Add(-admittedAgo)
	}
	return w
}

func cluster(cqs []kueue.ClusterQueue, wls ...kueue.Workload) admission.Cluster {
	c := admission.Cluster{
		ClusterQueues:   cqs,
		ResourceFlavors: []kueue.ResourceFlavor{at.MakeResourceFlavor("p4", "node.kubernetes.io/instance-type", "p4"), at.MakeResourceFlavor("p5", "node.kubernetes.io/instance-type", "p5")},
		Workloads:       wls,
	}
	for _, cq := range cqs {
		c.LocalQueues = append(c.LocalQueues, lq(cq.Name))
	}
	return c
}

func TestSimulate(t *testing.T) {
	tests := []struct {
		name string
		c    admission.Cluster
		want []string
	}{
		{
			name: "a pending workload within nominal quota is admitted on the flavor",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj()},
				pending("w", "a", "2", 0, 0)),
			want: []string{"a admitted ns-a/w on p4"},
		},
		{
			name: "a workload larger than nominal plus borrowing limit stays pending (ExceedsMaxQuota)",
			c: cluster([]kueue.ClusterQueue{
				at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "1")).Obj(),
				at.MakeClusterQueue("b").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj(),
			}, pending("w", "a", "6", 0, 0)),
			want: nil,
		},
		{
			name: "borrowing within borrowingLimit from an idle team admits, and leaves the team over nominal",
			c: cluster([]kueue.ClusterQueue{
				at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "2")).Obj(),
				at.MakeClusterQueue("b").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj(),
			}, pending("w", "a", "6", 0, 0)),
			want: []string{"a admitted ns-a/w on p4", "a over p4 nvidia.com/gpu 6/4: ns-a/w"},
		},
		{
			name: "lendingLimit 0 (DontLend) keeps a team's quota from borrowers",
			c: cluster([]kueue.ClusterQueue{
				at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "4")).Obj(),
				at.MakeClusterQueue("b").Cohort("c").ResourceGroup(gpus("p4", "4", "0", "0")).Obj(),
			}, pending("w", "a", "6", 0, 0)),
			want: nil,
		},
		{
			name: "lendingLimit lends only its part: 2 of b's 4 are lendable",
			c: cluster([]kueue.ClusterQueue{
				at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "4")).Obj(),
				at.MakeClusterQueue("b").Cohort("c").ResourceGroup(gpus("p4", "4", "0", "2")).Obj(),
			}, pending("w6", "a", "6", 0, time.Minute), pending("w1", "a", "1", 0, 0)),
			want: []string{"a admitted ns-a/w6 on p4", "a over p4 nvidia.com/gpu 6/4: ns-a/w6"},
		},
		{
			// Kueue docs, preemption: reclaimWithinCohort Any reclaims nominal quota lent to a
			// borrowing ClusterQueue, whatever the borrower's priority.
			name: "reclaimWithinCohort Any: a team reclaims its lent quota from a higher-priority borrower (InCohortReclamation)",
			c: cluster([]kueue.ClusterQueue{
				at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "4")).Obj(),
				at.MakeClusterQueue("b").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj(),
			}, running("big", "a", "p4", "6", 100, time.Minute), pending("wb", "b", "4", 0, 0)),
			want: []string{"a preempted ns-a/big by ns-b/wb: InCohortReclamation", "b admitted ns-b/wb on p4"},
		},
		{
			name: "reclaim preempts only the borrower's newest workloads that are needed",
			c: cluster([]kueue.ClusterQueue{
				at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "4")).Obj(),
				at.MakeClusterQueue("b").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj(),
			}, running("old", "a", "p4", "3", 0, 2*time.Hour), running("mid", "a", "p4", "3", 0, time.Hour), running("new", "a", "p4", "2", 0, time.Minute),
				pending("wb", "b", "2", 0, 0)),
			// a uses 8 of its 4; b needs 2 of the 4 it lent: the most recently admitted goes first.
			want: []string{"a preempted ns-a/new by ns-b/wb: InCohortReclamation", "a over p4 nvidia.com/gpu 6/4: ns-a/mid,ns-a/old", "b admitted ns-b/wb on p4"},
		},
		{
			name: "reclaimWithinCohort Never: the lender waits",
			c: cluster([]kueue.ClusterQueue{
				at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "4")).Obj(),
				at.MakeClusterQueue("b").Cohort("c").Preemption(kueue.PreemptionLowerPriority, kueue.PreemptionNever, kueue.PreemptionNever).ResourceGroup(gpus("p4", "4", "0")).Obj(),
			}, running("big", "a", "p4", "6", 0, time.Minute), pending("wb", "b", "4", 0, 0)),
			want: []string{"a over p4 nvidia.com/gpu 6/4: ns-a/big"},
		},
		{
			// Kueue docs: withinClusterQueue LowerPriority preempts lower-priority workloads of the same queue.
			name: "withinClusterQueue LowerPriority: a higher-priority job preempts a lower one in the team (InClusterQueue)",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj()},
				running("low", "a", "p4", "4", 0, time.Minute), pending("high", "a", "4", 100, 0)),
			want: []string{"a admitted ns-a/high on p4", "a preempted ns-a/low by ns-a/high: InClusterQueue"},
		},
		{
			name: "withinClusterQueue LowerPriority never preempts equal priority",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj()},
				running("first", "a", "p4", "4", 10, time.Minute), pending("second", "a", "4", 10, 0)),
			want: nil,
		},
		{
			name: "withinClusterQueue Never (preempt_team_tasks Never): no preemption in the team",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").Preemption(kueue.PreemptionNever, kueue.PreemptionAny, kueue.PreemptionNever).ResourceGroup(gpus("p4", "4", "0")).Obj()},
				running("low", "a", "p4", "4", 0, time.Minute), pending("high", "a", "4", 100, 0)),
			want: nil,
		},
		{
			name: "in-team preemption takes the lowest priority first, then the most recently admitted",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj()},
				running("p1-old", "a", "p4", "1", 1, 2*time.Hour), running("p1-new", "a", "p4", "1", 1, time.Hour),
				running("p0", "a", "p4", "1", 0, 3*time.Hour), running("p5", "a", "p4", "1", 5, 4*time.Hour),
				pending("high", "a", "2", 100, 0)),
			want: []string{"a admitted ns-a/high on p4", "a preempted ns-a/p0 by ns-a/high: InClusterQueue", "a preempted ns-a/p1-new by ns-a/high: InClusterQueue"},
		},
		{
			// Kueue docs: borrowWithinCohort Never, so a queue that must borrow does not
			// preempt other queues' workloads.
			name: "borrowWithinCohort Never: a team that would borrow does not preempt a lower-priority borrower",
			c: cluster([]kueue.ClusterQueue{
				at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "2", "4")).Obj(),
				at.MakeClusterQueue("b").Cohort("c").ResourceGroup(gpus("p4", "2", "4")).Obj(),
				at.MakeClusterQueue("l").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj(),
			}, running("bb", "b", "p4", "6", 0, time.Minute), pending("wa", "a", "4", 100, 0)),
			want: []string{"b over p4 nvidia.com/gpu 6/2: ns-b/bb"},
		},
		{
			name: "borrowWithinCohort LowerPriority: a borrowing team preempts a lower-priority borrower (InCohortReclaimWhileBorrowing)",
			c: cluster([]kueue.ClusterQueue{
				at.MakeClusterQueue("a").Cohort("c").Preemption(kueue.PreemptionLowerPriority, kueue.PreemptionAny, kueue.PreemptionLowerPriority).ResourceGroup(gpus("p4", "2", "4")).Obj(),
				at.MakeClusterQueue("b").Cohort("c").ResourceGroup(gpus("p4", "2", "4")).Obj(),
				at.MakeClusterQueue("l").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj(),
			}, running("bb", "b", "p4", "6", 0, time.Minute), pending("wa", "a", "4", 100, 0)),
			want: []string{"a admitted ns-a/wa on p4", "a over p4 nvidia.com/gpu 4/2: ns-a/wa", "b preempted ns-b/bb by ns-a/wa: InCohortReclaimWhileBorrowing"},
		},
		{
			// Kueue does not preempt when a quota drops: admitted workloads keep running.
			name: "a lowered quota leaves admitted workloads running over nominal",
			c: cluster([]kueue.ClusterQueue{
				at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "2", "0")).Obj(),
				at.MakeClusterQueue("b").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj(),
			}, running("r", "a", "p4", "4", 0, time.Minute)),
			want: []string{"a over p4 nvidia.com/gpu 4/2: ns-a/r"},
		},
		{
			name: "stopPolicy Hold: no admission, running workloads stay",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").StopPolicy(kueue.StopPolicyHold).ResourceGroup(gpus("p4", "4", "0")).Obj()},
				running("r", "a", "p4", "2", 0, time.Minute), pending("w", "a", "2", 0, 0)),
			want: nil,
		},
		{
			name: "stopPolicy HoldAndDrain evicts running workloads (ClusterQueueStopped)",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").StopPolicy("HoldAndDrain").ResourceGroup(gpus("p4", "4", "0")).Obj()},
				running("r", "a", "p4", "2", 0, time.Minute), pending("w", "a", "2", 0, 0)),
			want: []string{"a evicted ns-a/r: ClusterQueueStopped"},
		},
		{
			name: "a held team's quota is still lent: a borrower admits on it",
			c: cluster([]kueue.ClusterQueue{
				at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "2", "4")).Obj(),
				at.MakeClusterQueue("b").Cohort("c").StopPolicy(kueue.StopPolicyHold).ResourceGroup(gpus("p4", "4", "0")).Obj(),
			}, pending("w", "a", "6", 0, 0)),
			want: []string{"a admitted ns-a/w on p4", "a over p4 nvidia.com/gpu 6/2: ns-a/w"},
		},
		{
			name: "a ClusterQueue naming a missing ResourceFlavor is inactive",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("trn1", "4", "0")).Obj()},
				pending("w", "a", "2", 0, 0)),
			want: nil,
		},
		{
			name: "flavors are tried in order: the first that fits is taken",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "2", "0"), gpus("p5", "8", "0")).Obj()},
				pending("w1", "a", "2", 0, time.Minute), pending("w2", "a", "2", 0, 0)),
			want: []string{"a admitted ns-a/w1 on p4", "a admitted ns-a/w2 on p5"},
		},
		{
			// flavorFungibility default whenCanPreempt TryNextFlavor: a flavor that fits beats one that needs preemption.
			name: "whenCanPreempt TryNextFlavor: the next flavor that fits is preferred to preempting on the first",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "2", "0"), gpus("p5", "8", "0")).Obj()},
				running("low", "a", "p4", "2", 0, time.Minute), pending("high", "a", "2", 100, 0)),
			want: []string{"a admitted ns-a/high on p5"},
		},
		{
			// flavorFungibility default whenCanBorrow MayStopSearch: borrowing on the first flavor stops the search.
			name: "whenCanBorrow MayStopSearch: borrowing on the first flavor is taken before a later flavor",
			c: cluster([]kueue.ClusterQueue{
				at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "2", "4"), gpus("p5", "8", "0")).Obj(),
				at.MakeClusterQueue("b").Cohort("c").ResourceGroup(gpus("p4", "4", "0"), gpus("p5", "0", "0")).Obj(),
			}, pending("w", "a", "4", 0, 0)),
			want: []string{"a admitted ns-a/w on p4", "a over p4 nvidia.com/gpu 4/2: ns-a/w"},
		},
		{
			name: "a node selector restricts the flavors tried",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "8", "0"), gpus("p5", "8", "0")).Obj()},
				at.MakeWorkload("w", "ns-a").Queue("lq").PodSets(at.MakePodSet("main", 2).Request(gpu, "1").NodeSelector("node.kubernetes.io/instance-type", "p5").Obj()).Obj()),
			want: []string{"a admitted ns-a/w on p5"},
		},
		{
			name: "higher priority is admitted first when both cannot fit (BestEffortFIFO)",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj()},
				pending("old-low", "a", "3", 0, time.Hour), pending("new-high", "a", "3", 10, 0)),
			want: []string{"a admitted ns-a/new-high on p4"},
		},
		{
			name: "BestEffortFIFO: a head that does not fit lets a smaller workload behind it in",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj()},
				running("r", "a", "p4", "2", 0, time.Minute), pending("big", "a", "4", 0, time.Hour), pending("small", "a", "2", 0, 0)),
			want: []string{"a admitted ns-a/small on p4"},
		},
		{
			name: "topology-aware scheduling is undetermined",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj()},
				at.MakeWorkload("w", "ns-a").Queue("lq").PodSets(at.MakePodSet("main", 1).Request(gpu, "1").RequiredTopology("rack").Obj()).Obj()),
			want: []string{"a undetermined ns-a/w: TopologyAwareScheduling"},
		},
		{
			name: "partial admission is undetermined only when the whole workload does not fit",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj()},
				at.MakeWorkload("fits", "ns-a").Queue("lq").Created(-time.Hour).PodSets(at.MakePodSet("main", 2).Request(gpu, "1").MinCount(1).Obj()).Obj(),
				at.MakeWorkload("partial", "ns-a").Queue("lq").PodSets(at.MakePodSet("main", 4).Request(gpu, "1").MinCount(1).Obj()).Obj()),
			want: []string{"a admitted ns-a/fits on p4", "a undetermined ns-a/partial: PartialAdmission"},
		},
		{
			// Kueue's flavor assigner picks a flavor per pod set, counting the pod sets before it:
			// the master fits p4 (1 of 3), the workers then do not (1+3 > 3) and go to p5.
			name: "each pod set takes the first flavor that fits, counting the pod sets before it",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "3", "0"), gpus("p5", "4", "0")).Obj()},
				at.MakeWorkload("pt", "ns-a").Queue("lq").PodSets(at.MakePodSet("master", 1).Request(gpu, "1").Obj(), at.MakePodSet("worker", 3).Request(gpu, "1").Obj()).Obj()),
			want: []string{"a admitted ns-a/pt on p4,p5"},
		},
		{
			name: "cpu and memory are assigned with the accelerators, and must all fit",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(
				at.MakeFlavorQuotas("p4").Resource("cpu", "8", "0").Resource("memory", "64Gi", "0").Resource(gpu, "8", "0").Obj(),
				at.MakeFlavorQuotas("p5").Resource("cpu", "96", "0").Resource("memory", "1Ti", "0").Resource(gpu, "8", "0").Obj()).Obj()},
				at.MakeWorkload("w", "ns-a").Queue("lq").Request("cpu", "16").Request("memory", "32Gi").Request(gpu, "1").Obj()),
			want: []string{"a admitted ns-a/w on p5"},
		},
		{
			// Kueue ignores borrowing and lending limits outside a cohort.
			name: "without a cohort a team cannot borrow",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").ResourceGroup(gpus("p4", "4", "4")).Obj()},
				pending("w", "a", "6", 0, 0)),
			want: nil,
		},
		{
			name: "pods that finished (reclaimablePods) give back their quota",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj()},
				func() kueue.Workload {
					w := at.MakeWorkload("r", "ns-a").Queue("lq").Count(4).Request(gpu, "1").AdmitOn("a", "p4").Obj()
					w.Status.ReclaimablePods = []kueue.ReclaimablePod{{Name: "main", Count: 2}}
					return w
				}(), pending("w", "a", "2", 0, 0)),
			want: []string{"a admitted ns-a/w on p4"},
		},
		{
			name: "a required node affinity In is matched against flavor labels",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "8", "0"), gpus("p5", "8", "0")).Obj()},
				func() kueue.Workload {
					w := pending("w", "a", "1", 0, 0)
					w.Spec.PodSets[0].Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
							MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "node.kubernetes.io/instance-type", Operator: corev1.NodeSelectorOpIn, Values: []string{"p5"}}},
						}}}}}
					return w
				}()),
			want: []string{"a admitted ns-a/w on p5"},
		},
		{
			name: "a finished workload holds no quota",
			c: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj()},
				at.MakeWorkload("done", "ns-a").Queue("lq").Request(gpu, "4").AdmitOn("a", "p4").Finished().Obj(), pending("w", "a", "4", 0, 0)),
			want: []string{"a admitted ns-a/w on p4"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summary(admission.Simulate(tt.c))
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

// fairCohort: a and b borrow from l's 8 GPUs; a borrows 7 with three workloads, b holds its
// nominal 2 and wants 3 more.
func fairCohort(fair bool) admission.Cluster {
	c := cluster([]kueue.ClusterQueue{
		at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "2", "10")).Obj(),
		at.MakeClusterQueue("b").Cohort("c").ResourceGroup(gpus("p4", "2", "10")).Obj(),
		at.MakeClusterQueue("l").Cohort("c").ResourceGroup(gpus("p4", "8", "0")).Obj(),
	},
		running("a1", "a", "p4", "3", 0, 3*time.Hour), running("a2", "a", "p4", "3", 0, 2*time.Hour), running("a3", "a", "p4", "3", 0, time.Hour),
		running("b1", "b", "p4", "2", 0, time.Hour), pending("wb", "b", "3", 0, 0))
	c.FairSharing = fair
	return c
}

func TestFairSharing(t *testing.T) {
	tests := []struct {
		name string
		c    admission.Cluster
		want []string
	}{
		{
			// Without fair sharing, borrowWithinCohort Never: b would borrow, so it does not preempt.
			// a's Workloads, of one priority, are preemptible the most recently admitted first.
			name: "classical: a borrowing team does not preempt another borrower",
			c:    fairCohort(false),
			want: []string{"a over p4 nvidia.com/gpu 9/2: ns-a/a3,ns-a/a2,ns-a/a1", "b over p4 nvidia.com/gpu 2/2: ns-b/b1"}[:1],
		},
		{
			// Kueue docs, fair sharing: a queue may preempt from one with a higher share when its
			// share after admission is at most the target's share after the preemption
			// (LessThanOrEqualToFinalShare). b: 3/12 borrowed = 250; a after losing 3: 4/12 = 333.
			name: "fair sharing: the team with the lower share preempts the newest workload of the highest share (InCohortFairSharing)",
			c:    fairCohort(true),
			want: []string{
				"a preempted ns-a/a3 by ns-b/wb: InCohortFairSharing",
				"a over p4 nvidia.com/gpu 6/2: ns-a/a2,ns-a/a1",
				"b admitted ns-b/wb on p4",
				// wb, admitted in the prediction, is b's most recent admission.
				"b over p4 nvidia.com/gpu 5/2: ns-b/wb,ns-b/b1",
			},
		},
		{
			// Classical order: both borrow and have the same priority, so the older goes first.
			name: "classical order: the older borrower is admitted",
			c: cluster([]kueue.ClusterQueue{
				at.MakeClusterQueue("a").Cohort("c").FairWeight("2").ResourceGroup(gpus("p4", "0", "8")).Obj(),
				at.MakeClusterQueue("b").Cohort("c").FairWeight("1").ResourceGroup(gpus("p4", "0", "8")).Obj(),
				at.MakeClusterQueue("l").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj(),
			}, pending("wa", "a", "4", 0, 0), pending("wb", "b", "4", 0, time.Hour)),
			want: []string{"b admitted ns-b/wb on p4", "b over p4 nvidia.com/gpu 4/0: ns-b/wb"},
		},
	}
	weighted := cluster([]kueue.ClusterQueue{
		at.MakeClusterQueue("a").Cohort("c").FairWeight("2").ResourceGroup(gpus("p4", "0", "8")).Obj(),
		at.MakeClusterQueue("b").Cohort("c").FairWeight("1").ResourceGroup(gpus("p4", "0", "8")).Obj(),
		at.MakeClusterQueue("l").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj(),
	}, pending("wa", "a", "4", 0, 0), pending("wb", "b", "4", 0, time.Hour))
	weighted.FairSharing = true
	// Kueue's share divides what a queue borrows by what its whole cohort lends (the cohort's
	// calculateLendable), whatever the queue's own borrowing limit: a would borrow 4 of 8
	// (500), b 5 of 8 (625), so a goes first, though b's Workload is older, and b's then no
	// longer fits (nor may it preempt a, whose share is below b's).
	limited := cluster([]kueue.ClusterQueue{
		at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "0", "4")).Obj(),
		at.MakeClusterQueue("b").Cohort("c").ResourceGroup(gpus("p4", "0")).Obj(),
		at.MakeClusterQueue("l").Cohort("c").ResourceGroup(gpus("p4", "8", "0")).Obj(),
	}, pending("wa", "a", "4", 0, 0), pending("wb", "b", "5", 0, time.Hour))
	limited.FairSharing = true
	tests = append(tests, struct {
		name string
		c    admission.Cluster
		want []string
	}{
		// Fair sharing orders a cycle's heads by the share each queue would have: a's weight 2
		// halves its share (500 against b's 1000).
		name: "fair sharing order: the heavier weight is admitted first",
		c:    weighted,
		want: []string{"a admitted ns-a/wa on p4", "a over p4 nvidia.com/gpu 4/0: ns-a/wa"},
	}, struct {
		name string
		c    admission.Cluster
		want []string
	}{
		name: "fair sharing order: shares over the cohort's lendable quota, not the queue's borrowing limit",
		c:    limited,
		want: []string{"a admitted ns-a/wa on p4", "a over p4 nvidia.com/gpu 4/0: ns-a/wa"},
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summary(admission.Simulate(tt.c))
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

func TestPriorityClassValueByVersion(t *testing.T) {
	c := cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj()},
		running("r", "a", "p4", "4", 50, time.Minute),
		// Created when the class was worth 0; the class is now worth 100.
		at.MakeWorkload("w", "ns-a").Queue("lq").PriorityClass("urgent", 0).Request(gpu, "4").Obj())
	c.WorkloadPriorityClasses = []kueue.WorkloadPriorityClass{at.MakePriorityClass("urgent", 100)}
	for _, tt := range []struct {
		version string
		want    []string
	}{
		// Kueue v0.19's WorkloadPriorityClass controller updates the Workloads' priority.
		{"v0.19.2", []string{"a admitted ns-a/w on p4", "a preempted ns-a/r by ns-a/w: InClusterQueue"}},
		// Kueue v0.15 keeps the priority a Workload was created with.
		{"v0.15.0", nil},
	} {
		t.Run(tt.version, func(t *testing.T) {
			v, err := admission.ParseVersion(tt.version)
			if err != nil {
				t.Fatal(err)
			}
			c.Version = v
			got := summary(admission.Simulate(c))
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPreview(t *testing.T) {
	now := cluster([]kueue.ClusterQueue{
		at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj(),
		at.MakeClusterQueue("b").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj(),
	}, running("r", "a", "p4", "4", 0, time.Minute), pending("wb", "b", "2", 0, 0), pending("wb2", "b", "2", 0, 0))
	if got := summary(admission.Simulate(now)); !slices.Equal(got, []string{"b admitted ns-b/wb on p4", "b admitted ns-b/wb2 on p4"}) {
		t.Fatalf("live state: %q", got)
	}
	tests := []struct {
		name    string
		planned []kueue.ClusterQueue
		want    []string
	}{
		{
			// a now borrows 2 of b's 4; b's second job needs them back.
			name:    "lowering a's quota below what it runs lets b reclaim it (InCohortReclamation)",
			planned: []kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "2", "0")).Obj()},
			want:    []string{"a preempted ns-a/r by ns-b/wb2: InCohortReclamation", "b admitted ns-b/wb on p4", "b admitted ns-b/wb2 on p4"},
		},
		{
			// Kueue does not preempt when a quota drops; the quota is reclaimed only on demand.
			name: "lowering a's quota with no demand in the cohort leaves its job over nominal, preemptible",
			planned: []kueue.ClusterQueue{
				at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "2", "0")).Obj(),
				at.MakeClusterQueue("b").Cohort("c").ResourceGroup(gpus("p4", "6", "0")).Obj(),
			},
			want: []string{"a over p4 nvidia.com/gpu 4/2: ns-a/r", "b admitted ns-b/wb on p4", "b admitted ns-b/wb2 on p4"},
		},
		{
			name:    "lowering b's quota below its demand leaves the second job pending",
			planned: []kueue.ClusterQueue{at.MakeClusterQueue("b").Cohort("c").ResourceGroup(gpus("p4", "2", "0")).Obj()},
			want:    []string{"b admitted ns-b/wb on p4"},
		},
		{
			name:    "a ClusterQueue being deleted admits nothing",
			planned: []kueue.ClusterQueue{at.MakeClusterQueue("b").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Deleting().Obj()},
			want:    nil,
		},
		{
			name:    "stopping a team (activation disabled, stopPolicy Hold) holds its pending jobs",
			planned: []kueue.ClusterQueue{at.MakeClusterQueue("b").Cohort("c").StopPolicy(kueue.StopPolicyHold).ResourceGroup(gpus("p4", "4", "0")).Obj()},
			want:    nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summary(admission.Preview(now, tt.planned))
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

func TestAdmissionChecksAreUndetermined(t *testing.T) {
	w := pending("w", "a", "2", 0, 0)
	w.Status.AdmissionChecks = []kueue.AdmissionCheckState{{Name: "prov", State: "Pending"}}
	c := cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj()}, w)
	got := summary(admission.Simulate(c))
	if want := []string{"a undetermined ns-a/w: AdmissionChecks"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestString(t *testing.T) {
	o := admission.Simulate(fairCohort(true))
	got := o.String()
	// a keeps a1 and a2, 3 GPUs each, on a nominal quota of 2; a2 was admitted after a1.
	used, nominal := 2*3, 2
	for _, want := range []string{
		"ClusterQueue a:\n",
		"  preempted ns-a/a3 by ns-b/wb (ClusterQueue b): InCohortFairSharing\n",
		fmt.Sprintf("  over nominal quota by %d: p4 nvidia.com/gpu uses %d of %d; preemptible first to last: ns-a/a2, ns-a/a1\n",
			used-nominal, used, nominal),
		"ClusterQueue b:\n",
		"  admitted ns-b/wb on p4, borrowing, after preemption\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("String() lacks %q:\n%s", want, got)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]admission.Version{"v0.15.0": admission.V0_15, "0.15.8": admission.V0_15, "v0.19.2": admission.V0_19, "v0.19": admission.V0_19,
		// v0.16 to v0.18 are modelled as v0.19.
		"v0.16.0": admission.V0_19, "v0.17.1": admission.V0_19, "0.18.6": admission.V0_19} {
		if got, err := admission.ParseVersion(in); err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"v0.14.0", "v0.20.0", "v1.19.0", "v0.150.0", "", "latest"} {
		if _, err := admission.ParseVersion(in); err == nil {
			t.Errorf("ParseVersion(%q) succeeded", in)
		}
	}
}

func TestFairSharingReclaimWithinNominalByVersion(t *testing.T) {
	c := cluster([]kueue.ClusterQueue{
		at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "2", "10")).Obj(),
		at.MakeClusterQueue("b").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj(),
	}, running("a1", "a", "p4", "3", 0, 2*time.Hour), running("a2", "a", "p4", "3", 0, time.Hour), pending("wb", "b", "3", 0, 0))
	c.FairSharing = true
	for _, tt := range []struct {
		version string
		reason  string
	}{
		// Kueue v0.19 (FairSharingPreemptWithinNominal): a queue that stays within its nominal
		// quota reclaims without comparing shares.
		{"v0.19.2", kueue.InCohortReclamationReason},
		// Kueue v0.15 compares shares: b's share stays 0, so the strategy lets it preempt.
		{"v0.15.0", kueue.InCohortFairSharingReason},
	} {
		t.Run(tt.version, func(t *testing.T) {
			c.Version, _ = admission.ParseVersion(tt.version)
			got := summary(admission.Simulate(c))
			want := []string{"a preempted ns-a/a2 by ns-b/wb: " + tt.reason, "a over p4 nvidia.com/gpu 3/2: ns-a/a1", "b admitted ns-b/wb on p4"}
			if !slices.Equal(got, want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}

// TestOverNominalPreemptionOrder: a team left over its nominal quota lists its running
// Workloads in the order Kueue's preemption takes them (CandidatesOrdering): the lower
// priority first, then the most recent quota reservation, then by UID.
func TestOverNominalPreemptionOrder(t *testing.T) {
	type job struct {
		name        string
		priority    int32
		admittedAgo time.Duration
		uid         string
	}
	jobs := []job{
		{"old-low", 0, 3 * time.Hour, "u1"},
		{"new-low", 0, time.Hour, "u2"},
		{"tie-b", 0, 2 * time.Hour, "u3"},
		{"tie-a", 0, 2 * time.Hour, "u4"},
		{"high", 10, 30 * time.Minute, "u5"},
	}
	const nominal = 1
	var wls []kueue.Workload
	for _, j := range jobs {
		w := running(j.name, "a", "p4", "1", j.priority, j.admittedAgo)
		w.UID = types.UID(j.uid)
		wls = append(wls, w)
	}
	// The quota was lowered under what its running Workloads hold: they keep running.
	c := cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").ResourceGroup(gpus("p4", fmt.Sprint(nominal))).Obj()}, wls...)

	want := slices.Clone(jobs)
	slices.SortFunc(want, func(a, b job) int {
		return cmp.Or(cmp.Compare(a.priority, b.priority), cmp.Compare(a.admittedAgo, b.admittedAgo), cmp.Compare(a.uid, b.uid))
	})
	var wantRefs []string
	for _, j := range want {
		wantRefs = append(wantRefs, "ns-a/"+j.name)
	}
	over := admission.Simulate(c).Team("a").OverNominal
	if len(over) != 1 {
		t.Fatalf("over nominal: %+v, want one flavor-resource", over)
	}
	var got []string
	for _, w := range over[0].Workloads {
		got = append(got, w.String())
	}
	if !slices.Equal(got, wantRefs) {
		t.Errorf("preemptible %v, want %v", got, wantRefs)
	}
	if over[0].Over() != int64(len(jobs)-nominal) {
		t.Errorf("over by %d, want %d", over[0].Over(), len(jobs)-nominal)
	}
	line := fmt.Sprintf("over nominal quota by %d: p4 %s uses %d of %d; preemptible first to last: %s\n",
		len(jobs)-nominal, gpu, len(jobs), nominal, strings.Join(wantRefs, ", "))
	if text := admission.Simulate(c).String(); !strings.Contains(text, line) {
		t.Errorf("String() lacks %q:\n%s", line, text)
	}
}
