package main

import (
	"strings"
	"testing"
)

// fakeOp builds a finished opResult from per-run provider and terraform_data wall times, with
// the sequential replay time, peak RSS and requests the same in every run.
func fakeOp(name string, wall, tfd []float64, seq float64, rssMB float64, reqs map[string]int) *opResult {
	o := &opResult{Op: name}
	for i := range wall {
		c := requestCounts{ByVerb: map[string]int{}, ByResource: map[string]int{}, ByVerbResource: map[string]int{}}
		for k, v := range reqs {
			verb, res, _ := strings.Cut(k, " ")
			c.Total += v
			c.ByVerb[verb] += v
			c.ByResource[res] += v
			c.ByVerbResource[k] += v
		}
		o.Provider = append(o.Provider, runSample{WallSeconds: wall[i], PeakRSSBytes: int64(rssMB * 1e6), Requests: &c, Replay: &replayResult{Seconds: seq}})
		o.TerraformData = append(o.TerraformData, runSample{WallSeconds: tfd[i]})
	}
	o.finish()
	return o
}

func fakeTeam(n int, noopWall, noopTFD, seq float64, rss float64, noopReqs map[string]int) *teamResult {
	tr := newTeamResult(pathKubernetes, n) // plan-changed and refresh-only stay unmeasured
	gets := map[string]int{"get namespaces": n}
	tr.Ops[0] = fakeOp(opPlanNew, []float64{1}, []float64{1}, 0, rss, nil)
	tr.Ops[1] = fakeOp(opApply, []float64{10, 12, 11}, []float64{2, 2, 2}, 2, rss, gets)
	tr.Ops[2] = fakeOp(opPlanNoop, []float64{noopWall}, []float64{noopTFD}, seq, rss, noopReqs)
	tr.Ops[5] = fakeOp(opDestroy, []float64{20}, []float64{2}, 2, rss, gets)
	return tr
}

func statusOf(t *testing.T, ts []targetResult, prefix string) targetResult {
	t.Helper()
	for _, x := range ts {
		if strings.HasPrefix(x.Name, prefix) {
			return x
		}
	}
	t.Fatalf("no target %q in %+v", prefix, ts)
	return targetResult{}
}

func TestOpFinishFloorAndRatio(t *testing.T) {
	o := fakeOp(opApply, []float64{10, 12, 11}, []float64{2, 3, 1}, 2, 50, nil)
	if o.Wall.Median != 11 || o.TFDataWall.Median != 2 || o.Floor != 4 || o.Ratio != 2.75 {
		t.Errorf("median %v, tf_data %v, floor %v, ratio %v; want 11, 2, 4, 2.75", o.Wall.Median, o.TFDataWall.Median, o.Floor, o.Ratio)
	}
	if o.PeakRSSMB.Median != 50 {
		t.Errorf("peak RSS %v MB", o.PeakRSSMB.Median)
	}
}

func TestTargetsPassAndFail(t *testing.T) {
	gets := func(n int) map[string]int {
		return map[string]int{"get namespaces": n, "get clusterqueues": n, "list resourceflavors": 1}
	}
	r := &results{TeamCounts: []*teamResult{
		// 100 teams: plan 5 s vs floor 2 + 1.5 = 3.5 s -> 1.43x; apply 11 vs 4 -> 2.75x; destroy 20 vs 4 -> 5x.
		fakeTeam(100, 5, 2, 1.5, 40, gets(100)),
		// 1000 teams: provider time (50-20)/1000 = 30 ms per team vs (5-2)/100 = 30 ms -> 1.0x; RSS 160 MB.
		fakeTeam(1000, 50, 20, 15, 160, gets(1000)),
	}}
	ts := checkTargets(r, 1)
	for prefix, want := range map[string]string{
		"plan-noop at 100 teams":                  statusPass,
		"apply at 100 teams":                      statusPass,
		"destroy at 100 teams":                    statusFail,
		"provider time per team":                  statusPass,
		"provider peak RSS":                       statusFail,
		"no discovery":                            statusPass,
		"at most 1 LIST per kind":                 statusPass,
		"no requests when planning new resources": statusPass,
		"plan-new at 100 teams":                   statusPass,
		"SageMaker path: plan-new at 100 teams":   statusNotChecked,
	} {
		if got := statusOf(t, ts, prefix); got.Status != want {
			t.Errorf("%s: %s (%s), want %s", prefix, got.Status, got.Detail, want)
		}
	}
	if got := statusOf(t, ts, "destroy at 100 teams").Detail; !strings.Contains(got, "5.00x") {
		t.Errorf("destroy detail %q lacks the ratio", got)
	}
	if len(missed(ts)) != 2 {
		t.Errorf("missed: %+v", missed(ts))
	}
}

