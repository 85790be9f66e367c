package admission_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// differentialSeeds are the seeds a run tries: HYPERPOD_DIFFERENTIAL_SEEDS, a count N (seeds
// 1 to N) or a range "A-B", else a sample sized for make test on the running Kueue (the older
// one runs slower here, so it gets fewer).
func differentialSeeds(t *testing.T, version admission.Version) []uint64 {
	first, last := uint64(1), uint64(8)
	if version == admission.V0_15 {
		last = 3
	}
	if v := os.Getenv(envDifferentialSeeds); v != "" {
		a, b, isRange := strings.Cut(v, "-")
		var err1, err2 error
		first, err1 = strconv.ParseUint(a, 10, 64)
		last = first
		if isRange {
			last, err2 = strconv.ParseUint(b, 10, 64)
		} else {
			first = 1
		}
		if err1 != nil || err2 != nil || first < 1 || last < first {
			t.Fatalf("%s=%q: want a number of seeds (N, for seeds 1 to N) or a range of seeds (A-B, 1 <= A <= B)", envDifferentialSeeds, v)
		}
	}
	var seeds []uint64
	for s := first; s <= last; s++ {
		seeds = append(seeds, s)
	}
	return seeds
}

// envDifferentialSeeds picks the seeds of the differential test (make test-all sets many).
const envDifferentialSeeds = "HYPERPOD_DIFFERENTIAL_SEEDS"

// runningKueue is the Kueue release of the control plane the tests run against: the release
// of its assets (scripts/test.sh starts each phase's cluster from the assets it names in
// HYPERPOD_CONTROLPLANE_DIR), else HYPERPOD_KUEUE_VERSION's.
func runningKueue(t *testing.T) (string, admission.Version) {
	release := localcluster.KueueVersionFromEnv()
	if dir, err := localcluster.AssetsDirFromEnv(); err == nil {
		if v := localcluster.KueueVersionOf(dir); v != "" {
			release = v
		}
	}
	version, err := admission.ParseVersion(release)
	if err != nil {
		t.Fatal(err)
	}
	return release, version
}

// tally counts the predictions of a run: one per workload of each seed (its fate after the
// change), and one per flavor-resource a ClusterQueue ends up using over its nominal quota.
type tally struct {
	seeds, workloads           int
	right, wrong, undetermined int
	failing                    []uint64
}

func (ty *tally) String() string {
	return fmt.Sprintf("%d seeds, %d workloads; predictions (each workload's fate, each flavor-resource over nominal quota): "+
		"%d right, %d wrong, %d undetermined; failing seeds: %v", ty.seeds, ty.workloads, ty.right, ty.wrong, ty.undetermined, ty.failing)
}

func TestAccAdmissionPreview_differential(t *testing.T) {
	acctest.RequireKueue(t)
	env := acctest.Current()
	k := kueueCluster{cs: env.Clientset, dyn: env.Dynamic}
	release, version := runningKueue(t)
	ctx := context.Background()
	common, err := k.ensureCommon(ctx)
	t.Cleanup(func() {
		if err := common(context.Background()); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	var ty tally
	started := time.Now()
	for _, seed := range differentialSeeds(t, version) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			sc := generate(seed)
			t.Logf("scenario:\n%s", sc)
			if err := k.cleanup(ctx, sc); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := k.cleanup(context.Background(), sc); err != nil {
					t.Error(err)
				}
			})
			runScenario(t, k, sc, version, &ty)
			if t.Failed() {
				ty.failing = append(ty.failing, seed)
			}
		})
	}
	t.Logf("Kueue %s (modelled as %s), %s: %s", release, version, time.Since(started).Round(time.Second), &ty)
}

