package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/faultproxy"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// The fault run: twenty teams applied, updated and destroyed through a proxy that
// answers 30 % of the idempotent requests with 429, 500, 503, 504 or a reset (before or after
// the server handled the request) and resets 10 % of the other requests (creates, deletes),
// half of them after the server handled them. With the default retry settings every step must
// succeed on the first try, the cluster must equal the state afterwards, and nothing may be
// duplicated or left behind.

const (
	frTeams = 20
	// frPrefix is fixed, not random: team names are in the request paths, and the proxy's
	// decisions are a function of the seed and the paths, so a fixed prefix keeps the run
	// reproducible with its seed.
	frPrefix = "faultrun"
	// frSeed was chosen so that the run injects every fault kind it asserts below.
	frSeed = 20251010
)

// frTypes are the three instance types of every team's quota: GPU, Trainium and CPU only.
var frTypes = []string{"ml.g5.12xlarge", "ml.trn1.32xlarge", "ml.m5.2xlarge"}

func frTeam(i int) string { return fmt.Sprintf("%s-%d", frPrefix, i) }

// frConfig is the configuration of step 1 (update false) or 2 (update true). The update changes
// every quota's numbers and description, and every namespace's labels and annotations.
func frConfig(kubeconfig string, update bool) string {
	step, g5, trn, mem, note := 1, "count = 1", "accelerators = 2 + count.index % 3", "memory_in_gib = 8 + count.index", `"example.com/note" = "applied"`
	if update {
		step, g5, trn, mem, note = 2, "count = 2", "accelerators = 8 + count.index % 3", "memory_in_gib = 12.5 + count.index",
			`"example.com/note" = "updated"
    "example.com/extra" = "team-${count.index}"`
	}
	return fmt.Sprintf(`
provider "hyperpod" {
  config_path = %[1]q
}

resource "hyperpod_team_namespace" "team" {
  count = %[2]d
  team  = "%[3]s-${count.index}"
  labels = {
    "example.com/step"  = "%[4]d"
    "example.com/index" = "${count.index}"
  }
  annotations = {
    %[5]s
  }
}

resource "hyperpod_compute_quota" "team" {
  count       = %[2]d
  name        = "fault-run-${count.index}"
  description = "Fault run, step %[4]d."
  team        = hyperpod_team_namespace.team[count.index].team
  resources = [
    { instance_type = %[6]q, %[7]s },
    { instance_type = %[8]q, %[9]s },
    { instance_type = %[10]q, %[11]s },
  ]
}
`, kubeconfig, frTeams, frPrefix, step, note, frTypes[0], g5, frTypes[1], trn, frTypes[2], mem)
}

// frFlat reads the map attribute name out of flatmapped state attributes.
func frFlat(attrs map[string]string, name string) map[string]string {
	out := map[string]string{}
	for k, v := range attrs {
		if key, ok := strings.CutPrefix(k, name+"."); ok && key != "%" {
			out[key] = v
		}
	}
	return out
}

func frGetClusterQueue(ctx context.Context, name string) (*kueue.ClusterQueue, error) {
	u, err := acc.dynamic.Resource(kueue.ClusterQueues).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	var cq kueue.ClusterQueue
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cq); err != nil {
		return nil, err
	}
	return &cq, nil
}

