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
	"os"
	"regexp"
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

var iaAddrIndex = regexp.MustCompile(`^(hyperpod_team_namespace|hyperpod_compute_quota)\.team\[(\d+)\]$`)

// iaAddrTeam returns the type and team of an address like hyperpod_compute_quota.team[7].
func iaAddrTeam(prefix, addr string) (kind, team string, ok bool) {
	m := iaAddrIndex.FindStringSubmatch(addr)
	if m == nil {
		return "", "", false
	}
	return m[1], prefix + "-" + m[2], true
}

// iaOutage is what the apply during the outage did to one resource address.
type iaOutage struct {
	errs     []tfDiagnostic
	complete bool // apply_complete in the UI stream
}

func (o iaOutage) text() string {
	var b strings.Builder
	for _, d := range o.errs {
		b.WriteString(d.Summary + "\n" + d.Detail + "\n")
	}
	return b.String()
}

var iaTriedTimes = regexp.MustCompile(`tried \d+ times?`)

// iaUnwrap joins the lines of a diagnostic text (Terraform does not wrap -json output, but
// the provider's details may hold newlines).
func iaUnwrap(s string) string { return strings.Join(strings.Fields(s), " ") }

// iaOutcomes gathers what an apply -json said, by resource address: its errors and whether it
// completed. Errors without an address (terraform's own) are returned apart.
func iaOutcomes(r tfResult) (outcome map[string]*iaOutage, unaddressed []tfDiagnostic) {
	diags, completed := parseTFJSONLines(r.stdout)
	outcome = map[string]*iaOutage{}
	at := func(addr string) *iaOutage {
		if outcome[addr] == nil {
			outcome[addr] = &iaOutage{}
		}
		return outcome[addr]
	}
	for _, d := range diags {
		if d.Severity != "error" {
			continue
		}
		if d.Address == "" {
			unaddressed = append(unaddressed, d)
			continue
		}
		at(d.Address).errs = append(at(d.Address).errs, d)
	}
	for addr := range completed {
		at(addr).complete = true
	}
	return outcome, unaddressed
}

// iaUncertain lists the addresses the provider reported "may have been created".
func iaUncertain(outcome map[string]*iaOutage) []string {
	var uncertain []string
	for addr, o := range outcome {
		if slices.ContainsFunc(o.errs, func(d tfDiagnostic) bool { return strings.Contains(d.Summary, "may have been created") }) {
			uncertain = append(uncertain, addr)
		}
	}
	return uncertain
}

// iaTally counts the outcomes iaCheckOutcomes found.
type iaTally struct {
	created, partial, maybe, notCreated int
	summary                             []string
	examples                            map[string]string // one full text per outcome, for the log
}

func (c iaTally) logExamples(t *testing.T) {
	t.Helper()
	for _, k := range sortedKeys(c.examples) {
		t.Logf("example, %s: %s", k, c.examples[k])
	}
}

