package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// runner holds what measuring on either path needs.
type runner struct {
	opts options
	tf   *tfRunner
	// noopTF runs Terraform with the no-op provider in place of the provider.
	noopTF *tfRunner
	// queryTF runs the query scenario's Terraform (1.14 or later) with the provider; nil skips it.
	queryTF *tfRunner
	window  requestWindow
	rssDir  string
	workDir string
	notes   *[]string
	logf    func(format string, args ...any)
}

// requestWindow counts the requests of one measured command: the counting proxy's on the
// Kubernetes path, the emulator's record of calls on the SageMaker path.
type requestWindow interface {
	reset()
	counts() requestCounts
}

// bench measures the Kubernetes path.
type bench struct {
	runner
	proxy    *countingProxy
	replayer *replayer
	cleaner  *cleaner
}

// measureProvider runs one Terraform command on the provider configuration with the request
// window and the RSS directory reset, and returns the sample.
func (b *runner) measureProvider(ctx context.Context, dir, label string, wantExit int, args ...string) (runSample, error) {
	return b.measureWith(ctx, b.tf, dir, label, wantExit, args...)
}

// measureWith is measureProvider with the Terraform tf runs.
func (b *runner) measureWith(ctx context.Context, tf *tfRunner, dir, label string, wantExit int, args ...string) (runSample, error) {
	if err := resetDir(b.rssDir); err != nil {
		return runSample{}, err
	}
	b.window.reset()
	wall, err := tf.run(ctx, dir, label, wantExit, args...)
	if err != nil {
		return runSample{}, err
	}
	peak, procs, err := peakRSS(b.rssDir)
	if err != nil {
		return runSample{}, err
	}
	counts := b.window.counts()
	s := runSample{WallSeconds: wall.Seconds(), CPUSeconds: tf.lastCPU.Seconds(), PeakRSSBytes: peak, ProviderProcesses: procs, Requests: &counts}
	b.logf("  %-34s %8.2f s  CPU %.2f s  %6d requests  peak RSS %6.1f MB (%d provider processes)", label, s.WallSeconds, s.CPUSeconds, counts.Total, float64(peak)/1e6, procs)
	if counts.Failed > 0 {
		b.note(fmt.Sprintf("%s: %d requests failed (answers that an object is missing or in conflict are not counted)", label, counts.Failed))
	}
	return s, nil
}

// measureNoopProvider runs the command the provider just ran in dir (its configuration and
// the state it wrote) with the no-op provider, and stores its wall and CPU time in the provider's
// sample: what Terraform, gRPC and the plugin processes cost for these schemas before the
// provider does any work. Its ReadResource returns the stored state and its plan is the proposed
// new state, so it plans what the provider planned; it makes no request, and a request in its
// window (never counted into the provider's sample, which was taken before) is noted.
func (b *runner) measureNoopProvider(ctx context.Context, s *runSample, dir, label string, wantExit int, args ...string) error {
	label += " (no-op provider)"
	b.window.reset()
	wall, err := b.noopTF.run(ctx, dir, label, wantExit, args...)
	if err != nil {
		return err
	}
	if n := b.window.counts().Total; n > 0 {
		b.note(fmt.Sprintf("%s: %d API request(s) while the no-op provider ran, which makes none", label, n))
	}
	s.NoopProviderSeconds, s.NoopProviderCPUSeconds = wall.Seconds(), b.noopTF.lastCPU.Seconds()
	b.logf("  %-34s %8.2f s  CPU %.2f s", label, wall.Seconds(), b.noopTF.lastCPU.Seconds())
	return nil
}

// measureTerraformData runs the same command on the terraform_data configuration.
func (b *runner) measureTerraformData(ctx context.Context, dir, label string, wantExit int, args ...string) (runSample, error) {
	wall, err := b.tf.run(ctx, dir, label, wantExit, args...)
	if err != nil {
		return runSample{}, err
	}
	b.logf("  %-34s %8.2f s  CPU %.2f s", label, wall.Seconds(), b.tf.lastCPU.Seconds())
	return runSample{WallSeconds: wall.Seconds(), CPUSeconds: b.tf.lastCPU.Seconds()}, nil
}