// frCheckTeam compares one team's objects, read directly from the cluster, with the state.
func frCheckTeam(ctx context.Context, s *terraform.State, i int) error {
	team := frTeam(i)
	nsRS, ok := s.RootModule().Resources[fmt.Sprintf("hyperpod_team_namespace.team.%d", i)]
	if !ok {
		return fmt.Errorf("team namespace %d not in state", i)
	}
	qRS, ok := s.RootModule().Resources[fmt.Sprintf("hyperpod_compute_quota.team.%d", i)]
	if !ok {
		return fmt.Errorf("quota %d not in state", i)
	}
	na, qa := nsRS.Primary.Attributes, qRS.Primary.Attributes
	if na["team"] != team || qa["team"] != team {
		return fmt.Errorf("state teams %q and %q, want %q", na["team"], qa["team"], team)
	}

	// Namespace: exactly the state's labels and annotations plus the provider's own (and the
	// name label the API server sets); nobody else writes these namespaces.
	nsName, owner := quota.NamespaceName(team), na["owner_id"]
	if na["namespace"] != nsName || owner == "" {
		return fmt.Errorf("team %s: state namespace %q, owner_id %q", team, na["namespace"], owner)
	}
	ns, err := acc.clientset.CoreV1().Namespaces().Get(ctx, nsName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("namespace %s: %w", nsName, err)
	}
	wantLabels := frFlat(na, "labels")
	maps.Copy(wantLabels, quota.NamespaceLabels(team))
	wantLabels[corev1.LabelMetadataName] = nsName
	wantAnn := frFlat(na, "annotations")
	wantAnn[quota.AnnotationOwner] = owner
	switch {
	case ns.DeletionTimestamp != nil:
		return fmt.Errorf("namespace %s is being deleted", nsName)
	case !maps.Equal(ns.Labels, wantLabels):
		return fmt.Errorf("namespace %s labels %v, state says %v", nsName, ns.Labels, wantLabels)
	case !maps.Equal(ns.Annotations, wantAnn):
		return fmt.Errorf("namespace %s annotations %v, state says %v", nsName, ns.Annotations, wantAnn)
	}

	// LocalQueue: the state's name, feeding the state's ClusterQueue, with the state's owner.
	lqName := quota.LocalQueueName(team)
	if na["local_queue_name"] != lqName || na["cluster_queue_name"] != quota.ClusterQueueName(team) {
		return fmt.Errorf("team %s: state local_queue_name %q, cluster_queue_name %q", team, na["local_queue_name"], na["cluster_queue_name"])
	}
	lq, err := tnsGetLocalQueue(nsName, lqName)
	switch {
	case err != nil:
		return fmt.Errorf("LocalQueue %s/%s: %w", nsName, lqName, err)
	case lq == nil:
		return fmt.Errorf("LocalQueue %s/%s is missing", nsName, lqName)
	case lq.Spec.ClusterQueue != na["cluster_queue_name"]:
		return fmt.Errorf("LocalQueue %s feeds %q, state says %q", lqName, lq.Spec.ClusterQueue, na["cluster_queue_name"])
	case lq.Annotations[quota.AnnotationOwner] != owner:
		return fmt.Errorf("LocalQueue %s owner %q, state says %q", lqName, lq.Annotations[quota.AnnotationOwner], owner)
	case lq.Labels[quota.LabelManagedBy] != quota.ManagedByValue || lq.DeletionTimestamp != nil:
		return fmt.Errorf("LocalQueue %s labels %v, deleted %v", lqName, lq.Labels, lq.DeletionTimestamp)
	}

	// ClusterQueue: metadata and the nominal quota of every flavor and resource as in state.
	cqName := qa["cluster_queue_name"]
	if cqName != quota.ClusterQueueName(team) || qa["owner_id"] == "" {
		return fmt.Errorf("quota %s: state cluster_queue_name %q, owner_id %q", team, cqName, qa["owner_id"])
	}
	cq, err := frGetClusterQueue(ctx, cqName)
	if err != nil {
		return fmt.Errorf("ClusterQueue %s: %w", cqName, err)
	}
	switch {
	case cq.DeletionTimestamp != nil:
		return fmt.Errorf("ClusterQueue %s is being deleted", cqName)
	case cq.Annotations[quota.AnnotationOwner] != qa["owner_id"]:
		return fmt.Errorf("ClusterQueue %s owner %q, state says %q", cqName, cq.Annotations[quota.AnnotationOwner], qa["owner_id"])
	case cq.Annotations[quota.AnnotationName] != qa["name"] || cq.Annotations[quota.AnnotationDescription] != qa["description"]:
		return fmt.Errorf("ClusterQueue %s name %q description %q, state says %q and %q", cqName,
			cq.Annotations[quota.AnnotationName], cq.Annotations[quota.AnnotationDescription], qa["name"], qa["description"])
	case cq.Labels[quota.LabelManagedBy] != quota.ManagedByValue || cq.Labels[quota.LabelQuotaAllocationID] != team:
		return fmt.Errorf("ClusterQueue %s labels %v", cqName, cq.Labels)
	case len(cq.Spec.ResourceGroups) != 1:
		return fmt.Errorf("ClusterQueue %s has %d resource groups, want 1", cqName, len(cq.Spec.ResourceGroups))
	}
	flavors := cq.Spec.ResourceGroups[0].Flavors
	if n, _ := strconv.Atoi(qa["resources.#"]); n != len(frTypes) || len(flavors) != n {
		return fmt.Errorf("ClusterQueue %s has %d flavors, state %s resources, want %d", cqName, len(flavors), qa["resources.#"], len(frTypes))
	}
	for j, f := range flavors {
		at := func(attr string) string { return qa[fmt.Sprintf("resources.%d.%s", j, attr)] }
		it, ok := catalog.Builtin().Lookup(at("instance_type"))
		if !ok || string(f.Name) != it.Name {
			return fmt.Errorf("ClusterQueue %s flavor %d is %q, state says %q", cqName, j, f.Name, at("instance_type"))
		}
		want := map[string]string{
			quota.ResourceCPU:    at("vcpu"),
			quota.ResourceMemory: at("memory_in_gib") + "Gi",
			quota.ResourceEFA:    at("efa"),
		}
		if it.AcceleratorResource != "" {
			want[it.AcceleratorResource] = at("accelerators")
		}
		seen := map[string]bool{}
		for _, r := range f.Resources {
			name := string(r.Name)
			seen[name] = true
			w, ok := want[name]
			if !ok {
				w = "0" // covered, but not a resource of this type
			}
			q, err := k8sresource.ParseQuantity(w)
			if err != nil {
				return fmt.Errorf("ClusterQueue %s flavor %s %s: state value %q: %w", cqName, f.Name, name, w, err)
			}
			if r.NominalQuota.Cmp(q) != 0 {
				return fmt.Errorf("ClusterQueue %s flavor %s %s nominal %s, state says %s", cqName, f.Name, name, r.NominalQuota.String(), q.String())
			}
		}
		for name := range want {
			if !seen[name] {
				return fmt.Errorf("ClusterQueue %s flavor %s lacks %s", cqName, f.Name, name)
			}
		}
	}
	return nil
}

