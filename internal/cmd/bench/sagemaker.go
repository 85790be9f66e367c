package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakerclient"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// The SageMaker path: hyperpod_compute_quota with a task_governance block, written through
// the SageMaker API emulator (internal/sagemakeremulator) alone. Without a Kubernetes connection
// the provider writes no team namespaces, so a team is one quota, and nothing waits for Kueue:
// what is measured is the provider, Terraform and the API.

// benchClusterName is the emulated HyperPod cluster; its instance groups are the local fleet's.
const benchClusterName = "hyperpod-bench"

// emulatorSettle completes a transition (Creating, Deleting) once Describe or List has reported
// it once, as the acceptance tests run the emulator: a waiter sees the transitional status on
// its first Describe and the outcome on its second.
var emulatorSettle = sagemakeremulator.SettleRule{Observations: 1}

// Request floor of the SageMaker path. ListComputeQuotas returns at most listPageSize quotas a
// page (MaxResults 1-100 in the API reference). describesPerWait is what a waiter needs under
// emulatorSettle: one Describe that sees Creating or Deleting, one that sees the outcome.
const (
	listPageSize     = 100
	describesPerWait = 2
	terraformWorkers = 10 // Terraform's default -parallelism
)

// SageMaker operations the provider calls and the floor counts.
const (
	opListComputeQuotas    = "ListComputeQuotas"
	opCreateComputeQuota   = "CreateComputeQuota"
	opDescribeComputeQuota = "DescribeComputeQuota"
	opDeleteComputeQuota   = "DeleteComputeQuota"
	opListTags             = "ListTags"
)

// listPages is the ListComputeQuotas calls that read n quotas: one at least.
func listPages(n int) int { return max(1, (n+listPageSize-1)/listPageSize) }

// sagemakerRequestFloor is the fewest calls op needs on n quotas, by operation: a plan of new
// resources reads nothing; a refresh reads every quota with the list's pages (the list carries
// each quota's version, so nothing needs a Describe); an apply first reads the cluster's quotas
// with the list's pages (empty: one), because a create for a team that already holds a quota is
// refused, then each create is one CreateComputeQuota and the Describes of its wait; a destroy
// refreshes, then deletes each quota and waits until it is gone.
func sagemakerRequestFloor(op string, n int) map[string]int {
	switch op {
	case opApply:
		return map[string]int{opListComputeQuotas: listPages(0), opCreateComputeQuota: n, opDescribeComputeQuota: describesPerWait * n}
	case opPlanNoop, opPlanChanged, opRefreshOnly:
		return map[string]int{opListComputeQuotas: listPages(n)}
	case opRefreshTagged:
		// Tags are not in the list: each tagged quota's are one ListTags (at most 50 tags, one page).
		return map[string]int{opListComputeQuotas: listPages(n), opListTags: n}
	case opDestroy:
		return map[string]int{opListComputeQuotas: listPages(n), opDeleteComputeQuota: n, opDescribeComputeQuota: describesPerWait * n}
	case opQuery:
		// What an import reads of each quota: its description (not in the list) and its tags.
		return map[string]int{opListComputeQuotas: listPages(n), opDescribeComputeQuota: n, opListTags: n}
	}
	return map[string]int{}
}

// pollBound is the least time apply and destroy of n quotas spend asleep in the provider's
// waiters: each waits at least sagemakerclient.DefaultPoll.Min between its two Describes, and
// Terraform runs terraformWorkers resources at a time. It is the provider's choice for the
// real API, where a quota takes seconds to settle; the emulator settles at once.
func pollBound(op string, n int) float64 {
	if op != opApply && op != opDestroy {
		return 0
	}
	return math.Ceil(float64(n)/terraformWorkers) * sagemakerclient.DefaultPoll.Min.Seconds()
}

// emulatorWindow counts the emulator's calls of one measured command.
type emulatorWindow struct{ emu *sagemakeremulator.Emulator }

