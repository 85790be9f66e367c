package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Target outcomes. A target whose inputs were not measured (a team count skipped, a run
// that failed before the operation) is "not checked", never passed.
const (
	statusPass       = "pass"
	statusFail       = "fail"
	statusNotChecked = "not checked"
)

// Thresholds of the targets.
const (
	maxNoopPlanRatio    = 2.0   // no-op plan at 100 teams vs its floor
	maxPlanNewRatio     = 2.0   // plan of new resources at 100 teams vs its floor, on both paths
	maxApplyRatio       = 3.0   // apply and destroy at 100 teams vs their floors
	maxLinearGrowth     = 1.3   // provider time per team, 1000 vs 100 teams
	maxPeakRSSMB        = 150.0 // at 1000 teams, 10^6 bytes
	defaultListsPerKind = 1     // LISTs per resource kind a no-op plan may make
	maxPreviewPlanRatio = 1.5   // plan-changed-with-jobs, admission preview on vs off
	// Against the no-op provider's floor, at every measured team count.
	maxReadRatioToNoop    = 1.5 // the SageMaker path's read commands
	maxPlanNewRatioToNoop = 1.3 // plan of new resources, on both paths
	// maxQueryRatio is the query of every team at queryTargetTeams against refresh-only's floor.
	maxQueryRatio    = 1.5
	queryTargetTeams = 1000
)

type targetResult struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// checkTargets evaluates every target on finished results.
func checkTargets(r *results, maxListsPerKind int) []targetResult {
	var out []targetResult
	out = append(out, ratioTarget(r, pathKubernetes, 100, opPlanNoop, maxNoopPlanRatio))
	out = append(out, ratioTarget(r, pathKubernetes, 100, opApply, maxApplyRatio))
	out = append(out, ratioTarget(r, pathKubernetes, 100, opDestroy, maxApplyRatio))
	out = append(out, ratioTarget(r, pathKubernetes, 100, opPlanNew, maxPlanNewRatio))
	out = append(out, ratioTarget(r, pathSageMaker, 100, opPlanNew, maxPlanNewRatio))
	out = append(out, noopFloorTarget(r, pathKubernetes, []string{opPlanNew}, maxPlanNewRatioToNoop))
	out = append(out, noopFloorTarget(r, pathSageMaker, []string{opPlanNew}, maxPlanNewRatioToNoop))
	out = append(out, noopFloorTarget(r, pathSageMaker, sagemakerReadOps, maxReadRatioToNoop))
	out = append(out, queryTarget(r))
	out = append(out, linearTarget(r))
	out = append(out, rssTarget(r))
	out = append(out, requestTargets(r, maxListsPerKind)...)
	out = append(out, requestFloorTargets(r)...)
	out = append(out, previewTargets(r)...)
	return out
}

// teamsOn is "100 teams", with the path when it is the SageMaker path.
func teamsOn(tr *teamResult) string {
	if tr.Path == pathSageMaker {
		return fmt.Sprintf("%d teams on the SageMaker path", tr.Teams)
	}
	return fmt.Sprintf("%d teams", tr.Teams)
}

// pathPrefix names the SageMaker path in target names and details; the Kubernetes path's keep
// the names they always had.
func pathPrefix(path string) string {
	if path == pathSageMaker {
		return "SageMaker path: "
	}
	return ""
}

// measured reports whether op has provider and terraform_data runs.
func measured(o *opResult) bool {
	return o != nil && o.Wall.N > 0 && o.TFDataWall.N > 0
}

func ratioTarget(r *results, path string, teams int, op string, limit float64) targetResult {
	t := targetResult{Name: fmt.Sprintf("%s%s at %d teams within %gx of its floor", pathPrefix(path), op, teams, limit)}
	tr := r.team(path, teams)
	if tr == nil || !measured(tr.op(op)) {
		t.Status, t.Detail = statusNotChecked, fmt.Sprintf("%s%s at %d teams was not measured", pathPrefix(path), op, teams)
		return t
	}
	o := tr.op(op)
	t.Detail = fmt.Sprintf("%.2fx: %.2f s vs floor %.2f s (terraform_data %.2f s + sequential requests %.2f s)",
		o.Ratio, o.Wall.Median, o.Floor, o.TFDataWall.Median, o.Sequential.Median)
	if o.NoopProviderWall.N > 0 {
		t.Detail += fmt.Sprintf("; the no-op provider: %.2f s, %.2fx", o.NoopProviderWall.Median, o.NoopProviderRatio)
	}
	t.Status = passIf(o.Ratio <= limit)
	return t
}

// noopFloorTarget checks ops on path at every measured team count against the no-op provider's
// floor, not terraform_data's: a provider that does no work is already far from terraform_data
// (plan-new, read commands: about 1.8-2x its CPU, Terraform core's side of the plugin protocol),
// so only the no-op floor is one a plugin provider can reach. The ratio to the terraform_data
// floor is reported beside it as information.
func noopFloorTarget(r *results, path string, ops []string, limit float64) targetResult {
	what := ops[0]
	if len(ops) > 1 {
		what = "every read command (" + strings.Join(ops, ", ") + ")"
	}
	t := targetResult{Name: fmt.Sprintf("%s%s within %gx of the no-op provider's floor at every measured team count "+
		"(the no-op provider's time + the floor requests; not terraform_data, which no plugin provider can come near: "+
		"a provider that does no work already takes 1.8x its time or more in these commands; that ratio is reported only)",
		pathPrefix(path), what, limit)}
	var all []string
	failed := false
	for _, tr := range r.TeamCounts {
		if tr.Path != path {
			continue
		}
		for _, op := range ops {
			o := tr.op(op)
			if o == nil || o.Wall.N == 0 || o.NoopProviderWall.N == 0 {
				continue
			}
			all = append(all, fmt.Sprintf("%d teams, %s: %.2fx (%.2f s vs no-op provider %.2f s + floor requests %.2f s; %s of the terraform_data floor)",
				tr.Teams, op, o.RatioToNoopProviderFloor, o.Wall.Median, o.NoopProviderWall.Median, o.Sequential.Median, ratioText(o.Ratio)))
			failed = failed || o.RatioToNoopProviderFloor > limit
		}
	}
	if len(all) == 0 {
		t.Status, t.Detail = statusNotChecked, fmt.Sprintf("%s%s was not measured with the no-op provider", pathPrefix(path), what)
		return t
	}
	t.Status, t.Detail = passIf(!failed), strings.Join(all, "; ")
	return t
}

// queryTarget checks the query of every team's quota (and namespace, on the Kubernetes path) at
// queryTargetTeams teams on each path against the floor of a refresh of the same objects
// (refresh-only's: terraform_data refresh + the floor requests). The other team counts are
// reported beside it.
func queryTarget(r *results) targetResult {
	t := targetResult{Name: fmt.Sprintf("%s (terraform query -generate-config-out) of %d teams' quotas within %gx of the refresh "+
		"floor of the same objects (refresh-only's floor), on each measured path", opQuery, queryTargetTeams, maxQueryRatio)}
	var all []string
	checked, failed := false, false
	for _, tr := range r.TeamCounts {
		o := tr.op(opQuery)
		if o == nil || o.Wall.N == 0 || o.Floor == 0 {
			continue
		}
		all = append(all, fmt.Sprintf("%s: %.2fx (%.2f s vs refresh floor %.2f s)", teamsOn(tr), o.Ratio, o.Wall.Median, o.Floor))
		if tr.Teams == queryTargetTeams {
			checked, failed = true, failed || o.Ratio > maxQueryRatio
		}
	}
	switch {
	case len(all) == 0:
		t.Status, t.Detail = statusNotChecked, opQuery+" was not measured"
	case !checked:
		t.Status, t.Detail = statusNotChecked, fmt.Sprintf("not measured at %d teams; %s", queryTargetTeams, strings.Join(all, "; "))
	default:
		t.Status, t.Detail = passIf(!failed), strings.Join(all, "; ")
	}
	return t
}

// providerSecondsPerTeam is the no-op plan's wall time beyond Terraform core's for the same
// graph, per team.
func providerSecondsPerTeam(tr *teamResult) (float64, bool) {
	o := tr.op(opPlanNoop)
	if !measured(o) || tr.Teams == 0 {
		return 0, false
	}
	return (o.Wall.Median - o.TFDataWall.Median) / float64(tr.Teams), true
}

func linearTarget(r *results) targetResult {
	t := targetResult{Name: fmt.Sprintf("provider time per team at 1000 teams within %gx of that at 100 (no-op plan minus terraform_data plan)", maxLinearGrowth)}
	small, large := r.team(pathKubernetes, 100), r.team(pathKubernetes, 1000)
	if small == nil || large == nil {
		t.Status, t.Detail = statusNotChecked, "needs both 100 and 1000 teams"
		return t
	}
	a, okA := providerSecondsPerTeam(small)
	b, okB := providerSecondsPerTeam(large)
	if !okA || !okB {
		t.Status, t.Detail = statusNotChecked, "the no-op plan was not measured at both 100 and 1000 teams"
		return t
	}
	if a <= 0 {
		t.Status = statusNotChecked
		t.Detail = fmt.Sprintf("provider time at 100 teams is %.1f ms per team (not above Terraform core's): no ratio", a*1e3)
		return t
	}
	t.Detail = fmt.Sprintf("%.2fx: %.1f ms per team at 1000, %.1f ms at 100", b/a, b*1e3, a*1e3)
	t.Status = passIf(b/a <= maxLinearGrowth)
	return t
}

func rssTarget(r *results) targetResult {
	t := targetResult{Name: fmt.Sprintf("provider peak RSS under %g MB at 1000 teams", maxPeakRSSMB)}
	peak, where := 0.0, ""
	for _, tr := range r.TeamCounts {
		if tr.Teams != 1000 {
			continue
		}
		for _, o := range tr.Ops {
			if o.PeakRSSMB.N > 0 && o.PeakRSSMB.Max > peak {
				peak, where = o.PeakRSSMB.Max, pathPrefix(tr.Path)+o.Op
			}
		}
	}
	if peak == 0 {
		t.Status, t.Detail = statusNotChecked, "no provider RSS was recorded at 1000 teams"
		return t
	}
	t.Detail = fmt.Sprintf("%.1f MB (largest over all runs, in %s)", peak, where)
	t.Status = passIf(peak < maxPeakRSSMB)
	return t
}

// requestTargets check the requests of every measured team count: the no-op plan makes no
// discovery or OpenAPI requests and at most maxLists LISTs per kind, and planning new
// resources makes no request at all.
func requestTargets(r *results, maxLists int) []targetResult {
	disc := targetResult{Name: "no discovery or OpenAPI requests in a no-op plan"}
	lists := targetResult{Name: fmt.Sprintf("at most %d LIST per kind in a no-op plan (its further pages are counted as list-continue)", maxLists)}
	none := targetResult{Name: "no requests when planning new resources (plan against an empty state)"}
	var discBad, listBad, noneBad, discOK, listOK, noneOK []string
	for _, tr := range r.TeamCounts {
		if o := tr.op(opPlanNoop); o != nil && o.Wall.N > 0 && tr.Path == pathKubernetes {
			d, a := o.Requests.ByVerb[verbDiscovery].Max, o.Requests.ByVerb[verbOpenAPI].Max
			if d+a > 0 {
				discBad = append(discBad, fmt.Sprintf("%s: %d discovery, %d openapi", teamsOn(tr), d, a))
			} else {
				discOK = append(discOK, teamsOn(tr))
			}
			var over []string
			for _, k := range sortedRangeKeys(o.Requests.ByVerbResource) {
				if strings.HasPrefix(k, verbList+" ") && o.Requests.ByVerbResource[k].Max > maxLists {
					over = append(over, fmt.Sprintf("%d x %s", o.Requests.ByVerbResource[k].Max, k))
				}
			}
			if len(over) > 0 {
				listBad = append(listBad, fmt.Sprintf("%s: %s", teamsOn(tr), strings.Join(over, ", ")))
			} else {
				listOK = append(listOK, teamsOn(tr))
			}
		}
		if o := tr.op(opPlanNew); o != nil && o.Wall.N > 0 {
			if n := o.Requests.Total.Max; n > 0 {
				noneBad = append(noneBad, fmt.Sprintf("%s: %d requests", teamsOn(tr), n))
			} else {
				noneOK = append(noneOK, teamsOn(tr))
			}
		}
	}
	disc.settle(discBad, discOK)
	lists.settle(listBad, listOK)
	none.settle(noneBad, noneOK)
	return []targetResult{disc, lists, none}
}

// settle sets a target checked at several team counts: failed with what went wrong where, else
// passed where it was measured, else not checked.
func (t *targetResult) settle(bad, ok []string) {
	switch {
	case len(bad) > 0:
		t.Status, t.Detail = statusFail, strings.Join(bad, "; ")
	case len(ok) > 0:
		t.Status, t.Detail = statusPass, "at "+strings.Join(ok, ", ")
	default:
		t.Status, t.Detail = statusNotChecked, "not measured"
	}
}

// requestFloorTargets check the SageMaker path's requests against their floor at every
// measured team count: the reads of a refresh are the list's pages and nothing else (no
// Describe of a quota whose version did not move), and apply and destroy send no more than one
// Create or Delete per quota and the Describes of its wait.
func requestFloorTargets(r *results) []targetResult {
	reads := targetResult{Name: "SageMaker path: a no-op plan, a changed plan and refresh-only of N quotas make ceil(N/100) ListComputeQuotas and nothing else"}
	writes := targetResult{Name: "SageMaker path: apply and destroy make no more requests than their floor"}
	check := func(t *targetResult, ops ...string) {
		var bad, ok []string
		for _, tr := range r.TeamCounts {
			if tr.Path != pathSageMaker {
				continue
			}
			measuredAll := true
			for _, op := range ops {
				o := tr.op(op)
				if o == nil || o.Wall.N == 0 {
					measuredAll = false
					continue
				}
				if o.Requests.Total.Max > o.RequestFloorTotal {
					bad = append(bad, fmt.Sprintf("%s, %s: %s against a floor of %s", teamsOn(tr), op,
						rangeMap(o.Requests.ByOperation), intMap(o.RequestFloor)))
				}
			}
			if measuredAll {
				ok = append(ok, teamsOn(tr))
			}
		}
		t.settle(bad, ok)
	}
	check(&reads, opPlanNoop, opPlanChanged, opRefreshOnly)
	check(&writes, opApply, opDestroy)
	return []targetResult{reads, writes}
}

func passIf(ok bool) string {
	if ok {
		return statusPass
	}
	return statusFail
}

// missed returns the targets that failed.
func missed(ts []targetResult) []targetResult {
	var out []targetResult
	for _, t := range ts {
		if t.Status == statusFail {
			out = append(out, t)
		}
	}
	return out
}

func sortedRangeKeys(m map[string]countRange) []string {
	return slices.Sorted(maps.Keys(m))
}

// previewTargets check plan-changed-with-jobs at every measured team count, the plan with the
// preview on against the same plan with it off and the time it waited for its previews against
// the cap, and the admission package's benchmark against its CPU budget. A plan with the preview
// on that made no preview proves nothing about the preview's cost: not checked.
func previewTargets(r *results) []targetResult {
	ratioT := targetResult{Name: fmt.Sprintf("%s within %gx of the same plan with admission_preview = false at every measured team "+
		"count (one cohort, fair sharing, %d jobs per team of which half pending, %d quotas changed)",
		opPlanChangedWithJobs, maxPreviewPlanRatio, jobsPerTeam, changedQuotas)}
	waitT := targetResult{Name: fmt.Sprintf("no plan waits more than %.0f s in all for its previews (%s: the plan's wall time with "+
		"the preview on minus that with it off, in each run)", previewWaitCap.Seconds(), opPlanChangedWithJobs)}
	var ratioBad, ratioOK, waitBad, waitOK, unproven []string
	if r.Preview != nil {
		for _, j := range r.Preview.Scenarios {
			if !j.measuredBoth() {
				continue
			}
			if j.PreviewOn.Previews.Max == 0 {
				unproven = append(unproven, fmt.Sprintf("%d teams: the plan with the preview on made no preview", j.Teams))
				continue
			}
			d := fmt.Sprintf("%d teams: %.2fx (%.2f s vs %.2f s; %s previews)", j.Teams, j.Ratio,
				j.PreviewOn.Wall.Median, j.PreviewOff.Wall.Median, rangeText(j.PreviewOn.Previews))
			if j.Ratio > maxPreviewPlanRatio {
				ratioBad = append(ratioBad, d)
			} else {
				ratioOK = append(ratioOK, d)
			}
			w := fmt.Sprintf("%d teams: at most %.2f s", j.Teams, j.PreviewWait.Max)
			if j.PreviewWait.Max > previewWaitCap.Seconds() {
				waitBad = append(waitBad, w)
			} else {
				waitOK = append(waitOK, w)
			}
		}
	}
	ratioT.settleProven(ratioBad, ratioOK, unproven)
	waitT.settleProven(waitBad, waitOK, unproven)
	return []targetResult{ratioT, waitT, previewBenchTarget(r)}
}

// settleProven is settle with the details spelled out, and not checked while any measurement
// could not prove anything (unless another failed).
func (t *targetResult) settleProven(bad, ok, unproven []string) {
	switch {
	case len(bad) > 0:
		t.Status, t.Detail = statusFail, strings.Join(append(bad, ok...), "; ")
	case len(unproven) > 0:
		t.Status, t.Detail = statusNotChecked, strings.Join(append(unproven, ok...), "; ")
	case len(ok) > 0:
		t.Status, t.Detail = statusPass, strings.Join(ok, "; ")
	default:
		t.Status, t.Detail = statusNotChecked, "not measured"
	}
}

// previewBenchTarget checks one preview of BenchmarkPreview1000Teams' cohort with fair sharing
// against its CPU budget.
func previewBenchTarget(r *results) targetResult {
	name := previewBenchmark + "/" + fairSharingBench
	t := targetResult{Name: fmt.Sprintf("one preview of %s' cohort with fair sharing (%s) at most %g s of CPU", previewBenchmark, name, maxFairPreviewCPU)}
	var g *goBenchmark
	if r.Preview != nil {
		for i := range r.Preview.Benchmarks {
			if r.Preview.Benchmarks[i].Name == name {
				g = &r.Preview.Benchmarks[i]
			}
		}
	}
	switch {
	case g == nil:
		t.Status, t.Detail = statusNotChecked, "not measured"
	case g.Error != "":
		t.Status, t.Detail = statusNotChecked, "did not run: "+g.Error
	default:
		t.Detail = fmt.Sprintf("%.2f s of CPU (%.0f ns/op wall), in a process that also built the cohort", g.CPUSeconds, g.NsPerOp)
		t.Status = passIf(g.CPUSeconds <= maxFairPreviewCPU)
	}
	return t
}
