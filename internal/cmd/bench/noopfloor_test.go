package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeNoopOp is a finished opResult of one run per element: provider wall, no-op provider
// wall, terraform_data wall, with the same floor requests in every run.
func fakeNoopOp(name string, wall, noop, tfd []float64, seq float64) *opResult {
	o := &opResult{Op: name}
	for i := range wall {
		o.Provider = append(o.Provider, runSample{WallSeconds: wall[i], NoopProviderSeconds: noop[i], Requests: &requestCounts{}, Replay: &replayResult{Seconds: seq}})
		o.TerraformData = append(o.TerraformData, runSample{WallSeconds: tfd[i]})
	}
	o.finish()
	return o
}

func TestOpFinishNoopProviderFloor(t *testing.T) {
	o := fakeNoopOp(opPlanNoop, []float64{3, 2, 4}, []float64{1.5, 1.4, 1.6}, []float64{0.5, 0.5, 0.5}, 0.5)
	// Provider 3 s; no-op floor 1.5 + 0.5 = 2 s -> 1.5x; terraform_data floor 0.5 + 0.5 = 1 s -> 3x.
	if o.NoopProviderWall.Median != 1.5 || o.NoopProviderFloor != 2 || o.RatioToNoopProviderFloor != 1.5 || o.Ratio != 3 {
		t.Errorf("no-op provider %v s, no-op floor %v s, ratio to it %v, ratio to terraform_data floor %v; want 1.5, 2, 1.5, 3",
			o.NoopProviderWall.Median, o.NoopProviderFloor, o.RatioToNoopProviderFloor, o.Ratio)
	}
	// Without the no-op provider's runs there is no such floor.
	o = fakeOp(opApply, []float64{10}, []float64{2}, 2, 50, nil)
	if o.NoopProviderFloor != 0 || o.RatioToNoopProviderFloor != 0 {
		t.Errorf("apply has a no-op floor: %v, %v", o.NoopProviderFloor, o.RatioToNoopProviderFloor)
	}
}

// fakeNoopSageMakerTeam is a SageMaker-path result at n teams whose read commands took
// read(op) s with the provider and 0.75 s with the no-op provider, its plan-new 1.2 s against the
// no-op provider's 1 s; the floor requests take 0.25 s and terraform_data 0.5 s.
func fakeNoopSageMakerTeam(n int, read func(op string) float64) *teamResult {
	tr := newTeamResult(pathSageMaker, n)
	tr.Ops = append(tr.Ops, &opResult{Op: opRefreshTagged})
	for i, o := range tr.Ops {
		switch o.Op {
		case opPlanNew:
			tr.Ops[i] = fakeNoopOp(o.Op, []float64{1.2}, []float64{1}, []float64{0.5}, 0)
		case opPlanNoop, opPlanChanged, opRefreshOnly, opRefreshTagged:
			tr.Ops[i] = fakeNoopOp(o.Op, []float64{read(o.Op)}, []float64{0.75}, []float64{0.5}, 0.25)
		default:
			tr.Ops[i] = fakeOp(o.Op, []float64{30}, []float64{1.5}, 0.5, 40, nil)
		}
	}
	tr.finish()
	return tr
}