func (w emulatorWindow) reset() { w.emu.ResetCalls() }

func (w emulatorWindow) counts() requestCounts { return countCalls(w.emu.Calls()) }

// countCalls counts calls by operation. An answer that a quota does not exist (a waiter's last
// Describe after a delete) or conflicts is not a failure.
func countCalls(calls []sagemakeremulator.Call) requestCounts {
	c := requestCounts{ByOperation: map[string]int{}}
	for _, call := range calls {
		c.Total++
		c.ByOperation[call.Operation]++
		if call.ErrorCode != "" && call.ErrorCode != "ResourceNotFound" && call.ErrorCode != "ConflictException" {
			c.Failed++
		}
	}
	return c
}

// sagemakerBench measures the SageMaker path against one emulator.
type sagemakerBench struct {
	runner
	emu        *sagemakeremulator.Emulator
	clusterARN string
	floor      *sagemaker.Client
}

// benchOnEmulator starts the emulator, runs every team count of the SageMaker path against it
// and stops it.
func benchOnEmulator(ctx context.Context, r runner, res *results) error {
	var groups []sagemakeremulator.InstanceGroup
	for _, n := range localcluster.Fleet {
		name := strings.NewReplacer("ml.", "", ".", "-").Replace(n.InstanceType)
		groups = append(groups, sagemakeremulator.InstanceGroup{Name: name, InstanceType: n.InstanceType, Count: int32(n.Count)})
	}
	settle := emulatorSettle
	emu, err := sagemakeremulator.Start(sagemakeremulator.Options{
		Clusters: []sagemakeremulator.Cluster{{Name: benchClusterName, InstanceGroups: groups}},
		Settle:   &settle,
	})
	if err != nil {
		return err
	}
	defer func() { _ = emu.Close() }()
	r.window = emulatorWindow{emu}
	b := &sagemakerBench{runner: r, emu: emu, clusterARN: emu.ClusterARN(benchClusterName), floor: floorClient(emu)}
	r.logf("SageMaker API emulator %s, cluster %s", emu.URL(), b.clusterARN)
	p := pathRuns{name: pathSageMaker, provider: sagemakerConfig, floor: terraformDataQuotas,
		providerBlock: sagemakerProvider(emu.URL(), b.clusterARN), runOnce: b.runOnce}
	return b.runPath(ctx, p, res)
}

// floorClient is the floor's client: the SDK's SageMaker client with static credentials, its
// own retries off (the emulator injects no faults), one request at a time, on the provider's
// HTTP client (sagemakerclient.HTTPClient: without it net/http now and then drops the
// connection while an answer is read).
func floorClient(emu *sagemakeremulator.Emulator) *sagemaker.Client {
	return sagemaker.New(sagemaker.Options{
		Region:       emu.Region(),
		BaseEndpoint: aws.String(emu.URL()),
		Credentials:  credentials.NewStaticCredentialsProvider("bench", "bench", ""),
		Retryer:      aws.NopRetryer{},
		HTTPClient:   sagemakerclient.HTTPClient(),
	})
}

