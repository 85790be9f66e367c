package localcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// UsersDir is the directory under WorkDir/state that AddUser writes kubeconfigs to.
const UsersDir = "users"

// AddUser provisions a user authenticated by a client certificate signed by the cluster's
// client CA, with the given groups and no permissions beyond what RBAC grants them, and
// writes a kubeconfig for it to WorkDir/state/users/<name>.kubeconfig (removed with the
// control plane state by Stop). It returns the kubeconfig's path.
func (c *Cluster) AddUser(name string, groups []string) (string, error) {
	if c.env == nil {
		return "", errors.New("localcluster: the cluster is not running")
	}
	u, err := c.env.AddUser(envtest.User{Name: name, Groups: groups}, &rest.Config{Timeout: 30 * time.Second})
	if err != nil {
		return "", fmt.Errorf("provisioning user %s: %w", name, err)
	}
	kubeconfig, err := u.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("rendering the kubeconfig of user %s: %w", name, err)
	}
	dir := filepath.Join(c.stateDir, UsersDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name+".kubeconfig")
	if err := writeFileAtomic(path, kubeconfig, 0o600); err != nil {
		return "", err
	}
	return path, nil
}
