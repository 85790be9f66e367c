package localcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// UsersDir is the directory under WorkDir/state that AddUser writes kubeconfigs to.
const UsersDir = "users"

// AddUser provisions a user authenticated by a client certificate signed by the cluster's
// client CA, with the given groups and no permissions beyond what RBAC grants them, and
// writes a kubeconfig for it to WorkDir/state/users/<name>.kubeconfig (removed with the
// control plane state by Stop). It returns the kubeconfig's path. It works on a cluster from
// Attach too.
func (c *Cluster) AddUser(name string, groups []string) (string, error) {
	if c.authn == nil || c.authn.ca == nil {
		return "", errors.New("localcluster: the cluster is not running")
	}
	// The admin kubeconfig, with the user's certificate in place of the admin's.
	kubeconfig, err := clientcmd.LoadFromFile(c.KubeconfigPath)
	if err != nil {
		return "", fmt.Errorf("localcluster: the cluster is not running: %w", err)
	}
	current, ok := kubeconfig.Contexts[kubeconfig.CurrentContext]
	if !ok {
		return "", fmt.Errorf("%s has no current context", c.KubeconfigPath)
	}
	certPEM, keyPEM, err := c.authn.clientCert(envtest.User{Name: name, Groups: groups})
	if err != nil {
		return "", fmt.Errorf("provisioning user %s: %w", name, err)
	}
	kubeconfig.AuthInfos = map[string]*clientcmdapi.AuthInfo{
		current.AuthInfo: {ClientCertificateData: certPEM, ClientKeyData: keyPEM},
	}
	data, err := clientcmd.Write(*kubeconfig)
	if err != nil {
		return "", fmt.Errorf("rendering the kubeconfig of user %s: %w", name, err)
	}
	dir := filepath.Join(c.stateDir, UsersDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name+".kubeconfig")
	if err := writeFileAtomic(path, data, 0o600); err != nil {
		return "", err
	}
	return path, nil
}
