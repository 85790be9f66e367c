package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// plan-changed-with-jobs: a plan that changes quotas of one cohort whose teams run and queue
// jobs, which is where the admission preview costs. Every team of the cohort (the provider's
// default cohort; the local Kueue manager runs with fair sharing) holds jobsPerTeam Workloads,
// half admitted and half pending, and the plan changes changedQuotas quotas. It is planned with
// the provider's default (admission_preview on) and with admission_preview = false in the
// provider block, in the same state and on the same cluster, alternating which goes first.
const (
	opPlanChangedWithJobs = "plan-changed-with-jobs"
	jobsPerTeam           = 4
	runningPerTeam        = jobsPerTeam / 2
	// changedQuotas is how many quotas the plan changes (every team's when there are fewer): as
	// many as the provider previews in one plan.
	changedQuotas = 20
	// previewWaitCap is the most a plan may wait in all for its previews.
	previewWaitCap = 10 * time.Second
	// jobsFairShareWeight is every team's weight, as the example module sets it: Kueue counts
	// a weight of 0 as an infinite share.
	jobsFairShareWeight = 1
)

// jobsInstanceType is the type the jobs run on (they select it by node label, so no other
// flavor fits them); jobsTeamTypes are each team's quotas: the jobs' type first, then two
// types of the main configuration's fleet that no job uses.
var (
	jobsInstanceType = fleetTypes[0]
	jobsTeamTypes    = []quotaEntry{fleetTypes[0], fleetTypes[1], fleetTypes[3]}
)

// jobsTeamEntries are a team's quota entries: on the jobs' type exactly the GPUs its running
// jobs hold (one each), so nothing of that type is free anywhere in the cohort and the pending
// jobs, one GPU each, stay pending; changed adds one GPU, which starts one pending job.
func jobsTeamEntries(changed bool) []quotaEntry {
	out := append([]quotaEntry(nil), jobsTeamTypes...)
	out[0].Value = runningPerTeam
	if changed {
		out[0].Value++
	}
	return out
}

// changedTeams are the teams (from 1) whose quota the plan changes: changedQuotas of n spread
// evenly, or all n.
func changedTeams(n int) map[int]bool {
	out := map[int]bool{}
	k := min(n, changedQuotas)
	for j := range k {
		out[1+j*n/k] = true
	}
	return out
}

// jobsTeamsConfig is the scenario's teams file, with the quotas of changed teams raised.
func jobsTeamsConfig(n int, changed map[int]bool) string {
	return teamsSpec{kind: providerConfig, n: n, fairShareWeight: jobsFairShareWeight,
		entries: func(i int) []quotaEntry { return jobsTeamEntries(changed[i]) }}.render()
}

// benchWorkloadLabel marks the Workloads the bench creates.
const benchWorkloadLabel = "app.kubernetes.io/part-of=hyperpod-bench"

// jobsWorkload is job j (from 0) of team i: a Workload submitted to the team's LocalQueue, one
// pod of one GPU of the jobs' type (and a little CPU and memory, as a job asks for). Jobs of a
// team are created a second apart in name order, so Kueue queues them in that order.
func jobsWorkload(i, j int) *unstructured.Unstructured {
	team := teamName(i)
	label, value, _ := strings.Cut(benchWorkloadLabel, "=")
	requests := corev1.ResourceList{
		corev1.ResourceCPU:        resource.MustParse("1"),
		corev1.ResourceMemory:     resource.MustParse("1Gi"),
		catalog.ResourceNvidiaGPU: resource.MustParse("1"),
	}
	w := kueue.Workload{
		TypeMeta: kueue.TypeMeta(kueue.KindWorkload),
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("job-%d", j), Namespace: quota.NamespaceName(team),
			Labels: map[string]string{label: value},
		},
		Spec: kueue.WorkloadSpec{
			QueueName: quota.LocalQueueName(team),
			PodSets: []kueue.PodSet{{
				Name:  "main",
				Count: 1,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					NodeSelector:  map[string]string{quota.LabelInstanceType: jobsInstanceType.InstanceType},
					Containers: []corev1.Container{{Name: "main", Image: "busybox",
						Resources: corev1.ResourceRequirements{Requests: requests,
							Limits: corev1.ResourceList{catalog.ResourceNvidiaGPU: requests[catalog.ResourceNvidiaGPU]}}}},
				}},
			}},
		},
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&w)
	if err != nil {
		panic(err) // a fixed, typed object: a failure is a bug here
	}
	u := &unstructured.Unstructured{Object: content}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	return u
}

// clientWorkers is how many requests the bench's own client sends at a time when it creates
// or deletes many objects.
const clientWorkers = 16

