package addon

import (
	"context"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// ClusterName is the HyperPod cluster the emulator holds, with the local fleet's instance groups.
const ClusterName = "hyperpod-task-governance"

// markCRD is a stand-in for the add-on's KueueManagerConfig: AWS publishes the kind, not its API
// group, so the group is this project's and the provider looks for the kind only.
var markCRD = &apiextensionsv1.CustomResourceDefinition{
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

// Connection is what the provider block of the SageMaker path needs to reach a cluster with the
// add-on's stand-in.
type Connection struct {
	Kubeconfig string // the control plane's, for Nodes, Kueue's status and namespaces
	ClusterARN string
	Endpoint   string // the emulator's URL
}

// ProviderHCL is the provider block of the SageMaker path: the API through the emulator (any
// static credentials sign its requests) and Kubernetes for Nodes, Kueue's status and namespaces.
func (c Connection) ProviderHCL() string {
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
`, c.Kubeconfig, c.ClusterARN, c.Endpoint)
}

// Start makes the local control plane of kubeconfig a HyperPod cluster with the task-governance
// add-on: it installs the add-on's mark, after which the provider's Kubernetes path refuses to
// write there, and starts the SageMaker API emulator on a free port of 127.0.0.1 with the
// add-on's stand-in as its writer. The emulator's objects live in memory until Close.
func Start(ctx context.Context, kubeconfig string) (*sagemakeremulator.Emulator, Connection, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, Connection{}, err
	}
	crds, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, Connection{}, err
	}
	if _, err := crds.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, markCRD, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, Connection{}, fmt.Errorf("installing the add-on's KueueManagerConfig stand-in: %w", err)
	}
	var groups []sagemakeremulator.InstanceGroup
	for _, n := range localcluster.Fleet {
		name := strings.NewReplacer("ml.", "", ".", "-").Replace(n.InstanceType)
		groups = append(groups, sagemakeremulator.InstanceGroup{Name: name, InstanceType: n.InstanceType, Count: int32(n.Count)})
	}
	emu, err := sagemakeremulator.Start(sagemakeremulator.Options{
		Clusters: []sagemakeremulator.Cluster{{Name: ClusterName, InstanceGroups: groups}},
		Writer:   New(kube.NewClient(kube.Settings{ConfigPath: kubeconfig}), catalog.Builtin()),
		Settle:   &sagemakeremulator.SettleRule{Observations: 1},
	})
	if err != nil {
		return nil, Connection{}, err
	}
	return emu, Connection{Kubeconfig: kubeconfig, ClusterARN: emu.ClusterARN(ClusterName), Endpoint: emu.URL()}, nil
}
