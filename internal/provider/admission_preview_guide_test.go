package provider

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/review"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/review/reviewinput"
)

// The guide "Reviewing quota changes" (templates/guides/reviewing-quota-changes.md.tmpl) shows
// what the provider and hyperpod-plan-review print for changes of one cohort. Those samples are
// not written by hand: TestAccAdmissionPreview_guideSamples runs each scenario on the local
// control plane (the real API server and Kueue's manager), with the guide's own configuration,
// and takes what `terraform plan -no-color` and hyperpod-plan-review printed. With
// HYPERPOD_UPDATE_GUIDE=1 (`make guide-samples`) it writes them to guideSamplesDir, which the
// guide includes; otherwise it fails when a fresh run prints anything else than the committed
// samples.

const (
	guideReviewDir  = "../../examples/guides/reviewing-quota-changes"
	guideSamplesDir = guideReviewDir + "/samples"
	// envUpdateGuide set to 1 writes the samples instead of comparing them.
	envUpdateGuide = "HYPERPOD_UPDATE_GUIDE"
	guideP5        = "ml.p5.48xlarge"
)

// guideWorkloadSuffix is what differs between two runs of the same scenario: Kueue names a
// Job's Workload job-<job name>-<5 hex digits>, a hash of the Job's UID, which is random.
// Nothing else is normalised: the samples keep the names of the run that wrote them, and the
// comparison replaces the suffix on both sides.
var guideWorkloadSuffix = regexp.MustCompile(`\b(job-[a-z0-9]+(?:-[a-z0-9]+)*?)-[0-9a-f]{5}\b`)

func normalizeGuideSample(s string) string {
	return guideWorkloadSuffix.ReplaceAllString(s, "${1}-#####")
}