// iaCheckOutcomes checks, address by address, what an interrupted apply reported against the
// state it saved: a completed resource has no errors and is saved untainted; one that may have
// been created (uncertain) names its first object and is saved tainted; one partly created
// (partly) carries the resource's "partly created" diagnostic, says what was and was not
// written and is saved tainted; one not created says so and is not in state. An address that
// neither completed nor failed was not attempted. failed, when not nil, runs on the errors of
// every address that failed.
func iaCheckOutcomes(t *testing.T, prefix string, outcome map[string]*iaOutage, state map[string]tfStateResource,
	uncertain []string, partly func(kind string, o *iaOutage) bool, failed func(addr, text string)) iaTally {
	t.Helper()
	c := iaTally{examples: map[string]string{}}
	for _, addr := range sortedKeys(outcome) {
		o := outcome[addr]
		kind, team, ok := iaAddrTeam(prefix, addr)
		if !ok {
			t.Errorf("unexpected address %s", addr)
			continue
		}
		res, inState := state[addr]
		if o.complete {
			c.created++
			c.summary = append(c.summary, addr+": created")
			if len(o.errs) > 0 || !inState || res.Tainted {
				t.Errorf("%s completed, but has %d errors, in state %v, tainted %v", addr, len(o.errs), inState, res.Tainted)
			}
			continue
		}
		if len(o.errs) == 0 {
			continue // not attempted: its namespace failed
		}
		text := o.text()
		firstKind, firstName := "Namespace", quota.NamespaceName(team)
		if kind == iaQuotaType {
			firstKind, firstName = "ClusterQueue", quota.ClusterQueueName(team)
		}
		partSummary := kind + " partly created"
		switch {
		case slices.Contains(uncertain, addr):
			// Saved tainted, so that the object, if the server made it, has a state.
			c.examples[kind+" may have been created"] = addr + ":\n" + text
			c.maybe++
			c.summary = append(c.summary, addr+": may have been created (tainted)")
			if !strings.Contains(text, fmt.Sprintf("%s %q", firstKind, firstName)) {
				t.Errorf("%s: diagnostics do not name %s %q:\n%s", addr, firstKind, firstName, text)
			}
			if !inState || !res.Tainted {
				t.Errorf("%s may have been created, but in state: %v, tainted: %v", addr, inState, res.Tainted)
			}
		case partly(kind, o):
			c.examples[partSummary] = addr + ":\n" + text
			c.partial++
			c.summary = append(c.summary, addr+": partly created (tainted)")
			if !slices.ContainsFunc(o.errs, func(d tfDiagnostic) bool { return d.Summary == partSummary }) {
				t.Errorf("%s: no %q diagnostic:\n%s", addr, partSummary, text)
			}
			if want := fmt.Sprintf("Written: %s %q", firstKind, firstName); !strings.Contains(iaUnwrap(text), want) {
				t.Errorf("%s: diagnostics do not say %s:\n%s", addr, want, text)
			}
			if !strings.Contains(iaUnwrap(text), "Not written: ") {
				t.Errorf("%s: diagnostics do not name what was not written:\n%s", addr, text)
			}
			if !inState || !res.Tainted {
				t.Errorf("%s was partly created, but in state: %v, tainted: %v", addr, inState, res.Tainted)
			}
		default:
			c.examples[kind+" not created"] = addr + ":\n" + text
			c.notCreated++
			c.summary = append(c.summary, addr+": not created")
			if !strings.Contains(iaUnwrap(text), "was not created") {
				t.Errorf("%s: its error does not say the object was not created:\n%s", addr, text)
			}
			if inState {
				t.Errorf("%s wrote nothing, but is in state (tainted: %v)", addr, res.Tainted)
			}
		}
		if failed != nil {
			failed(addr, text)
		}
	}
	return c
}

