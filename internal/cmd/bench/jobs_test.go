package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

func TestChangedTeams(t *testing.T) {
	for _, n := range []int{1, 7, 20, 21, 100, 1000} {
		got := changedTeams(n)
		if want := min(n, changedQuotas); len(got) != want {
			t.Errorf("%d teams: %d changed, want %d", n, len(got), want)
		}
		for i := range got {
			if i < 1 || i > n {
				t.Errorf("%d teams: changed team %d does not exist", n, i)
			}
		}
		// Spread over the teams: the last changed team is in the last stretch of n/20.
		last := 0
		for i := range got {
			last = max(last, i)
		}
		if n >= changedQuotas && last < n-n/changedQuotas {
			t.Errorf("%d teams: the changed teams end at %d, not spread over all", n, last)
		}
	}
}

// quotaBlocks splits a teams file into its quota resources by team index.
func quotaBlocks(t *testing.T, config string) map[int]string {
	t.Helper()
	out := map[int]string{}
	re := regexp.MustCompile(`(?s)resource "hyperpod_compute_quota" "t(\d{4})" \{.*?\n\}`)
	for _, m := range re.FindAllStringSubmatch(config, -1) {
		i, err := strconv.Atoi(m[1])
		if err != nil {
			t.Fatal(err)
		}
		out[i] = m[0]
	}
	return out
}

func TestJobsTeamsConfig(t *testing.T) {
	const n = 30
	changed := changedTeams(n)
	blocks := quotaBlocks(t, jobsTeamsConfig(n, changed))
	if len(blocks) != n {
		t.Fatalf("%d quotas, want %d", len(blocks), n)
	}
	gpus := func(block string) int {
		re := regexp.MustCompile(`instance_type = "` + regexp.QuoteMeta(jobsInstanceType.InstanceType) + `", accelerators = (\d+)`)
		m := re.FindStringSubmatch(block)
		if m == nil {
			t.Fatalf("no quota of %s in\n%s", jobsInstanceType.InstanceType, block)
		}
		v, err := strconv.Atoi(m[1])
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for i, block := range blocks {
		if !strings.Contains(block, fmt.Sprintf("fair_share_weight = %d", jobsFairShareWeight)) {
			t.Errorf("team %d has no fair-share weight:\n%s", i, block)
		}
		want := runningPerTeam
		if changed[i] {
			want++
		}
		if got := gpus(block); got != want {
			t.Errorf("team %d: %d GPUs of the jobs' type, want %d (changed %v)", i, got, want, changed[i])
		}
	}
	// The main configuration sets no weight.
	if strings.Contains(teamsConfig(providerConfig, 3, 0), "fair_share_weight") {
		t.Error("the main configuration sets fair_share_weight")
	}
}

func TestJobsWorkload(t *testing.T) {
	u := jobsWorkload(7, 3)
	var w kueue.Workload
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &w); err != nil {
		t.Fatal(err)
	}
	team := teamName(7)
	if w.Namespace != quota.NamespaceName(team) || w.Spec.QueueName != quota.LocalQueueName(team) {
		t.Errorf("namespace %q, queue %q: not team %s's", w.Namespace, w.Spec.QueueName, team)
	}
	if w.Kind != kueue.KindWorkload || w.APIVersion != kueue.GroupVersion.String() {
		t.Errorf("kind %s/%s", w.APIVersion, w.Kind)
	}
	if len(w.Spec.PodSets) != 1 || w.Spec.PodSets[0].Count != 1 {
		t.Fatalf("pod sets %+v", w.Spec.PodSets)
	}
	spec := w.Spec.PodSets[0].Template.Spec
	if spec.NodeSelector[quota.LabelInstanceType] != jobsInstanceType.InstanceType {
		t.Errorf("node selector %v: the jobs must fit only the flavor of %s", spec.NodeSelector, jobsInstanceType.InstanceType)
	}
	if g := spec.Containers[0].Resources.Requests[catalog.ResourceNvidiaGPU]; g.Value() != 1 {
		t.Errorf("requests %v GPUs, want 1", g.String())
	}
	if _, ok := u.Object["status"]; ok {
		t.Error("a created Workload carries a status")
	}
	if got := jobsWorkload(7, 2).GetName(); got == u.GetName() {
		t.Errorf("jobs 2 and 3 of a team share the name %s", got)
	}
}