func TestTargetsRequests(t *testing.T) {
	bad := map[string]int{"discovery -": 2, "openapi -": 1, "list clusterqueues": 2, "list namespaces": 1}
	tr := fakeTeam(10, 1, 1, 0, 10, bad)
	tr.Ops[0] = fakeOp(opPlanNew, []float64{1}, []float64{1}, 0, 10, map[string]int{"get namespaces": 3})
	ts := checkTargets(&results{TeamCounts: []*teamResult{tr}}, 1)
	if got := statusOf(t, ts, "no discovery"); got.Status != statusFail || !strings.Contains(got.Detail, "2 discovery, 1 openapi") {
		t.Errorf("discovery: %+v", got)
	}
	if got := statusOf(t, ts, "at most 1 LIST"); got.Status != statusFail || !strings.Contains(got.Detail, "2 x list clusterqueues") || strings.Contains(got.Detail, "namespaces") {
		t.Errorf("lists: %+v", got)
	}
	if got := statusOf(t, ts, "no requests when planning"); got.Status != statusFail || !strings.Contains(got.Detail, "3 requests") {
		t.Errorf("plan-new: %+v", got)
	}
	// Zero LISTs allowed: one LIST of namespaces is then too many.
	ts = checkTargets(&results{TeamCounts: []*teamResult{tr}}, 0)
	if got := statusOf(t, ts, "at most 0 LIST"); !strings.Contains(got.Detail, "1 x list namespaces") {
		t.Errorf("lists with none allowed: %+v", got)
	}
}

// Skipped team counts and unmeasured operations are "not checked", never passed.
func TestTargetsNotChecked(t *testing.T) {
	r := &results{TeamCounts: []*teamResult{fakeTeam(10, 1, 1, 0, 10, nil)}}
	ts := checkTargets(r, 1)
	for _, prefix := range []string{"plan-noop at 100", "apply at 100", "destroy at 100", "provider time per team", "provider peak RSS"} {
		if got := statusOf(t, ts, prefix); got.Status != statusNotChecked {
			t.Errorf("%s: %s, want not checked", prefix, got.Status)
		}
	}
	// 100 teams whose run failed before the no-op plan.
	failed := newTeamResult(pathKubernetes, 100)
	failed.op(opPlanNew).Provider = []runSample{{WallSeconds: 1, Requests: &requestCounts{}}}
	failed.op(opPlanNew).TerraformData = []runSample{{WallSeconds: 1}}
	for _, o := range failed.Ops {
		o.finish()
	}
	ts = checkTargets(&results{TeamCounts: []*teamResult{failed}}, 1)
	if got := statusOf(t, ts, "plan-noop at 100"); got.Status != statusNotChecked {
		t.Errorf("unmeasured no-op plan: %+v", got)
	}
	if got := statusOf(t, ts, "no discovery"); got.Status != statusNotChecked {
		t.Errorf("discovery without a no-op plan: %+v", got)
	}
	if len(missed(ts)) != 0 {
		t.Errorf("missed: %+v", missed(ts))
	}
}

// The no-op provider's plan of new resources is reported beside the provider's, against the
// same floor, and leaves the target's outcome to the provider's own ratio.
func TestNoopProviderPlanNew(t *testing.T) {
	tr := fakeTeam(100, 5, 2, 1.5, 40, nil)
	o := tr.op(opPlanNew)
	o.Provider = []runSample{{WallSeconds: 4, NoopProviderSeconds: 2.4}, {WallSeconds: 3, NoopProviderSeconds: 2}, {WallSeconds: 5, NoopProviderSeconds: 3}}
	o.TerraformData = []runSample{{WallSeconds: 1}, {WallSeconds: 1}, {WallSeconds: 1}}
	o.finish()
	if o.NoopProviderWall.Median != 2.4 || o.NoopProviderRatio != 2.4 || o.Ratio != 4 {
		t.Fatalf("no-op provider median %v, ratio %v, provider ratio %v; want 2.4, 2.4, 4", o.NoopProviderWall.Median, o.NoopProviderRatio, o.Ratio)
	}
	r := &results{TeamCounts: []*teamResult{tr}}
	got := statusOf(t, checkTargets(r, 1), "plan-new at 100 teams")
	if got.Status != statusFail || !strings.HasSuffix(got.Detail, "; the no-op provider: 2.40 s, 2.40x") {
		t.Errorf("target %+v", got)
	}
	var b strings.Builder
	renderKubernetesTeams(&b, tr)
	if want := "plan-new with the no-op provider (internal/cmd/noopprovider: these schemas, every RPC answered without work): " +
		"2.40 s (spread 2.00-3.00), 2.40x its floor; the provider itself adds the other 1.60 s."; !strings.Contains(b.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, b.String())
	}
	o.Provider = o.Provider[:1]
	o.Provider[0].NoopProviderSeconds = 0
	o.finish()
	b.Reset()
	renderKubernetesTeams(&b, tr)
	if strings.Contains(b.String(), "no-op provider") || o.NoopProviderRatio != 0 {
		t.Errorf("a run without the no-op provider reports it:\n%s", b.String())
	}
}