// frInventory is what exists in the cluster for this test's teams, read directly, whatever its
// labels: namespaces, LocalQueues (namespace/name) and ClusterQueues.
type frInventory struct {
	namespaces, localQueues, clusterQueues []string
	unlabelled                             []string
}

func frList(ctx context.Context) (frInventory, error) {
	var inv frInventory
	nsPrefix := quota.NamespaceName(frPrefix + "-")
	managed := func(kind, name string, labels map[string]string) {
		if labels[quota.LabelManagedBy] != quota.ManagedByValue {
			inv.unlabelled = append(inv.unlabelled, kind+" "+name)
		}
	}
	nss, err := acc.clientset.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return inv, err
	}
	for _, ns := range nss.Items {
		if strings.HasPrefix(ns.Name, nsPrefix) {
			inv.namespaces = append(inv.namespaces, ns.Name)
			managed("Namespace", ns.Name, ns.Labels)
		}
	}
	lqs, err := acc.dynamic.Resource(kueue.LocalQueues).List(ctx, metav1.ListOptions{})
	if err != nil {
		return inv, err
	}
	for _, lq := range lqs.Items {
		if strings.HasPrefix(lq.GetNamespace(), nsPrefix) {
			name := lq.GetNamespace() + "/" + lq.GetName()
			inv.localQueues = append(inv.localQueues, name)
			managed("LocalQueue", name, lq.GetLabels())
		}
	}
	cqs, err := acc.dynamic.Resource(kueue.ClusterQueues).List(ctx, metav1.ListOptions{})
	if err != nil {
		return inv, err
	}
	for _, cq := range cqs.Items {
		if strings.HasPrefix(cq.GetName(), nsPrefix) {
			inv.clusterQueues = append(inv.clusterQueues, cq.GetName())
			managed("ClusterQueue", cq.GetName(), cq.GetLabels())
		}
	}
	slices.Sort(inv.namespaces)
	slices.Sort(inv.localQueues)
	slices.Sort(inv.clusterQueues)
	return inv, nil
}