// runOnce is one run, in the Kubernetes path's order; the floors of the reads are timed right
// after each command, those of apply and destroy after destroy, on an empty emulator; the plans
// and refreshes run with the no-op provider after the provider.
func (b *sagemakerBench) runOnce(ctx context.Context, n, run int, pdir, ddir string, tr *teamResult) error {
	if left := b.removeQuotas(ctx); left > 0 {
		b.note(fmt.Sprintf("SageMaker path, %d teams, run %d: removed %d compute quotas before the run", n, run, left))
	}
	for _, dir := range []string{pdir, ddir} {
		if err := removeState(dir); err != nil {
			return err
		}
	}
	label := func(kind configKind, op string) string { return fmt.Sprintf("%d-%s-r%d %s", n, kind, run, op) }
	add := func(op string, p, d runSample) {
		o := tr.op(op)
		o.Provider = append(o.Provider, p)
		o.TerraformData = append(o.TerraformData, d)
	}
	step := func(op string, wantExit int, args []string, floor func(context.Context) (replayResult, error)) error {
		p, err := b.measureProvider(ctx, pdir, label(sagemakerConfig, op), wantExit, args...)
		if err != nil {
			return err
		}
		if floor != nil {
			if err := b.timeFloor(ctx, &p, label(sagemakerConfig, op), floor); err != nil {
				return err
			}
		}
		if slices.Contains(noopProviderOps, op) {
			if err := b.measureNoopProvider(ctx, &p, pdir, label(sagemakerConfig, op), wantExit, args...); err != nil {
				return err
			}
		}
		d, err := b.measureTerraformData(ctx, ddir, label(terraformDataQuotas, op), wantExit, args...)
		if err != nil {
			return err
		}
		add(op, p, d)
		return nil
	}
	if b.opts.QueryOnly {
		return b.queryOnce(ctx, n, run, pdir, ddir, label, step, tr)
	}
	noRequests := func(context.Context) (replayResult, error) { return replayResult{}, nil }
	if err := step(opPlanNew, exitChanges, argsPlan, noRequests); err != nil {
		return err
	}
	if err := step(opApply, 0, argsApply, nil); err != nil {
		return err
	}
	if err := step(opPlanNoop, exitNoChanges, argsPlan, b.listAll); err != nil {
		return err
	}
	if err := b.planChanged(n, pdir, ddir, step); err != nil {
		return err
	}
	if err := step(opRefreshOnly, 0, argsRefresh, b.listAll); err != nil {
		return err
	}
	if err := b.refreshTagged(ctx, n, pdir, label, step, tr); err != nil {
		return err
	}
	if err := b.measureQuery(ctx, n, run, pdir, sagemakerConfig, sagemakerLists, tr); err != nil {
		return err
	}
	if err := step(opDestroy, 0, argsDestroy, nil); err != nil {
		return err
	}
	if left := b.removeQuotas(ctx); left > 0 {
		b.note(fmt.Sprintf("SageMaker path, %d teams, run %d: left behind by terraform destroy: %d compute quotas", n, run, left))
	}
	applyOp, destroyOp := tr.op(opApply), tr.op(opDestroy)
	if err := b.timeFloor(ctx, &applyOp.Provider[len(applyOp.Provider)-1], label(sagemakerConfig, opApply),
		func(ctx context.Context) (replayResult, error) { return b.createAll(ctx, n) }); err != nil {
		return err
	}
	return b.timeFloor(ctx, &destroyOp.Provider[len(destroyOp.Provider)-1], label(sagemakerConfig, opDestroy), b.deleteAll)
}

// queryOnlyParallelism is the -parallelism of -query-only's apply, which is not measured: its
// waits of at least sagemakerclient.DefaultPoll.Min each would take ceil(N/10) x 2 s at
// Terraform's default.
const queryOnlyParallelism = 100

// queryOnce is one run of -query-only: the quotas and the terraform_data floor's resources
// created by applies that are not measured, then refresh-only and its floor as a full run
// measures them, and the query.
func (b *sagemakerBench) queryOnce(ctx context.Context, n, run int, pdir, ddir string, label func(configKind, string) string,
	step func(string, int, []string, func(context.Context) (replayResult, error)) error, tr *teamResult) error {
	parallel := append(slices.Clone(argsApply), fmt.Sprintf("-parallelism=%d", queryOnlyParallelism))
	if _, err := b.tf.run(ctx, pdir, label(sagemakerConfig, "create the quotas"), 0, parallel...); err != nil {
		return err
	}
	if _, err := b.tf.run(ctx, ddir, label(terraformDataQuotas, "create the floor's resources"), 0, parallel...); err != nil {
		return err
	}
	if err := step(opRefreshOnly, 0, argsRefresh, b.listAll); err != nil {
		return err
	}
	return b.measureQuery(ctx, n, run, pdir, sagemakerConfig, sagemakerLists, tr)
}

