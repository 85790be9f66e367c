package provider

// Interrupted applies, run with the real CLI (cli_harness_test.go): a
// terraform killed with SIGKILL halfway through applying twenty teams, and an API server that
// goes away halfway. After each, the state must hold exactly what exists, and a second apply
// must converge with no manual step.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/faultproxy"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

const (
	iaTeams     = 20
	iaNSType    = "hyperpod_team_namespace"
	iaQuotaType = "hyperpod_compute_quota"
)

// iaPrefix is a team prefix unique to one run: teams are global in the cluster.
func iaPrefix(kind string) string {
	return fmt.Sprintf("%s%06x", kind, rand.Uint32()&0xffffff)
}

// iaConfig is twenty teams (count), each a team namespace and a quota of two or three instance
// types. providerBody is the provider block's body.
func iaConfig(prefix, providerBody string) string {
	return fmt.Sprintf(`
provider "hyperpod" {
%s
}

locals {
  resources = [
    { instance_type = %[4]q, count = 1 },
    { instance_type = %[5]q, count = 1 },
    { instance_type = %[6]q, count = 1 },
  ]
}

resource "hyperpod_team_namespace" "team" {
  count = %[2]d
  team  = "%[3]s-${count.index}"
}

resource "hyperpod_compute_quota" "team" {
  count     = %[2]d
  name      = hyperpod_team_namespace.team[count.index].team
  team      = hyperpod_team_namespace.team[count.index].team
  resources = slice(local.resources, 0, 2 + count.index %% 2)
}
`, providerBody, iaTeams, prefix, iaInstanceTypes[0], iaInstanceTypes[1], iaInstanceTypes[2])
}

// iaCluster is what exists in the cluster for a prefix, read directly (never through a proxy).
type iaCluster struct {
	namespaces    map[string]corev1.Namespace
	localQueues   map[string]kueue.LocalQueue // by namespace
	clusterQueues map[string]kueue.ClusterQueue
}

func iaList(t *testing.T, prefix string) iaCluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	namePrefix := quota.NamespaceName(prefix + "-")
	cl := iaCluster{map[string]corev1.Namespace{}, map[string]kueue.LocalQueue{}, map[string]kueue.ClusterQueue{}}
	nss, err := acc.clientset.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing namespaces: %v", err)
	}
	for _, ns := range nss.Items {
		if strings.HasPrefix(ns.Name, namePrefix) {
			cl.namespaces[ns.Name] = ns
		}
	}
	lqs, err := acc.dynamic.Resource(kueue.LocalQueues).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing LocalQueues: %v", err)
	}
	for _, u := range lqs.Items {
		if !strings.HasPrefix(u.GetNamespace(), namePrefix) {
			continue
		}
		var lq kueue.LocalQueue
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &lq); err != nil {
			t.Fatalf("decoding LocalQueue: %v", err)
		}
		if _, dup := cl.localQueues[lq.Namespace]; dup {
			t.Errorf("namespace %s holds more than one LocalQueue", lq.Namespace)
		}
		cl.localQueues[lq.Namespace] = lq
	}
	cqs, err := acc.dynamic.Resource(kueue.ClusterQueues).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing ClusterQueues: %v", err)
	}
	for _, u := range cqs.Items {
		if !strings.HasPrefix(u.GetName(), namePrefix) {
			continue
		}
		var cq kueue.ClusterQueue
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cq); err != nil {
			t.Fatalf("decoding ClusterQueue: %v", err)
		}
		cl.clusterQueues[cq.Name] = cq
	}
	return cl
}

func (cl iaCluster) String() string {
	return fmt.Sprintf("%d Namespaces, %d LocalQueues, %d ClusterQueues", len(cl.namespaces), len(cl.localQueues), len(cl.clusterQueues))
}

// iaCountQueues counts the prefix's ClusterQueues: one LIST.
func iaCountQueues(t *testing.T, prefix string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cqs, err := acc.dynamic.Resource(kueue.ClusterQueues).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing ClusterQueues: %v", err)
	}
	n := 0
	for _, u := range cqs.Items {
		if strings.HasPrefix(u.GetName(), quota.NamespaceName(prefix+"-")) {
			n++
		}
	}
	return n
}

