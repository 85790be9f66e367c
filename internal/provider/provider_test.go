package provider

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/rpcctx"
)

// testAccProtoV6ProviderFactories serves the provider in-process to the terraform CLI, wrapped
// as main.go serves it.
var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"hyperpod": func() (tfprotov6.ProviderServer, error) {
		s, err := providerserver.NewProtocol6WithError(New("test")())()
		if err != nil {
			return nil, err
		}
		return rpcctx.Wrap(s), nil
	},
}

// acc is the cluster the acceptance tests run against, set up once by TestMain.
var acc struct {
	config    *rest.Config
	clientset kubernetes.Interface
	dynamic   dynamic.Interface
	// cluster is the local control plane TestMain started; nil when KUBE_CONFIG_PATH named an
	// existing cluster.
	cluster *localcluster.Cluster
}

// TestMain starts the local control plane for acceptance tests (TF_ACC set) unless
// KUBE_CONFIG_PATH already names a cluster, and stops it afterwards. The provider under test
// finds the cluster through KUBE_CONFIG_PATH, the same way users configure it. An existing
// cluster must carry the marker the harness writes (localcluster.MarkerNamespace) or be
// confirmed disposable with HYPERPOD_DISPOSABLE_CLUSTER=1; otherwise nothing runs.
func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if os.Getenv("TF_ACC") == "" {
		return m.Run()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	kubeconfig := os.Getenv("KUBE_CONFIG_PATH")
	external := kubeconfig != ""
	if !external {
		assets, err := localcluster.AssetsDirFromEnv()
		if err != nil {
			fmt.Fprintln(os.Stderr, "acceptance tests need the local control plane:", err)
			return 1
		}
		workDir, err := os.MkdirTemp("", "hyperpod-acc-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(workDir)
		started := time.Now()
		cluster, err := localcluster.Start(ctx, localcluster.Options{AssetsDir: assets, WorkDir: workDir, Kueue: localcluster.KueueFromEnv()})
		if err != nil {
			fmt.Fprintln(os.Stderr, "starting the local control plane:", err)
			return 1
		}
		defer func() {
			if err := cluster.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "stopping the local control plane:", err)
			}
		}()
		fmt.Fprintf(os.Stderr, "local control plane at %s started in %s\n", cluster.Host, time.Since(started).Round(time.Millisecond))
		kubeconfig = cluster.KubeconfigPath
		acc.cluster = cluster
		if err := os.Setenv("KUBE_CONFIG_PATH", kubeconfig); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}

	// Refuse, before writing anything, a cluster the harness did not start (it could be
	// production) unless HYPERPOD_DISPOSABLE_CLUSTER=1 says it is disposable. The cluster checked
	// is the one the provider under test resolves from the KUBE_* variables, and TestMain's own
	// clients use that same configuration. The control plane started above is marked by Start;
	// the check still catches KUBE_HOST or KUBE_CTX pointing the provider elsewhere.
	var setHere []string
	if !external {
		setHere = []string{"KUBE_CONFIG_PATH"}
	}
	verdict, _, cfg, err := localcluster.CheckDisposableFromEnv(ctx, setHere...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "acceptance tests:", err)
		return 1
	}
	fmt.Fprintln(os.Stderr, verdict)
	cfg.UserAgent = "" // client-go's default, as before: tests' writes must not look like the provider's
	acc.config = cfg
	acc.clientset = kubernetes.NewForConfigOrDie(cfg)
	acc.dynamic = dynamic.NewForConfigOrDie(cfg)
	// An existing cluster (kind) gets the same fake HyperPod nodes; creating them is idempotent.
	if err := localcluster.CreateFleet(ctx, acc.clientset, localcluster.Fleet, catalog.Builtin()); err != nil {
		fmt.Fprintln(os.Stderr, "creating the fake HyperPod nodes:", err)
		return 1
	}
	if external {
		// A real cluster (kind) has a node lifecycle controller that marks kubelet-less nodes
		// NotReady; heartbeat for them while the tests run.
		alive, stop := context.WithCancel(context.Background())
		defer stop()
		go func() {
			if err := localcluster.KeepFleetAlive(alive, acc.clientset, localcluster.Fleet, catalog.Builtin(), 10*time.Second); err != nil {
				fmt.Fprintln(os.Stderr, "keeping the fake HyperPod nodes alive:", err)
			}
		}()
	}
	return m.Run()
}