func TestRenderMarkdown(t *testing.T) {
	r := &results{
		Date:       "2026-12-02",
		Machine:    machineInfo{ProviderCommit: "abc123", TerraformVersion: "1.11.4", CPUs: 2},
		Settings:   settings{Paths: []string{pathKubernetes}, Teams: []int{100}, Runs: 1},
		TeamCounts: []*teamResult{fakeTeam(100, 5, 2, 1.5, 40, map[string]int{"get namespaces": 100})},
	}
	r.Targets = checkTargets(r, 1)
	md := renderMarkdown(r)
	for _, want := range []string{
		"# Benchmark results, 2026-12-02",
		"## Kubernetes path: 100 teams",
		"| plan-noop | 5.00 | 5.00-5.00 | 3.50 | 1.43x | 2.00 | 1.50 | 40.0 |",
		"| plan-noop | 100 | get 100 | namespaces 100 |",
		"| plan-changed | not measured |",
		"floor(op) = ",
		"| provider peak RSS under 150 MB at 1000 teams | NOT CHECKED |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// The query is checked at 1000 teams against refresh-only's floor at the same team count, on
// every path measured; other team counts are reported only.
func TestQueryTarget(t *testing.T) {
	team := func(path string, n int, query, refreshTFD, refreshSeq float64) *teamResult {
		tr := newTeamResult(path, n)
		*tr.op(opRefreshOnly) = *fakeOp(opRefreshOnly, []float64{1}, []float64{refreshTFD}, refreshSeq, 1, nil)
		q := tr.op(opQuery)
		q.Provider = []runSample{{WallSeconds: query}}
		tr.finish()
		return tr
	}
	name := "query (terraform query -generate-config-out) of 1000 teams"
	r := &results{TeamCounts: []*teamResult{team(pathKubernetes, 100, 2, 1, 1)}}
	if got := statusOf(t, []targetResult{queryTarget(r)}, name); got.Status != statusNotChecked || !strings.Contains(got.Detail, "100 teams: 1.00x (2.00 s vs refresh floor 2.00 s)") {
		t.Errorf("only 100 teams: %+v", got)
	}
	r.TeamCounts = append(r.TeamCounts, team(pathKubernetes, 1000, 14, 8, 2), team(pathSageMaker, 1000, 9, 5, 1))
	if got := statusOf(t, []targetResult{queryTarget(r)}, name); got.Status != statusPass ||
		!strings.Contains(got.Detail, "1000 teams: 1.40x (14.00 s vs refresh floor 10.00 s)") ||
		!strings.Contains(got.Detail, "1000 teams on the SageMaker path: 1.50x") {
		t.Errorf("within 1.5x on both paths: %+v", got)
	}
	r.TeamCounts[2] = team(pathSageMaker, 1000, 10, 5, 1)
	if got := statusOf(t, []targetResult{queryTarget(r)}, name); got.Status != statusFail {
		t.Errorf("1.67x on the SageMaker path: %+v", got)
	}
}

func TestQueryConfig(t *testing.T) {
	got := queryConfig(3, kubernetesLists)
	for _, want := range []string{
		"list \"hyperpod_compute_quota\" \"teams\" {\n  provider = hyperpod\n  limit    = 3\n  config {\n    team_prefix = \"bench-\"\n  }\n}\n",
		"list \"hyperpod_team_namespace\" \"teams\" {",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the list blocks lack %q:\n%s", want, got)
		}
	}
	for v, want := range map[string]bool{"1.15.0": true, "1.14.0": true, "1.11.4": false, "2.0.0": true, "": false} {
		if hasQuery(v) != want {
			t.Errorf("hasQuery(%q) = %v", v, !want)
		}
	}
}