// iaInstanceTypes are the instance types iaConfig uses.
var iaInstanceTypes = []string{"ml.g5.12xlarge", "ml.c5.4xlarge", "ml.trn1.32xlarge"}

// iaCleanup deletes whatever of the prefix a failed test left behind, and then the
// ResourceFlavors the provider made for it that no ClusterQueue uses any more (destroy does
// that when the test gets that far).
func iaCleanup(t *testing.T, prefix string) {
	t.Cleanup(func() {
		cl := iaList(t, prefix)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		for name := range cl.clusterQueues {
			if err := acc.dynamic.Resource(kueue.ClusterQueues).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Logf("cleanup of ClusterQueue %s: %v", name, err)
			}
		}
		for name := range cl.namespaces {
			if err := acc.clientset.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Logf("cleanup of Namespace %s: %v", name, err)
			}
		}
		err := acctest.Eventually(ctx, 2*time.Minute, "the ClusterQueues of "+prefix+" gone",
			func(context.Context) (bool, string, error) {
				n := iaCountQueues(t, prefix)
				return n == 0, fmt.Sprintf("%d still there", n), nil
			})
		if err != nil {
			t.Logf("cleanup: %v; their ResourceFlavors are left in place", err)
			return
		}
		cqs, err := acc.dynamic.Resource(kueue.ClusterQueues).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Logf("cleanup: listing ClusterQueues: %v", err)
			return
		}
		used := map[string]bool{}
		for _, u := range cqs.Items {
			var cq kueue.ClusterQueue
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cq); err != nil {
				t.Logf("cleanup: decoding ClusterQueue %s: %v", u.GetName(), err)
				return
			}
			for _, rg := range cq.Spec.ResourceGroups {
				for _, f := range rg.Flavors {
					used[f.Name] = true
				}
			}
		}
		for _, it := range iaInstanceTypes {
			if labels, ok := flavorLabels(it); !ok || used[it] || labels[quota.LabelManagedBy] != quota.ManagedByValue {
				continue
			}
			if err := acc.dynamic.Resource(kueue.ResourceFlavors).Delete(ctx, it, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Logf("cleanup of ResourceFlavor %s: %v", it, err)
			}
		}
	})
}