// frCheckCluster is the Check after each apply: every object equals the state, the test's
// objects are exactly the twenty teams' (no duplicate, no orphan, each carrying the provider's
// managed-by label), and the three flavors exist.
func frCheckCluster(s *terraform.State) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var errs []string
	for i := range frTeams {
		if err := frCheckTeam(ctx, s, i); err != nil {
			errs = append(errs, err.Error())
		}
	}
	inv, err := frList(ctx)
	if err != nil {
		return err
	}
	var wantNS, wantLQ, wantCQ []string
	for i := range frTeams {
		team := frTeam(i)
		wantNS = append(wantNS, quota.NamespaceName(team))
		wantLQ = append(wantLQ, quota.NamespaceName(team)+"/"+quota.LocalQueueName(team))
		wantCQ = append(wantCQ, quota.ClusterQueueName(team))
	}
	slices.Sort(wantNS)
	slices.Sort(wantLQ)
	slices.Sort(wantCQ)
	for _, c := range []struct {
		kind      string
		got, want []string
	}{{"namespaces", inv.namespaces, wantNS}, {"LocalQueues", inv.localQueues, wantLQ}, {"ClusterQueues", inv.clusterQueues, wantCQ}} {
		if !slices.Equal(c.got, c.want) {
			errs = append(errs, fmt.Sprintf("%s of the test's teams: %v, want exactly %v", c.kind, c.got, c.want))
		}
	}
	if len(inv.unlabelled) > 0 {
		errs = append(errs, fmt.Sprintf("without the label %s=%s: %v", quota.LabelManagedBy, quota.ManagedByValue, inv.unlabelled))
	}
	for _, it := range frTypes {
		u, err := acc.dynamic.Resource(kueue.ResourceFlavors).Get(ctx, it, metav1.GetOptions{})
		if err != nil {
			errs = append(errs, fmt.Sprintf("ResourceFlavor %s: %v", it, err))
			continue
		}
		var rf kueue.ResourceFlavor
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &rf); err != nil {
			return err
		}
		if rf.Spec.NodeLabels[quota.LabelInstanceType] != it || rf.DeletionTimestamp != nil {
			errs = append(errs, fmt.Sprintf("ResourceFlavor %s: node labels %v, deleted %v", it, rf.Spec.NodeLabels, rf.DeletionTimestamp))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("the cluster differs from the state:\n  %s", strings.Join(errs, "\n  "))
	}
	return nil
}

// frCheckDestroyed: nothing of the test's teams is left, whatever its labels.
func frCheckDestroyed(*terraform.State) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	inv, err := frList(ctx)
	if err != nil {
		return err
	}
	if n := len(inv.namespaces) + len(inv.localQueues) + len(inv.clusterQueues); n > 0 {
		return fmt.Errorf("left after destroy: namespaces %v, LocalQueues %v, ClusterQueues %v", inv.namespaces, inv.localQueues, inv.clusterQueues)
	}
	return nil
}