// The guide's samples are what a run of its scenarios prints now. The cohort of the guide
// (research 8 GPUs, LendAndBorrow; evaluation 4, Lend; serving 4, DontLend; on the fleet's two
// ml.p5.48xlarge nodes) runs research's pretrain (8 GPUs) and finetune (4, borrowed from the
// idle evaluation); research's sweep (2) waits for room, and evaluation's regression (6) waits
// because it needs more than evaluation's quota, which Lend does not let it exceed (so
// reclaiming its lent GPUs would not admit it). On that state: serving lends its idle GPUs;
// research lowers its quota; evaluation raises its own, so that its job fits and Kueue reclaims
// the GPUs research borrows; a new team joins and lends; a pull request lowers research and
// raises evaluation together, reviewed by hyperpod-plan-review, whose prediction Kueue then
// carries out when the change is applied. A plan whose cluster cannot be reached says why it
// has no preview.
func TestAccAdmissionPreview_guideSamples(t *testing.T) {
	acctest.RequireKueue(t)
	requireGuideCluster(t)
	teams := []string{"research", "evaluation", "serving", "inference"}
	e2eCleanup(t, teams...)
	base := readGuideExample(t, "cohort/main.tf")
	newTeam := readGuideExample(t, "new-team/inference.tf")
	samples := map[string]string{}

	cli := guideCLI(t)
	cli.writeConfig(base)
	cli.init()
	if r := cli.apply(5 * time.Minute); r.exitCode != 0 {
		t.Fatalf("apply of the cohort: %s", r)
	}
	t.Cleanup(func() {
		deleteAllWork(t, teams)
		cli.writeConfig(base)
		if err := os.Remove(filepath.Join(cli.dir, "inference.tf")); err != nil && !os.IsNotExist(err) {
			t.Error(err)
		}
		if r := cli.destroy(5 * time.Minute); r.exitCode != 0 {
			t.Errorf("destroy: %s", r)
		}
	})
	guideJobs(t)

	// Each preview: the plan of one change, and the one warning it gives.
	preview := func(sample, summary string, config string, extra map[string]string) {
		t.Helper()
		cli.writeConfig(config)
		for name, content := range extra {
			if err := os.WriteFile(filepath.Join(cli.dir, name), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		r := cli.run(3*time.Minute, "plan", "-detailed-exitcode", "-input=false", "-no-color")
		if r.exitCode != 2 {
			t.Fatalf("plan of %s: want exit 2 (changes), got %s", sample, r)
		}
		samples[sample] = planWarning(t, r, summary)
		for name := range extra {
			if err := os.Remove(filepath.Join(cli.dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	lowered := guideEdit(t, base, "research", "accelerators = 8", "accelerators = 4")
	raised := guideEdit(t, base, "evaluation", "accelerators = 4", "accelerators = 8")
	preview("lend-more.txt", "Admission preview: team serving",
		guideEdit(t, base, "serving", `strategy = "DontLend"`, `strategy = "Lend"`), nil)
	preview("lower-quota.txt", "Admission preview: team research", lowered, nil)
	preview("raise-quota.txt", "Admission preview: team evaluation", raised, nil)
	preview("new-team.txt", "Admission preview: team inference", base, map[string]string{"inference.tf": newTeam})

	// The pull request that moves 4 GPUs of quota from research to evaluation, reviewed whole.
	both := guideEdit(t, lowered, "evaluation", "accelerators = 4", "accelerators = 8")
	cli.writeConfig(both)
	cli.mustRun(3*time.Minute, "plan", "-out=tfplan", "-input=false", "-no-color")
	shown := cli.mustRun(time.Minute, "show", "-json", "tfplan")
	planFile := filepath.Join(cli.dir, "plan.json")
	if err := os.WriteFile(planFile, []byte(shown.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	samples["review.md"] = runPlanReview(t, planFile)

	// What the review predicts is what Kueue does once the change is applied.
	predicted := reviewOf(t, shown.stdout)
	if r := cli.apply(5 * time.Minute); r.exitCode != 0 {
		t.Fatalf("apply of the pull request: %s", r)
	}
	checkKueueCarriesOut(t, predicted)

	t.Run("unreachable cluster", func(t *testing.T) {
		samples["no-preview.txt"] = unreachableWarning(t, cli,
			guideEdit(t, both, "serving", `strategy = "DontLend"`, `strategy = "Lend"`))
	})

	writeOrCompareGuideSamples(t, samples)
}

// requireGuideCluster skips unless the run is the one the samples were taken on: Terraform (not
// OpenTofu, which words a plan otherwise) and the local control plane's default Kueue, the
// task-governance add-on's release, whose scheduler the previews name.
func requireGuideCluster(t *testing.T) {
	t.Helper()
	if acctest.OpenTofu() {
		t.Skip("the guide's samples are Terraform's output; OpenTofu words a plan otherwise")
	}
	want := localcluster.KueueManagerImage + ":" + localcluster.DefaultKueueVersion
	d, err := acc.clientset.AppsV1().Deployments(localcluster.KueueNamespace).Get(context.Background(), kueue.ManagerDeployment, metav1.GetOptions{})
	if err != nil || len(d.Spec.Template.Spec.Containers) == 0 || d.Spec.Template.Spec.Containers[0].Image != want {
		t.Skipf("the guide's samples are of Kueue's manager %s (the local control plane's default); this cluster's is not (%v)", want, err)
	}
}

func readGuideExample(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(guideReviewDir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// guideCLI is a CLI harness that serves the provider as quotaworks/hyperpod, the source the
// guide's configuration names.
func guideCLI(t *testing.T) *tfCLI {
	t.Helper()
	cli := newTFCLI(t)
	host, _, _ := strings.Cut(cli.address, "/")
	cli.address = host + "/quotaworks/hyperpod"
	return cli
}

// guideEdit replaces old, which must occur once in the block of hyperpod_compute_quota.<name>,
// with new.
func guideEdit(t *testing.T, config, name, old, new string) string {
	t.Helper()
	start := strings.Index(config, `resource "hyperpod_compute_quota" "`+name+`" {`)
	if start < 0 {
		t.Fatalf("no hyperpod_compute_quota.%s in the guide's configuration", name)
	}
	end := start + strings.Index(config[start:], "\n}\n")
	if end < start || strings.Count(config[start:end], old) != 1 {
		t.Fatalf("hyperpod_compute_quota.%s of the guide's configuration does not hold %q once", name, old)
	}
	return config[:start] + strings.Replace(config[start:end], old, new, 1) + config[end:]
}

// guideJobs makes the state the guide's scenarios start from, each decision Kueue's.
func guideJobs(t *testing.T) {
	t.Helper()
	jobs := suiteJobs()
	step := func(team, job, class, n string, decided func(*unstructured.Unstructured) bool) {
		t.Helper()
		jobs.submit(t, team, job, guideP5, class+"-priority", gpus(n))
		if _, err := jobs.workloadOf(team, job, decided, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	// finetune has the lower priority, so Kueue's order of preemption among research's jobs is
	// decided by priority, not by the second in which each was admitted.
	step("research", "pretrain", "training", "8", admitted)
	step("research", "finetune", "experimentation", "4", admitted)
	if err := waitBorrowed(acc.dynamic, "research", guideP5, "nvidia.com/gpu", "4"); err != nil {
		t.Fatal(err)
	}
	step("research", "sweep", "experimentation", "2", pendingForQuota)
	step("evaluation", "regression", "training", "6", pendingForQuota)
}

// planWarning is the warning of the plan's output whose summary is summary, as the CLI printed
// it; the plan must give no other admission preview warning.
func planWarning(t *testing.T, r tfResult, summary string) string {
	t.Helper()
	blocks := planWarnings(r.stdout)
	var found []string
	for _, b := range blocks {
		first, _, _ := strings.Cut(b, "\n")
		if strings.Contains(first, "dmission preview") {
			found = append(found, first)
		}
	}
	if len(found) != 1 || found[0] != "Warning: "+summary {
		t.Fatalf("plan: want the one warning %q, got %q\n%s", summary, found, r)
	}
	for _, b := range blocks {
		if strings.HasPrefix(b, "Warning: "+summary+"\n") {
			return b
		}
	}
	panic("unreachable")
}

// planWarnings splits the warnings out of the output of plan -no-color: each starts at a line
// "Warning: <summary>" after an empty line and ends before the next diagnostic, the rule before
// the plan's closing note, or the end, without its trailing empty lines.
func planWarnings(out string) []string {
	lines := strings.Split(out, "\n")
	var blocks []string
	var cur []string
	flush := func() {
		if cur != nil {
			for len(cur) > 0 && strings.TrimSpace(cur[len(cur)-1]) == "" {
				cur = cur[:len(cur)-1]
			}
			blocks = append(blocks, strings.Join(cur, "\n")+"\n")
			cur = nil
		}
	}
	for i, l := range lines {
		starts := i > 0 && lines[i-1] == "" && (strings.HasPrefix(l, "Warning: ") || strings.HasPrefix(l, "Error: "))
		switch {
		case starts:
			flush()
			if strings.HasPrefix(l, "Warning: ") {
				cur = []string{l}
			}
		case strings.HasPrefix(l, "─"):
			flush()
		case cur != nil:
			cur = append(cur, l)
		}
	}
	flush()
	return blocks
}

// runPlanReview builds hyperpod-plan-review and runs it on planFile as the guide says, with the
// cluster found as the provider finds it (KUBE_CONFIG_PATH).
func runPlanReview(t *testing.T, planFile string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hyperpod-plan-review")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/hyperpod-plan-review")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building hyperpod-plan-review: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-plan", planFile)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "KUBE_CONFIG_PATH=" + os.Getenv("KUBE_CONFIG_PATH")}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hyperpod-plan-review: %v\n%s", err, stderr.String())
	}
	return string(out)
}

// reviewOf is the review of a plan (`terraform show -json`) on the cluster as it is now, as
// hyperpod-plan-review makes it.
func reviewOf(t *testing.T, shown string) review.Report {
	t.Helper()
	plan, err := review.ReadPlan(strings.NewReader(shown))
	if err != nil {
		t.Fatal(err)
	}
	in, err := reviewinput.Read(context.Background(), kube.NewClientFromConfig(acc.config, kube.RetrySettings{}), plan)
	if err != nil {
		t.Fatal(err)
	}
	r, err := review.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkKueueCarriesOut waits for Kueue to admit every Workload the review says starts and to
// preempt every one it says is preempted; a review that predicts neither proves nothing here.
func checkKueueCarriesOut(t *testing.T, r review.Report) {
	t.Helper()
	checked := 0
	for _, team := range r.Effect.Teams {
		for _, a := range team.Admitted {
			checked++
			if err := waitWorkloadNamed(a.Workload.Namespace, a.Workload.Name, admitted); err != nil {
				t.Errorf("the review says %s starts: %v", a.Workload, err)
			}
		}
		for _, p := range team.Preempted {
			checked++
			err := waitWorkloadNamed(p.Workload.Namespace, p.Workload.Name, func(w *unstructured.Unstructured) bool {
				_, reason, _ := condition(w, "Evicted")
				return evicted(w) && reason == "Preempted"
			})
			if err != nil {
				t.Errorf("the review says %s is preempted: %v", p.Workload, err)
			}
		}
	}
	if checked == 0 {
		t.Errorf("the review of the guide's pull request predicts no start and no preemption:\n%s", r.Markdown())
	}
}

// waitWorkloadNamed waits until decided holds for the Workload namespace/name.
func waitWorkloadNamed(namespace, name string, decided func(*unstructured.Unstructured) bool) error {
	return acctest.Eventually(context.Background(), time.Minute, "Workload "+namespace+"/"+name,
		func(ctx context.Context) (bool, string, error) {
			w, err := acc.dynamic.Resource(kueue.Workloads).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			return decided(w), fmt.Sprintf("conditions %v", conditions(w)), nil
		})
}

// unreachableWarning is the warning of a plan whose cluster cannot be reached: config's provider
// block pointed at an address where nothing listens (and no KUBE_* variable naming another
// cluster), planned without a refresh, which would fail first, so that the plan itself goes on.
func unreachableWarning(t *testing.T, cli *tfCLI, config string) string {
	t.Helper()
	for _, ev := range kube.EnvVars {
		t.Setenv(ev.Variable, "")
	}
	const setting = "  admission_preview = true\n"
	if strings.Count(config, setting) != 1 {
		t.Fatalf("the guide's provider block does not set %q once", setting)
	}
	cli.writeConfig(strings.Replace(config, setting, setting+"  host              = \"https://127.0.0.1:1\"\n", 1))
	r := cli.run(2*time.Minute, "plan", "-refresh=false", "-detailed-exitcode", "-input=false", "-no-color")
	if r.exitCode != 2 {
		t.Fatalf("plan: want exit 2 (changes), got %s", r)
	}
	return planWarning(t, r, "No admission preview")
}

// writeOrCompareGuideSamples writes the samples (HYPERPOD_UPDATE_GUIDE=1) or compares them with
// the committed ones, the Workload names' random suffixes aside.
func writeOrCompareGuideSamples(t *testing.T, samples map[string]string) {
	t.Helper()
	if t.Failed() {
		return // a failed run's output is no sample
	}
	if os.Getenv(envUpdateGuide) == "1" {
		if err := os.MkdirAll(guideSamplesDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range samples {
			if err := os.WriteFile(filepath.Join(guideSamplesDir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("wrote %d samples to %s: run make docs and commit both", len(samples), guideSamplesDir)
		return
	}
	committed, err := os.ReadDir(guideSamplesDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range committed {
		if _, ok := samples[f.Name()]; !ok {
			t.Errorf("%s/%s is no sample this test makes: remove it from the guide and the directory", guideSamplesDir, f.Name())
		}
	}
	names := make([]string, 0, len(samples))
	for name := range samples {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		raw, err := os.ReadFile(filepath.Join(guideSamplesDir, name))
		if err != nil {
			t.Errorf("%v: run make guide-samples", err)
			continue
		}
		want, got := normalizeGuideSample(string(raw)), normalizeGuideSample(samples[name])
		if want != got {
			t.Errorf("the guide's sample %s is not what a run prints now (run make guide-samples, then commit the samples "+
				"and docs):\n%s", name, firstDifference(want, got))
		}
	}
}

// firstDifference shows the first line where the committed text and a fresh run's differ.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d\n committed: %q\n fresh run: %q\n--- fresh run ---\n%s", i+1, wl, gl, got)
		}
	}
	return ""
}

// guideReasonRow is a row of the guide's table of reasons a job cannot be predicted.
var guideReasonRow = regexp.MustCompile("(?m)^\\| `([A-Za-z]+)` \\|")

// The guide's table of reasons a job cannot be predicted lists every reason the model gives,
// and no other. Runs in the unit tests.
func TestGuideReviewingQuotaChanges_reasons(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(guideTemplatesDir, "reviewing-quota-changes.md.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range guideReasonRow.FindAllStringSubmatch(string(raw), -1) {
		listed = append(listed, m[1])
	}
	for _, r := range admission.UndeterminedReasons {
		if !slices.Contains(listed, string(r)) {
			t.Errorf("the guide's table of reasons lacks %s", r)
		}
	}
	for _, r := range listed {
		if !slices.Contains(admission.UndeterminedReasons, admission.UndeterminedReason(r)) {
			t.Errorf("the guide's table of reasons lists %s, which the model never gives", r)
		}
	}
}

// The comparison of samples ignores only the hash Kueue puts at the end of a Workload's name.
// Runs in the unit tests.
func TestNormalizeGuideSample(t *testing.T) {
	for _, c := range []struct {
		a, b  string
		equal bool
	}{
		{"admitted hyperpod-ns-research/job-sweep-73be8 on ml.p5.48xlarge", "admitted hyperpod-ns-research/job-sweep-0c1d2 on ml.p5.48xlarge", true},
		{"| hyperpod-ns-research/job-pre-train-d4827 |", "| hyperpod-ns-research/job-pre-train-9a9a9 |", true},
		{"job-sweep-73be8", "job-sweep2-73be8", false},
		{"job-sweep-73be8 by job-regression-cbfca", "job-sweep-73be8 by job-finetune-cbfca", false},
		{"uses 12 of 4", "uses 14 of 4", false},
	} {
		if got := normalizeGuideSample(c.a) == normalizeGuideSample(c.b); got != c.equal {
			t.Errorf("%q and %q normalised alike: %v, want %v", c.a, c.b, got, c.equal)
		}
	}
}