// planChanged measures a plan with one team's quota bumped in both configurations, restored
// whatever happens.
func (b *sagemakerBench) planChanged(n int, pdir, ddir string,
	step func(string, int, []string, func(context.Context) (replayResult, error)) error) error {
	writeBoth := func(changed int) error {
		if err := writeTeams(pdir, sagemakerConfig, n, changed); err != nil {
			return err
		}
		return writeTeams(ddir, terraformDataQuotas, n, changed)
	}
	err := writeBoth((n + 1) / 2)
	if err == nil {
		err = step(opPlanChanged, exitChanges, argsPlan, b.listAll)
	}
	if rerr := writeBoth(0); err == nil {
		err = rerr
	}
	return err
}

// refreshTagged measures what reading tags costs a refresh: every quota gets a tag (an apply
// not measured, AddTags only), a refresh-only is measured against the list and one ListTags per
// quota, and the tags are removed again (DeleteTags only), so the destroy that follows measures
// what it always did. The terraform_data floor's configuration stays as it is.
func (b *sagemakerBench) refreshTagged(ctx context.Context, n int, pdir string, label func(configKind, string) string,
	step func(string, int, []string, func(context.Context) (replayResult, error)) error, tr *teamResult) error {
	if tr.op(opRefreshTagged) == nil {
		tr.Ops = append(tr.Ops, &opResult{Op: opRefreshTagged})
	}
	retag := func(kind configKind, what string) error {
		if err := writeTeams(pdir, kind, n, 0); err != nil {
			return err
		}
		_, err := b.tf.run(ctx, pdir, label(kind, what), 0, argsApply...)
		return err
	}
	if err := retag(sagemakerTaggedConfig, "tag every quota"); err != nil {
		return err
	}
	err := step(opRefreshTagged, 0, argsRefresh, b.listAllWithTags)
	if rerr := retag(sagemakerConfig, "untag every quota"); err == nil {
		err = rerr
	}
	return err
}

