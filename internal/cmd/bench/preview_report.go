package main

import (
	"fmt"
	"strings"
)

// previewResults is the admission preview section: plan-changed-with-jobs at each team count,
// and the admission package's benchmark.
type previewResults struct {
	Scenarios  []*jobsResult `json:"plan_changed_with_jobs,omitempty"`
	Benchmarks []goBenchmark `json:"go_benchmarks,omitempty"`
}

// preview returns the admission preview section, made on first use.
func (r *results) preview() *previewResults {
	if r.Preview == nil {
		r.Preview = &previewResults{}
	}
	return r.Preview
}

// jobsResult is plan-changed-with-jobs at one team count.
type jobsResult struct {
	Teams         int  `json:"teams"`
	Jobs          int  `json:"jobs"`
	PendingJobs   int  `json:"pending_jobs"`
	ChangedQuotas int  `json:"changed_quotas"`
	FairSharing   bool `json:"fair_sharing_reported"` // every ClusterQueue reports a fair-sharing share
	// PendingReason is Kueue's message on one pending job: why it stays pending.
	PendingReason string    `json:"pending_reason,omitempty"`
	Setup         jobsSetup `json:"setup"`
	PreviewOn     jobsPlan  `json:"admission_preview_on"`
	PreviewOff    jobsPlan  `json:"admission_preview_off"`
	// Ratio is the median wall time with the preview on over that with it off.
	Ratio float64 `json:"ratio"`
	// PreviewWait is, per run, the wall time with the preview on minus that with it off: the
	// time the plan waited for its previews.
	PreviewWait summary `json:"preview_wait_seconds"`
	// PreviewCPU is, per run, the CPU time with the preview on minus that with it off: what the
	// previews cost Terraform and the provider, which other work on the machine moves less.
	PreviewCPU summary `json:"preview_cpu_seconds"`
}

// jobsSetup is what preparing the cluster took: not measured against anything, reported so its
// cost stays visible.
type jobsSetup struct {
	ApplySeconds float64 `json:"apply_seconds"`
	// JobsSeconds is creating the Workloads and waiting for Kueue's decisions.
	JobsSeconds  float64 `json:"jobs_seconds"`
	CleanSeconds float64 `json:"clean_seconds"`
}

// jobsPlan is the plan with one setting of admission_preview over the runs.
type jobsPlan struct {
	Runs      []jobsSample   `json:"runs"`
	Wall      summary        `json:"wall_seconds"`
	CPU       summary        `json:"cpu_seconds"`
	PeakRSSMB summary        `json:"peak_rss_mb"`
	Previews  countRange     `json:"previews_made"`
	Requests  requestSummary `json:"requests"`
}

// jobsSample is one plan: the command's figures and the previews its output holds.
type jobsSample struct {
	runSample
	Previews int `json:"previews_made"`
}

func (p *jobsPlan) finish() {
	var wall, cpu, rss []float64
	var previews []int
	var reqs []requestCounts
	for _, s := range p.Runs {
		wall, cpu, rss = append(wall, s.WallSeconds), append(cpu, s.CPUSeconds), append(rss, float64(s.PeakRSSBytes)/1e6)
		previews = append(previews, s.Previews)
		if s.Requests != nil {
			reqs = append(reqs, *s.Requests)
		}
	}
	p.Wall, p.CPU, p.PeakRSSMB = summarize(wall), summarize(cpu), summarize(rss)
	p.Requests = summarizeRequests(reqs)
	if len(previews) > 0 {
		p.Previews = rangeOf(previews)
	}
}

func (j *jobsResult) finish() {
	j.PreviewOn.finish()
	j.PreviewOff.finish()
	j.Ratio = ratio(j.PreviewOn.Wall.Median, j.PreviewOff.Wall.Median)
	var waits, cpu []float64
	for i := range min(len(j.PreviewOn.Runs), len(j.PreviewOff.Runs)) {
		on, off := j.PreviewOn.Runs[i], j.PreviewOff.Runs[i]
		waits, cpu = append(waits, on.WallSeconds-off.WallSeconds), append(cpu, on.CPUSeconds-off.CPUSeconds)
	}
	j.PreviewWait, j.PreviewCPU = summarize(waits), summarize(cpu)
}

// measuredBoth reports whether the plan ran with both settings.
func (j *jobsResult) measuredBoth() bool {
	return j.PreviewOn.Wall.N > 0 && j.PreviewOff.Wall.N > 0
}

// previewIntro explains the admission preview section.
const previewIntro = "The admission preview predicts, during plan, what a quota change does to the jobs of its cohort; it " +
	"reads the cluster's Kueue objects and Workloads once per plan and simulates the cohort once per changed quota. " +
	"**" + opPlanChangedWithJobs + "**: N teams of one `hyperpod_team_namespace` and one `hyperpod_compute_quota` each, all in " +
	"the default cohort with `fair_share_weight = 1`, on the same local control plane as the sections above with " +
	"Kueue's manager started for this section only (it runs with fair sharing; the sections above run without a " +
	"manager). Each team has four jobs (Workloads of one pod and one GPU of the jobs' instance type, created straight " +
	"through the API): its quota of that type is two GPUs, which its first two jobs hold, so no GPU of that type is " +
	"free in the cohort and the other two stay pending: the setup waits until Kueue has tried the first pending job of " +
	"every team and admitted none (its reason is quoted below; the second, which asks for as much, may wait untried " +
	"behind it). The plan raises the quota of " +
	"20 teams (every team's below 20 teams) by one GPU, which starts one pending job of each. It is planned with the " +
	"provider's default (`admission_preview` on) and with `admission_preview = false` in the provider block, in the same " +
	"state, one after the other in each run (which goes first alternates). Right after the setup the manager keeps " +
	"the API server busy for a while, and the plan measured first ran beside it: the runs start once no Workload and " +
	"no ClusterQueue has changed for 5 s (watched; at most 3 minutes of waiting, or the results say so), after one " +
	"plan that is not measured. Waiting for previews is the plan's wall " +
	"time with the preview on minus that with it off in the same run; previews made counts the plan's " +
	"\"Admission preview\" warnings."

