package admission_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	at "github.com/quotaworks/terraform-provider-hyperpod/internal/admission/admissiontest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// assumptionsCluster is two teams a and b in cohort c and a team x of its own, each with a
// pending Workload that fits its nominal quota, and a running one in a.
func assumptionsCluster(edit func(c *admission.Cluster, a *at.ClusterQueueWrapper)) admission.Cluster {
	a := at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "0"))
	c := cluster(nil, running("ra", "a", "p4", "1", 0, time.Minute),
		pending("wa", "a", "2", 0, 0), pending("wb", "b", "2", 0, 0), pending("wx", "x", "2", 0, 0))
	if edit != nil {
		edit(&c, a)
	}
	c.ClusterQueues = []kueue.ClusterQueue{a.Obj(),
		at.MakeClusterQueue("b").Cohort("c").ResourceGroup(gpus("p4", "4", "0")).Obj(),
		at.MakeClusterQueue("x").ResourceGroup(gpus("p4", "4", "0")).Obj()}
	for _, name := range []string{"a", "b", "x"} {
		c.LocalQueues = append(c.LocalQueues, lq(name))
	}
	return c
}

// Each setting the preview does not follow makes the pending Workloads of the queues it
// concerns Undetermined with a reason of its own, leaves what those queues hold as it is, and
// leaves the other queues predicted; each setting it models is predicted.
func TestAssumptions(t *testing.T) {
	admittedAll := []string{"a admitted ns-a/wa on p4", "b admitted ns-b/wb on p4", "x admitted ns-x/wx on p4"}
	cohortUndetermined := func(reason admission.UndeterminedReason) []string {
		return []string{"a undetermined ns-a/wa: " + string(reason), "b undetermined ns-b/wb: " + string(reason), "x admitted ns-x/wx on p4"}
	}
	allUndetermined := func(reason admission.UndeterminedReason) []string {
		return []string{"a undetermined ns-a/wa: " + string(reason), "b undetermined ns-b/wb: " + string(reason), "x undetermined ns-x/wx: " + string(reason)}
	}
	onlyA := func(reason admission.UndeterminedReason) []string {
		return []string{"a undetermined ns-a/wa: " + string(reason), "b admitted ns-b/wb on p4", "x admitted ns-x/wx on p4"}
	}
	known := func(edit func(m *admission.ManagerConfig)) func(c *admission.Cluster, _ *at.ClusterQueueWrapper) {
		return func(c *admission.Cluster, _ *at.ClusterQueueWrapper) {
			m := admission.ManagerConfig{Known: true, FairSharing: true}
			edit(&m)
			*c = c.WithManager(m)
		}
	}
	tests := []struct {
		name string
		edit func(c *admission.Cluster, a *at.ClusterQueueWrapper)
		want []string
	}{
		{name: "nothing unusual", want: admittedAll},
		{
			name: "StrictFIFO",
			edit: func(_ *admission.Cluster, a *at.ClusterQueueWrapper) {
				a.QueueingStrategy(kueue.QueueingStrategyStrictFIFO)
			},
			want: onlyA(admission.QueueingStrategy),
		},
		{
			name: "BestEffortFIFO as the API server defaults it",
			edit: func(_ *admission.Cluster, a *at.ClusterQueueWrapper) {
				a.QueueingStrategy(kueue.QueueingStrategyBestEffortFIFO)
			},
			want: admittedAll,
		},
		{
			name: "a stopped StrictFIFO queue admits nothing, which is modelled",
			edit: func(_ *admission.Cluster, a *at.ClusterQueueWrapper) {
				a.QueueingStrategy(kueue.QueueingStrategyStrictFIFO).StopPolicy(kueue.StopPolicyHold)
			},
			want: []string{"b admitted ns-b/wb on p4", "x admitted ns-x/wx on p4"},
		},
		{
			name: "flavorFungibility whenCanBorrow TryNextFlavor with a choice of flavors",
			edit: func(_ *admission.Cluster, a *at.ClusterQueueWrapper) {
				*a = *at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "0"), gpus("p5", "4", "0")).
					FlavorFungibility(kueue.FungibilityTryNextFlavor, kueue.FungibilityTryNextFlavor)
			},
			want: onlyA(admission.FlavorFungibility),
		},
		{
			name: "flavorFungibility whenCanPreempt MayStopSearch with a choice of flavors",
			edit: func(_ *admission.Cluster, a *at.ClusterQueueWrapper) {
				*a = *at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "0"), gpus("p5", "4", "0")).
					FlavorFungibility(kueue.FungibilityMayStopSearch, kueue.FungibilityMayStopSearch)
			},
			want: onlyA(admission.FlavorFungibility),
		},
		{
			name: "flavorFungibility in v1beta1's names for the defaults (Borrow), with a choice of flavors",
			edit: func(_ *admission.Cluster, a *at.ClusterQueueWrapper) {
				*a = *at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "0"), gpus("p5", "4", "0")).
					FlavorFungibility(kueue.FungibilityBorrow, kueue.FungibilityTryNextFlavor)
			},
			want: admittedAll,
		},
		{
			name: "any flavorFungibility without a preference, with one flavor: nothing to choose",
			edit: func(_ *admission.Cluster, a *at.ClusterQueueWrapper) {
				a.FlavorFungibility(kueue.FungibilityTryNextFlavor, kueue.FungibilityMayStopSearch)
			},
			want: admittedAll,
		},
		{
			name: "a Cohort object with a parent: the whole tree",
			edit: func(c *admission.Cluster, _ *at.ClusterQueueWrapper) {
				c.Cohorts = []kueue.Cohort{at.MakeCohort("c", "root")}
			},
			want: cohortUndetermined(admission.HierarchicalCohort),
		},
		{
			name: "a Cohort object that is the parent of another",
			edit: func(c *admission.Cluster, _ *at.ClusterQueueWrapper) {
				c.Cohorts = []kueue.Cohort{at.MakeCohort("c", ""), at.MakeCohort("sub", "c")}
			},
			want: cohortUndetermined(admission.HierarchicalCohort),
		},
		{
			name: "a Cohort object with quotas of its own",
			edit: func(c *admission.Cluster, _ *at.ClusterQueueWrapper) {
				co := at.MakeCohort("c", "")
				co.Spec.ResourceGroups = []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{gpu}, Flavors: []kueue.FlavorQuotas{gpus("p4", "8")}}}
				c.Cohorts = []kueue.Cohort{co}
			},
			want: cohortUndetermined(admission.CohortQuota),
		},
		{
			name: "a flat Cohort object with a fair-sharing weight is the flat cohort modelled",
			edit: func(c *admission.Cluster, _ *at.ClusterQueueWrapper) {
				co := at.MakeCohort("c", "")
				w := resource.MustParse("2")
				co.Spec.FairSharing = &kueue.FairSharing{Weight: &w}
				c.Cohorts = []kueue.Cohort{co, at.MakeCohort("unrelated", "other-root")}
			},
			want: admittedAll,
		},
		{
			name: "a namespaceSelector and the namespaces' labels not read",
			edit: func(_ *admission.Cluster, a *at.ClusterQueueWrapper) { a.NamespaceSelector("team", "a") },
			want: onlyA(admission.NamespaceSelector),
		},
		{
			name: "a namespaceSelector and a namespace not among those read",
			edit: func(c *admission.Cluster, a *at.ClusterQueueWrapper) {
				a.NamespaceSelector("team", "a")
				c.NamespaceLabels = map[string]map[string]string{"ns-b": {"team": "b"}}
			},
			want: onlyA(admission.NamespaceSelector),
		},
		{
			name: "a namespaceSelector that matches the namespace",
			edit: func(c *admission.Cluster, a *at.ClusterQueueWrapper) {
				a.NamespaceSelector("team", "a")
				c.NamespaceLabels = map[string]map[string]string{"ns-a": {"team": "a", "kubernetes.io/metadata.name": "ns-a"}}
			},
			want: admittedAll,
		},
		{
			name: "a namespaceSelector that excludes the namespace: Kueue keeps the Workload pending",
			edit: func(c *admission.Cluster, a *at.ClusterQueueWrapper) {
				a.NamespaceSelector("team", "a")
				c.NamespaceLabels = map[string]map[string]string{"ns-a": {"team": "other"}}
			},
			want: []string{"b admitted ns-b/wb on p4", "x admitted ns-x/wx on p4"},
		},
		{
			name: "no namespaceSelector selects no namespace",
			edit: func(_ *admission.Cluster, a *at.ClusterQueueWrapper) { a.NamespaceSelector() },
			want: []string{"b admitted ns-b/wb on p4", "x admitted ns-x/wx on p4"},
		},
		{
			name: "an invalid namespaceSelector",
			edit: func(_ *admission.Cluster, a *at.ClusterQueueWrapper) { a.NamespaceSelector("not a label key!", "a") },
			want: onlyA(admission.NamespaceSelector),
		},
		{
			name: "admission checks on the ClusterQueue",
			edit: func(_ *admission.Cluster, a *at.ClusterQueueWrapper) { a.AdmissionCheck("provisioning") },
			want: onlyA(admission.AdmissionChecks),
		},
		{
			name: "fair sharing with other preemption strategies: the queues in a cohort",
			edit: known(func(m *admission.ManagerConfig) { m.PreemptionStrategies = []string{"LessThanInitialShare"} }),
			want: cohortUndetermined(admission.PreemptionStrategies),
		},
		{
			name: "fair sharing with the default preemption strategies written out",
			edit: known(func(m *admission.ManagerConfig) { m.PreemptionStrategies = admission.DefaultPreemptionStrategies }),
			want: admittedAll,
		},
		{
			name: "waitForPodsReady without blockAdmission",
			edit: known(func(m *admission.ManagerConfig) { m.WaitForPodsReady = true }),
			want: admittedAll,
		},
		{
			name: "waitForPodsReady with blockAdmission: every queue",
			edit: known(func(m *admission.ManagerConfig) { m.WaitForPodsReady, m.BlockAdmission = true, true }),
			want: allUndetermined(admission.WaitForPodsReady),
		},
		{
			name: "a Workload requeued after a pods-ready timeout",
			edit: func(c *admission.Cluster, _ *at.ClusterQueueWrapper) {
				c.Workloads[1] = evicted(c.Workloads[1], "PodsReadyTimeout")
			},
			want: onlyA(admission.WaitForPodsReady),
		},
		{
			name: "a Workload requeued after an admission check evicted it",
			edit: func(c *admission.Cluster, _ *at.ClusterQueueWrapper) {
				c.Workloads[1] = evicted(c.Workloads[1], "AdmissionCheck")
			},
			want: onlyA(admission.AdmissionChecks),
		},
		{
			name: "admissionScope UsageBasedAdmissionFairSharing, the configuration not read",
			edit: func(_ *admission.Cluster, a *at.ClusterQueueWrapper) { a.AdmissionScope(kueue.AdmissionModeUsageBased) },
			want: onlyA(admission.ManagerConfiguration),
		},
		{
			name: "admissionScope UsageBasedAdmissionFairSharing, admission fair sharing off",
			edit: func(c *admission.Cluster, a *at.ClusterQueueWrapper) {
				a.AdmissionScope(kueue.AdmissionModeUsageBased)
				*c = c.WithManager(admission.ManagerConfig{Known: true})
			},
			want: admittedAll,
		},
		{
			name: "admissionScope UsageBasedAdmissionFairSharing, admission fair sharing on",
			edit: func(c *admission.Cluster, a *at.ClusterQueueWrapper) {
				a.AdmissionScope(kueue.AdmissionModeUsageBased)
				*c = c.WithManager(admission.ManagerConfig{Known: true, AdmissionFairSharing: true})
			},
			want: onlyA(admission.ManagerConfiguration),
		},
		{
			name: "resource transformations",
			edit: known(func(m *admission.ManagerConfig) { m.ResourceTransformations = []string{"nvidia.com/mig-4g.5gb"} }),
			want: allUndetermined(admission.ManagerConfiguration),
		},
		{
			name: "a feature gate that changes decisions, given on the command line",
			edit: func(c *admission.Cluster, _ *at.ClusterQueueWrapper) {
				c.Manager = c.Manager.WithFeatureGates(map[string]bool{"PriorityBoost": true})
			},
			want: allUndetermined(admission.ManagerConfiguration),
		},
		{
			name: "a feature gate that changes no decision",
			edit: known(func(m *admission.ManagerConfig) { m.FeatureGates = map[string]bool{"VisibilityOnDemand": false} }),
			want: admittedAll,
		},
		{
			name: "Kueue v0.16 with fair sharing: the queues in a cohort",
			edit: func(c *admission.Cluster, _ *at.ClusterQueueWrapper) { c.ManagerMinor, c.FairSharing = 16, true },
			want: cohortUndetermined(admission.KueueRelease),
		},
		{
			name: "Kueue v0.17 with fair sharing",
			edit: func(c *admission.Cluster, _ *at.ClusterQueueWrapper) { c.ManagerMinor, c.FairSharing = 17, true },
			want: admittedAll,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := assumptionsCluster(tt.edit)
			o := admission.Simulate(c)
			got := summary(o)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
			for _, team := range o.Teams {
				for _, u := range team.Undetermined {
					if u.Detail == "" || !slices.Contains(admission.UndeterminedReasons, u.Reason) {
						t.Errorf("%s: reason %s, detail %q: want a documented reason and a detail", u.Workload, u.Reason, u.Detail)
					}
				}
			}
		})
	}
}