// concurrently calls fn(ctx, i) for every i in [0, n), clientWorkers at a time, and returns the
// first error; after one, no further call starts.
func concurrently(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(clientWorkers, n) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n && ctx.Err() == nil; i = int(next.Add(1)) - 1 {
				if err := fn(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

// createWorkloads creates job j of every team for each j in jobs, straight to the API server
// (not through the counting proxy).
func (c *cleaner) createWorkloads(ctx context.Context, n int, jobs []int) error {
	return concurrently(ctx, n*len(jobs), func(ctx context.Context, k int) error {
		w := jobsWorkload(1+k/len(jobs), jobs[k%len(jobs)])
		_, err := c.dyn.Resource(kueue.Workloads).Namespace(w.GetNamespace()).Create(ctx, w, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating Workload %s/%s: %w", w.GetNamespace(), w.GetName(), err)
		}
		return nil
	})
}

// workloadStates counts the bench's Workloads by what Kueue decided: admitted (holding quota),
// pending after Kueue tried them (QuotaReserved False, with Kueue's reason), and not tried yet.
// Kueue tries the head of each queue: while it is inadmissible, the jobs behind it in its
// queue, which ask for no less, may wait untried.
type workloadStates struct {
	Admitted, Pending, Untried int
	// TeamsTried counts the namespaces with a pending Workload that Kueue tried.
	TeamsTried int
	// PendingMessage is one pending Workload's QuotaReserved message: why Kueue keeps it.
	PendingMessage string
}

func (c *cleaner) workloadStates(ctx context.Context) (workloadStates, error) {
	var s workloadStates
	list, err := c.dyn.Resource(kueue.Workloads).List(ctx, metav1.ListOptions{LabelSelector: benchWorkloadLabel})
	if err != nil {
		return s, fmt.Errorf("listing Workloads: %w", err)
	}
	tried := map[string]bool{}
	for _, item := range list.Items {
		var w kueue.Workload
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &w); err != nil {
			return s, fmt.Errorf("reading Workload %s/%s: %w", item.GetNamespace(), item.GetName(), err)
		}
		reserved := condition(w.Status.Conditions, kueue.WorkloadQuotaReserved)
		switch {
		case w.Status.Admission != nil:
			s.Admitted++
		case reserved != nil && reserved.Status == metav1.ConditionFalse:
			s.Pending++
			s.PendingMessage = reserved.Message
			tried[w.Namespace] = true
		default:
			s.Untried++
		}
	}
	s.TeamsTried = len(tried)
	return s, nil
}

func condition(cs []metav1.Condition, kind string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == kind {
			return &cs[i]
		}
	}
	return nil
}

// settleTimeout bounds each wait for Kueue to decide on the Workloads.
const settleTimeout = 10 * time.Minute

// waitWorkloads polls the Workloads' states until done says they are settled; a state that
// can no longer settle is an error.
func (c *cleaner) waitWorkloads(ctx context.Context, what string, done func(workloadStates) (bool, error)) (workloadStates, error) {
	var s workloadStates
	err := localcluster.WaitUntil(ctx, time.Now().Add(settleTimeout), 500*time.Millisecond, func(ctx context.Context) (bool, error) {
		var err error
		if s, err = c.workloadStates(ctx); err != nil {
			return false, err
		}
		return done(s)
	}, func() error {
		err := fmt.Errorf("%s: not settled after %s: %d admitted, %d pending (of %d teams), %d not tried by Kueue yet",
			what, settleTimeout, s.Admitted, s.Pending, s.TeamsTried, s.Untried)
		if s.PendingMessage != "" {
			err = fmt.Errorf("%w; Kueue says of a pending one: %s", err, s.PendingMessage)
		}
		return err
	})
	return s, err
}

// quietFor is how long no Workload and no ClusterQueue may change before the scenario's plans are
// measured; quietLimit, how long the bench waits for that.
const (
	quietFor   = 5 * time.Second
	quietLimit = 3 * time.Minute
)

// waitQuiet waits until no Workload and no ClusterQueue changed for quietFor, watching both. It
// reports how long it waited and whether that happened within quietLimit.
func (c *cleaner) waitQuiet(ctx context.Context) (waited time.Duration, quiet bool, err error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, quietLimit)
	defer cancel()
	changed := make(chan struct{}, 1)
	for _, gvr := range []schema.GroupVersionResource{kueue.Workloads, kueue.ClusterQueues} {
		w, err := c.dyn.Resource(gvr).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, false, fmt.Errorf("watching %s: %w", gvr.Resource, err)
		}
		defer w.Stop()
		go func() {
			for e := range w.ResultChan() {
				if e.Type == watch.Bookmark {
					continue
				}
				select {
				case changed <- struct{}{}:
				default:
				}
			}
		}()
	}
	quietTimer := time.NewTimer(quietFor)
	defer quietTimer.Stop()
	for {
		select {
		case <-changed:
			quietTimer.Reset(quietFor)
		case <-quietTimer.C:
			return time.Since(start), true, nil
		case <-ctx.Done():
			return time.Since(start), false, nil
		}
	}
}

