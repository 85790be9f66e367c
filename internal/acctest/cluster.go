// Package acctest is the acceptance tests' kit: the cluster they run against (the local
// control plane, or an existing cluster confirmed disposable), checks that skip or fail a test
// without one, chainable builders for the Kueue objects tests create out of band and for the
// HCL they apply, and the request-counting, fault-injecting proxy they put in front of the API
// server. It is an ordinary package so that the provider's tests and the bench share it; it
// must not import the provider.
package acctest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
)

// Env is the cluster the acceptance tests run against, set up once by Main.
type Env struct {
	Config    *rest.Config
	Clientset kubernetes.Interface
	Dynamic   dynamic.Interface
	// Cluster is the local control plane Main started or attached to; nil when
	// KUBE_CONFIG_PATH named an existing cluster.
	Cluster *localcluster.Cluster
}

// EnvLocalClusterDir names the work directory of a local control plane another process runs
// (scripts/test.sh, make cluster-up): Main attaches to it instead of starting one, so that
// test runs one after the other share it.
const EnvLocalClusterDir = "HYPERPOD_LOCALCLUSTER_DIR"

// env is the cluster of the running test binary; nil until Main set it up (always nil
// without TF_ACC).
var env *Env

// Current returns the cluster Main set up, nil when there is none.
func Current() *Env { return env }

// Main runs m, the tests of a package. With TF_ACC set it first starts the local control
// plane, and stops it afterwards, unless HYPERPOD_LOCALCLUSTER_DIR names one that runs
// already (attached: left running) or KUBE_CONFIG_PATH names another cluster. The provider
// under test finds the cluster through KUBE_CONFIG_PATH, the same way users configure it. An
// existing cluster must carry the marker the harness writes (localcluster.MarkerNamespace) or
// be confirmed disposable with HYPERPOD_DISPOSABLE_CLUSTER=1; otherwise nothing runs. On an
// attached control plane, tests that pass but leave objects behind fail (checkNoLeftovers). ready,
// when not nil, is called with the cluster before the tests run. Main returns the exit code.
func Main(m *testing.M, ready func(*Env)) int {
	if os.Getenv("TF_ACC") == "" {
		return m.Run()
	}
	defer func() { taskGovernanceStop() }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	e := &Env{}
	external := os.Getenv("KUBE_CONFIG_PATH") != ""
	if external && os.Getenv(EnvLocalClusterDir) != "" {
		fmt.Fprintf(os.Stderr, "acceptance tests: both KUBE_CONFIG_PATH and %s name a cluster; unset one of them\n", EnvLocalClusterDir)
		return 1
	}
	if !external {
		cluster, stop, err := localCluster(ctx)
		defer stop()
		stopOnSignal(stop)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		e.Cluster = cluster
		if err := os.Setenv("KUBE_CONFIG_PATH", cluster.KubeconfigPath); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if err := e.connect(ctx, external); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// An existing cluster (kind) gets the same fake HyperPod nodes; creating them is idempotent.
	if err := localcluster.CreateFleet(ctx, e.Clientset, localcluster.Fleet, catalog.Builtin()); err != nil {
		fmt.Fprintln(os.Stderr, "creating the fake HyperPod nodes:", err)
		return 1
	}
	if external {
		// A real cluster (kind) has a node lifecycle controller that marks kubelet-less nodes
		// NotReady; heartbeat for them while the tests run.
		defer keepFleetAlive(e.Clientset)()
	}
	env = e
	if ready != nil {
		ready(e)
	}
	run := func() int { return withoutTaskGovernanceLeftovers(m.Run) }
	if !external && os.Getenv(EnvLocalClusterDir) != "" {
		return checkNoLeftovers(e.Dynamic, run)
	}
	return run()
}

// localCluster attaches to the local control plane in HYPERPOD_LOCALCLUSTER_DIR or, without
// it, starts one (startLocalCluster). stop, never nil, stops what was started; call it even on
// error.
func localCluster(ctx context.Context) (_ *localcluster.Cluster, stop func(), _ error) {
	dir := os.Getenv(EnvLocalClusterDir)
	if dir == "" {
		return startLocalCluster(ctx)
	}
	cluster, err := localcluster.Attach(dir)
	if err != nil {
		return nil, func() {}, fmt.Errorf("acceptance tests (%s=%s): %w", EnvLocalClusterDir, dir, err)
	}
	fmt.Fprintf(os.Stderr, "local control plane at %s attached from %s\n", cluster.Host, cluster.WorkDir)
	return cluster, func() {}, nil
}

// startLocalCluster starts the local control plane in a temporary work directory. stop,
// never nil, stops what was started and removes the directory; call it even on error.
func startLocalCluster(ctx context.Context) (_ *localcluster.Cluster, stop func(), _ error) {
	stop = func() {}
	assets, err := localcluster.AssetsDirFromEnv()
	if err != nil {
		return nil, stop, fmt.Errorf("acceptance tests need the local control plane: %w", err)
	}
	workDir, err := os.MkdirTemp("", "hyperpod-acc-")
	if err != nil {
		return nil, stop, err
	}
	stop = func() { os.RemoveAll(workDir) }
	started := time.Now()
	cluster, err := localcluster.Start(ctx, localcluster.Options{AssetsDir: assets, WorkDir: workDir, Kueue: localcluster.KueueFromEnv()})
	if err != nil {
		return nil, stop, fmt.Errorf("starting the local control plane: %w", err)
	}
	stop = func() {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the local control plane:", err)
		}
		os.RemoveAll(workDir)
	}
	fmt.Fprintf(os.Stderr, "local control plane at %s started in %s\n", cluster.Host, time.Since(started).Round(time.Millisecond))
	return cluster, stop, nil
}

