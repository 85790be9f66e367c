package main

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

func TestSageMakerRequestFloor(t *testing.T) {
	for n, want := range map[int]int{0: 1, 1: 1, 100: 1, 101: 2, 1000: 10} {
		if got := listPages(n); got != want {
			t.Errorf("listPages(%d) = %d, want %d", n, got, want)
		}
	}
	for _, tc := range []struct {
		op   string
		n    int
		want map[string]int
	}{
		{opPlanNew, 100, map[string]int{}},
		{opApply, 100, map[string]int{opListComputeQuotas: 1, opCreateComputeQuota: 100, opDescribeComputeQuota: 200}},
		{opPlanNoop, 1000, map[string]int{opListComputeQuotas: 10}},
		{opPlanChanged, 10, map[string]int{opListComputeQuotas: 1}},
		{opRefreshOnly, 101, map[string]int{opListComputeQuotas: 2}},
		{opRefreshTagged, 101, map[string]int{opListComputeQuotas: 2, opListTags: 101}},
		{opDestroy, 250, map[string]int{opListComputeQuotas: 3, opDeleteComputeQuota: 250, opDescribeComputeQuota: 500}},
	} {
		if got := sagemakerRequestFloor(tc.op, tc.n); !maps.Equal(got, tc.want) {
			t.Errorf("sagemakerRequestFloor(%s, %d) = %v, want %v", tc.op, tc.n, got, tc.want)
		}
	}
	for _, tc := range []struct {
		op   string
		n    int
		want float64
	}{{opApply, 5, 2}, {opApply, 100, 20}, {opDestroy, 1000, 200}, {opPlanNoop, 1000, 0}, {opPlanNew, 100, 0}} {
		if got := pollBound(tc.op, tc.n); got != tc.want {
			t.Errorf("pollBound(%s, %d) = %v, want %v", tc.op, tc.n, got, tc.want)
		}
	}
}

// A waiter's last Describe after a delete answers ResourceNotFound: not a failure.
func TestCountCalls(t *testing.T) {
	got := countCalls([]sagemakeremulator.Call{
		{Operation: opListComputeQuotas}, {Operation: opDescribeComputeQuota},
		{Operation: opDescribeComputeQuota, Status: 400, ErrorCode: "ResourceNotFound"},
		{Operation: opCreateComputeQuota, Status: 400, ErrorCode: "ThrottlingException"},
	})
	want := map[string]int{opListComputeQuotas: 1, opDescribeComputeQuota: 2, opCreateComputeQuota: 1}
	if got.Total != 4 || got.Failed != 1 || !maps.Equal(got.ByOperation, want) {
		t.Errorf("countCalls = %+v", got)
	}
}