// iaCompare lists every difference between the state and the cluster: each resource in state
// (tainted ones included) has its object with the owner annotation equal to its owner_id, the
// resources that are not tainted have all their objects as configured, and every object of the
// prefix belongs to a resource in state (nothing orphaned, nothing claimed twice).
//
// uncertain lists addresses whose create's outcome the provider reported unknown ("may have been
// created"): they are in state, tainted, whether or not their object exists.
func iaCompare(state map[string]tfStateResource, cl iaCluster, uncertain ...string) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	claimedNS := map[string]string{} // namespace -> address
	claimedCQ := map[string]string{}
	ownedBy := func(what string, meta metav1.ObjectMeta, addr, owner string) {
		switch {
		case meta.DeletionTimestamp != nil:
			bad("%s: %s is being deleted", addr, what)
		case owner == "":
			bad("%s: no owner_id in state", addr)
		case meta.Annotations[quota.AnnotationOwner] != owner:
			bad("%s: %s records owner %q, state holds owner_id %q", addr, what, meta.Annotations[quota.AnnotationOwner], owner)
		}
		if meta.Labels[quota.LabelManagedBy] != quota.ManagedByValue {
			bad("%s: %s has %s=%q", addr, what, quota.LabelManagedBy, meta.Labels[quota.LabelManagedBy])
		}
	}
	for _, addr := range sortedKeys(state) {
		r := state[addr]
		team, owner := r.str("team"), r.str("owner_id")
		switch r.Type {
		case iaNSType:
			nsName, lqName, cqName := quota.NamespaceName(team), quota.LocalQueueName(team), quota.ClusterQueueName(team)
			if other, dup := claimedNS[nsName]; dup {
				bad("%s and %s both claim Namespace %q", other, addr, nsName)
			}
			claimedNS[nsName] = addr
			ns, ok := cl.namespaces[nsName]
			if !ok && r.Tainted && slices.Contains(uncertain, addr) {
				continue
			}
			if !ok {
				bad("%s (tainted: %v) is in state, but Namespace %q does not exist", addr, r.Tainted, nsName)
				continue
			}
			ownedBy(fmt.Sprintf("Namespace %q", nsName), ns.ObjectMeta, addr, owner)
			lq, ok := cl.localQueues[nsName]
			switch {
			case !ok && !r.Tainted:
				bad("%s is in state, but LocalQueue %q in %q does not exist", addr, lqName, nsName)
			case ok:
				ownedBy(fmt.Sprintf("LocalQueue %q", lq.Name), lq.ObjectMeta, addr, owner)
				if lq.Name != lqName || lq.Spec.ClusterQueue != cqName {
					bad("%s: LocalQueue %s/%s feeds %q, want %s feeding %q", addr, nsName, lq.Name, lq.Spec.ClusterQueue, lqName, cqName)
				}
			}
		case iaQuotaType:
			cqName := quota.ClusterQueueName(team)
			if other, dup := claimedCQ[cqName]; dup {
				bad("%s and %s both claim ClusterQueue %q", other, addr, cqName)
			}
			claimedCQ[cqName] = addr
			cq, ok := cl.clusterQueues[cqName]
			if !ok && r.Tainted && slices.Contains(uncertain, addr) {
				continue
			}
			if !ok {
				bad("%s (tainted: %v) is in state, but ClusterQueue %q does not exist", addr, r.Tainted, cqName)
				continue
			}
			ownedBy(fmt.Sprintf("ClusterQueue %q", cqName), cq.ObjectMeta, addr, owner)
			if r.Tainted {
				continue
			}
			var want, got []string
			resources, _ := r.Values["resources"].([]any)
			for _, e := range resources {
				m, _ := e.(map[string]any)
				it, _ := m["instance_type"].(string)
				want = append(want, it)
			}
			for _, rg := range cq.Spec.ResourceGroups {
				for _, f := range rg.Flavors {
					got = append(got, f.Name)
				}
			}
			sort.Strings(want)
			sort.Strings(got)
			if len(want) == 0 || !slices.Equal(want, got) {
				bad("%s: ClusterQueue %q has flavors %v, state has instance types %v", addr, cqName, got, want)
			}
		default:
			bad("unexpected resource %s in state", addr)
			continue
		}
		if d, _ := r.Values["drift"].([]any); !r.Tainted && len(d) > 0 {
			bad("%s: drift %v", addr, d)
		}
	}
	for _, name := range sortedKeys(cl.namespaces) {
		if _, ok := claimedNS[name]; !ok {
			ns := cl.namespaces[name]
			bad("orphan: Namespace %q (owner %q) is in no resource in state", name, ns.Annotations[quota.AnnotationOwner])
		}
	}
	for _, ns := range sortedKeys(cl.localQueues) {
		if _, ok := claimedNS[ns]; !ok {
			lq := cl.localQueues[ns]
			bad("orphan: LocalQueue %s/%s (owner %q) is in no resource in state", ns, lq.Name, lq.Annotations[quota.AnnotationOwner])
		}
	}
	for _, name := range sortedKeys(cl.clusterQueues) {
		if _, ok := claimedCQ[name]; !ok {
			cq := cl.clusterQueues[name]
			bad("orphan: ClusterQueue %q (owner %q) is in no resource in state", name, cq.Annotations[quota.AnnotationOwner])
		}
	}
	return problems
}

// iaRequireConverged checks the end of a successful apply: every team fully in state, none
// tainted, the cluster equal to the state, and an empty plan.
func iaRequireConverged(t *testing.T, cli *tfCLI, prefix string) {
	t.Helper()
	state := cli.show()
	var types = map[string]int{}
	for _, r := range state {
		types[r.Type]++
		if r.Tainted {
			t.Errorf("%s is still tainted after a successful apply", r.Address)
		}
	}
	if types[iaNSType] != iaTeams || types[iaQuotaType] != iaTeams || len(state) != 2*iaTeams {
		t.Errorf("state holds %v, want %d of each", types, iaTeams)
	}
	cl := iaList(t, prefix)
	if len(cl.namespaces) != iaTeams || len(cl.localQueues) != iaTeams || len(cl.clusterQueues) != iaTeams {
		t.Errorf("cluster holds %s, want %d of each", cl, iaTeams)
	}
	for _, p := range iaCompare(state, cl) {
		t.Error(p)
	}
	if r := cli.plan(5 * time.Minute); r.exitCode != 0 {
		t.Errorf("the plan after the apply is not empty (plan -detailed-exitcode exit %d, want 0):\n%s", r.exitCode, r)
	}
}