// runScenario creates a scenario, lets Kueue settle, predicts the change's effect from the
// live state, applies the change, lets Kueue settle again and compares.
func runScenario(t *testing.T, k kueueCluster, sc scenario, version admission.Version, ty *tally) {
	ctx := context.Background()
	if err := k.create(ctx, sc); err != nil {
		t.Fatal(err)
	}
	if err := k.submit(ctx, sc.jobs); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	before, rounds, err := k.settle(ctx, sc.queues())
	if err != nil {
		t.Fatalf("%v\nscenario:\n%s", err, sc)
	}
	t.Logf("settled before the change in %d rounds, %s", rounds, time.Since(start).Round(time.Millisecond))
	live, err := k.liveCluster(ctx, sc, before, version)
	if err != nil {
		t.Fatal(err)
	}
	planned, err := k.plannedQueues(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	outcome := admission.Preview(live, planned)
	t.Logf("predicted:\n%s", outcome)
	if err := k.applyChange(ctx, sc, planned); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	after, rounds, err := k.settle(ctx, sc.queues())
	if err != nil {
		t.Fatalf("%v\nscenario:\n%s", err, sc)
	}
	t.Logf("settled after the change in %d rounds, %s", rounds, time.Since(start).Round(time.Millisecond))
	ty.seeds++
	diffs := compare(outcome, before, after, planned, live.ClusterQueues, live.WorkloadPriorityClasses, ty)
	if len(diffs) > 0 {
		t.Errorf("the preview's prediction differs from what Kueue did (seed %d, %s):\n  %s\n\nKueue before the change:\n%s\nKueue after the change:\n%s",
			sc.seed, sc.change.what, strings.Join(diffs, "\n  "), formatDecisions(before), formatDecisions(after))
	}
}

// liveCluster reads the scenario's Kueue objects, as the plan would list them, into the
// simulator's input; work are the Workloads as the settle read them.
func (k kueueCluster) liveCluster(ctx context.Context, sc scenario, work map[string]observedWorkload, version admission.Version) (admission.Cluster, error) {
	// The local control plane's Kueue runs with fair sharing on (localcluster's manager
	// configuration).
	c := admission.Cluster{Version: version, FairSharing: true}
	get := func(gvr schema.GroupVersionResource, namespace, name string, into any) error {
		u, err := k.dyn.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading %s %s: %w", gvr.Resource, name, err)
		}
		return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
	}
	c.NamespaceLabels = map[string]map[string]string{}
	for _, cfg := range sc.teams {
		var cq kueue.ClusterQueue
		if err := get(kueue.ClusterQueues, "", quota.ClusterQueueName(cfg.Team), &cq); err != nil {
			return c, err
		}
		c.ClusterQueues = append(c.ClusterQueues, cq)
		for _, ns := range []string{quota.NamespaceName(cfg.Team), outsideNamespace(cfg.Team)} {
			var lq kueue.LocalQueue
			if err := get(kueue.LocalQueues, ns, quota.LocalQueueName(cfg.Team), &lq); err != nil {
				return c, err
			}
			c.LocalQueues = append(c.LocalQueues, lq)
			n, err := k.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if err != nil {
				return c, fmt.Errorf("reading namespace %s: %w", ns, err)
			}
			c.NamespaceLabels[ns] = n.Labels
		}
	}
	for _, it := range []string{bigGPU, smallGPU} {
		var rf kueue.ResourceFlavor
		if err := get(kueue.ResourceFlavors, "", it, &rf); err != nil {
			return c, err
		}
		c.ResourceFlavors = append(c.ResourceFlavors, rf)
	}
	for _, class := range sc.classes {
		var wpc kueue.WorkloadPriorityClass
		if err := get(kueue.WorkloadPriorityClasses, "", quota.PriorityClassObjectName(class.Name), &wpc); err != nil {
			return c, err
		}
		c.WorkloadPriorityClasses = append(c.WorkloadPriorityClasses, wpc)
	}
	for _, key := range slices.Sorted(maps.Keys(work)) {
		c.Workloads = append(c.Workloads, work[key].Workload)
	}
	return c, nil
}