func TestNoopFloorTargets(t *testing.T) {
	const reads = "SageMaker path: every read command (plan-noop, plan-changed, refresh-only, refresh-only-tagged) within 1.5x of the no-op provider's floor"
	const planNew, smPlanNew = "plan-new within 1.3x of the no-op provider's floor", "SageMaker path: plan-new within 1.3x of the no-op provider's floor"
	// 1.5 s against 0.75 + 0.25 s is exactly 1.5x: within.
	atLimit := func(string) float64 { return 1.5 }
	ts := checkTargets(&results{TeamCounts: []*teamResult{fakeNoopSageMakerTeam(100, atLimit), fakeNoopSageMakerTeam(1000, atLimit)}}, 1)
	got := statusOf(t, ts, reads)
	if got.Status != statusPass {
		t.Errorf("reads at 1.5x: %+v", got)
	}
	for _, want := range []string{
		"100 teams, plan-noop: 1.50x (1.50 s vs no-op provider 0.75 s + floor requests 0.25 s; 2.00x of the terraform_data floor)",
		"1000 teams, refresh-only-tagged: 1.50x",
	} {
		if !strings.Contains(got.Detail, want) {
			t.Errorf("reads detail lacks %q: %s", want, got.Detail)
		}
	}
	if !strings.Contains(got.Name, "not terraform_data") {
		t.Errorf("the target does not say which floor it uses: %s", got.Name)
	}
	if got := statusOf(t, ts, smPlanNew); got.Status != statusPass || !strings.Contains(got.Detail, "100 teams, plan-new: 1.20x (1.20 s vs no-op provider 1.00 s + floor requests 0.00 s; 2.40x of the terraform_data floor)") {
		t.Errorf("SageMaker plan-new at 1.2x: %+v", got)
	}
	// Without the Kubernetes path its plan-new target is not checked.
	if got := statusOf(t, ts, planNew); got.Status != statusNotChecked {
		t.Errorf("Kubernetes plan-new without its path: %+v", got)
	}

	// One read command over the limit at one team count fails the target.
	slowChanged := func(op string) float64 {
		if op == opPlanChanged {
			return 2.2
		}
		return 1.0
	}
	ts = checkTargets(&results{TeamCounts: []*teamResult{fakeNoopSageMakerTeam(100, atLimit), fakeNoopSageMakerTeam(500, slowChanged)}}, 1)
	if got := statusOf(t, ts, reads); got.Status != statusFail || !strings.Contains(got.Detail, "500 teams, plan-changed: 2.20x") {
		t.Errorf("reads with a 2x plan-changed: %+v", got)
	}

	// The Kubernetes path's plan-new, 1.4x its no-op floor; its reads are no SageMaker reads.
	kube := fakeTeam(100, 5, 2, 1.5, 40, nil)
	kube.Ops[0] = fakeNoopOp(opPlanNew, []float64{1.4}, []float64{1}, []float64{0.2}, 0)
	kube.Ops[2] = fakeNoopOp(opPlanNoop, []float64{5}, []float64{1}, []float64{0.2}, 0)
	ts = checkTargets(&results{TeamCounts: []*teamResult{kube}}, 1)
	if got := statusOf(t, ts, planNew); got.Status != statusFail || !strings.Contains(got.Detail, "100 teams, plan-new: 1.40x") {
		t.Errorf("Kubernetes plan-new at 1.4x: %+v", got)
	}
	for _, prefix := range []string{reads, smPlanNew} {
		if got := statusOf(t, ts, prefix); got.Status != statusNotChecked {
			t.Errorf("%s without the SageMaker path: %+v", prefix, got)
		}
	}

	// Measured without the no-op provider: not checked, never passed.
	ts = checkTargets(&results{TeamCounts: []*teamResult{fakeTeam(100, 5, 2, 1.5, 40, nil), fakeSageMakerTeam(100, func(string) map[string]int { return nil })}}, 1)
	for _, prefix := range []string{reads, planNew, smPlanNew} {
		if got := statusOf(t, ts, prefix); got.Status != statusNotChecked {
			t.Errorf("%s without the no-op provider: %+v", prefix, got)
		}
	}
}