func TestConcurrently(t *testing.T) {
	var calls atomic.Int64
	if err := concurrently(context.Background(), 100, func(context.Context, int) error { calls.Add(1); return nil }); err != nil || calls.Load() != 100 {
		t.Errorf("%d calls, %v; want 100, nil", calls.Load(), err)
	}
	boom := errors.New("boom")
	calls.Store(0)
	err := concurrently(context.Background(), 10000, func(_ context.Context, i int) error {
		calls.Add(1)
		if i == 5 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want %v", err, boom)
	}
	if calls.Load() == 10000 {
		t.Error("every call ran after the first error")
	}
}

func TestCountPreviews(t *testing.T) {
	out := "╷\n│ " + previewSummary + ": team bench-0001\n│ ...\n╵\n╷\n│ Warning: No admission preview\n╵\n╷\n│ " +
		previewSummary + ": team bench-0002\n╵\nPlan: 0 to add, 2 to change, 0 to destroy.\n"
	if got := countPreviews(out); got != 2 {
		t.Errorf("countPreviews = %d, want 2", got)
	}
}

func jobsPlanOf(walls []float64, previews int) jobsPlan {
	var p jobsPlan
	for _, w := range walls {
		p.Runs = append(p.Runs, jobsSample{runSample: runSample{WallSeconds: w, CPUSeconds: w / 2, Requests: &requestCounts{Total: 10}}, Previews: previews})
	}
	return p
}

func TestJobsResultFinish(t *testing.T) {
	j := &jobsResult{Teams: 100, PreviewOn: jobsPlanOf([]float64{6, 4, 5}, 20), PreviewOff: jobsPlanOf([]float64{3, 3.5, 4}, 0)}
	j.finish()
	if j.Ratio != 5/3.5 {
		t.Errorf("ratio %v, want %v", j.Ratio, 5/3.5)
	}
	if j.PreviewWait.N != 3 || j.PreviewWait.Max != 3 || j.PreviewWait.Min != 0.5 {
		t.Errorf("waits %+v: want the per-run differences 3, 0.5, 1", j.PreviewWait)
	}
	if j.PreviewCPU.N != 3 || j.PreviewCPU.Max != 1.5 {
		t.Errorf("CPU differences %+v: want the per-run differences 1.5, 0.25, 0.5", j.PreviewCPU)
	}
	if j.PreviewOn.Previews.Max != 20 || j.PreviewOff.Previews.Max != 0 {
		t.Errorf("previews %+v / %+v", j.PreviewOn.Previews, j.PreviewOff.Previews)
	}
}

func TestPreviewTargets(t *testing.T) {
	scenario := func(teams int, on, off []float64, previews int) *jobsResult {
		j := &jobsResult{Teams: teams, PreviewOn: jobsPlanOf(on, previews), PreviewOff: jobsPlanOf(off, 0)}
		j.finish()
		return j
	}
	bench := func(cpu float64, err string) []goBenchmark {
		return []goBenchmark{{Name: previewBenchmark + "/fairSharing=false", CPUSeconds: 9}, {Name: previewBenchmark + "/" + fairSharingBench, CPUSeconds: cpu, NsPerOp: cpu * 1e9, Error: err}}
	}
	for _, tc := range []struct {
		name                  string
		preview               *previewResults
		ratio, wait, benchCPU string
	}{
		{"not measured", nil, statusNotChecked, statusNotChecked, statusNotChecked},
		{"within both", &previewResults{Scenarios: []*jobsResult{scenario(100, []float64{4}, []float64{3}, 20), scenario(1000, []float64{40}, []float64{30}, 20)},
			Benchmarks: bench(0.8, "")}, statusPass, statusPass, statusPass},
		{"slow at 1000 teams", &previewResults{Scenarios: []*jobsResult{scenario(100, []float64{4}, []float64{3}, 20), scenario(1000, []float64{60}, []float64{30}, 20)},
			Benchmarks: bench(20, "")}, statusFail, statusFail, statusFail},
		{"within the ratio, over the cap", &previewResults{Scenarios: []*jobsResult{scenario(1000, []float64{100}, []float64{80}, 20)}}, statusPass, statusFail, statusNotChecked},
		{"no previews made", &previewResults{Scenarios: []*jobsResult{scenario(100, []float64{3}, []float64{3}, 0)},
			Benchmarks: bench(0, "build failed")}, statusNotChecked, statusNotChecked, statusNotChecked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := previewTargets(&results{Preview: tc.preview})
			for prefix, want := range map[string]string{
				opPlanChangedWithJobs + " within":                 tc.ratio,
				"no plan waits more than":                         tc.wait,
				"one preview of " + previewBenchmark + "' cohort": tc.benchCPU,
			} {
				if got := statusOf(t, ts, prefix); got.Status != want {
					t.Errorf("%s: %s (%s), want %s", prefix, got.Status, got.Detail, want)
				}
			}
		})
	}
}

func TestNsPerOp(t *testing.T) {
	name := previewBenchmark + "/" + fairSharingBench
	for _, tc := range []struct {
		out  string
		want float64
		ok   bool
	}{
		{"goos: linux\n" + name + "-2   \t       1\t20123456789 ns/op\nPASS\n", 20123456789, true},
		{name + " 1 42 ns/op\n", 42, true},
		{previewBenchmark + "/fairSharing=false-2 1 7 ns/op\n", 0, false},
		{name + "-2 1 x ns/op\n", 0, false},
		{"PASS\n", 0, false},
	} {
		got, ok := nsPerOp(tc.out, name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("nsPerOp(%q) = %v, %v; want %v, %v", tc.out, got, ok, tc.want, tc.ok)
		}
	}
}

func TestRenderPreview(t *testing.T) {
	j := &jobsResult{Teams: 100, Jobs: 400, PendingJobs: 200, PendingReason: "couldn't assign flavors",
		PreviewOn: jobsPlanOf([]float64{4}, 20), PreviewOff: jobsPlanOf([]float64{3}, 0)}
	j.finish()
	var b strings.Builder
	renderPreview(&b, &previewResults{Scenarios: []*jobsResult{j}, Benchmarks: []goBenchmark{{Name: previewBenchmark + "/" + fairSharingBench, Error: "a | b"}}})
	md := b.String()
	for _, want := range []string{"## Admission preview", "### " + opPlanChangedWithJobs, "### " + previewBenchmark, "| 100 | on (default) | 4.00",
		"| 100 | false | 3.00", ratioText(j.Ratio), "couldn't assign flavors", `a \| b`} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
	b.Reset()
	renderPreview(&b, nil)
	if b.Len() != 0 {
		t.Errorf("a run without the section renders %q", b.String())
	}
}
