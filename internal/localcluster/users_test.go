package localcluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestAddUser: a user added to a running cluster authenticates with its kubeconfig, and RBAC
// (not system:masters) decides what it may do.
func TestAddUser(t *testing.T) {
	checkUser(t, sharedCluster(t), "someone")
}

// checkUser adds user name to c and checks that it authenticates but may not list namespaces.
func checkUser(t *testing.T, c *Cluster, name string) {
	t.Helper()
	path, err := c.AddUser(name, []string{"some-group"})
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
		t.Fatalf("user %s does not authenticate: %v", name, err)
	}
	_, err = cs.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("user %s listing namespaces without RBAC: got %v, want Forbidden", name, err)
	}
	if !strings.Contains(err.Error(), `"`+name+`"`) {
		t.Errorf("the API server does not name user %s: %v", name, err)
	}
}

// TestAttach: another process's view of a running cluster talks to it as admin and adds users,
// and stopping that view leaves the cluster running.
func TestAttach(t *testing.T) {
	c := sharedCluster(t)
	a, err := Attach(c.WorkDir)
	if err != nil {
		t.Fatal(err)
	}
	if a.Host != c.Host || a.KubeconfigPath != c.KubeconfigPath {
		t.Errorf("attached to %s (%s), want %s (%s)", a.Host, a.KubeconfigPath, c.Host, c.KubeconfigPath)
	}
	if _, err := a.Clientset.CoreV1().Namespaces().Get(t.Context(), MarkerNamespace, metav1.GetOptions{}); err != nil {
		t.Errorf("the attached admin client: %v", err)
	}
	checkUser(t, a, "someone-attached")

	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Clientset.Discovery().ServerVersion(); err != nil {
		t.Errorf("the cluster after stopping an attached view of it: %v", err)
	}
	if _, err := os.Stat(c.KubeconfigPath); err != nil {
		t.Errorf("the kubeconfig after stopping an attached view: %v", err)
	}
}

func TestAttachRefuses(t *testing.T) {
	empty := t.TempDir()
	if _, err := Attach(empty); err == nil || !strings.Contains(err.Error(), "no local control plane runs in "+empty) {
		t.Errorf("Attach of an empty directory: %v", err)
	}
	// A kubeconfig without the client CA: a cluster started before Start kept it.
	old := t.TempDir()
	if err := os.WriteFile(filepath.Join(old, KubeconfigFile), []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Attach(old); err == nil || !strings.Contains(err.Error(), "keeps no client CA") {
		t.Errorf("Attach without the client CA: %v", err)
	}
}
