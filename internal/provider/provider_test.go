package provider

import (
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/rpcctx"
)

// testAccProtoV6ProviderFactories serves the provider in-process to the terraform CLI, wrapped
// as main.go serves it.
var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"hyperpod": func() (tfprotov6.ProviderServer, error) {
		s, err := NewServer("test")()
		if err != nil {
			return nil, err
		}
		return rpcctx.Wrap(s), nil
	},
}

// acc is the cluster the acceptance tests run against (acctest.Current), set up once by
// TestMain; its fields are nil without TF_ACC.
var acc struct {
	config    *rest.Config
	clientset kubernetes.Interface
	dynamic   dynamic.Interface
	// cluster is the local control plane TestMain started; nil when KUBE_CONFIG_PATH named an
	// existing cluster.
	cluster *localcluster.Cluster
}

// TestMain runs the tests against the cluster acctest.Main sets up (see there) when TF_ACC
// is set.
func TestMain(m *testing.M) {
	os.Exit(acctest.Main(m, func(e *acctest.Env) {
		acc.config, acc.clientset, acc.dynamic, acc.cluster = e.Config, e.Clientset, e.Dynamic, e.Cluster
	}))
}
