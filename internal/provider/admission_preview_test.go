package provider

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	at "github.com/quotaworks/terraform-provider-hyperpod/internal/admission/admissiontest"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/review"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/review/reviewinput"
)

// planJSON runs plan -json -detailed-exitcode and returns its diagnostics.
func (c *tfCLI) planJSON(timeout time.Duration, extra ...string) (tfResult, []tfDiagnostic) {
	c.t.Helper()
	r := c.run(timeout, append([]string{"plan", "-detailed-exitcode", "-input=false", "-no-color", "-json"}, extra...)...)
	diags, _ := parseTFJSONLines(r.stdout)
	return r, diags
}

// previewsIn are the admission previews among diags, by summary.
func previewsIn(diags []tfDiagnostic) map[string]tfDiagnostic {
	out := map[string]tfDiagnostic{}
	for _, d := range diags {
		if d.Severity == "warning" && (strings.HasPrefix(d.Summary, "Admission preview") || d.Summary == "No admission preview") {
			out[d.Summary] = d
		}
	}
	return out
}

// previewPath is one kind of cluster the preview story runs on.
type previewPath struct {
	// provider is the provider block; cohort the quotas' cohort attribute ("" sets none).
	provider, cohort string
	jobs             jobCluster
	kube             *kube.Client
	// settled returns once the quotas' Kueue objects exist.
	settled func() error
}

// A plan that changes a quota warns with what the change does to the jobs of its cohort, and
// the prediction comes true when the change is applied: more quota lent by one team admits
// another team's pending job by borrowing. A plan that changes nothing warns of nothing, and
// admission_preview = false turns the previews off. The review of a saved plan with that change
// and a new team predicts the same, and names the instance type the quotas over-commit.
func TestAccAdmissionPreview_plan(t *testing.T) {
	acctest.RequireKueue(t)
	const lender, borrower, extra = "e2e-preview-lender", "e2e-preview-borrower", "e2e-preview-extra"
	e2eCleanup(t, lender, borrower, extra)
	previewStory(t, previewPath{
		provider: "provider \"hyperpod\" {\n}\n", cohort: "e2e-preview", jobs: suiteJobs(),
		kube: kube.NewClientFromConfig(acc.config, kube.RetrySettings{}), settled: func() error { return nil },
	}, lender, borrower, extra)
}

// The same through the SageMaker API: the add-on's stand-in writes the Kueue objects, every team
// is in its one cohort, and the preview and the review read them through Kubernetes.
func TestAccTaskGovernance_admissionPreview(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	const lender, borrower, extra = "tg-preview-lender", "tg-preview-borrower", "tg-preview-extra"
	tgCleanup(t, tg, lender, borrower, extra)
	previewStory(t, previewPath{
		provider: tg.ProviderHCL(), jobs: tgJobs(tg), kube: kube.NewClient(kube.Settings{ConfigPath: tg.Kubeconfig}),
		settled: func() error { return tg.Emulator.Settle(context.Background()) },
	}, lender, borrower, extra)
}