// replayInto times the sequential replay of reqs and stores it in the sample.
func (b *bench) replayInto(ctx context.Context, s *runSample, label string, reqs []recordedRequest) error {
	res, err := b.replayer.replay(ctx, reqs)
	if err != nil {
		return fmt.Errorf("%s: sequential replay: %w", label, err)
	}
	s.Replay = &res
	b.logf("  %-34s %8.2f s  %6d requests, one after another", label+" (sequential)", res.Seconds, res.Requests)
	if res.Mismatches > 0 {
		b.note(fmt.Sprintf("%s: %d of %d replayed writes got a different status than the provider's, so the floor may not redo the same work (%s)",
			label, res.Mismatches, res.Requests, strings.Join(res.Examples, "; ")))
	}
	return nil
}

func (b *runner) note(s string) {
	*b.notes = append(*b.notes, s)
	b.logf("  note: %s", s)
}

// pathRuns is how one path measures: the kinds of its two configurations (the provider's,
// then its terraform_data floor's), the provider block, and one run.
type pathRuns struct {
	name          string
	provider      configKind
	floor         configKind
	providerBlock string
	runOnce       func(ctx context.Context, n, run int, pdir, ddir string, tr *teamResult) error
}

// runPath measures path p at every team count into res.
func (b *runner) runPath(ctx context.Context, p pathRuns, res *results) error {
	for _, n := range b.opts.Teams {
		tr := newTeamResult(p.name, n)
		res.TeamCounts = append(res.TeamCounts, tr)
		if err := b.runTeamCount(ctx, p, n, tr); err != nil {
			return err
		}
	}
	return nil
}

// runTeamCount measures every operation at n teams on path p, b.opts.Runs times, into tr.
func (b *runner) runTeamCount(ctx context.Context, p pathRuns, n int, tr *teamResult) error {
	pdir := filepath.Join(b.workDir, fmt.Sprintf("%s-%s-%d", p.name, p.provider, n))
	ddir := filepath.Join(b.workDir, fmt.Sprintf("%s-%s-%d", p.name, p.floor, n))
	if err := writeWorkDir(pdir, p.provider, n, p.providerBlock); err != nil {
		return err
	}
	if err := writeWorkDir(ddir, p.floor, n, ""); err != nil {
		return err
	}
	for run := 1; run <= b.opts.Runs; run++ {
		b.logf("%s path, %d teams, run %d of %d", p.name, n, run, b.opts.Runs)
		if err := p.runOnce(ctx, n, run, pdir, ddir, tr); err != nil {
			return fmt.Errorf("%s path, %d teams, run %d: %w", p.name, n, run, err)
		}
	}
	return nil
}

// runOnce is one run: plan of new resources, apply, no-op plan, plan with one quota changed,
// refresh-only, destroy; each on the provider, then (the plans and refresh-only) on the no-op
// provider, then on terraform_data; then the sequential
// replays of apply and destroy against the same (empty, then populated) cluster.
func (b *bench) runOnce(ctx context.Context, n, run int, pdir, ddir string, tr *teamResult) error {
	if err := b.startClean(ctx, n, run, pdir, ddir); err != nil {
		return err
	}
	r := &teamRun{b: b, n: n, run: run, pdir: pdir, ddir: ddir, tr: tr}
	if err := r.step(ctx, opPlanNew, exitChanges, true, argsPlan); err != nil {
		return err
	}
	if err := r.step(ctx, opApply, 0, false, argsApply); err != nil {
		return err
	}
	if err := r.step(ctx, opPlanNoop, exitNoChanges, true, argsPlan); err != nil {
		return err
	}
	if err := r.changedPlan(ctx); err != nil {
		return err
	}
	if err := r.step(ctx, opRefreshOnly, 0, true, argsRefresh); err != nil {
		return err
	}
	if err := b.measureQuery(ctx, n, run, pdir, providerConfig, kubernetesLists, r.tr); err != nil {
		return err
	}
	if err := r.step(ctx, opDestroy, 0, false, argsDestroy); err != nil {
		return err
	}
	return r.replayWrites(ctx)
}