// renderPreview writes the admission preview section.
func renderPreview(b *strings.Builder, p *previewResults) {
	if p == nil || (len(p.Scenarios) == 0 && len(p.Benchmarks) == 0) {
		return
	}
	b.WriteString("## Admission preview\n\n" + previewIntro + "\n\n")
	if len(p.Scenarios) > 0 {
		fmt.Fprintf(b, "### %s\n\n", opPlanChangedWithJobs)
		b.WriteString("| teams | admission_preview | wall (s) | spread (s) | CPU (s) | previews made | requests | by resource | peak RSS (MB) |\n")
		b.WriteString("|---:|---|---:|---:|---:|---:|---:|---|---:|\n")
		for _, j := range p.Scenarios {
			for _, row := range []struct {
				setting string
				plan    *jobsPlan
			}{{"on (default)", &j.PreviewOn}, {"false", &j.PreviewOff}} {
				pl := row.plan
				if pl.Wall.N == 0 {
					fmt.Fprintf(b, "| %d | %s | not measured | | | | | | |\n", j.Teams, row.setting)
					continue
				}
				fmt.Fprintf(b, "| %d | %s | %.2f | %.2f-%.2f | %.2f | %s | %s | %s | %.1f |\n", j.Teams, row.setting,
					pl.Wall.Median, pl.Wall.Min, pl.Wall.Max, pl.CPU.Median, rangeText(pl.Previews), rangeText(pl.Requests.Total),
					rangeMap(pl.Requests.ByResource), pl.PeakRSSMB.Median)
			}
		}
		fmt.Fprintf(b, "\n| teams | jobs (pending) | ratio on / off (target %gx) | waiting for previews per run (s; cap %.0f s) | "+
			"CPU on - off (s, median) | setup (s): apply, jobs, clean | fair sharing reported |\n", maxPreviewPlanRatio, previewWaitCap.Seconds())
		b.WriteString("|---:|---:|---:|---|---:|---|---|\n")
		for _, j := range p.Scenarios {
			fmt.Fprintf(b, "| %d | %d (%d) | %s | %s | %.2f | %.1f, %.1f, %.1f | %s |\n", j.Teams, j.Jobs, j.PendingJobs, ratioText(j.Ratio),
				waitsText(j), j.PreviewCPU.Median, j.Setup.ApplySeconds, j.Setup.JobsSeconds, j.Setup.CleanSeconds, yesNo(j.FairSharing))
		}
		b.WriteString("\n")
		for _, j := range p.Scenarios {
			if j.PendingReason != "" {
				fmt.Fprintf(b, "Kueue's reason for a pending job at %d teams: %q\n\n", j.Teams, j.PendingReason)
				break
			}
		}
	}
	if len(p.Benchmarks) > 0 {
		fmt.Fprintf(b, "### %s\n\n", previewBenchmark)
		fmt.Fprintf(b, "`go test -run '^$' -bench '%s/<sub-benchmark>' -benchtime=1x %s`, each sub-benchmark in a process of "+
			"its own: one preview of one cohort of 1000 teams with four jobs each, after one team's quota is lowered. "+
			"CPU is the test process's user and system time, which includes building the cohort.\n\n", previewBenchmark, previewBenchPkg)
		b.WriteString("| benchmark | ns/op | wall (s) | CPU (s) | target |\n|---|---:|---:|---:|---|\n")
		for _, g := range p.Benchmarks {
			target := "-"
			if strings.HasSuffix(g.Name, "/"+fairSharingBench) {
				target = fmt.Sprintf("at most %g s of CPU", maxFairPreviewCPU)
			}
			if g.Error != "" {
				fmt.Fprintf(b, "| %s | not measured: %s | | | %s |\n", g.Name, strings.ReplaceAll(g.Error, "|", "\\|"), target)
				continue
			}
			fmt.Fprintf(b, "| %s | %.0f | %.2f | %.2f | %s |\n", g.Name, g.NsPerOp, g.NsPerOp/1e9, g.CPUSeconds, target)
		}
		b.WriteString("\n")
	}
}

// waitsText lists each run's wait for previews, and the largest.
func waitsText(j *jobsResult) string {
	if j.PreviewWait.N == 0 {
		return "-"
	}
	var parts []string
	for i := range min(len(j.PreviewOn.Runs), len(j.PreviewOff.Runs)) {
		parts = append(parts, fmt.Sprintf("%.2f", j.PreviewOn.Runs[i].WallSeconds-j.PreviewOff.Runs[i].WallSeconds))
	}
	return fmt.Sprintf("%s (largest %.2f)", strings.Join(parts, ", "), j.PreviewWait.Max)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
