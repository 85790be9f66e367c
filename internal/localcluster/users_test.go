package localcluster

import (
	"os"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestAddUser: a user added to a running cluster authenticates with its kubeconfig, and RBAC
// (not system:masters) decides what it may do.
func TestAddUser(t *testing.T) {
	assets, err := DefaultAssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	if !HasBinaries(assets) {
		t.Skipf("no kube-apiserver/etcd in %s: run `make controlplane` (scripts/controlplane-assets.sh) to build them", assets)
	}
	c, err := Start(t.Context(), Options{AssetsDir: assets, WorkDir: t.TempDir(), Fleet: []NodeSpec{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })

	path, err := c.AddUser("someone", []string{"some-group"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Authenticated (discovery is open to every authenticated user), but not authorized.
	if _, err := cs.Discovery().ServerVersion(); err != nil {
		t.Fatalf("the user does not authenticate: %v", err)
	}
	_, err = cs.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("listing namespaces without RBAC: got %v, want Forbidden", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the user's kubeconfig outlived Stop: %v", err)
	}
}
