// Command bench measures the provider at scale on both of its paths: Kueue objects on its own
// local control plane, and task_governance against the SageMaker API emulator. For each team
// count, Terraform apply, no-op plan, plan with one quota changed, refresh-only and destroy
// (and a plan of new resources), each timed, with the provider's peak RSS and the API requests
// it made (counted by a proxy, or by the emulator), next to floors for the same work (Terraform
// core on terraform_data, and the requests the work needs sent one after another). Its admission
// preview section plans quota changes of one cohort whose teams have jobs, with the preview on and
// off, and runs internal/admission's BenchmarkPreview1000Teams.
// It writes bench/results/<date>.md and .json and exits non-zero when a target is missed.
//
//	go run ./internal/cmd/bench [-paths kubernetes,sagemaker] [-teams 10,100,500,1000] [-runs 3] [-preview-teams 100,1000]   (make bench BENCH_FLAGS=...)
//
// Started by Terraform as terraform-provider-hyperpod (a copy of this binary in the
// dev_overrides directory, with HYPERPOD_BENCH_REAL_PROVIDER set), it is the wrapper that
// runs the real provider and records its peak RSS instead.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
)

const (
	modulePath   = "github.com/quotaworks/terraform-provider-hyperpod"
	providerName = "terraform-provider-hyperpod"
)

func main() {
	if wrapperMode() {
		os.Exit(runProviderWrapper())
	}
	os.Exit(run())
}

func run() int {
	opts, err := parseOptions(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}
	unsetClusterEnv()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}

	started := time.Now().UTC()
	res := &results{
		Date:      started.Format("2006-01-02"),
		StartedAt: started.Format(time.RFC3339),
		Settings: settings{
			Paths: opts.Paths, Teams: opts.Teams, Runs: opts.Runs, MaxListsPerKind: opts.MaxListsPerKind,
			Parallelism: "Terraform default (10)", Spread: spreadNote, Floor: floorFormula, NoopProviderFloor: noopFloorFormula,
			ShapesTeams: opts.ShapesTeams, Shapes: shapeNames(opts.Shapes), ShapesOnly: opts.ShapesOnly,
			PreviewTeams: opts.PreviewTeams, PreviewBenchmark: opts.PreviewBenchmark, PreviewOnly: opts.PreviewOnly,
			QueryOnly: opts.QueryOnly,
		},
	}
	repo, runErr := execute(ctx, opts, res, logf)
	res.FinishedAt = time.Now().UTC().Format(time.RFC3339)
	if runErr != nil {
		res.Error = runErr.Error()
		fmt.Fprintln(os.Stderr, "bench: error:", runErr)
	}
	for _, tr := range res.TeamCounts {
		tr.finish()
	}
	res.Targets = checkTargets(res, opts.MaxListsPerKind)
	if opts.PreviewOnly {
		res.Targets = previewTargets(res) // the others are not measured
	}
	if repo == "" {
		return 1 // nothing was measured
	}

	out := opts.OutDir
	if !filepath.IsAbs(out) {
		out = filepath.Join(repo, out)
	}
	if f := opts.Findings; f != "" {
		if !filepath.IsAbs(f) {
			f = filepath.Join(repo, f)
		}
		if data, err := os.ReadFile(f); err == nil {
			res.Findings = string(data)
		}
	}
	md, js, err := writeResults(out, resultsName(opts, res.Date), res)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: writing the results:", err)
		return 1
	}
	fmt.Printf("Results: %s\n         %s\n\nTargets:\n", md, js)
	for _, t := range res.Targets {
		fmt.Printf("  %-11s %s: %s\n", strings.ToUpper(t.Status), t.Name, t.Detail)
	}
	if m := missed(res.Targets); len(m) > 0 || runErr != nil {
		if len(m) > 0 {
			fmt.Printf("\n%d target(s) missed.\n", len(m))
		}
		return 1
	}
	return 0
}

// resultsName is the name of the results files of a run on date with opts: a section measured
// alone has files of its own.
func resultsName(opts options, date string) string {
	switch {
	case opts.ShapesOnly:
		return "workspace-shapes-" + date
	case opts.PreviewOnly:
		return "admission-preview-" + date
	case opts.QueryOnly:
		return "query-" + date
	}
	return date
}