// TestAccFaultRun_twentyTeams applies, updates and destroys twenty teams through the fault
// proxy with the provider's default retry settings (no retry block). Every step must succeed on
// the first try (no ExpectError), each apply must leave the cluster equal to the state (checked
// directly, not through the proxy) with nothing duplicated or orphaned, plugin-testing's
// post-apply plans prove that the next plan is empty, and destroy must leave nothing.
//
// "A create whose response was lost ends in success, never AlreadyExists or a duplicate" is
// covered by the combination: the proxy must have reset at least one CREATE after the server
// handled it (asserted below), every step succeeded, and the inventory found exactly one object
// per team.
func TestAccFaultRun_twentyTeams(t *testing.T) {
	acctest.RequireKueue(t)
	for i := range frTeams {
		team := frTeam(i)
		cleanupQueue(t, team)
		tnsCleanupNamespace(t, quota.NamespaceName(team))
	}
	p, kubeconfig := acctest.FaultProxy(t, faultproxy.Config{
		Seed: frSeed,
		// 30 % of GET, LIST, PUT and apply PATCH: 5 % each of 429, 500, 503, 504, reset
		// before and reset after forwarding.
		Idempotent: faultproxy.Uniform(0.3),
		// 10 % of creates, deletes and other writes: connection resets, half of them after
		// the server handled the request.
		NonIdempotent: faultproxy.Rates{ResetBefore: 0.05, ResetAfter: 0.05},
	})

	// Wall time and proxy counters per step, taken at each step's PreConfig.
	type mark struct {
		at    time.Time
		stats faultproxy.Stats
	}
	var marks []mark
	markStep := func() { marks = append(marks, mark{time.Now(), p.Stats()}) }
	steps := []string{"apply", "update", "destroy"}
	defer func() {
		markStep()
		for i := 0; i+1 < len(marks) && i < len(steps); i++ {
			a, b := marks[i], marks[i+1]
			injected := 0
			for _, f := range faultproxy.Faults {
				if f != faultproxy.FaultLatency {
					injected += b.stats.Injected[f] - a.stats.Injected[f]
				}
			}
			t.Logf("step %d (%s): %s, %d requests, %d faults injected, %d retries", i+1, steps[i],
				b.at.Sub(a.at).Round(100*time.Millisecond), b.stats.Requests-a.stats.Requests, injected, b.stats.Retries-a.stats.Retries)
		}
		t.Logf("fault proxy (seed %d), whole run:\n%s", frSeed, p.Stats())
		var lost []string
		for _, d := range p.Decisions() {
			if d.Verb == faultproxy.VerbCreate && d.Fault == faultproxy.FaultResetAfter {
				lost = append(lost, d.Path+" "+d.Object)
			}
		}
		t.Logf("creates whose response was lost after the server created the object: %v", lost)
	}()

	var nsAddrs, quotaAddrs []string
	for i := range frTeams {
		nsAddrs = append(nsAddrs, fmt.Sprintf("hyperpod_team_namespace.team[%d]", i))
		quotaAddrs = append(quotaAddrs, fmt.Sprintf("hyperpod_compute_quota.team[%d]", i))
	}
	expectAll := func(action plancheck.ResourceActionType) []plancheck.PlanCheck {
		var out []plancheck.PlanCheck
		for _, a := range append(slices.Clone(nsAddrs), quotaAddrs...) {
			out = append(out, plancheck.ExpectResourceAction(a, action))
		}
		return out
	}

	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             frCheckDestroyed,
		Steps: []resource.TestStep{
			{
				PreConfig:        markStep,
				Config:           frConfig(kubeconfig, false),
				ConfigPlanChecks: preApply(expectAll(plancheck.ResourceActionCreate)...),
				Check:            frCheckCluster,
			},
			{
				PreConfig: markStep,
				Config:    frConfig(kubeconfig, true),
				// In place: a replaced namespace or queue would hide a lost write.
				ConfigPlanChecks: preApply(expectAll(plancheck.ResourceActionUpdate)...),
				Check:            frCheckCluster,
			},
			{
				PreConfig: markStep,
				Config:    frConfig(kubeconfig, true),
				Destroy:   true,
			},
		},
	})

	// The run cannot pass vacuously: every fault kind was injected on idempotent requests,
	// and at least one create lost its response after the server had created the object.
	s := p.Stats()
	idempotent := []string{faultproxy.VerbGet, faultproxy.VerbList, faultproxy.VerbWatch, faultproxy.VerbUpdate, faultproxy.VerbApply}
	for _, f := range []faultproxy.Fault{
		faultproxy.FaultTooManyRequests, faultproxy.FaultInternalError, faultproxy.FaultServiceUnavailable,
		faultproxy.FaultGatewayTimeout, faultproxy.FaultResetBefore, faultproxy.FaultResetAfter,
	} {
		n := 0
		for _, v := range idempotent {
			n += s.ByVerb[v].Injected[f]
		}
		if n == 0 {
			t.Errorf("no %s injected on idempotent requests: the run proves nothing about it (choose another seed)", f)
		}
	}
	if s.ByVerb[faultproxy.VerbCreate].Injected[faultproxy.FaultResetAfter] == 0 {
		t.Error("no CREATE lost its response after the server handled it: the run proves nothing about lost creates (choose another seed)")
	}
	if s.ByVerb[faultproxy.VerbDelete].Injected[faultproxy.FaultResetBefore]+s.ByVerb[faultproxy.VerbDelete].Injected[faultproxy.FaultResetAfter] == 0 {
		t.Error("no DELETE was reset: the destroy step proves nothing about faults (choose another seed)")
	}
	if s.Retries == 0 {
		t.Error("no request was retried")
	}
	for _, v := range []string{faultproxy.VerbCreate, faultproxy.VerbDelete, faultproxy.VerbPatch} {
		for _, f := range []faultproxy.Fault{faultproxy.FaultTooManyRequests, faultproxy.FaultInternalError, faultproxy.FaultServiceUnavailable, faultproxy.FaultGatewayTimeout} {
			if n := s.ByVerb[v].Injected[f]; n > 0 {
				t.Errorf("%d %s answered with %s; the non-idempotent rates allow resets only", n, v, f)
			}
		}
	}
}