// connect checks that the cluster the KUBE_* variables select may be written to and sets
// e's clients to it.
//
// Refuse, before writing anything, a cluster the harness did not start (it could be
// production) unless HYPERPOD_DISPOSABLE_CLUSTER=1 says it is disposable. The cluster checked
// is the one the provider under test resolves from the KUBE_* variables, and the tests' own
// clients use that same configuration. The control plane Main started is marked by Start;
// the check still catches KUBE_HOST or KUBE_CTX pointing the provider elsewhere.
func (e *Env) connect(ctx context.Context, external bool) error {
	var setHere []string
	if !external {
		setHere = []string{"KUBE_CONFIG_PATH"}
	}
	verdict, _, cfg, err := localcluster.CheckDisposableFromEnv(ctx, setHere...)
	if err != nil {
		return fmt.Errorf("acceptance tests: %w", err)
	}
	fmt.Fprintln(os.Stderr, verdict)
	cfg.UserAgent = "" // client-go's default, as before: tests' writes must not look like the provider's
	// The tests' own reads, writes and access reviews must not queue behind a client-side rate
	// limit: parallel tests share these clients, and at client-go's default of 5 requests a
	// second they spent most of their time waiting for each other, not for the API server.
	cfg.QPS = -1
	e.Config = cfg
	e.Clientset = kubernetes.NewForConfigOrDie(cfg)
	e.Dynamic = dynamic.NewForConfigOrDie(cfg)
	return nil
}

// keepFleetAlive heartbeats for the fake HyperPod nodes until the returned stop is called.
func keepFleetAlive(cs kubernetes.Interface) (stop func()) {
	alive, stop := context.WithCancel(context.Background())
	go func() {
		if err := localcluster.KeepFleetAlive(alive, cs, localcluster.Fleet, catalog.Builtin(), 10*time.Second); err != nil {
			fmt.Fprintln(os.Stderr, "keeping the fake HyperPod nodes alive:", err)
		}
	}()
	return stop
}

// PreCheck fails the test when Main set up no cluster (TF_ACC unset).
func PreCheck(t testing.TB) {
	t.Helper()
	if env == nil {
		t.Fatal("TestMain did not set up a cluster; run the acceptance tests with TF_ACC=1 (make test-acc)")
	}
}

// RequireCluster skips without TF_ACC, like resource.Test, for tests that set up the cluster
// before resource.Test runs.
func RequireCluster(t testing.TB) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: runs with TF_ACC=1 (make test-acc), like every TestAcc test")
	}
	PreCheck(t)
}

// RequireKueue is RequireCluster for tests that assert decisions of the Kueue controller:
// with HYPERPOD_KUEUE off they fail rather than pass without Kueue.
func RequireKueue(t testing.TB) {
	t.Helper()
	RequireCluster(t)
	if !localcluster.KueueFromEnv() {
		t.Fatalf("this test asserts decisions of the Kueue controller, which %s=off turned off", localcluster.EnvKueue)
	}
}

// OpenTofu reports whether the tests run under OpenTofu. plugin-testing registers the provider
// under TF_ACC_PROVIDER_HOST, and only OpenTofu's runs (make test) set its registry there.
func OpenTofu() bool { return os.Getenv("TF_ACC_PROVIDER_HOST") == "registry.opentofu.org" }
