package acctest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator/addon"
)

// TaskGovernance is a HyperPod cluster with AWS's task-governance add-on as the tests run it:
// a local control plane of its own (Kueue and the fake fleet included) that serves a
// KueueManagerConfig kind, which is how the add-on shows on a real cluster, and the SageMaker
// API emulator, whose writes the add-on's stand-in turns into Kueue objects (package addon). Tests
// on the Kubernetes path never share it: the add-on's mark would make the provider refuse them.
type TaskGovernance struct {
	Emulator   *sagemakeremulator.Emulator
	ClusterARN string
	Kubeconfig string
	Cluster    *localcluster.Cluster
	// Clientset and Dynamic reach the cluster as a test does (submitting jobs, reading status).
	Clientset kubernetes.Interface
	Dynamic   dynamic.Interface
}

var (
	taskGovernanceOnce sync.Once
	taskGovernance     *TaskGovernance
	taskGovernanceErr  error
	taskGovernanceStop = func() {}
)

// RequireTaskGovernance returns the task-governance cluster, started on first use and shared by
// the tests of the process (Main stops it). It skips without TF_ACC, like every acceptance test,
// and needs Kueue's manager, which turns the add-on's objects into decisions.
func RequireTaskGovernance(t *testing.T) *TaskGovernance {
	t.Helper()
	RequireKueue(t)
	taskGovernanceOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		taskGovernance, taskGovernanceStop, taskGovernanceErr = startTaskGovernance(ctx)
		stopOnSignal(taskGovernanceStop)
	})
	if taskGovernanceErr != nil {
		t.Fatalf("starting the task-governance cluster: %v", taskGovernanceErr)
	}
	return taskGovernance
}

func startTaskGovernance(ctx context.Context) (_ *TaskGovernance, stop func(), err error) {
	cluster, stopCluster, err := startLocalCluster(ctx)
	if err != nil {
		return nil, stopCluster, err
	}
	stop = stopCluster
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.KubeconfigPath)
	if err != nil {
		return nil, stop, err
	}
	cfg.QPS = -1 // as the Kubernetes path's test clients: no client-side rate limit
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, stop, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, stop, err
	}
	emu, conn, err := addon.Start(ctx, cluster.KubeconfigPath)
	if err != nil {
		return nil, stop, err
	}
	stop = func() {
		_ = emu.Close()
		stopCluster()
	}
	fmt.Fprintf(os.Stderr, "task-governance cluster: SageMaker API emulator at %s\n", emu.URL())
	return &TaskGovernance{Emulator: emu, ClusterARN: conn.ClusterARN,
		Kubeconfig: cluster.KubeconfigPath, Cluster: cluster, Clientset: clientset, Dynamic: dyn}, stop, nil
}

// ProviderHCL is the provider block of the SageMaker path on this cluster (see addon.Connection).
func (tg *TaskGovernance) ProviderHCL() string {
	return addon.Connection{Kubeconfig: tg.Kubeconfig, ClusterARN: tg.ClusterARN, Endpoint: tg.Emulator.URL()}.ProviderHCL()
}

// KubernetesProviderHCL is the provider block of the Kubernetes path on the same cluster.
func (tg *TaskGovernance) KubernetesProviderHCL() string {
	return fmt.Sprintf("\nprovider \"hyperpod\" {\n  config_path = %q\n}\n", tg.Kubeconfig)
}

// withoutTaskGovernanceLeftovers runs the tests and fails a passing run that left compute quotas
// or a cluster scheduler config in the SageMaker API emulator: the next test on the shared
// cluster would find them (one scheduler config per cluster).
func withoutTaskGovernanceLeftovers(run func() int) int {
	code := run()
	if code != 0 || taskGovernance == nil {
		return code
	}
	var left []string
	for _, q := range taskGovernance.Emulator.Quotas() {
		if q.Status != sagemakeremulator.StatusDeleting {
			left = append(left, fmt.Sprintf("compute quota %s (%s)", q.Name, q.ID))
		}
	}
	for _, c := range taskGovernance.Emulator.SchedulerConfigs() {
		if c.Status != sagemakeremulator.StatusDeleting {
			left = append(left, fmt.Sprintf("cluster scheduler config %s (%s)", c.Name, c.ID))
		}
	}
	if len(left) > 0 {
		fmt.Fprintf(os.Stderr, "the task-governance tests passed but left in the SageMaker API: %s\n", strings.Join(left, ", "))
		return 1
	}
	return code
}