// startClean empties the cluster (noting what an earlier run left) and both
// state directories before a run.
func (b *bench) startClean(ctx context.Context, n, run int, pdir, ddir string) error {
	left, err := b.clean(ctx, pdir, ddir)
	if left != "" {
		b.note(fmt.Sprintf("%d teams, run %d: removed before the run: %s", n, run, left))
	}
	return err
}

// clean empties the cluster and both state directories, and says what the cluster held.
func (b *bench) clean(ctx context.Context, pdir, ddir string) (string, error) {
	left, err := b.cleaner.ensureClean(ctx)
	if err != nil {
		return "", err
	}
	for _, dir := range []string{pdir, ddir} {
		if err := removeState(dir); err != nil {
			return left, err
		}
	}
	return left, nil
}

// teamRun is one run of the commands at one team count: where its samples go, and the
// provider's apply and destroy requests kept to be replayed at the end.
type teamRun struct {
	b                      *bench
	n, run                 int
	pdir, ddir             string
	tr                     *teamResult
	applyReqs, destroyReqs []recordedRequest
}

func (r *teamRun) label(kind configKind, op string) string {
	return fmt.Sprintf("%d-%s-r%d %s", r.n, kind, r.run, op)
}

func (r *teamRun) add(op string, p, d runSample) {
	o := r.tr.op(op)
	o.Provider = append(o.Provider, p)
	o.TerraformData = append(o.TerraformData, d)
}

// step measures op on both configurations; replay says whether the provider's reads are
// replayed right away (plans and refresh: they change nothing).
func (r *teamRun) step(ctx context.Context, op string, wantExit int, replay bool, args []string) error {
	p, err := r.b.measureProvider(ctx, r.pdir, r.label(providerConfig, op), wantExit, args...)
	if err != nil {
		return err
	}
	reqs := r.b.proxy.snapshot()
	if replay {
		reads := readsOnly(reqs) // a plan of new resources reads nothing that exists
		if op != opPlanNew {
			reads = objectReads(r.n)
		}
		if err := r.b.replayInto(ctx, &p, r.label(providerConfig, op), reads); err != nil {
			return err
		}
	}
	if slices.Contains(noopProviderOps, op) {
		if err := r.b.measureNoopProvider(ctx, &p, r.pdir, r.label(providerConfig, op), wantExit, args...); err != nil {
			return err
		}
	}
	switch op {
	case opApply:
		r.applyReqs = reqs
	case opDestroy:
		r.destroyReqs = reqs
	}
	d, err := r.b.measureTerraformData(ctx, r.ddir, r.label(terraformDataConfig, op), wantExit, args...)
	if err != nil {
		return err
	}
	r.add(op, p, d)
	return nil
}

// replayWrites replays the provider's apply and destroy requests into their samples, after
// noting what destroy left behind, and leaves the cluster clean.
func (r *teamRun) replayWrites(ctx context.Context) error {
	// What destroy left behind is the provider's doing; say so, and clean up for the replay.
	if left, err := r.b.cleaner.ensureClean(ctx); err != nil {
		return err
	} else if left != "" {
		r.b.note(fmt.Sprintf("%d teams, run %d: left behind by terraform destroy: %s", r.n, r.run, left))
	}
	// The writes are replayed in the state the provider saw: apply on an empty cluster, then
	// destroy on the objects that replay created.
	applyOp, destroyOp := r.tr.op(opApply), r.tr.op(opDestroy)
	if err := r.b.replayInto(ctx, &applyOp.Provider[len(applyOp.Provider)-1], r.label(providerConfig, opApply), withoutRepeatedReads(r.applyReqs)); err != nil {
		return err
	}
	if err := r.b.replayInto(ctx, &destroyOp.Provider[len(destroyOp.Provider)-1], r.label(providerConfig, opDestroy), withoutRepeatedReads(r.destroyReqs)); err != nil {
		return err
	}
	_, err := r.b.cleaner.ensureClean(ctx)
	return err
}