// TestAccInterruptedApply_apiServerGone takes the API server away (faultproxy.Down) while
// twenty teams are being created. The apply must fail in bounded time with diagnostics that name
// what was and was not written; the state must then hold exactly what exists (tainted resources
// included); and once the server is back, a second apply must converge with an empty plan after
// it.
func TestAccInterruptedApply_apiServerGone(t *testing.T) {
	acctest.RequireCluster(t)
	prefix := iaPrefix("ig")
	iaCleanup(t, prefix)
	proxy, kubeconfig := acctest.FaultProxy(t, faultproxy.Config{Seed: 1})
	cli := newTFCLI(t)
	// A short retry budget keeps the outage's failures quick.
	cli.writeConfig(iaConfig(prefix, fmt.Sprintf(`  config_path = %q
  retry {
    max_attempts = 3
    max_elapsed  = "5s"
  }`, kubeconfig)))
	cli.init()

	apply, atDown, wentDown := iaApplyUntil(t, cli, prefix, iaTeams/2, "cut off from the API server",
		func(*tfProcess) error { proxy.Down(); return nil })
	failed := apply.wait()
	t.Logf("API server gone with %d ClusterQueues of %d; apply exited %d %s later (%s in all)",
		atDown, iaTeams, failed.exitCode, time.Since(wentDown).Round(time.Millisecond), failed.took.Round(time.Millisecond))
	if atDown >= iaTeams {
		t.Fatalf("all %d ClusterQueues existed when the API server went away: the outage was not halfway", atDown)
	}
	if failed.exitCode == 0 {
		t.Fatalf("apply succeeded although the API server went away halfway:\n%s", failed)
	}

	// What the apply said, by address.
	outcome, unaddressed := iaOutcomes(failed)
	for _, d := range unaddressed {
		t.Errorf("error without a resource address: %s: %s", d.Summary, d.Detail)
	}

	// Still while the server is away: the state, read against the cluster directly.
	state := cli.show()
	cl := iaList(t, prefix)
	uncertain := iaUncertain(outcome)
	for _, p := range iaCompare(state, cl, uncertain...) {
		t.Errorf("while the API server is away: %s", p)
	}

	// Any summary naming a partial create counts as one, and must be the resource's own.
	partly := func(_ string, o *iaOutage) bool {
		return slices.ContainsFunc(o.errs, func(d tfDiagnostic) bool { return strings.Contains(d.Summary, "partly created") })
	}
	tally := iaCheckOutcomes(t, prefix, outcome, state, uncertain, partly, func(addr, text string) {
		// Every failure here is the outage's: transient, retried, safe to apply again.
		if !iaTriedTimes.MatchString(text) || !strings.Contains(text, "Running apply again is safe") {
			t.Errorf("%s: the error does not say how often it was tried and that running apply again is safe:\n%s", addr, text)
		}
		if strings.Contains(text, "credentials") {
			t.Errorf("%s: a transient error carries a permission hint:\n%s", addr, text)
		}
	})
	for addr, r := range state {
		if o := outcome[addr]; o == nil || (!o.complete && !r.Tainted) {
			t.Errorf("%s is in state (tainted: %v) but the apply neither completed it nor reported it partly created", addr, r.Tainted)
		}
	}
	t.Logf("during the outage: %d created, %d partly created, %d not created, the rest not attempted:\n  %s",
		tally.created, tally.partial+tally.maybe, tally.notCreated, strings.Join(tally.summary, "\n  "))
	tally.logExamples(t)
	if failedCount := tally.partial + tally.maybe + tally.notCreated; tally.created == 0 || failedCount == 0 {
		t.Errorf("the outage did not split the apply: %d created, %d failed", tally.created, failedCount)
	}
	if t.Failed() {
		iaLogDiagnostics(t, failed)
		t.FailNow()
	}

	if err := proxy.Up(); err != nil {
		t.Fatalf("bringing the API server back: %v", err)
	}
	second := cli.apply(10 * time.Minute)
	t.Logf("apply after the outage: exit %d in %s", second.exitCode, second.took.Round(time.Millisecond))
	if second.exitCode != 0 {
		iaLogDiagnostics(t, second)
		t.Fatalf("apply after the outage did not converge (exit %d); its diagnostics are above", second.exitCode)
	}
	iaRequireConverged(t, cli, prefix)
	t.Logf("proxy:\n%s", proxy.Stats())
	iaDestroy(t, cli, prefix)
}

// iaInterrupt sends SIGINT to the CLI, as Ctrl-C does: terraform asks the provider to stop
// (StopProvider), waits for the operations in flight, saves the state they return and exits.
func iaInterrupt(p *tfProcess) error {
	return p.cmd.Process.Signal(os.Interrupt)
}