func TestRenderNoopProviderTable(t *testing.T) {
	r := &results{
		Date:       "2026-12-06",
		Settings:   settings{Paths: []string{pathSageMaker}, Teams: []int{100}, Runs: 1},
		TeamCounts: []*teamResult{fakeNoopSageMakerTeam(100, func(string) float64 { return 1.5 })},
	}
	r.Targets = checkTargets(r, 1)
	md := renderMarkdown(r)
	for _, want := range []string{
		"| operation | wall (s) | no-op provider (s) | no-op spread (s) | no-op floor (s) | ratio to no-op floor | ratio to terraform_data floor |",
		"| plan-new | 1.20 | 1.00 | 1.00-1.00 | 1.00 | 1.20x | 2.40x |",
		"| plan-noop | 1.50 | 0.75 | 0.75-0.75 | 1.00 | 1.50x | 2.00x |",
		"| refresh-only-tagged | 1.50 | 0.75 | 0.75-0.75 | 1.00 | 1.50x | 2.00x |",
		"no-op floor(op) = ",
		"| SageMaker path: every read command",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// Apply and destroy have no no-op provider row.
	if strings.Contains(md, "| apply | 30.00 | 0.") || strings.Contains(md, "| destroy | 30.00 | 0.") {
		t.Errorf("a write command in the no-op provider table:\n%s", md)
	}
	// Without the no-op provider's runs there is no such table.
	var b strings.Builder
	renderKubernetesTeams(&b, fakeTeam(100, 5, 2, 1.5, 40, nil))
	if strings.Contains(b.String(), "no-op provider") {
		t.Errorf("a run without the no-op provider reports it:\n%s", b.String())
	}
}

// fileWindow counts the lines of a file as the requests of the current window; the fake
// Terraform commands append a line per request they make.
type fileWindow struct{ path string }

func (w fileWindow) reset() { _ = os.WriteFile(w.path, nil, 0o644) }

func (w fileWindow) counts() requestCounts {
	data, _ := os.ReadFile(w.path)
	return requestCounts{Total: strings.Count(string(data), "\n")}
}

// The no-op provider's run is counted into none of the provider's requests, and only its own
// requests (none, normally) are noted: what came before it (the provider's, the replay's) is not.
func TestNoopProviderRunKeepsRequestsApart(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "terraform")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ni=0\nwhile [ $i -lt \"$REQUESTS\" ]; do echo req >> \"$REQUESTS_FILE\"; i=$((i+1)); done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := fileWindow{filepath.Join(dir, "requests")}
	fakeTF := func(requests string) *tfRunner {
		return &tfRunner{terraform: script, logDir: dir, timeout: time.Minute,
			env: []string{"REQUESTS=" + requests, "REQUESTS_FILE=" + w.path, "PATH=" + os.Getenv("PATH")}}
	}
	for _, tc := range []struct {
		noopRequests string
		wantNote     bool
	}{{"0", false}, {"2", true}} {
		var notes []string
		b := &runner{tf: fakeTF("3"), noopTF: fakeTF(tc.noopRequests), window: w, rssDir: filepath.Join(dir, "rss"),
			notes: &notes, logf: func(string, ...any) {}}
		ctx := context.Background()
		s, err := b.measureProvider(ctx, dir, "100-provider-r1 plan-noop", exitNoChanges, argsPlan...)
		if err != nil {
			t.Fatal(err)
		}
		// The floor's replay goes through the same window after the provider's run.
		if f, err := os.OpenFile(w.path, os.O_APPEND|os.O_WRONLY, 0); err != nil {
			t.Fatal(err)
		} else {
			_, _ = f.WriteString("replay\nreplay\n")
			_ = f.Close()
		}
		if err := b.measureNoopProvider(ctx, &s, dir, "100-provider-r1 plan-noop", exitNoChanges, argsPlan...); err != nil {
			t.Fatal(err)
		}
		if s.Requests.Total != 3 || s.NoopProviderSeconds <= 0 {
			t.Errorf("no-op provider making %s requests: provider requests %d, want 3; no-op provider %v s", tc.noopRequests, s.Requests.Total, s.NoopProviderSeconds)
		}
		noted := len(notes) == 1 && strings.Contains(notes[0], tc.noopRequests+" API request(s) while the no-op provider ran")
		if noted != tc.wantNote || (!tc.wantNote && len(notes) > 0) {
			t.Errorf("no-op provider making %s requests: notes %q", tc.noopRequests, notes)
		}
	}
}