// plannedQueues are the ClusterQueues after the change as the provider renders them, and a
// deleted team's live queue marked as being deleted.
func (k kueueCluster) plannedQueues(ctx context.Context, sc scenario) ([]kueue.ClusterQueue, error) {
	planned, err := renderQueues(sc.change.after)
	if err != nil {
		return nil, err
	}
	for i, cfg := range sc.change.after {
		if cfg != nil {
			continue
		}
		u, err := k.dyn.Resource(kueue.ClusterQueues).Get(ctx, quota.ClusterQueueName(sc.teams[i].Team), metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		var cq kueue.ClusterQueue
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cq); err != nil {
			return nil, err
		}
		cq.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		planned = append(planned, cq)
	}
	return planned, nil
}

// fate is what happened to one workload with the change, in words: "unchanged", "admitted on
// <flavors>", "preempted by <namespace/name> (<reason>)" with ", readmitted on <flavors>"
// when it is admitted again, or "evicted (<reason>)" for an eviction by a stop policy.
func predictedFates(o admission.Outcome) (fates map[string]string, undetermined map[string]string) {
	fates, undetermined = map[string]string{}, map[string]string{}
	flavors := func(ps []admission.PodSetFlavors) string {
		var out []string
		for _, p := range ps {
			for _, f := range p.Flavors {
				out = append(out, f.Flavor)
			}
		}
		slices.Sort(out)
		return strings.Join(slices.Compact(out), ",")
	}
	for _, team := range o.Teams {
		for _, a := range team.Admitted {
			fates[a.Workload.String()] = "admitted on " + flavors(a.PodSets)
		}
		for _, p := range team.Preempted {
			f := fmt.Sprintf("evicted (%s)", p.Reason)
			if p.ByClusterQueue != "" {
				f = fmt.Sprintf("preempted by %s (%s)", p.By, p.Reason)
			}
			if p.Readmitted != nil {
				f += ", readmitted on " + flavors(p.Readmitted)
			}
			fates[p.Workload.String()] = f
		}
		for _, u := range team.Undetermined {
			undetermined[u.Workload.String()] = string(u.Reason)
		}
	}
	return fates, undetermined
}

// observedFates are the fates of the workloads by what Kueue recorded before and after.
func observedFates(before, after map[string]observedWorkload) map[string]string {
	byUID := map[types.UID]string{}
	for key, o := range after {
		byUID[o.UID] = key
	}
	fates := map[string]string{}
	for key, o := range after {
		was := before[key]
		switch {
		case o.Preemptions > was.Preemptions:
			by, ok := byUID[o.PreemptedBy()]
			if !ok {
				by = fmt.Sprintf("an unknown workload (UID %s)", o.PreemptedBy())
			}
			f := fmt.Sprintf("preempted by %s (%s)", by, o.PreemptedReason)
			if o.Admitted {
				f += ", readmitted on " + strings.Join(o.Flavors, ",")
			}
			fates[key] = f
		case was.Admitted && !o.Admitted:
			fates[key] = fmt.Sprintf("evicted (%s)", o.EvictedReason)
		case o.Admitted && !was.Admitted:
			fates[key] = "admitted on " + strings.Join(o.Flavors, ",")
		}
	}
	return fates
}

// compare checks the outcome against what Kueue did, counts the predictions in ty and returns
// the differences, one a line.
func compare(o admission.Outcome, before, after map[string]observedWorkload, planned, live []kueue.ClusterQueue,
	classes []kueue.WorkloadPriorityClass, ty *tally) []string {
	predicted, undetermined := predictedFates(o)
	observed := observedFates(before, after)
	var diffs []string
	for _, key := range slices.Sorted(maps.Keys(after)) {
		ty.workloads++
		if reason, ok := undetermined[key]; ok {
			if why := undeterminedWrongly(admission.UndeterminedReason(reason), after[key], classes); why != "" {
				ty.wrong++
				diffs = append(diffs, fmt.Sprintf("%s: undetermined for %s, but %s (Kueue: %s)", key, reason, why,
					cmp.Or(observed[key], "unchanged")))
				continue
			}
			ty.undetermined++
			continue
		}
		want, got := cmp.Or(predicted[key], "unchanged"), cmp.Or(observed[key], "unchanged")
		if want == got {
			ty.right++
			continue
		}
		ty.wrong++
		diffs = append(diffs, fmt.Sprintf("%s: predicted %s, Kueue: %s", key, want, got))
	}
	for _, key := range slices.Sorted(maps.Keys(predicted)) {
		if _, ok := after[key]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: predicted %s, but there is no such workload", key, predicted[key]))
		}
	}
	return append(diffs, compareOverNominal(o, after, planned, live, ty)...)
}