// fairSharingReported counts the bench's ClusterQueues and those whose status carries a
// fair-sharing share, which Kueue writes only with fair sharing on (and which is how the
// provider's preview learns that it is).
func (c *cleaner) fairSharingReported(ctx context.Context) (queues, reporting int, err error) {
	list, err := c.dyn.Resource(kueue.ClusterQueues).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, fmt.Errorf("listing ClusterQueues: %w", err)
	}
	for _, item := range list.Items {
		if !strings.HasPrefix(item.GetName(), benchObjectPrefix) {
			continue
		}
		queues++
		if _, found, _ := unstructured.NestedMap(item.Object, "status", "fairSharing"); found {
			reporting++
		}
	}
	return queues, reporting, nil
}

// runPlansWithJobs measures plan-changed-with-jobs at every team count of -preview-teams.
func (b *bench) runPlansWithJobs(ctx context.Context, res *results) error {
	for _, n := range b.opts.PreviewTeams {
		jr := &jobsResult{Teams: n, Jobs: n * jobsPerTeam, PendingJobs: n * (jobsPerTeam - runningPerTeam), ChangedQuotas: len(changedTeams(n))}
		res.preview().Scenarios = append(res.preview().Scenarios, jr)
		if err := b.planWithJobs(ctx, n, jr); err != nil {
			return fmt.Errorf("%s, %d teams: %w", opPlanChangedWithJobs, n, err)
		}
		jr.finish()
	}
	return nil
}

// planWithJobs sets up n teams with their jobs, measures the changed plan with the preview on
// and off b.opts.Runs times each, and empties the cluster again.
func (b *bench) planWithJobs(ctx context.Context, n int, jr *jobsResult) (err error) {
	dir := filepath.Join(b.workDir, fmt.Sprintf("%s-%s-%d", pathKubernetes, opPlanChangedWithJobs, n))
	previewOn, previewOff := kubernetesProvider(b.proxy.URL), kubernetesProviderWithoutPreview(b.proxy.URL)
	if err := writeWorkDir(dir, providerConfig, n, previewOff); err != nil {
		return err
	}
	writeTeamsFile := func(changed map[int]bool) error {
		return os.WriteFile(filepath.Join(dir, teamsFile), []byte(jobsTeamsConfig(n, changed)), 0o644)
	}
	if err := writeTeamsFile(nil); err != nil {
		return err
	}
	if left, err := b.cleaner.ensureClean(ctx); err != nil {
		return err
	} else if left != "" {
		b.note(fmt.Sprintf("%s, %d teams: removed before the setup: %s", opPlanChangedWithJobs, n, left))
	}
	defer func() {
		start := time.Now()
		_, cerr := b.clean(ctx, dir, dir)
		jr.Setup.CleanSeconds = time.Since(start).Seconds()
		if err == nil {
			err = cerr
		}
	}()
	if err := b.setUpJobs(ctx, dir, n, jr); err != nil {
		return err
	}

	if err := writeTeamsFile(changedTeams(n)); err != nil {
		return err
	}
	if err := b.settleBeforeRuns(ctx, dir, n, mainConfig(providerConfig, previewOff)); err != nil {
		return err
	}
	for run := 1; run <= b.opts.Runs; run++ {
		b.logf("%s, %d teams, run %d of %d (load average %.2f)", opPlanChangedWithJobs, n, run, b.opts.Runs, loadAverage())
		order := []bool{true, false}
		if run%2 == 0 {
			order = []bool{false, true} // neither setting always plans second, on a warmer cluster
		}
		for _, on := range order {
			block, plan := previewOff, &jr.PreviewOff
			if on {
				block, plan = previewOn, &jr.PreviewOn
			}
			if err := os.WriteFile(filepath.Join(dir, mainFile), []byte(mainConfig(providerConfig, block)), 0o644); err != nil {
				return err
			}
			label := fmt.Sprintf("%d-jobs-r%d %s (admission_preview %s)", n, run, opPlanChangedWithJobs, onOff(on))
			s, err := b.measureProvider(ctx, dir, label, exitChanges, argsPlan...)
			if err != nil {
				return err
			}
			out, err := os.ReadFile(b.tf.lastLog)
			if err != nil {
				return err
			}
			sample := jobsSample{runSample: s, Previews: countPreviews(string(out))}
			if on && sample.Previews < jr.ChangedQuotas {
				b.note(fmt.Sprintf("%s: %d previews for %d changed quotas (see %s)", label, sample.Previews, jr.ChangedQuotas, b.tf.lastLog))
			}
			plan.Runs = append(plan.Runs, sample)
		}
	}
	return nil
}