// TestAccInterruptedApply_interruptedTerraform interrupts terraform (SIGINT) while it creates
// twenty teams. The provider is asked to stop, which cancels the creates in flight: what a
// cut-off create wrote comes back "partly created" or "may have been created", which Terraform
// saves tainted before it exits by itself. Right after, the state must hold exactly what exists,
// with no object left without state and nothing tainted that the provider did not report; a
// second apply must converge with an empty plan after it.
func TestAccInterruptedApply_interruptedTerraform(t *testing.T) {
	acctest.RequireCluster(t)
	prefix := iaPrefix("ii")
	iaCleanup(t, prefix)
	proxy, kubeconfig := iaLatencyProxy(t)
	cli := newTFCLI(t)
	cli.writeConfig(iaConfig(prefix, fmt.Sprintf("  config_path = %q", kubeconfig)))
	cli.init()

	apply, atInterrupt, interruptedAt := iaApplyUntil(t, cli, prefix, 5, "interrupted", iaInterrupt)
	// The provider's applies have ended when wait returns (see tfProcess.wait).
	interrupted := apply.wait()
	exitedAfter := apply.started.Add(interrupted.took).Sub(interruptedAt)
	t.Logf("interrupted terraform with %d ClusterQueues of %d; it exited %d %s later (%s in all)",
		atInterrupt, iaTeams, interrupted.exitCode, exitedAfter.Round(time.Millisecond), interrupted.took.Round(time.Millisecond))
	if interrupted.killed || interrupted.timedOut || interrupted.exitCode == -1 {
		t.Fatalf("terraform did not exit by itself after the interrupt:\n%s", interrupted)
	}
	if atInterrupt >= iaTeams {
		t.Fatalf("all %d ClusterQueues existed when terraform was interrupted: the interrupt was not halfway", atInterrupt)
	}
	if interrupted.exitCode == 0 {
		t.Fatalf("apply succeeded although it was interrupted halfway:\n%s", interrupted)
	}

	// What the apply said, by address.
	outcome, unaddressed := iaOutcomes(interrupted)
	own := map[string]int{} // terraform's own errors, without an address ("execution halted")
	for _, d := range unaddressed {
		own[strings.TrimSpace(d.Summary+": "+d.Detail)]++
	}
	for _, e := range sortedKeys(own) {
		t.Logf("terraform's own error, %d times: %s", own[e], e)
	}

	state := cli.show()
	cl := iaList(t, prefix)
	uncertain := iaUncertain(outcome)
	for _, p := range iaCompare(state, cl, uncertain...) {
		t.Errorf("after the interrupt: %s", p)
	}

	// Only the resource's own summary counts as a partial create.
	partly := func(kind string, o *iaOutage) bool {
		return slices.ContainsFunc(o.errs, func(d tfDiagnostic) bool { return d.Summary == kind+" partly created" })
	}
	// Nothing in the provider outlasts the cancellation: each create in flight ends on the stop,
	// as soon as its request is cut off, and none runs on to its timeout (a context deadline).
	endedOnTheStop := func(addr, text string) {
		if strings.Contains(text, "deadline exceeded") {
			t.Errorf("%s ran on to its timeout instead of ending on the interrupt:\n%s", addr, text)
		}
	}
	tally := iaCheckOutcomes(t, prefix, outcome, state, uncertain, partly, endedOnTheStop)
	// Tainted only what the provider reported partly created or maybe created; untainted only
	// what completed.
	for addr, r := range state {
		o := outcome[addr]
		switch {
		case r.Tainted && (o == nil || (!slices.Contains(uncertain, addr) &&
			!slices.ContainsFunc(o.errs, func(d tfDiagnostic) bool { return strings.HasSuffix(d.Summary, " partly created") }))):
			t.Errorf("%s is tainted in state, but the apply reported it neither partly created nor maybe created", addr)
		case !r.Tainted && (o == nil || !o.complete):
			t.Errorf("%s is in state, not tainted, but the apply did not complete it", addr)
		}
	}
	t.Logf("after the interrupt: %d created, %d partly created, %d may have been created, %d not created, "+
		"the rest not attempted; the cluster held %s and the state %d resources:\n  %s",
		tally.created, tally.partial, tally.maybe, tally.notCreated, cl, len(state), strings.Join(tally.summary, "\n  "))
	tally.logExamples(t)
	// Terraform waits for the creates in flight; had the provider not cancelled them on
	// StopProvider, they would all have completed and none would have been cut off.
	if cutOff := tally.partial + tally.maybe + tally.notCreated; tally.created == 0 || cutOff == 0 {
		t.Errorf("the interrupt cut off no create: %d created, %d cut off", tally.created, cutOff)
	}
	if t.Failed() {
		iaLogDiagnostics(t, interrupted)
		t.FailNow()
	}

	second := cli.apply(10 * time.Minute)
	t.Logf("apply after the interrupt: exit %d in %s", second.exitCode, second.took.Round(time.Millisecond))
	if second.exitCode != 0 {
		iaLogDiagnostics(t, second)
		t.Fatalf("apply after the interrupt did not converge (exit %d); its diagnostics are above", second.exitCode)
	}
	iaRequireConverged(t, cli, prefix)
	t.Logf("proxy:\n%s", proxy.Stats())
	iaDestroy(t, cli, prefix)
}