// undeterminedWrongly says why a reason for "cannot determine" does not hold for a workload,
// "" when it holds: the reason must be one the simulator documents, and true of the workload
// as Kueue made it (NoFixpoint, about the simulation itself, is taken as given).
func undeterminedWrongly(reason admission.UndeterminedReason, o observedWorkload, classes []kueue.WorkloadPriorityClass) string {
	if !slices.Contains(admission.UndeterminedReasons, reason) {
		return "it is not a reason the simulator documents"
	}
	w := o.Workload
	holds := false
	for _, ps := range w.Spec.PodSets {
		switch reason {
		case admission.TopologyAwareScheduling:
			holds = holds || ps.TopologyRequest.Requested()
		case admission.PartialAdmission:
			holds = holds || (ps.MinCount != nil && *ps.MinCount < ps.Count)
		case admission.NodeAffinity:
			if a := ps.Template.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
				holds = true
			}
		}
	}
	switch reason {
	case admission.AdmissionChecks:
		holds = len(w.Status.AdmissionChecks) > 0
	case admission.UnknownPriorityClass:
		holds = w.Spec.PriorityClassRef != nil && !slices.ContainsFunc(classes, func(c kueue.WorkloadPriorityClass) bool {
			return c.Name == w.Spec.PriorityClassRef.Name
		})
	case admission.NoFixpoint:
		holds = true
	case admission.WaitForPodsReady:
		holds = o.Evicted && o.EvictedReason == "PodsReadyTimeout"
	}
	if holds {
		return ""
	}
	if why, ok := unusedSettings[reason]; ok {
		return why
	}
	return map[admission.UndeterminedReason]string{
		admission.TopologyAwareScheduling: "no pod set's topologyRequest asks for a required, preferred or unconstrained topology",
		admission.PartialAdmission:        "no pod set has a minCount below its count",
		admission.NodeAffinity:            "no pod set has a required node affinity",
		admission.AdmissionChecks:         "the workload has no admission checks",
		admission.UnknownPriorityClass:    "its priority class is listed",
		admission.WaitForPodsReady:        "it was not evicted for pods not ready in time",
	}[reason]
}

// unusedSettings are the reasons about settings that no scenario has (the queues are the
// provider's, the local manager's configuration is fixed, the namespaces' labels are read),
// with why they do not hold.
var unusedSettings = map[admission.UndeterminedReason]string{
	admission.QueueingStrategy:     "the scenario's queues are BestEffortFIFO",
	admission.FlavorFungibility:    "the scenario's queues have the default flavorFungibility",
	admission.HierarchicalCohort:   "the scenario has no Cohort objects",
	admission.CohortQuota:          "the scenario has no Cohort objects",
	admission.NamespaceSelector:    "the namespaces' labels were read",
	admission.PreemptionStrategies: "the local manager runs the default preemption strategies",
	admission.ManagerConfiguration: "the local manager's configuration has no such setting",
	admission.KueueRelease:         "the local manager runs a modelled release",
}

