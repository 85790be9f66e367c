package localcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Attach returns the cluster another process started with WorkDir workDir (`localcluster
// serve`, which make cluster-up and scripts/test.sh run), so that test binaries can share
// one control plane: its admin clients and kubeconfig, and AddUser, which signs with the
// client CA Start keeps in workDir/state. CRDs is nil. Stop does nothing: the process that
// started the cluster stops it.
func Attach(workDir string) (*Cluster, error) {
	dir, err := filepath.Abs(workDir)
	if err != nil {
		return nil, err
	}
	c := &Cluster{WorkDir: dir, KubeconfigPath: filepath.Join(dir, KubeconfigFile), stateDir: filepath.Join(dir, StateDir),
		authn: &clientCertAuthn{}, attached: true}
	if _, err := os.Stat(c.KubeconfigPath); err != nil {
		return nil, fmt.Errorf("no local control plane runs in %s (%w): start one with `localcluster up --dir %s`", dir, err, dir)
	}
	if err := c.authn.load(c.certDir()); err != nil {
		return nil, fmt.Errorf("the local control plane in %s keeps no client CA to add users with (%w): "+
			"an older localcluster started it; stop it and start it again", dir, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.KubeconfigPath)
	if err != nil {
		return nil, err
	}
	c.RESTConfig = withAdminLimits(cfg)
	c.Host = strings.TrimSuffix(cfg.Host, "/")
	if c.Clientset, err = kubernetes.NewForConfig(c.RESTConfig); err != nil {
		return nil, err
	}
	return c, nil
}