// iaDestroy destroys everything and checks that nothing of the prefix is left.
func iaDestroy(t *testing.T, cli *tfCLI, prefix string) {
	t.Helper()
	r := cli.destroy(10 * time.Minute)
	t.Logf("destroy: exit %d in %s", r.exitCode, r.took.Round(time.Millisecond))
	if r.exitCode != 0 {
		t.Errorf("destroy failed:\n%s", r)
	}
	if state := cli.show(); len(state) != 0 {
		t.Errorf("state after destroy still holds %v", sortedKeys(state))
	}
	if cl := iaList(t, prefix); len(cl.namespaces)+len(cl.localQueues)+len(cl.clusterQueues) != 0 {
		t.Errorf("left in the cluster after destroy: %s: %v %v %v", cl, sortedKeys(cl.namespaces), sortedKeys(cl.localQueues), sortedKeys(cl.clusterQueues))
	}
}

// iaLatencyProxy is the fault proxy with latency only (50-150 ms per request), which widens the
// window in which some ClusterQueues exist and others do not.
func iaLatencyProxy(t *testing.T) (*faultproxy.Proxy, string) {
	return acctest.FaultProxy(t, faultproxy.Config{
		Seed:          1,
		Idempotent:    faultproxy.Rates{Latency: 1},
		NonIdempotent: faultproxy.Rates{Latency: 1},
		LatencyMin:    50 * time.Millisecond,
		LatencyMax:    150 * time.Millisecond,
	})
}

// iaApplyUntil starts applying the twenty teams and, once at least n of their ClusterQueues
// exist, calls stop (what names it in messages): how many existed then, and when.
func iaApplyUntil(t *testing.T, cli *tfCLI, prefix string, n int, what string, stop func(*tfProcess) error) (*tfProcess, int, time.Time) {
	t.Helper()
	apply := cli.start(10*time.Minute, "apply", "-auto-approve", "-input=false", "-no-color", "-json")
	errEnded := errors.New("apply ended")
	got := 0
	err := acctest.Eventually(context.Background(), 5*time.Minute, fmt.Sprintf("%d ClusterQueues of the apply", n),
		func(context.Context) (bool, string, error) {
			if !apply.running() {
				return false, "", errEnded
			}
			got = iaCountQueues(t, prefix)
			return got >= n, fmt.Sprintf("%d exist", got), nil
		})
	switch {
	case errors.Is(err, errEnded):
		t.Fatalf("apply ended before %d ClusterQueues existed, so it could not be %s halfway:\n%s", n, what, apply.wait())
	case err != nil:
		_ = apply.kill()
		t.Fatalf("%v:\n%s", err, apply.wait())
	}
	at := time.Now()
	if err := stop(apply); err != nil {
		t.Fatalf("terraform could not be %s: %v", what, err)
	}
	return apply, got, at
}

// iaLogDiagnostics logs the diagnostics of an apply -json.
func iaLogDiagnostics(t *testing.T, r tfResult) {
	t.Helper()
	diags, _ := parseTFJSONLines(r.stdout)
	for _, d := range diags {
		t.Logf("%s at %q: %s\n%s", d.Severity, d.Address, d.Summary, d.Detail)
	}
}