// compareOverNominal checks the predicted flavor-resources over nominal quota against the
// usage of the workloads Kueue admitted.
func compareOverNominal(o admission.Outcome, after map[string]observedWorkload, planned, live []kueue.ClusterQueue, ty *tally) []string {
	nominal := map[string]int64{}
	for _, cqs := range [][]kueue.ClusterQueue{live, planned} { // planned last: it wins
		for _, cq := range cqs {
			for _, rg := range cq.Spec.ResourceGroups {
				for _, f := range rg.Flavors {
					for _, r := range f.Resources {
						nominal[cq.Name+" "+f.Name+" "+string(r.Name)] = kueueAmount(string(r.Name), r.NominalQuota)
					}
				}
			}
		}
	}
	used := map[string]int64{}
	for _, w := range after {
		if !w.Admitted {
			continue
		}
		a := w.Workload.Status.Admission
		if a == nil {
			continue
		}
		for _, ps := range a.PodSetAssignments {
			for res, q := range ps.ResourceUsage {
				used[a.ClusterQueue+" "+ps.Flavors[res]+" "+string(res)] += kueueAmount(string(res), q)
			}
		}
	}
	observed := map[string]string{}
	for key, u := range used {
		if u > nominal[key] {
			observed[key] = fmt.Sprintf("uses %d of %d", u, nominal[key])
		}
	}
	predicted := map[string]string{}
	for _, team := range o.Teams {
		for _, n := range team.OverNominal {
			predicted[team.ClusterQueue+" "+n.Flavor+" "+n.Resource] = fmt.Sprintf("uses %d of %d", n.Used, n.Nominal)
		}
	}
	var diffs []string
	for _, key := range slices.Sorted(maps.Keys(maps.Collect(func(yield func(string, bool) bool) {
		for k := range predicted {
			yield(k, true)
		}
		for k := range observed {
			yield(k, true)
		}
	}))) {
		want, got := cmp.Or(predicted[key], "within nominal quota"), cmp.Or(observed[key], "within nominal quota")
		if want == got {
			ty.right++
			continue
		}
		ty.wrong++
		diffs = append(diffs, fmt.Sprintf("%s: predicted %s, Kueue's admitted workloads: %s", key, want, got))
	}
	return diffs
}

// kueueAmount is a quantity in the units Kueue counts: millicores for cpu, else the value.
func kueueAmount(resource string, q k8sresource.Quantity) int64 {
	if resource == string(corev1.ResourceCPU) {
		return q.MilliValue()
	}
	return q.Value()
}

// formatDecisions lists decisions by namespace/name, one a line.
func formatDecisions(ws map[string]observedWorkload) string {
	var b strings.Builder
	for _, key := range slices.Sorted(maps.Keys(ws)) {
		fmt.Fprintf(&b, "  %s: %s\n", ws[key].Namespace, ws[key])
	}
	return b.String()
}

// What Kueue did is read from the decisions before and after the change: a new preemption
// (with the preemptor named by the UID in Kueue's message, and a readmission), an admission,
// an eviction by other means, and nothing.
func TestObservedFates(t *testing.T) {
	w := func(uid string, admitted bool, flavors []string, preemptions int64, message string) observedWorkload {
		return observedWorkload{UID: types.UID(uid), Admitted: admitted, Flavors: flavors, Preemptions: preemptions,
			PreemptedReason: "InCohortReclamation", PreemptedMessage: message, EvictedReason: "ClusterQueueStopped"}
	}
	byP := "Preempted to accommodate a workload (UID: p, JobUID: j) due to reclamation within the cohort"
	before := map[string]observedWorkload{
		"ns/preempted":   w("1", true, []string{"f"}, 0, ""),
		"ns/readmitted":  w("2", true, []string{"f"}, 1, byP),
		"ns/admitted":    w("3", false, nil, 1, byP),
		"ns/evicted":     w("4", true, []string{"f"}, 0, ""),
		"ns/pending":     w("5", false, nil, 0, ""),
		"ns/running":     w("6", true, []string{"f"}, 0, ""),
		"ns/preemptor":   w("p", false, nil, 0, ""),
		"ns/by-stranger": w("7", true, []string{"f"}, 0, ""),
	}
	after := map[string]observedWorkload{
		"ns/preempted":   w("1", false, nil, 1, byP),
		"ns/readmitted":  w("2", true, []string{"g"}, 2, byP),
		"ns/admitted":    w("3", true, []string{"f"}, 1, byP),
		"ns/evicted":     w("4", false, nil, 0, ""),
		"ns/pending":     w("5", false, nil, 0, ""),
		"ns/running":     w("6", true, []string{"f"}, 0, ""),
		"ns/preemptor":   w("p", true, []string{"f"}, 0, ""),
		"ns/by-stranger": w("7", false, nil, 1, "Preempted to accommodate a workload (UID: x, JobUID: y) due to ..."),
		"ns/new":         w("8", true, []string{"f"}, 0, ""),
	}
	want := map[string]string{
		"ns/preempted":   "preempted by ns/preemptor (InCohortReclamation)",
		"ns/readmitted":  "preempted by ns/preemptor (InCohortReclamation), readmitted on g",
		"ns/admitted":    "admitted on f",
		"ns/evicted":     "evicted (ClusterQueueStopped)",
		"ns/preemptor":   "admitted on f",
		"ns/by-stranger": "preempted by an unknown workload (UID x) (InCohortReclamation)",
		"ns/new":         "admitted on f",
	}
	got := observedFates(before, after)
	for _, key := range slices.Sorted(maps.Keys(after)) {
		if got[key] != want[key] {
			t.Errorf("%s: got %q, want %q", key, got[key], want[key])
		}
	}
}