// changedPlan plans with one team's quota bumped (exit 2 expected), on both configurations
// and with the no-op provider, and restores the configuration whatever happens.
func (r *teamRun) changedPlan(ctx context.Context) error {
	// The no-op provider plans the same changed configuration right after the provider.
	measureBoth := func(ctx context.Context, dir, label string, wantExit int, args ...string) (runSample, error) {
		s, err := r.b.measureProvider(ctx, dir, label, wantExit, args...)
		if err != nil {
			return s, err
		}
		return s, r.b.measureNoopProvider(ctx, &s, dir, label, wantExit, args...)
	}
	p, err := r.planChanged(ctx, r.pdir, providerConfig, measureBoth)
	if err != nil {
		return err
	}
	if err := r.b.replayInto(ctx, &p, r.label(providerConfig, opPlanChanged), objectReads(r.n)); err != nil {
		return err
	}
	d, err := r.planChanged(ctx, r.ddir, terraformDataConfig, r.b.measureTerraformData)
	if err != nil {
		return err
	}
	r.add(opPlanChanged, p, d)
	return nil
}

// planChanged writes the configuration of kind in dir with the quota of the middle team
// bumped, plans it with measure and writes the unchanged configuration back, even when the
// plan failed.
func (r *teamRun) planChanged(ctx context.Context, dir string, kind configKind,
	measure func(ctx context.Context, dir, label string, wantExit int, args ...string) (runSample, error)) (runSample, error) {
	changed := (r.n + 1) / 2
	if err := writeTeams(dir, kind, r.n, changed); err != nil {
		return runSample{}, err
	}
	s, err := measure(ctx, dir, r.label(kind, opPlanChanged), exitChanges, argsPlan...)
	if rerr := writeTeams(dir, kind, r.n, 0); err == nil {
		err = rerr
	}
	return s, err
}

// withoutRepeatedReads keeps every write and the first GET of each URL: a poll that waits
// for a deletion repeats a GET as often as the provider chooses, and must not raise the
// provider's own floor.
func withoutRepeatedReads(reqs []recordedRequest) []recordedRequest {
	seen := map[string]bool{}
	var out []recordedRequest
	for _, r := range reqs {
		if strings.EqualFold(r.Method, "GET") {
			if seen[r.URI] {
				continue
			}
			seen[r.URI] = true
		}
		out = append(out, r)
	}
	return out
}

// readsOnly keeps the GET requests: replaying a plan must not write, whatever it did.
func readsOnly(reqs []recordedRequest) []recordedRequest {
	var out []recordedRequest
	for _, r := range reqs {
		if strings.EqualFold(r.Method, "GET") {
			out = append(out, r)
		}
	}
	return out
}

func removeState(dir string) error {
	for _, f := range []string{"terraform.tfstate", "terraform.tfstate.backup", ".terraform.tfstate.lock.info"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

func resetDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.MkdirAll(dir, 0o755)
}

// measureQuery runs the query scenario on the n teams that exist: `terraform query
// -generate-config-out` of the list blocks lists, from a working directory of its own (pdir's
// provider configuration, the list blocks, no state), and requires a configuration and an import
// block for every object listed. Nothing when there is no query Terraform.
func (b *runner) measureQuery(ctx context.Context, n, run int, pdir string, kind configKind, lists []string, tr *teamResult) error {
	if b.queryTF == nil {
		return nil
	}
	dir := filepath.Join(b.workDir, fmt.Sprintf("%s-query-%d", kind, n))
	if err := writeQueryDir(dir, pdir, n, lists); err != nil {
		return err
	}
	label := fmt.Sprintf("%d-%s-r%d %s", n, kind, run, opQuery)
	s, err := b.measureWith(ctx, b.queryTF, dir, label, 0, "query", "-generate-config-out="+generatedFile, "-no-color")
	if err != nil {
		return err
	}
	generated, err := os.ReadFile(filepath.Join(dir, generatedFile))
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	if got, want := strings.Count(string(generated), "\nimport {"), n*len(lists); got != want {
		return fmt.Errorf("%s: the generated configuration (%s) has %d import blocks, want %d (%d teams, %s); output in %s",
			label, generatedFile, got, want, n, strings.Join(lists, ", "), b.queryTF.lastLog)
	}
	o := tr.op(opQuery)
	o.Provider = append(o.Provider, s)
	return nil
}
