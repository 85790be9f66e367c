package main

import (
	"fmt"
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
	maxApplyRatio       = 3.0   // apply and destroy at 100 teams vs their floors
	maxLinearGrowth     = 1.3   // provider time per team, 1000 vs 100 teams
	maxPeakRSSMB        = 150.0 // at 1000 teams, 10^6 bytes
	defaultListsPerKind = 1     // LISTs per resource kind a no-op plan may make
)

type targetResult struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// checkTargets evaluates every target on finished results.
func checkTargets(r *results, maxListsPerKind int) []targetResult {
	var out []targetResult
	out = append(out, ratioTarget(r, 100, opPlanNoop, maxNoopPlanRatio))
	out = append(out, ratioTarget(r, 100, opApply, maxApplyRatio))
	out = append(out, ratioTarget(r, 100, opDestroy, maxApplyRatio))
	out = append(out, linearTarget(r))
	out = append(out, rssTarget(r))
	out = append(out, requestTargets(r, maxListsPerKind)...)
	return out
}

// measured reports whether op has provider and terraform_data runs.
func measured(o *opResult) bool {
	return o != nil && o.Wall.N > 0 && o.TFDataWall.N > 0
}

func ratioTarget(r *results, teams int, op string, limit float64) targetResult {
	t := targetResult{Name: fmt.Sprintf("%s at %d teams within %gx of its floor", op, teams, limit)}
	tr := r.team(teams)
	if tr == nil || !measured(tr.op(op)) {
		t.Status, t.Detail = statusNotChecked, fmt.Sprintf("%s at %d teams was not measured", op, teams)
		return t
	}
	o := tr.op(op)
	t.Detail = fmt.Sprintf("%.2fx: %.2f s vs floor %.2f s (terraform_data %.2f s + sequential requests %.2f s)",
		o.Ratio, o.Wall.Median, o.Floor, o.TFDataWall.Median, o.Sequential.Median)
	t.Status = passIf(o.Ratio <= limit)
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
	small, large := r.team(100), r.team(1000)
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
	tr := r.team(1000)
	if tr == nil {
		t.Status, t.Detail = statusNotChecked, "1000 teams was not measured"
		return t
	}
	peak, where := 0.0, ""
	for _, o := range tr.Ops {
		if o.PeakRSSMB.N > 0 && o.PeakRSSMB.Max > peak {
			peak, where = o.PeakRSSMB.Max, o.Op
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
		if o := tr.op(opPlanNoop); o != nil && o.Wall.N > 0 {
			d, a := o.Requests.ByVerb[verbDiscovery].Max, o.Requests.ByVerb[verbOpenAPI].Max
			if d+a > 0 {
				discBad = append(discBad, fmt.Sprintf("%d teams: %d discovery, %d openapi", tr.Teams, d, a))
			} else {
				discOK = append(discOK, fmt.Sprint(tr.Teams))
			}
			var over []string
			for _, k := range sortedRangeKeys(o.Requests.ByVerbResource) {
				if strings.HasPrefix(k, verbList+" ") && o.Requests.ByVerbResource[k].Max > maxLists {
					over = append(over, fmt.Sprintf("%d x %s", o.Requests.ByVerbResource[k].Max, k))
				}
			}
			if len(over) > 0 {
				listBad = append(listBad, fmt.Sprintf("%d teams: %s", tr.Teams, strings.Join(over, ", ")))
			} else {
				listOK = append(listOK, fmt.Sprint(tr.Teams))
			}
		}
		if o := tr.op(opPlanNew); o != nil && o.Wall.N > 0 {
			if n := o.Requests.Total.Max; n > 0 {
				noneBad = append(noneBad, fmt.Sprintf("%d teams: %d requests", tr.Teams, n))
			} else {
				noneOK = append(noneOK, fmt.Sprint(tr.Teams))
			}
		}
	}
	set := func(t *targetResult, bad, ok []string) {
		switch {
		case len(bad) > 0:
			t.Status, t.Detail = statusFail, strings.Join(bad, "; ")
		case len(ok) > 0:
			t.Status, t.Detail = statusPass, "at "+strings.Join(ok, ", ")+" teams"
		default:
			t.Status, t.Detail = statusNotChecked, "not measured"
		}
	}
	set(&disc, discBad, discOK)
	set(&lists, listBad, listOK)
	set(&none, noneBad, noneOK)
	return []targetResult{disc, lists, none}
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
	keys := make(map[string]int, len(m))
	for k := range m {
		keys[k] = 0
	}
	return sortedKeys(keys)
}