// execute sets everything up, measures every team count into res and tears down. It
// returns the repository root ("" when it was not found).
func execute(ctx context.Context, opts options, res *results, logf func(string, ...any)) (repo string, err error) {
	if repo, err = findRepo(opts.Repo); err != nil {
		return "", err
	}
	terraform, err := exec.LookPath(opts.Terraform)
	if err != nil {
		return repo, fmt.Errorf("terraform: %w (install Terraform >= 1.11 or pass -terraform)", err)
	}
	res.Machine = collectMachineInfo(ctx, repo, terraform)

	tmp, err := os.MkdirTemp("", "hyperpod-bench-")
	if err != nil {
		return repo, err
	}
	defer func() {
		if opts.Keep || err != nil {
			logf("kept %s (configurations, state, Terraform output in logs/, control plane logs in cluster/)", tmp)
			return
		}
		_ = os.RemoveAll(tmp)
	}()

	logf("building the provider")
	realProvider, noopProvider, pluginDir, err := buildProvider(ctx, repo, tmp)
	if err != nil {
		return repo, err
	}
	rcPath := filepath.Join(tmp, "terraformrc")
	if err := os.WriteFile(rcPath, []byte(cliConfig(pluginDir)), 0o644); err != nil {
		return repo, err
	}
	h := preparedHost{tmp: tmp, terraform: terraform, realProvider: realProvider, rcPath: rcPath}
	r := runner{
		opts:    opts,
		rssDir:  filepath.Join(tmp, "rss"),
		workDir: filepath.Join(tmp, "work"),
		notes:   &res.Notes,
		logf:    logf,
		tf:      h.tfRunner(realProvider, opts.CommandTimeout),
		noopTF:  h.tfRunner(noopProvider, opts.CommandTimeout),
	}
	if err := os.MkdirAll(r.tf.logDir, 0o755); err != nil {
		return repo, err
	}
	if !opts.ShapesOnly && !opts.PreviewOnly {
		if r.queryTF, err = h.queryRunner(ctx, repo, opts, realProvider, &res.Machine); err != nil {
			return repo, err
		}
		if r.queryTF == nil {
			res.Notes = append(res.Notes, opQuery+" was not measured (-query-terraform none)")
		}
	}
	if opts.PreviewBenchmark && !opts.ShapesOnly && !opts.QueryOnly {
		// Before the control plane starts: the benchmark measures CPU, on a machine as quiet as it gets.
		res.preview().Benchmarks = runPreviewBenchmarks(ctx, repo, tmp, opts.CommandTimeout, logf)
	}
	if slices.Contains(opts.Paths, pathKubernetes) && (!opts.PreviewOnly || len(opts.PreviewTeams) > 0) {
		if h.assets, err = resolveAssets(ctx, repo, opts.Assets); err != nil {
			return repo, err
		}
		if err := benchOnLocalCluster(ctx, r, res, h, repo); err != nil {
			return repo, err
		}
	}
	if slices.Contains(opts.Paths, pathSageMaker) && !opts.ShapesOnly && !opts.PreviewOnly {
		if err := benchOnEmulator(ctx, r, res); err != nil {
			return repo, err
		}
	}
	return repo, nil
}

// preparedHost is what execute prepares on this machine before a cluster starts.
type preparedHost struct {
	tmp          string // the bench's temporary directory
	assets       string // the control plane's assets
	terraform    string // the Terraform binary
	realProvider string // the provider binary the wrapper runs
	rcPath       string // the Terraform CLI configuration that installs the wrapper
}

// tfRunner runs Terraform with the wrapper in place of the provider, the wrapper running
// provider, and its logs in tmp/logs.
func (h preparedHost) tfRunner(provider string, timeout time.Duration) *tfRunner {
	return &tfRunner{
		terraform: h.terraform,
		logDir:    filepath.Join(h.tmp, "logs"),
		timeout:   timeout,
		env: childEnv(os.Environ(),
			"TF_CLI_CONFIG_FILE="+h.rcPath,
			"TF_IN_AUTOMATION=1",
			"CHECKPOINT_DISABLE=1",
			envWrapRealProvider+"="+provider,
			envWrapRSSDir+"="+filepath.Join(h.tmp, "rss"),
		),
	}
}

// queryRunner is the runner of the query scenario, with a Terraform that has `terraform query`
// (recorded in m); nil when -query-terraform is none.
func (h preparedHost) queryRunner(ctx context.Context, repo string, opts options, provider string, m *machineInfo) (*tfRunner, error) {
	terraform, err := resolveQueryTerraform(ctx, repo, opts.QueryTerraform, h.terraform, m.TerraformVersion)
	if err != nil || terraform == "" {
		return nil, err
	}
	m.QueryTerraformVersion = terraformVersion(ctx, repo, terraform)
	r := h.tfRunner(provider, opts.CommandTimeout)
	r.terraform, r.logDir = terraform, filepath.Join(h.tmp, "logs-query")
	return r, os.MkdirAll(r.logDir, 0o755)
}