// listAllWithTags reads every quota of the cluster, then the tags of each.
func (b *sagemakerBench) listAllWithTags(ctx context.Context) (replayResult, error) {
	quotas, res, err := b.list(ctx)
	if err != nil {
		return res, err
	}
	for _, q := range quotas {
		_, err := b.floor.ListTags(ctx, &sagemaker.ListTagsInput{ResourceArn: q.ComputeQuotaArn, MaxResults: aws.Int32(100)})
		res.Requests++
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// timeFloor sends a floor's requests and stores their time in the sample.
func (b *sagemakerBench) timeFloor(ctx context.Context, s *runSample, label string, floor func(context.Context) (replayResult, error)) error {
	start := time.Now()
	res, err := floor(ctx)
	if err != nil {
		return fmt.Errorf("%s: floor requests: %w", label, err)
	}
	res.Seconds = time.Since(start).Seconds()
	s.Replay = &res
	b.logf("  %-34s %8.2f s  %6d requests, one after another", label+" (floor)", res.Seconds, res.Requests)
	return nil
}

// listAll reads every quota of the cluster, a page at a time, and returns them with the calls
// it made.
func (b *sagemakerBench) listAll(ctx context.Context) (replayResult, error) {
	_, res, err := b.list(ctx)
	return res, err
}

func (b *sagemakerBench) list(ctx context.Context) ([]types.ComputeQuotaSummary, replayResult, error) {
	var res replayResult
	var all []types.ComputeQuotaSummary
	in := &sagemaker.ListComputeQuotasInput{ClusterArn: aws.String(b.clusterARN), MaxResults: aws.Int32(listPageSize)}
	for {
		out, err := b.floor.ListComputeQuotas(ctx, in)
		res.Requests++
		if err != nil {
			return nil, res, err
		}
		all = append(all, out.ComputeQuotaSummaries...)
		if aws.ToString(out.NextToken) == "" {
			return all, res, nil
		}
		in.NextToken = out.NextToken
	}
}

// createAll reads the cluster's quotas, for the teams that hold one already, then creates the
// quotas of n teams one after another, as the configuration says, each confirmed by Describe
// until it is no longer Creating.
func (b *sagemakerBench) createAll(ctx context.Context, n int) (replayResult, error) {
	_, res, err := b.list(ctx)
	if err != nil {
		return res, err
	}
	for i := 1; i <= n; i++ {
		var resources []types.ComputeQuotaResourceConfig
		for _, e := range teamEntries(i, false) {
			r := types.ComputeQuotaResourceConfig{InstanceType: types.ClusterInstanceType(e.InstanceType)}
			if e.Field == "vcpu" {
				r.VCpu = aws.Float32(float32(e.Value))
			} else {
				r.Accelerators = aws.Int32(int32(e.Value))
			}
			resources = append(resources, r)
		}
		err := b.transition(ctx, types.SchedulerResourceStatusCreating, &res, func() (string, error) {
			out, err := b.floor.CreateComputeQuota(ctx, &sagemaker.CreateComputeQuotaInput{
				ClusterArn: aws.String(b.clusterARN), Name: aws.String(teamName(i)),
				ComputeQuotaTarget: &types.ComputeQuotaTarget{TeamName: aws.String(teamName(i))},
				ComputeQuotaConfig: &types.ComputeQuotaConfig{ComputeQuotaResources: resources},
			})
			if err != nil {
				return "", err
			}
			return aws.ToString(out.ComputeQuotaId), nil
		})
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// deleteAll reads the cluster's quotas, then deletes each and confirms with Describe that it is
// gone.
func (b *sagemakerBench) deleteAll(ctx context.Context) (replayResult, error) {
	quotas, res, err := b.list(ctx)
	if err != nil {
		return res, err
	}
	for _, q := range quotas {
		err := b.transition(ctx, types.SchedulerResourceStatusDeleting, &res, func() (string, error) {
			_, err := b.floor.DeleteComputeQuota(ctx, &sagemaker.DeleteComputeQuotaInput{ComputeQuotaId: q.ComputeQuotaId})
			return aws.ToString(q.ComputeQuotaId), err
		})
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// transition makes the request that puts a quota into a transitional status (call returns
// the quota's ID), counts it, and when it succeeded waits until the quota has left that status.
func (b *sagemakerBench) transition(ctx context.Context, transitional types.SchedulerResourceStatus, res *replayResult, call func() (string, error)) error {
	id, err := call()
	res.Requests++
	if err != nil {
		return err
	}
	return b.waitUntil(ctx, id, transitional, res)
}

// waitUntil describes the quota until its status is no longer transitional (or it is gone,
// after a delete), without sleeping: the emulator settles on observation.
func (b *sagemakerBench) waitUntil(ctx context.Context, id string, transitional types.SchedulerResourceStatus, res *replayResult) error {
	for range 10 {
		out, err := b.floor.DescribeComputeQuota(ctx, &sagemaker.DescribeComputeQuotaInput{ComputeQuotaId: aws.String(id)})
		res.Requests++
		var nf *types.ResourceNotFound
		switch {
		case errors.As(err, &nf) && transitional == types.SchedulerResourceStatusDeleting:
			return nil
		case err != nil:
			return err
		case out.Status != transitional:
			return nil
		}
	}
	return fmt.Errorf("compute quota %s is still %s after 10 Describes", id, transitional)
}

// removeQuotas deletes every quota the emulator holds, settles the deletions, and returns how
// many there were.
func (b *sagemakerBench) removeQuotas(ctx context.Context) int {
	quotas := b.emu.Quotas()
	for _, q := range quotas {
		if q.Status != sagemakeremulator.StatusDeleting {
			_ = b.emu.DeleteQuota(q.ID)
		}
	}
	_ = b.emu.Settle(ctx)
	return len(quotas)
}