// settleBeforeRuns readies the cluster and the working directory dir of n teams for the measured
// plans; offConfig is the configuration with previews off.
func (b *bench) settleBeforeRuns(ctx context.Context, dir string, n int, offConfig string) error {
	// Right after the setup the Kueue manager keeps the API server busy for a while (at 1000 teams
	// about a core between them), and the plan measured first ran beside it: the plans wait until
	// Kueue's objects stop changing, and a plan that is not measured goes first.
	waited, quiet, err := b.cleaner.waitQuiet(ctx)
	if err != nil {
		return err
	}
	b.logf("%s, %d teams: no Workload or ClusterQueue changed for %s, after %.1f s", opPlanChangedWithJobs, n, quietFor, waited.Seconds())
	if !quiet {
		b.note(fmt.Sprintf("%s, %d teams: Workloads or ClusterQueues still changed after %s; the plans were measured anyway",
			opPlanChangedWithJobs, n, quietLimit))
	}
	if err := os.WriteFile(filepath.Join(dir, mainFile), []byte(offConfig), 0o644); err != nil {
		return err
	}
	b.logf("%s, %d teams: a plan that is not measured first", opPlanChangedWithJobs, n)
	_, err = b.tf.run(ctx, dir, fmt.Sprintf("%d-jobs unmeasured plan", n), exitChanges, argsPlan...)
	return err
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "false"
}

// setUpJobs applies the teams (preview off: there is nothing to preview yet), then creates the
// running jobs and waits until Kueue has admitted them all, then the pending ones and waits
// until Kueue has admitted none of them and found no quota for the first of each team's (the
// other asks for as much).
func (b *bench) setUpJobs(ctx context.Context, dir string, n int, jr *jobsResult) error {
	b.logf("%s, %d teams: applying the teams (load average %.2f)", opPlanChangedWithJobs, n, loadAverage())
	wall, err := b.tf.run(ctx, dir, fmt.Sprintf("%d-jobs apply", n), 0, argsApply...)
	if err != nil {
		return err
	}
	jr.Setup.ApplySeconds = wall.Seconds()

	start := time.Now()
	var running, pending []int
	for j := range jobsPerTeam {
		if j < runningPerTeam {
			running = append(running, j)
		} else {
			pending = append(pending, j)
		}
	}
	admitted := n * runningPerTeam
	if err := b.cleaner.createWorkloads(ctx, n, running); err != nil {
		return err
	}
	if _, err := b.cleaner.waitWorkloads(ctx, "running jobs", func(s workloadStates) (bool, error) {
		return s.Admitted == admitted, nil
	}); err != nil {
		return err
	}
	if err := b.cleaner.createWorkloads(ctx, n, pending); err != nil {
		return err
	}
	s, err := b.cleaner.waitWorkloads(ctx, "pending jobs", func(s workloadStates) (bool, error) {
		if s.Admitted > admitted {
			return false, fmt.Errorf("the Kueue manager admitted %d jobs, %d more than the quotas hold: the pending jobs found free quota", s.Admitted, s.Admitted-admitted)
		}
		return s.Admitted == admitted && s.Pending+s.Untried == jr.PendingJobs && s.TeamsTried == n, nil
	})
	if err != nil {
		return err
	}
	jr.Setup.JobsSeconds = time.Since(start).Seconds()
	jr.PendingReason = s.PendingMessage

	queues, reporting, err := b.cleaner.fairSharingReported(ctx)
	if err != nil {
		return err
	}
	jr.FairSharing = queues > 0 && reporting == queues
	if !jr.FairSharing {
		b.note(fmt.Sprintf("%s, %d teams: %d of %d ClusterQueues report a fair-sharing share: the preview models Kueue without fair sharing", opPlanChangedWithJobs, n, reporting, queues))
	}
	b.logf("  %d jobs (%d admitted, %d pending: %d tried by Kueue, the others queued behind them) in %.1f s after an apply of %.1f s; "+
		"fair sharing reported by %d of %d ClusterQueues", jr.Jobs, s.Admitted, s.Pending+s.Untried, s.Pending, jr.Setup.JobsSeconds,
		jr.Setup.ApplySeconds, reporting, queues)
	return nil
}

// previewSummary starts the summary of every warning that is an admission preview.
const previewSummary = "Warning: Admission preview"

// countPreviews counts the previews in a plan's output: their warnings, one per previewed
// change (Terraform consolidates only warnings of equal summaries, and each names its team).
func countPreviews(out string) int {
	return strings.Count(out, previewSummary)
}