// benchOnLocalCluster starts a local control plane behind a counting proxy, runs every
// team count of the Kubernetes path against it and stops it again; h.tmp holds the cluster's
// work directory.
func benchOnLocalCluster(ctx context.Context, r runner, res *results, h preparedHost, repo string) (err error) {
	r.logf("starting the local control plane (%s)", h.assets)
	cluster, err := localcluster.Start(ctx, localcluster.Options{AssetsDir: h.assets, WorkDir: filepath.Join(h.tmp, "cluster")})
	if err != nil {
		return err
	}
	defer func() {
		r.logf("stopping the local control plane")
		if serr := cluster.Stop(); serr != nil && err == nil {
			err = serr
		}
	}()
	proxy, err := startCountingProxy(cluster.RESTConfig)
	if err != nil {
		return err
	}
	defer func() { _ = proxy.close() }()
	rep, err := newReplayer(proxy.URL)
	if err != nil {
		return err
	}
	cl, err := newCleaner(cluster.RESTConfig)
	if err != nil {
		return err
	}
	r.window = proxy
	b := &bench{runner: r, proxy: proxy, replayer: rep, cleaner: cl}
	r.logf("API server %s, counting proxy %s", cluster.Host, proxy.URL)
	p := pathRuns{name: pathKubernetes, provider: providerConfig, floor: terraformDataConfig,
		providerBlock: kubernetesProvider(proxy.URL), runOnce: b.runOnce}
	if !r.opts.ShapesOnly && !r.opts.PreviewOnly {
		if err := b.runPath(ctx, p, res); err != nil {
			return err
		}
	}
	if !r.opts.PreviewOnly {
		if err := b.runShapes(ctx, res, repo, p.providerBlock); err != nil {
			return err
		}
	}
	if r.opts.ShapesOnly || len(r.opts.PreviewTeams) == 0 {
		return nil
	}
	// Kueue's manager only now, on the same control plane: the sections above are measured
	// without it, and jobs are pending or admitted only where it runs.
	r.logf("starting Kueue's manager for %s", opPlanChangedWithJobs)
	if err := cluster.StartKueue(ctx, h.assets, 0); err != nil {
		return err
	}
	return b.runPlansWithJobs(ctx, res)
}

// buildProvider builds the provider and the no-op provider (internal/cmd/noopprovider: the same
// schemas, every RPC of a plan answered without work) from the work tree, and puts a copy of
// this binary named like the provider in the dev_overrides directory: Terraform starts that
// wrapper, which starts the provider it is told to and records its peak RSS.
func buildProvider(ctx context.Context, repo, tmp string) (realProvider, noopProvider, pluginDir string, err error) {
	realProvider = filepath.Join(tmp, "provider", providerName)
	noopProvider = filepath.Join(tmp, "noop-provider", providerName)
	for pkg, out := range map[string]string{".": realProvider, "./internal/cmd/noopprovider": noopProvider} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
		cmd.Dir = repo
		cmd.Env = childEnv(os.Environ())
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return "", "", "", fmt.Errorf("locating the bench binary for the provider wrapper: %w", err)
	}
	pluginDir = filepath.Join(tmp, "plugins")
	if err := os.MkdirAll(pluginDir, 0o755); err != nil {
		return "", "", "", err
	}
	if err := copyFile(self, filepath.Join(pluginDir, providerName), 0o755); err != nil {
		return "", "", "", fmt.Errorf("installing the provider wrapper: %w", err)
	}
	return realProvider, noopProvider, pluginDir, nil
}

func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// findRepo returns dir, or the nearest directory above the working directory whose go.mod
// declares the provider's module.
func findRepo(dir string) (string, error) {
	start := dir
	if start == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		start = wd
	}
	abs, err := filepath.Abs(start)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if declaresModule(filepath.Join(d, "go.mod")) {
			return d, nil
		}
		if dir != "" || filepath.Dir(d) == d {
			break
		}
	}
	return "", fmt.Errorf("no go.mod of %s in %s or above (run from the repository, or pass -repo)", modulePath, abs)
}

// declaresModule reports whether the go.mod at path is the provider's.
func declaresModule(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == modulePath {
			return true
		}
	}
	return false
}