// A prediction that differs from what Kueue did is a difference, counted wrong; a right one
// is counted right; "cannot determine" counts only for a reason that holds for the workload.
func TestCompare(t *testing.T) {
	const cq = "q"
	ref := func(name string) admission.WorkloadRef { return admission.WorkloadRef{Namespace: "ns", Name: name} }
	onF := []admission.PodSetFlavors{{Name: "main", Count: 1, Flavors: []admission.ResourceFlavor{{Resource: "nvidia.com/gpu", Flavor: "f"}}}}
	pending := observedWorkload{UID: "1"}
	admitted := observedWorkload{UID: "1", Admitted: true, Flavors: []string{"f"}}
	for name, tc := range map[string]struct {
		outcome       admission.Outcome
		after         observedWorkload
		right, wrong  int
		undetermined  int
		wantDifferent bool
	}{
		"admission predicted and made": {
			outcome: admission.Outcome{Teams: []admission.TeamOutcome{{ClusterQueue: cq, Admitted: []admission.Admitted{{Workload: ref("w"), PodSets: onF}}}}},
			after:   admitted, right: 1,
		},
		"admission predicted, not made": {
			outcome: admission.Outcome{Teams: []admission.TeamOutcome{{ClusterQueue: cq, Admitted: []admission.Admitted{{Workload: ref("w"), PodSets: onF}}}}},
			after:   pending, wrong: 1, wantDifferent: true,
		},
		"admission made, not predicted": {
			after: admitted, wrong: 1, wantDifferent: true,
		},
		"undetermined for a reason the workload does not have": {
			outcome: admission.Outcome{Teams: []admission.TeamOutcome{{ClusterQueue: cq, Undetermined: []admission.Undetermined{{Workload: ref("w"), Reason: admission.PartialAdmission}}}}},
			after:   pending, wrong: 1, wantDifferent: true,
		},
		"undetermined for a reason that holds": {
			outcome: admission.Outcome{Teams: []admission.TeamOutcome{{ClusterQueue: cq, Undetermined: []admission.Undetermined{{Workload: ref("w"), Reason: admission.NoFixpoint}}}}},
			after:   admitted, undetermined: 1,
		},
	} {
		t.Run(name, func(t *testing.T) {
			var ty tally
			diffs := compare(tc.outcome, map[string]observedWorkload{"ns/w": pending}, map[string]observedWorkload{"ns/w": tc.after}, nil, nil, nil, &ty)
			if (len(diffs) > 0) != tc.wantDifferent || ty.right != tc.right || ty.wrong != tc.wrong || ty.undetermined != tc.undetermined {
				t.Errorf("differences %q, tally %s; want different %t, %d right, %d wrong, %d undetermined",
					diffs, &ty, tc.wantDifferent, tc.right, tc.wrong, tc.undetermined)
			}
		})
	}
}
