package acctest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// TaskGovernance is a HyperPod cluster with AWS's task-governance add-on as the tests run it:
// a local control plane of its own (Kueue and the fake fleet included) that serves a
// KueueManagerConfig kind, which is how the add-on shows on a real cluster, and the SageMaker
// API emulator, whose writes the add-on's stand-in turns into Kueue objects (see addon). Tests
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

// addonCRD is a stand-in for the add-on's KueueManagerConfig: AWS publishes the kind, not its
// API group, so the group is this project's and the provider looks for the kind only.
var addonCRD = &apiextensionsv1.CustomResourceDefinition{
	ObjectMeta: metav1.ObjectMeta{Name: "kueuemanagerconfigs.addon.hyperpod.test"},
	Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "addon.hyperpod.test",
		Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "kueuemanagerconfigs", Singular: "kueuemanagerconfig",
			Kind: "KueueManagerConfig", ListKind: "KueueManagerConfigList"},
		Scope: apiextensionsv1.ClusterScoped,
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", XPreserveUnknownFields: ptrTo(true)}}}},
	},
}

func ptrTo[T any](v T) *T { return &v }

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
	crds, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, stop, err
	}
	if _, err := crds.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, addonCRD, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, stop, fmt.Errorf("installing the add-on's KueueManagerConfig stand-in: %w", err)
	}
	var groups []sagemakeremulator.InstanceGroup
	for _, n := range localcluster.Fleet {
		name := strings.NewReplacer("ml.", "", ".", "-").Replace(n.InstanceType)
		groups = append(groups, sagemakeremulator.InstanceGroup{Name: name, InstanceType: n.InstanceType, Count: int32(n.Count)})
	}
	emu, err := sagemakeremulator.Start(sagemakeremulator.Options{
		Clusters: []sagemakeremulator.Cluster{{Name: "hyperpod-task-governance", InstanceGroups: groups}},
		Writer:   newAddon(kube.NewClient(kube.Settings{ConfigPath: cluster.KubeconfigPath}), catalog.Builtin()),
		Settle:   &sagemakeremulator.SettleRule{Observations: 1},
	})
	if err != nil {
		return nil, stop, err
	}
	stop = func() {
		_ = emu.Close()
		stopCluster()
	}
	fmt.Fprintf(os.Stderr, "task-governance cluster: SageMaker API emulator at %s\n", emu.URL())
	return &TaskGovernance{Emulator: emu, ClusterARN: emu.ClusterARN("hyperpod-task-governance"),
		Kubeconfig: cluster.KubeconfigPath, Cluster: cluster, Clientset: clientset, Dynamic: dyn}, stop, nil
}

// ProviderHCL is the provider block of the SageMaker path on this cluster: the API through the
// emulator (any static credentials sign its requests) and Kubernetes for Nodes, Kueue's
// status and namespaces.
func (tg *TaskGovernance) ProviderHCL() string {
	return fmt.Sprintf(`
provider "hyperpod" {
  config_path = %q
  task_governance {
    cluster_arn = %q
    endpoint    = %q
    access_key  = "emulator"
    secret_key  = "emulator"
  }
}
`, tg.Kubeconfig, tg.ClusterARN, tg.Emulator.URL())
}

// KubernetesProviderHCL is the provider block of the Kubernetes path on the same cluster.
func (tg *TaskGovernance) KubernetesProviderHCL() string {
	return fmt.Sprintf("\nprovider \"hyperpod\" {\n  config_path = %q\n}\n", tg.Kubeconfig)
}