// The floor's client does against the emulator exactly what the request floor counts: the
// emulator's settle rule gives each wait two Describes, and the list's pages hold 100 quotas.
func TestFloorRequestsMatchTheFloor(t *testing.T) {
	settle := emulatorSettle
	emu, err := sagemakeremulator.Start(sagemakeremulator.Options{
		Clusters: []sagemakeremulator.Cluster{{Name: benchClusterName, InstanceGroups: []sagemakeremulator.InstanceGroup{
			{Name: "g5", InstanceType: "ml.g5.12xlarge", Count: 1}, {Name: "p5", InstanceType: "ml.p5.48xlarge", Count: 1},
			{Name: "trn1", InstanceType: "ml.trn1.32xlarge", Count: 1}, {Name: "c5", InstanceType: "ml.c5.4xlarge", Count: 1},
		}}},
		Settle: &settle,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = emu.Close() }()
	b := &sagemakerBench{emu: emu, clusterARN: emu.ClusterARN(benchClusterName), floor: floorClient(emu)}
	ctx := context.Background()
	const n = 101
	total := func(m map[string]int) (s int) {
		for _, v := range m {
			s += v
		}
		return s
	}
	for _, step := range []struct {
		op   string
		send func(context.Context) (replayResult, error)
	}{
		{opApply, func(ctx context.Context) (replayResult, error) { return b.createAll(ctx, n) }},
		{opPlanNoop, b.listAll},
		{opRefreshTagged, b.listAllWithTags},
		{opDestroy, b.deleteAll},
	} {
		emu.ResetCalls()
		res, err := step.send(ctx)
		if err != nil {
			t.Fatalf("%s: %v", step.op, err)
		}
		floor := sagemakerRequestFloor(step.op, n)
		if got := countCalls(emu.Calls()); !maps.Equal(got.ByOperation, floor) || res.Requests != total(floor) || got.Failed != 0 {
			t.Errorf("%s: sent %v (%d counted), floor %v", step.op, got.ByOperation, res.Requests, floor)
		}
	}
	if left := emu.Quotas(); len(left) != 0 {
		t.Errorf("%d quotas left after deleteAll", len(left))
	}
}

// fakeSageMakerTeam is a finished SageMaker-path result whose commands made reqs(op) requests.
func fakeSageMakerTeam(n int, reqs func(op string) map[string]int) *teamResult {
	tr := newTeamResult(pathSageMaker, n)
	for _, o := range tr.Ops {
		c := requestCounts{ByOperation: reqs(o.Op)}
		for _, v := range c.ByOperation {
			c.Total += v
		}
		o.Provider = []runSample{{WallSeconds: 30, Requests: &c, Replay: &replayResult{Seconds: 0.5}}}
		o.TerraformData = []runSample{{WallSeconds: 1.5}}
	}
	tr.finish()
	return tr
}

func TestRequestFloorTargets(t *testing.T) {
	atFloor := func(n int) func(string) map[string]int {
		return func(op string) map[string]int { return sagemakerRequestFloor(op, n) }
	}
	ts := checkTargets(&results{TeamCounts: []*teamResult{fakeSageMakerTeam(100, atFloor(100)), fakeSageMakerTeam(1000, atFloor(1000))}}, 1)
	for _, prefix := range []string{"SageMaker path: a no-op plan", "SageMaker path: apply and destroy", "no requests when planning"} {
		if got := statusOf(t, ts, prefix); got.Status != statusPass {
			t.Errorf("%s: %+v", prefix, got)
		}
	}
	if got := statusOf(t, ts, "SageMaker path: plan-new at 100 teams"); got.Status != statusFail || !strings.Contains(got.Detail, "15.00x") {
		t.Errorf("plan-new ratio 30 s vs 1.5 + 0.5 s: %+v", got)
	}
	// A refresh that describes a quota, and a create that polls once more.
	over := fakeSageMakerTeam(10, func(op string) map[string]int {
		m := sagemakerRequestFloor(op, 10)
		switch op {
		case opPlanNoop:
			m[opDescribeComputeQuota] = 1
		case opApply:
			m[opDescribeComputeQuota]++
		}
		return m
	})
	ts = checkTargets(&results{TeamCounts: []*teamResult{over}}, 1)
	if got := statusOf(t, ts, "SageMaker path: a no-op plan"); got.Status != statusFail || !strings.Contains(got.Detail, "10 teams on the SageMaker path, plan-noop: DescribeComputeQuota 1, ListComputeQuotas 1 against a floor of ListComputeQuotas 1") {
		t.Errorf("reads: %+v", got)
	}
	if got := statusOf(t, ts, "SageMaker path: apply and destroy"); got.Status != statusFail || !strings.Contains(got.Detail, "DescribeComputeQuota 21") {
		t.Errorf("writes: %+v", got)
	}
	// The Kubernetes path's results leave the SageMaker targets unchecked.
	ts = checkTargets(&results{TeamCounts: []*teamResult{fakeTeam(100, 5, 2, 1.5, 40, nil)}}, 1)
	if got := statusOf(t, ts, "SageMaker path: a no-op plan"); got.Status != statusNotChecked {
		t.Errorf("without the SageMaker path: %+v", got)
	}
}

func TestRenderSageMaker(t *testing.T) {
	r := &results{
		Date:       "2026-12-03",
		Settings:   settings{Paths: []string{pathSageMaker}, Teams: []int{100}, Runs: 1},
		TeamCounts: []*teamResult{fakeSageMakerTeam(100, func(op string) map[string]int { return sagemakerRequestFloor(op, 100) })},
	}
	r.Targets = checkTargets(r, 1)
	md := renderMarkdown(r)
	for _, want := range []string{
		"## SageMaker path: 100 teams",
		"| apply | 30.00 | 30.00-30.00 | 2.00 | 15.00x | 1.50 | 0.50 | 20.00 | 1.36x | 0.0 |",
		"| plan-noop | 1 | 1 | 1.00x | ListComputeQuotas 1 | ListComputeQuotas 1 |",
		"| destroy | 301 | 301 | 1.00x | DeleteComputeQuota 100, DescribeComputeQuota 200, ListComputeQuotas 1 |",
		"SageMaker path: floor(op) = ",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Kubernetes path") || strings.Contains(md, "one GET of every object") {
		t.Errorf("a SageMaker-only run describes the Kubernetes path:\n%s", md)
	}
}