func previewStory(t *testing.T, p previewPath, lender, borrower, extra string) {
	cohort := lendingCohort{lender: lender, borrower: borrower, cohort: p.cohort}
	config := func(lenderCount int, previews bool) string {
		provider := p.provider
		if !previews {
			provider = strings.Replace(provider, "provider \"hyperpod\" {", "provider \"hyperpod\" {\n  admission_preview = false", 1)
		}
		return provider + cohort.quotas(lenderCount)
	}
	cli := newTFCLI(t)
	cli.writeConfig(config(1, true))
	cli.init()
	if r := cli.apply(3 * time.Minute); r.exitCode != 0 {
		t.Fatalf("apply: %s", r)
	}
	if err := p.settled(); err != nil {
		t.Fatal(err)
	}
	next := cohort.fill(t, p.jobs)
	nextRef := admission.WorkloadRef{Namespace: next.GetNamespace(), Name: next.GetName()}

	if r, diags := cli.planJSON(2 * time.Minute); r.exitCode != 0 || len(previewsIn(diags)) != 0 {
		t.Fatalf("a plan without changes: want exit 0 and no preview, got %d and %v\n%s", r.exitCode, previewsIn(diags), r)
	}

	// The lender's second instance: 4 more GPUs to lend, and the waiting job fits.
	cli.writeConfig(config(2, true))
	r, diags := cli.planJSON(2 * time.Minute)
	if r.exitCode != 2 {
		t.Fatalf("plan of the change: want exit 2, got %s", r)
	}
	got, ok := previewsIn(diags)["Admission preview: team "+lender]
	if !ok {
		t.Fatalf("no admission preview for %s among %+v", lender, diags)
	}
	want := "ClusterQueue " + quota.ClusterQueueName(borrower) + ":\n  admitted " + nextRef.String() + " on ml.g5.12xlarge, borrowing"
	// The version modelled is the manager's, read from its Deployment's image.
	for _, part := range []string{want, "considers this change alone", ", the manager's version"} {
		if !strings.Contains(got.Detail, part) {
			t.Errorf("preview lacks %q:\n%s", part, got.Detail)
		}
	}

	// Off, the same plan warns of nothing.
	cli.writeConfig(config(2, false))
	if r, diags := cli.planJSON(2 * time.Minute); r.exitCode != 2 || len(previewsIn(diags)) != 0 {
		t.Errorf("admission_preview = false: want exit 2 and no preview, got %d and %v", r.exitCode, previewsIn(diags))
	}

	// The review of a saved plan predicts the changes together, and compares the quotas with the
	// fleet's four schedulable ml.g5.12xlarge nodes: a third team's two instances claim 20 GPUs of 16.
	cli.writeConfig(config(2, true) + e2eTeam(extra, `  resources = [{ instance_type = "ml.g5.12xlarge", count = 2 }]`))
	cli.mustRun(2*time.Minute, "plan", "-out=tfplan", "-input=false", "-no-color")
	shown := cli.mustRun(time.Minute, "show", "-json", "tfplan")
	plan, err := review.ReadPlan(strings.NewReader(shown.stdout))
	if err != nil {
		t.Fatal(err)
	}
	in, err := reviewinput.Read(context.Background(), p.kube, plan)
	if err != nil {
		t.Fatal(err)
	}
	built, err := review.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	report := built.Markdown()
	for _, part := range []string{
		"| `hyperpod_compute_quota." + strings.ReplaceAll(lender, "-", "_") + "` | " + lender + " | update |",
		"| `hyperpod_compute_quota." + strings.ReplaceAll(extra, "-", "_") + "` | " + extra + " | create |",
		"| " + quota.ClusterQueueName(borrower) + " | " + nextRef.String() + " | starts, borrowing from the cohort on ml.g5.12xlarge |",
		"| ml.g5.12xlarge | 4 of 4 | 20 accelerators, 240 vCPU, 960 GiB | 16 accelerators, 192 vCPU, 768 GiB | **over-committed**",
	} {
		if !strings.Contains(report, part) {
			t.Errorf("the review lacks %q:\n%s", part, report)
		}
	}

	// What the preview said is what Kueue does.
	cli.writeConfig(config(2, true))
	if r := cli.apply(3 * time.Minute); r.exitCode != 0 {
		t.Fatalf("apply of the change: %s", r)
	}
	if err := p.settled(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.jobs.workloadOf(borrower, "next", admitted, time.Minute); err != nil {
		t.Errorf("the preview said %s is admitted: %v", nextRef, err)
	}
	// The review placed the lender's quota as the apply wrote it.
	for _, c := range plan.Changes {
		if c.Team != lender {
			continue
		}
		placed, queue, err := in.Store.WithQuota(admission.Cluster{}, plan.Catalog, c.Team, c.Planned)
		if err != nil || len(placed.ClusterQueues) != 1 {
			t.Fatalf("placing the review's quota of %s: %v, %+v", lender, err, placed.ClusterQueues)
		}
		want := placed.ClusterQueues[0]
		var live kueue.ClusterQueue
		if _, err := p.kube.Get(context.Background(), kueue.ClusterQueues, "", queue, &live); err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(live.Spec.ResourceGroups, want.Spec.ResourceGroups) || live.Spec.CohortName != want.Spec.CohortName {
			t.Errorf("the review's ClusterQueue of %s differs from the applied one:\n review %+v\n live   %+v", lender, want.Spec, live.Spec)
		}
	}
	// Destroying a queue waits while Kueue holds admitted workloads: end them first.
	p.jobs.deleteAllWork(t, []string{lender, borrower})
	if r := cli.destroy(3 * time.Minute); r.exitCode != 0 {
		t.Errorf("destroy: %s", r)
	}
}

// queueOnly places a quota as the Kubernetes path's store holds it: its ClusterQueue alone, the
// one queues gives the team, or an empty one of the team's name.
type queueOnly struct {
	queues map[string]*kueue.ClusterQueue
}

func (q queueOnly) WithQuota(c admission.Cluster, _ *catalog.Catalog, team string, planned *quota.ResolvedConfig) (admission.Cluster, string, error) {
	name := quota.ClusterQueueName(team)
	if planned == nil {
		return c.WithQueue(name, nil), name, nil
	}
	next := q.queues[team]
	if next == nil {
		next = &kueue.ClusterQueue{}
		next.Name = name
	}
	return c.WithQueue(name, next), name, nil
}

// plannedQuota is a planned quota of team, resolved afresh each time.
func plannedQuota(t testing.TB, team string) *quota.ResolvedConfig {
	t.Helper()
	rc, problems := quota.Plan(catalog.Builtin(), quota.Config{Name: team, Team: team, Resources: []quota.Entry{
		{InstanceType: "ml.g5.12xlarge", Count: new(int64(1))}, {InstanceType: "ml.c5.9xlarge", VCPU: big.NewRat(29, 10)}}})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return &rc
}

// failingState is a cluster that cannot be reached, counting the reads sent to it.
type failingState struct {
	queueOnly
	reads *int
}

func (f failingState) Snapshot(context.Context) (backend.KueueSnapshot, error) {
	*f.reads++
	return backend.KueueSnapshot{}, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
}

// A preview that cannot read the cluster says so once per plan, on the change planned first
// (and again when that change is planned again), and the plan goes on, with one read per run
// whatever the number of changes; previews turned off read nothing and say nothing.
func TestAdmissionPreviewWithoutCluster(t *testing.T) {
	next := plannedQuota(t, "t")
	reads := 0
	p := &admissionPreview{state: failingState{reads: &reads}}
	for range 2 {
		var diags diag.Diagnostics
		if p.warnQuotaChange(context.Background(), path.Root("resources"), nil, "t", next, &diags) {
			t.Error("warnQuotaChange reported a preview it could not make")
		}
		if len(diags) != 1 || diags[0].Summary() != "No admission preview" || !strings.Contains(diags[0].Detail(), "connection refused") {
			t.Errorf("diagnostics = %v, want one warning that names the failure", diags)
		}
	}
	var later diag.Diagnostics
	if p.warnQuotaChange(context.Background(), path.Root("resources"), nil, "u", plannedQuota(t, "u"), &later) || len(later) != 0 {
		t.Errorf("a second change of the plan: %v, want no warning (the first change's stands for all)", later)
	}
	if reads != 1 {
		t.Errorf("%d reads of the cluster, want 1 per run", reads)
	}
	reads = 0
	var diags diag.Diagnostics
	off := &admissionPreview{off: "admission_preview = false", state: failingState{reads: &reads}}
	if off.warnQuotaChange(context.Background(), path.Root("resources"), nil, "t", next, &diags) || len(diags) != 0 || reads != 0 {
		t.Errorf("previews off: %d reads, %v", reads, diags)
	}
	// A cluster that does not exist yet (the provider's configuration waits for it): no read,
	// and a warning that says why.
	notYet := &admissionPreview{unavailable: "the provider's host are not known until apply", state: failingState{reads: &reads}}
	if notYet.warnQuotaChange(context.Background(), path.Root("resources"), nil, "t", next, &diags) || reads != 0 ||
		len(diags) != 1 || !strings.Contains(diags[0].Detail(), "host are not known until apply") {
		t.Errorf("provider configuration not known: %d reads, %v", reads, diags)
	}
}

// emptyState is a reachable cluster without Kueue objects.
type emptyState struct{ queueOnly }

func (emptyState) Snapshot(context.Context) (backend.KueueSnapshot, error) {
	return backend.KueueSnapshot{Version: "Kueue v0.19"}, nil
}

// A plan previews at most maxPreviews changes, and one warning, on the first change past them,
// says the others were not; the same change planned again (the framework after the fast path)
// is the same preview, counted once, and carries the same warnings.
func TestAdmissionPreviewBound(t *testing.T) {
	p := &admissionPreview{state: emptyState{}}
	previews, skipped := 0, 0
	for i := range maxPreviews + 980 {
		team := "t" + strconv.Itoa(i)
		next := plannedQuota(t, team)
		for range 2 {
			var diags diag.Diagnostics
			if p.warnQuotaChange(context.Background(), path.Root("resources"), nil, team, next, &diags) {
				previews++
			} else if len(diags) == 1 && strings.Contains(diags[0].Detail(), "changes more than") {
				skipped++
			}
		}
	}
	if previews != 2*maxPreviews || skipped != 2 {
		t.Errorf("%d previews and %d warnings of skipped changes, want %d and 2 (each change planned twice)", previews, skipped, 2*maxPreviews)
	}
}

// gatedState is a reachable cluster without Kueue objects whose read waits for gate.
type gatedState struct {
	queueOnly
	gate <-chan struct{}
}

func (s gatedState) Snapshot(ctx context.Context) (backend.KueueSnapshot, error) {
	select {
	case <-s.gate:
		return backend.KueueSnapshot{Version: "Kueue v0.19"}, nil
	case <-ctx.Done():
		return backend.KueueSnapshot{}, ctx.Err()
	}
}

// A change past the plan's last preview does not wait for the read, which the previewed changes
// still wait for: a plan of a thousand new quotas holds up only the ones it previews.
func TestAdmissionPreviewPastTheLastDoesNotWait(t *testing.T) {
	gate := make(chan struct{})
	p := &admissionPreview{state: gatedState{gate: gate}}
	previewed := make(chan bool, maxPreviews)
	for i := range maxPreviews {
		team := "t" + strconv.Itoa(i)
		next := plannedQuota(t, team)
		go func() {
			var diags diag.Diagnostics
			previewed <- p.warnQuotaChange(context.Background(), path.Root("resources"), nil, team, next, &diags)
		}()
	}
	// Every previewed change has taken its place before the next one asks.
	err := acctest.Eventually(context.Background(), time.Minute, "the previewed changes counted", func(context.Context) (bool, string, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.made == maxPreviews, fmt.Sprintf("%d counted", p.made), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var diags diag.Diagnostics
	if p.warnQuotaChange(context.Background(), path.Root("resources"), nil, "past", plannedQuota(t, "past"), &diags) {
		t.Error("a change past the last preview was previewed")
	}
	if len(diags) != 1 || !strings.Contains(diags[0].Detail(), "changes more than") {
		t.Errorf("a change past the last preview: %v, want the warning that the rest have none", diags)
	}
	select {
	case <-previewed:
		t.Fatal("a previewed change ended before the read did")
	default:
	}
	close(gate)
	for range maxPreviews {
		if !<-previewed {
			t.Error("a change within the plan's previews was not previewed once the read ended")
		}
	}
}

// clusterState is a reachable cluster holding c.
type clusterState struct {
	queueOnly
	c admission.Cluster
}

func (s clusterState) Snapshot(context.Context) (backend.KueueSnapshot, error) {
	return backend.KueueSnapshot{Cluster: s.c, Version: "Kueue v0.19"}, nil
}

// Raising a priority class's value raises, on Kueue v0.19, the Workloads of that class: a
// pending one then preempts a lower one of its team. The same classes preview nothing.
func TestAdmissionPreviewPriorityClasses(t *testing.T) {
	const gpu = "nvidia.com/gpu"
	class := func(name string, value int64) quota.PriorityClass {
		return quota.PriorityClass{Name: name, Weight: value}
	}
	cq := at.MakeClusterQueue("a").ResourceGroup(at.MakeFlavorQuotas("p4").Resource(gpu, "4").Obj()).
		Preemption(kueue.PreemptionLowerPriority, kueue.PreemptionAny, kueue.PreemptionNever).Obj()
	running := at.MakeWorkload("r", "ns-a").Queue("lq").PriorityClass(quota.PriorityClassObjectName("train"), 10).
		Request(gpu, "4").Created(-time.Hour).AdmitOn("a", "p4").Obj()
	pending := at.MakeWorkload("p", "ns-a").Queue("lq").PriorityClass(quota.PriorityClassObjectName("urgent"), 5).
		Request(gpu, "4").Obj()
	prior := []quota.PriorityClass{class("train", 10), class("urgent", 5)}
	c := admission.Cluster{
		Version: admission.V0_19, ClusterQueues: []kueue.ClusterQueue{cq},
		LocalQueues:     []kueue.LocalQueue{at.MakeLocalQueue("lq", "ns-a", "a")},
		ResourceFlavors: []kueue.ResourceFlavor{at.MakeResourceFlavor("p4")},
		Workloads:       []kueue.Workload{running, pending},
		WorkloadPriorityClasses: []kueue.WorkloadPriorityClass{
			quota.RenderPriorityClass(prior[0], ""), quota.RenderPriorityClass(prior[1], "")},
	}
	p := &admissionPreview{state: clusterState{c: c}}
	var diags diag.Diagnostics
	p.warnPriorityChange(context.Background(), path.Root("priority_classes"), prior, prior, &diags)
	if len(diags) != 0 {
		t.Fatalf("unchanged classes: %v", diags)
	}
	p.warnPriorityChange(context.Background(), path.Root("priority_classes"), prior, []quota.PriorityClass{class("train", 10), class("urgent", 100)}, &diags)
	if len(diags) != 1 || diags[0].Summary() != "Admission preview: priority classes" {
		t.Fatalf("diagnostics = %v, want one preview", diags)
	}
	for _, want := range []string{"admitted ns-a/p on p4", "preempted ns-a/r by ns-a/p (ClusterQueue a): InClusterQueue"} {
		if !strings.Contains(diags[0].Detail(), want) {
			t.Errorf("the preview lacks %q:\n%s", want, diags[0].Detail())
		}
	}
}

// A plan whose cluster cannot be reached still plans the change, with a warning that no
// preview was made and why (the read is sent once, without retries).
func TestAccAdmissionPreview_unreachable(t *testing.T) {
	acctest.RequireKueue(t)
	const team = "e2e-preview-unreachable"
	e2eCleanup(t, team)
	quotaOf := func(count string) string {
		return e2eTeam(team, `  resources = [{ instance_type = "ml.g5.12xlarge", count = `+count+` }]`)
	}
	cli := newTFCLI(t)
	cli.writeConfig("provider \"hyperpod\" {\n}\n" + quotaOf("1"))
	cli.init()
	if r := cli.apply(3 * time.Minute); r.exitCode != 0 {
		t.Fatalf("apply: %s", r)
	}
	// Nothing listens on port 1: every request is refused.
	cli.writeConfig("provider \"hyperpod\" {\n  host = \"https://127.0.0.1:1\"\n}\n" + quotaOf("2"))
	r, diags := cli.planJSON(2*time.Minute, "-refresh=false")
	if r.exitCode != 2 {
		t.Fatalf("plan against an unreachable cluster: want exit 2 (changes), got %s", r)
	}
	got, ok := previewsIn(diags)["No admission preview"]
	if !ok || !strings.Contains(got.Detail, "connection refused") || !strings.Contains(got.Detail, "The plan itself is not affected") {
		t.Errorf("want a warning that no preview was made because the cluster refused the connection, got %+v\n%s", diags, r)
	}
	cli.writeConfig("provider \"hyperpod\" {\n}\n" + quotaOf("1"))
	if r := cli.destroy(3 * time.Minute); r.exitCode != 0 {
		t.Errorf("destroy: %s", r)
	}
}

// refusingState is a cluster that refuses reads: required ones fail the snapshot, optional ones
// are reported beside it.
type refusingState struct {
	queueOnly
	required, optional []string
	c                  admission.Cluster
}

const testGrant = "Apply examples/rbac/clusterrole.yaml."

func (s refusingState) Snapshot(context.Context) (backend.KueueSnapshot, error) {
	if len(s.required) > 0 {
		return backend.KueueSnapshot{}, &backend.ReadsRefused{Reads: s.required, Grant: testGrant}
	}
	snap := backend.KueueSnapshot{Cluster: s.c, Version: "Kueue v0.19"}
	if len(s.optional) > 0 {
		snap.Refused = &backend.ReadsRefused{Reads: s.optional, Grant: testGrant}
	}
	return snap, nil
}

// planChanges plans n quota changes through p, each twice (the fast path, then the framework),
// and returns the warnings of each change's last plan, which is what Terraform prints.
func planChanges(t testing.TB, p *admissionPreview, n int) (warnings []diag.Diagnostic, previews int) {
	for i := range n {
		team := "t" + strconv.Itoa(i)
		next := plannedQuota(t, team)
		var diags diag.Diagnostics
		for range 2 {
			diags = nil
			if p.warnQuotaChange(context.Background(), path.Root("resources"), nil, team, next, &diags) {
				previews++
			}
		}
		warnings = append(warnings, diags...)
	}
	return warnings, previews / 2
}

// A refused read is one warning per plan that names the permission and what grants it: when
// the preview needs the read, no change is previewed; when it does not, the previews are made.
func TestAdmissionPreviewRefusedReads(t *testing.T) {
	const wpc = "list workloadpriorityclasses.kueue.x-k8s.io"
	warnings, previews := planChanges(t, &admissionPreview{state: refusingState{required: []string{wpc}}}, 1000)
	if previews != 0 || len(warnings) != 1 || warnings[0].Summary() != "Admission preview: a read was refused" ||
		!strings.Contains(warnings[0].Detail(), wpc) || !strings.Contains(warnings[0].Detail(), testGrant) {
		t.Errorf("a required read refused: %d previews, warnings %v; want none and one that names %q and the role", previews, warnings, wpc)
	}
	const deployment = "get deployments.apps kueue-system/kueue-controller-manager"
	warnings, previews = planChanges(t, &admissionPreview{state: refusingState{optional: []string{deployment}}}, 3)
	refused := 0
	for _, w := range warnings {
		if w.Summary() == "Admission preview: a read was refused" {
			refused++
			if !strings.Contains(w.Detail(), deployment) || !strings.Contains(w.Detail(), testGrant) {
				t.Errorf("the warning of the refused read lacks the permission or the role: %s", w.Detail())
			}
		}
	}
	if previews != 3 || refused != 1 {
		t.Errorf("an optional read refused: %d previews and %d warnings of it, want 3 and 1", previews, refused)
	}
}

// However many changes a plan makes, it gives at most two warnings about previews it could not
// make: why none was made, or that it made no more than maxPreviews.
func TestAdmissionPreviewWarningsPerPlan(t *testing.T) {
	reads := 0
	for name, p := range map[string]*admissionPreview{
		"unreachable": {state: failingState{reads: &reads}},
		"unavailable": {unavailable: "the provider's host are not known until apply", state: failingState{reads: &reads}},
		"reachable":   {state: emptyState{}},
	} {
		warnings, previews := planChanges(t, p, 1000)
		notes := 0
		for _, w := range warnings {
			if !strings.HasPrefix(w.Summary(), "Admission preview: team") {
				notes++
			}
		}
		if notes > 2 || notes == 0 {
			t.Errorf("%s: %d warnings about previews not made (of %d warnings, %d previews), want 1 or 2", name, notes, len(warnings), previews)
		}
	}
}

// A new quota is previewed: its team's Workloads wait in a LocalQueue that names the
// ClusterQueue before it exists, and start once it does.
func TestAdmissionPreviewNewQuota(t *testing.T) {
	const gpu = "nvidia.com/gpu"
	name := quota.ClusterQueueName("new")
	pending := at.MakeWorkload("job", "ns-new").Queue("lq").Request(gpu, "2").Obj()
	c := admission.Cluster{
		Version:         admission.V0_19,
		LocalQueues:     []kueue.LocalQueue{at.MakeLocalQueue("lq", "ns-new", name)},
		ResourceFlavors: []kueue.ResourceFlavor{at.MakeResourceFlavor("p4")},
		Workloads:       []kueue.Workload{pending},
	}
	next := at.MakeClusterQueue(name).ResourceGroup(at.MakeFlavorQuotas("p4").Resource(gpu, "4").Obj()).Obj()
	p := &admissionPreview{state: clusterState{queueOnly: queueOnly{queues: map[string]*kueue.ClusterQueue{"new": &next}}, c: c}}
	var diags diag.Diagnostics
	if !p.warnQuotaChange(context.Background(), path.Root("resources"), nil, "new", plannedQuota(t, "new"), &diags) || len(diags) != 1 {
		t.Fatalf("a new quota: %v, want one preview", diags)
	}
	for _, want := range []string{"creating this quota", "admitted ns-new/job on p4"} {
		if !strings.Contains(diags[0].Detail(), want) {
			t.Errorf("the preview lacks %q:\n%s", want, diags[0].Detail())
		}
	}
}

// Previews that outlive the plan's budget stop, and the plan says once that they cannot be
// predicted and why.
func TestAdmissionPreviewBudget(t *testing.T) {
	const gpu = "nvidia.com/gpu"
	cq := at.MakeClusterQueue("a").ResourceGroup(at.MakeFlavorQuotas("p4").Resource(gpu, "4").Obj()).Obj()
	c := admission.Cluster{
		Version: admission.V0_19, ClusterQueues: []kueue.ClusterQueue{cq},
		LocalQueues:     []kueue.LocalQueue{at.MakeLocalQueue("lq", "ns-a", "a")},
		ResourceFlavors: []kueue.ResourceFlavor{at.MakeResourceFlavor("p4")},
		Workloads:       []kueue.Workload{at.MakeWorkload("p", "ns-a").Queue("lq").Request(gpu, "8").Obj()},
	}
	p := &admissionPreview{state: clusterState{c: c}, budget: time.Nanosecond}
	warnings, previews := planChanges(t, p, 3)
	if previews != 0 || len(warnings) != 1 || warnings[0].Summary() != "No admission preview" ||
		!strings.Contains(warnings[0].Detail(), "took longer than 1ns in all") {
		t.Errorf("%d previews, warnings %v; want none and one that says the previews took too long", previews, warnings)
	}
}

// The fast path and then the framework plan the same change from models of their own: the same
// quota resolved twice, with pointers of its own each time, is the same change, and carries the
// plan's one warning both times.
func TestAdmissionPreviewSameChangeResolvedTwice(t *testing.T) {
	reads := 0
	p := &admissionPreview{state: failingState{reads: &reads}}
	for i := range 2 {
		var diags diag.Diagnostics
		p.warnQuotaChange(context.Background(), path.Root("resources"), nil, "t", plannedQuota(t, "t"), &diags)
		if len(diags) != 1 {
			t.Errorf("plan %d of the same change: %v, want the plan's warning", i+1, diags)
		}
	}
}

// The previews of a plan simulate as many at a time as there are processors; one still waiting
// for a processor when the budget runs out is not made.
func TestAdmissionPreviewSimulatesAsManyAsProcessors(t *testing.T) {
	p := &admissionPreview{budget: time.Minute}
	n := runtime.GOMAXPROCS(0)
	release := make(chan struct{})
	started := make(chan struct{}, n+2)
	var running, most atomic.Int32
	preview := func(context.Context) previewWarning {
		r := running.Add(1)
		for m := most.Load(); r > m && !most.CompareAndSwap(m, r); m = most.Load() {
		}
		started <- struct{}{}
		<-release
		running.Add(-1)
		return previewWarning{summary: "made"}
	}
	var wg sync.WaitGroup
	for range n + 2 {
		wg.Go(func() { p.simulate(context.Background(), preview) })
	}
	for range n {
		<-started
	}
	past, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	if w := p.simulate(past, preview); !strings.Contains(w.cannot, "took longer than 1m0s in all") {
		t.Errorf("a preview waiting past the budget: %+v, want that the previews took longer than the budget", w)
	}
	close(release)
	wg.Wait()
	if got := most.Load(); got != int32(n) {
		t.Errorf("at most %d previews simulated at once, want %d (the processors)", got, n)
	}
}

// The budget runs down only while some change waits for its preview: the time Terraform spends
// planning other resources between two changes leaves it as it was, and changes that wait at
// the same time spend it once.
func TestAdmissionPreviewBudgetCountsWaiting(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	c := budgetClock{now: func() time.Time { return now }}
	const budget = 10 * time.Second
	at := func(d time.Duration) { now = t0.Add(d) }
	check := func(what string, got time.Time, want time.Duration) {
		t.Helper()
		if !got.Equal(t0.Add(want)) {
			t.Errorf("%s: deadline %s, want %s", what, got.Sub(t0), want)
		}
	}
	check("the first change", c.start(budget), 10*time.Second)
	at(4 * time.Second)
	c.stop()
	at(60 * time.Second)
	check("a change a minute later", c.start(budget), 66*time.Second)
	at(61 * time.Second)
	check("a change waiting beside it", c.start(budget), 66*time.Second)
	at(62 * time.Second)
	c.stop()
	at(63 * time.Second)
	c.stop()
	at(100 * time.Second)
	check("a change after both", c.start(budget), 103*time.Second)
	at(110 * time.Second)
	c.stop()
	check("a change once the budget is spent", c.start(budget), 103*time.Second)
}