// evicted is a pending Workload whose Evicted condition is true with reason.
func evicted(w kueue.Workload, reason string) kueue.Workload {
	w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue,
		Reason: reason, LastTransitionTime: metav1.NewTime(at.Epoch)})
	return w
}

// A stopped LocalQueue holds its pending Workloads (Hold) and evicts its admitted ones too
// (HoldAndDrain), as Kueue does; the other LocalQueues of the same ClusterQueue go on.
func TestLocalQueueStopPolicy(t *testing.T) {
	for _, tt := range []struct {
		policy string
		want   []string
	}{
		{kueue.StopPolicyHold, []string{"a admitted ns-a2/w2 on p4"}},
		{"HoldAndDrain", []string{"a admitted ns-a2/w2 on p4", "a evicted ns-a/r: LocalQueueStopped"}},
		{kueue.StopPolicyNone, []string{"a admitted ns-a/w on p4", "a admitted ns-a2/w2 on p4"}},
	} {
		t.Run(tt.policy, func(t *testing.T) {
			c := cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "8", "0")).Obj()},
				running("r", "a", "p4", "2", 0, time.Minute), pending("w", "a", "2", 0, 0),
				at.MakeWorkload("w2", "ns-a2").Queue("lq").Request(gpu, "2").Obj())
			p := tt.policy
			c.LocalQueues[0].Spec.StopPolicy = &p
			c.LocalQueues = append(c.LocalQueues, at.MakeLocalQueue("lq", "ns-a2", "a"))
			if got := summary(admission.Simulate(c)); !slices.Equal(got, tt.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

func TestParseRelease(t *testing.T) {
	for _, tt := range []struct {
		tag     string
		minor   int
		version admission.Version
		text    string
	}{
		{"v0.15.0", 15, admission.V0_15, "v0.15"},
		{"v0.16.3", 16, admission.V0_19, "v0.16 (modelled as v0.19)"},
		{"0.17.0", 17, admission.V0_19, "v0.17 (modelled as v0.19)"},
		{"v0.18.6", 18, admission.V0_19, "v0.18 (modelled as v0.19)"},
		{"v0.19.2", 19, admission.V0_19, "v0.19"},
	} {
		r, err := admission.ParseRelease(tt.tag)
		if err != nil || r.Minor != tt.minor || r.Version != tt.version || r.String() != tt.text {
			t.Errorf("ParseRelease(%q) = %+v (%s), %v; want minor %d, %v, %q", tt.tag, r, r, err, tt.minor, tt.version, tt.text)
		}
	}
	for tag, minor := range map[string]int{"v0.16.1": 16, "v0.19.2": 0, "v0.15.0": 0} {
		r, _ := admission.ParseRelease(tag)
		if c := (admission.Cluster{ManagerMinor: 17}).WithRelease(r); c.Version != r.Version || c.ManagerMinor != minor {
			t.Errorf("WithRelease(%s): Version %v, ManagerMinor %d; want %v, %d", tag, c.Version, c.ManagerMinor, r.Version, minor)
		}
	}
	for _, tag := range []string{"v0.14.2", "v0.20.0", "v0.x", "main"} {
		if r, err := admission.ParseRelease(tag); err == nil {
			t.Errorf("ParseRelease(%q) = %+v, want an error", tag, r)
		}
	}
}