// TestAccInterruptedApply_killedTerraform kills terraform with SIGKILL while it creates twenty
// teams, then runs apply again: it must converge with no manual step (no import, no unlock, no
// -lock=false), with an empty plan after it and the cluster equal to the state.
func TestAccInterruptedApply_killedTerraform(t *testing.T) {
	acctest.RequireCluster(t)
	prefix := iaPrefix("ik")
	iaCleanup(t, prefix)
	proxy, kubeconfig := iaLatencyProxy(t)
	cli := newTFCLI(t)
	cli.writeConfig(iaConfig(prefix, fmt.Sprintf("  config_path = %q", kubeconfig)))
	cli.init()

	apply, atKill, _ := iaApplyUntil(t, cli, prefix, 5, "killed", (*tfProcess).kill)
	killed := apply.wait()
	if killed.exitCode != -1 {
		t.Fatalf("terraform exited by itself before SIGKILL reached it:\n%s", killed)
	}
	if atKill >= iaTeams {
		t.Fatalf("all %d ClusterQueues existed when terraform was killed: the kill was not halfway", atKill)
	}
	_, completed := parseTFJSONLines(killed.stdout)
	afterKill := iaList(t, prefix)
	stateAfterKill := cli.show()
	t.Logf("killed terraform after %s with %d ClusterQueues of %d; %d resources reported complete; "+
		"once the provider's applies ended the cluster held %s and the state %d resources",
		killed.took.Round(time.Millisecond), atKill, iaTeams, len(completed), afterKill, len(stateAfterKill))
	for _, p := range iaCompare(stateAfterKill, afterKill) {
		t.Logf("after the kill: %s", p) // what the second apply has to converge from
	}
	// Objects whose create finished but whose state Terraform did not save before it died
	// (OpenTofu saves every 20 s; Terraform's local backend after each resource) must carry the
	// mark that lets the next create adopt them.
	inState := map[string]bool{}
	for _, r := range stateAfterKill {
		inState[r.Type+"/"+r.str("team")] = true
	}
	var orphans []string
	for i := 0; i < iaTeams; i++ {
		team := fmt.Sprintf("%s-%d", prefix, i)
		var metas []struct {
			kind, addr string
			meta       metav1.ObjectMeta
		}
		if ns, ok := afterKill.namespaces[quota.NamespaceName(team)]; ok && !inState[iaNSType+"/"+team] {
			metas = append(metas, struct {
				kind, addr string
				meta       metav1.ObjectMeta
			}{"Namespace", fmt.Sprintf("%s.team[%d]", iaNSType, i), ns.ObjectMeta})
		}
		if cq, ok := afterKill.clusterQueues[quota.ClusterQueueName(team)]; ok && !inState[iaQuotaType+"/"+team] {
			metas = append(metas, struct {
				kind, addr string
				meta       metav1.ObjectMeta
			}{"ClusterQueue", fmt.Sprintf("%s.team[%d]", iaQuotaType, i), cq.ObjectMeta})
		}
		for _, m := range metas {
			orphans = append(orphans, m.addr)
			if m.meta.Annotations[quota.AnnotationUnconfirmed] == "" {
				t.Errorf("%s %q exists without a state and without the %s mark: the next create could not adopt it",
					m.kind, m.meta.Name, quota.AnnotationUnconfirmed)
			}
		}
	}
	t.Logf("%d objects finished without a saved state, all marked %s: %v", len(orphans), quota.AnnotationUnconfirmed, orphans)

	second := cli.apply(10 * time.Minute)
	t.Logf("second apply: exit %d in %s", second.exitCode, second.took.Round(time.Millisecond))
	if second.exitCode != 0 {
		iaLogDiagnostics(t, second)
		t.Fatalf("apply after the kill did not converge by itself (exit %d); its diagnostics are above", second.exitCode)
	}
	// Each of them was adopted, and said so.
	secondDiags, _ := parseTFJSONLines(second.stdout)
	for _, addr := range orphans {
		if !slices.ContainsFunc(secondDiags, func(d tfDiagnostic) bool {
			return d.Address == addr && d.Severity == "warning" && strings.Contains(d.Summary, "adopted from an interrupted run")
		}) {
			t.Errorf("%s: the second apply did not warn that it adopted the object of the killed run", addr)
		}
	}
	iaRequireConverged(t, cli, prefix)
	t.Logf("proxy:\n%s", proxy.Stats())
	iaDestroy(t, cli, prefix)
}
