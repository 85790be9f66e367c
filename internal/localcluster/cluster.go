// Package localcluster runs a real kube-apiserver and etcd (built from source by
// scripts/controlplane-assets.sh) with controller-runtime's envtest, installs the Kueue
// CRDs and the Kubeflow PyTorchJob CRD (without a training operator) and creates Nodes that
// mimic a SageMaker HyperPod cluster. The acceptance tests' TestMain and `make cluster-up`
// (internal/cmd/localcluster) use it.
//
// What runs is an API server and, with Options.Kueue (the default for the tests, the demo and
// cluster-up; see KueueFromEnv), Kueue's controller manager outside the cluster with its
// webhooks registered by URL (kueue.go). No kubelet, scheduler or controller-manager.
// Consequences, and what this package does about them:
//   - Nodes are plain API objects; CreateFleet writes their status (capacity,
//     allocatable, Ready) and the taints the node lifecycle controller would keep.
//   - Pods are accepted but never scheduled or run. envtest disables the ServiceAccount
//     admission plugin (the "default" ServiceAccount is created by a controller that does
//     not run), so Pods can be created in any namespace without creating one first.
//   - The namespace controller is replaced by a small in-process loop, so deleting a
//     Namespace empties it and completes instead of staying Terminating forever.
//   - There is no garbage collector: ownerReferences do not cascade.
//   - Without the Kueue manager (HYPERPOD_KUEUE=off, the bench) only CRD schema validation
//     and defaulting apply: webhook-only rules do not, and no Kueue finalizers or status are
//     written.
//   - Every cluster Start makes carries the disposable marker (disposable.go).
package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

// Files written to Options.WorkDir.
const (
	KubeconfigFile = "kubeconfig"
	APIServerLog   = "kube-apiserver.log"
	EtcdLog        = "etcd.log"
	StateDir       = "state" // etcd data and API server certificates, removed by Stop
)

// AdminUser is the user of the kubeconfig and RESTConfig (group system:masters).
const AdminUser = "hyperpod-admin"

// Options configures Start.
type Options struct {
	// AssetsDir holds kube-apiserver, etcd, crds/*.yaml and crds-jobs/ (see AssetsDirFromEnv).
	AssetsDir string
	// WorkDir receives the admin kubeconfig, the control plane logs and state/ (etcd data,
	// certificates). Created if missing; a temporary directory (removed by Stop) when empty.
	WorkDir string

	// Fleet is the set of Nodes to create; nil means the package's Fleet, an empty
	// non-nil slice means no Nodes.
	Fleet []NodeSpec
	// Catalog gives the per-instance figures of the Nodes; nil means catalog.Builtin().
	Catalog *catalog.Catalog

	// StartTimeout bounds the start of each of etcd and kube-apiserver; 0 means 90 s
	// (the KUBEBUILDER_CONTROLPLANE_START_TIMEOUT variable is honoured when 0).
	StartTimeout time.Duration
	// DisableNamespaceFinalizer turns off the stand-in for the namespace controller.
	DisableNamespaceFinalizer bool
	// Kueue runs Kueue's controller manager and registers its webhooks (see startKueue);
	// AssetsDir must then hold kueue-manager and kueue/. KueueFromEnv gives the default.
	Kueue bool
	// KueueStartTimeout bounds the manager's start; 0 means 120 s.
	KueueStartTimeout time.Duration
}

// Cluster is a running local control plane.
type Cluster struct {
	// RESTConfig authenticates as AdminUser (system:masters) with a client certificate.
	RESTConfig *rest.Config
	// KubeconfigPath is the admin kubeconfig (WorkDir/kubeconfig); it is removed by Stop.
	KubeconfigPath string
	// Host is the API server URL, https://127.0.0.1:<port>.
	Host string
	// WorkDir is the absolute work directory.
	WorkDir string
	// Clientset talks to the cluster as RESTConfig.
	Clientset kubernetes.Interface
	// CRDs are the installed CustomResourceDefinitions.
	CRDs []*apiextensionsv1.CustomResourceDefinition

	env        *envtest.Environment
	authn      *clientCertAuthn
	attached   bool // by Attach: another process runs it
	kueue      *kueueProcess
	stateDir   string
	logs       []*os.File
	cancel     context.CancelFunc
	done       chan struct{}
	finalizer  *namespaceFinalizer // nil when disabled
	tempWork   bool
	stopOnce   sync.Once
	stopResult error
}

// Start starts etcd and kube-apiserver on 127.0.0.1, installs every CRD in
// AssetsDir/crds and AssetsDir/crds-jobs and waits until they are established, creates the
// fleet and writes an admin kubeconfig to WorkDir/kubeconfig. Nothing is downloaded. On error,
// everything started is stopped again.
func Start(ctx context.Context, o Options) (_ *Cluster, retErr error) {
	assets, err := checkedAssetsDir(o)
	if err != nil {
		return nil, err
	}

	c := &Cluster{done: make(chan struct{}), authn: &clientCertAuthn{}}
	if err := c.prepareWorkDir(o.WorkDir); err != nil {
		return nil, err
	}
	defer func() {
		if retErr != nil {
			_ = c.Stop()
		}
	}()
	if err := c.prepareStateDir(); err != nil {
		return nil, err
	}
	if err := c.configureControlPlane(assets, o.StartTimeout); err != nil {
		return nil, err
	}

	admin, err := c.startControlPlane(ctx, assets)
	if err != nil {
		return nil, err
	}
	if err := waitEstablished(ctx, c.RESTConfig, c.CRDs); err != nil {
		return nil, err
	}
	if err := warmUp(ctx, c.RESTConfig, c.CRDs); err != nil {
		return nil, err
	}

	fleet := o.Fleet
	if fleet == nil {
		fleet = Fleet
	}
	if err := CreateFleet(ctx, c.Clientset, fleet, o.Catalog); err != nil {
		return nil, fmt.Errorf("creating the fleet: %w", err)
	}

	if err := c.startNamespaceFinalizer(o.DisableNamespaceFinalizer); err != nil {
		return nil, err
	}

	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return nil, fmt.Errorf("rendering the admin kubeconfig: %w", err)
	}
	if o.Kueue {
		timeout := o.KueueStartTimeout
		if timeout == 0 {
			timeout = 120 * time.Second
		}
		if err := c.startKueue(ctx, assets, string(kubeconfig), timeout); err != nil {
			return nil, err
		}
	}
	if err := writeFileAtomic(c.KubeconfigPath, kubeconfig, 0o600); err != nil {
		return nil, err
	}
	return c, nil
}

// checkedAssetsDir returns the absolute AssetsDir once it holds the control plane and,
// with Options.Kueue, Kueue's manager.
func checkedAssetsDir(o Options) (string, error) {
	if o.AssetsDir == "" {
		return "", errors.New("localcluster: Options.AssetsDir is empty (see AssetsDirFromEnv)")
	}
	assets, err := filepath.Abs(o.AssetsDir)
	if err != nil {
		return "", err
	}
	if err := CheckAssets(assets); err != nil {
		return "", err
	}
	if o.Kueue {
		if missing := missingKueueAssets(assets); len(missing) > 0 {
			return "", fmt.Errorf("%w: %s has no %s; run `make controlplane` (scripts/controlplane-assets.sh) to build "+
				"Kueue's manager from the Go module proxy (a few minutes), or set %s=off to run without it",
				ErrAssetsMissing, assets, strings.Join(missing, ", "), EnvKueue)
		}
	}
	return assets, nil
}

// prepareWorkDir sets WorkDir (a new temporary directory when workDir is empty) and
// KubeconfigPath, and removes a kubeconfig an earlier run left there.
func (c *Cluster) prepareWorkDir(workDir string) error {
	var err error
	if workDir == "" {
		if c.WorkDir, err = os.MkdirTemp("", "localcluster-"); err != nil {
			return err
		}
		c.tempWork = true
	} else {
		if c.WorkDir, err = filepath.Abs(workDir); err != nil {
			return err
		}
		if err := os.MkdirAll(c.WorkDir, 0o755); err != nil {
			return err
		}
	}
	c.KubeconfigPath = filepath.Join(c.WorkDir, KubeconfigFile)
	// A kubeconfig left by an earlier run points at a dead server: never let anyone use it.
	if err := os.Remove(c.KubeconfigPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// prepareStateDir empties WorkDir/state and creates its etcd and apiserver directories.
//
// etcd's data and the API server's certificates go to WorkDir/state, removed by Stop
// and, should an earlier process have been killed, here. (envtest's own temporary
// directories leak when a start attempt fails and is retried.)
func (c *Cluster) prepareStateDir() error {
	c.stateDir = filepath.Join(c.WorkDir, StateDir)
	if err := os.RemoveAll(c.stateDir); err != nil {
		return err
	}
	for _, d := range []string{"etcd", "apiserver"} {
		if err := os.MkdirAll(filepath.Join(c.stateDir, d), 0o700); err != nil {
			return err
		}
	}
	return nil
}

// configureControlPlane opens the control plane's logs, picks its ports and sets c.env to
// an envtest environment that runs AssetsDir's binaries and nothing else.
func (c *Cluster) configureControlPlane(assets string, startTimeout time.Duration) error {
	apiLog, err := c.openLog(APIServerLog)
	if err != nil {
		return err
	}
	etcdLog, err := c.openLog(EtcdLog)
	if err != nil {
		return err
	}
	var apiPort, etcdPort int
	if err := freeLoopbackPorts(&apiPort, &etcdPort); err != nil {
		return err
	}

	if startTimeout == 0 && os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT") == "" {
		startTimeout = 90 * time.Second
	}

	// The job CRDs are installed with Kueue's, so that Kueue's manager, started later, sets up
	// their integrations at once instead of polling for the kinds to appear.
	c.env = &envtest.Environment{
		ControlPlane: envtest.ControlPlane{
			APIServer: newAPIServer(assets, c.certDir(), apiPort, apiLog, c.authn),
			Etcd: &envtest.Etcd{
				Path:    filepath.Join(assets, EtcdBinary),
				DataDir: filepath.Join(c.stateDir, "etcd"),
				URL:     mustURL("http://127.0.0.1:" + strconv.Itoa(etcdPort)),
				Out:     etcdLog,
				Err:     etcdLog,
			},
			// kubectl is not needed; point at a path that never resolves elsewhere.
			KubectlPath: filepath.Join(assets, "kubectl"),
		},
		BinaryAssetsDirectory:    assets,
		DownloadBinaryAssets:     false,
		UseExistingCluster:       ptr.To(false), // ignore USE_EXISTING_CLUSTER
		CRDDirectoryPaths:        []string{filepath.Join(assets, CRDsDir), filepath.Join(assets, JobCRDsDir)},
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: startTimeout,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	c.env.CRDInstallOptions.MaxTime = 60 * time.Second
	return nil
}

// certDir is the API server's certificate directory, which also holds the client CA.
func (c *Cluster) certDir() string { return filepath.Join(c.stateDir, "apiserver") }

// newAPIServer configures kube-apiserver to serve on 127.0.0.1:port, authenticating users
// with authn, without the controllers and network this package does not have.
func newAPIServer(assets, certDir string, port int, log *os.File, authn envtest.Authn) *envtest.APIServer {
	api := &envtest.APIServer{
		// Explicit paths: KUBEBUILDER_ASSETS and TEST_ASSET_* must not pick other binaries.
		Path:    filepath.Join(assets, APIServerBinary),
		CertDir: certDir,
		SecureServing: envtest.SecureServing{
			ListenAddr: envtest.ListenAddr{Address: "127.0.0.1", Port: strconv.Itoa(port)},
			Authn:      authn,
		},
		Out: log,
		Err: log,
	}
	// envtest sets --bind-address from SecureServing. The advertised address would
	// otherwise be the host's default-interface IP, which a machine without network may
	// not have; a loopback address is only accepted without an endpoint reconciler. No
	// in-cluster client needs the "kubernetes" Service's endpoints here.
	api.Configure().Set("advertise-address", "127.0.0.1")
	api.Configure().Set("endpoint-reconciler-type", "none")
	// envtest's default, stated so it is visible here: the ServiceAccount admission plugin
	// would reject Pods in namespaces without a "default" ServiceAccount, which only the
	// (absent) controller-manager creates.
	api.Configure().Set("disable-admission-plugins", "ServiceAccount")
	return api
}

// quietEnvtest sets controller-runtime's logger once per process.
var quietEnvtest sync.Once

// startControlPlane starts etcd and kube-apiserver, installs the CRDs, provisions the
// admin user, sets the Cluster's clients from it and writes the disposable marker.
func (c *Cluster) startControlPlane(ctx context.Context, assets string) (*envtest.AuthenticatedUser, error) {
	// envtest logs through controller-runtime's logger, which complains with a goroutine dump
	// when nobody set it; what it would say is in the cluster's own logs.
	quietEnvtest.Do(func() { ctrllog.SetLogger(logr.Discard()) })
	if _, err := c.env.Start(); err != nil {
		return nil, fmt.Errorf("starting the local control plane from %s: %w%s", assets, err, c.logTails())
	}

	admin, err := c.env.AddUser(envtest.User{Name: AdminUser, Groups: []string{"system:masters"}}, withAdminLimits(&rest.Config{}))
	if err != nil {
		return nil, fmt.Errorf("provisioning the admin user: %w", err)
	}
	c.RESTConfig = admin.Config()
	c.RESTConfig.Host = strings.TrimSuffix(c.RESTConfig.Host, "/")
	c.Host = c.RESTConfig.Host
	c.CRDs = c.env.CRDs
	if c.Clientset, err = kubernetes.NewForConfig(c.RESTConfig); err != nil {
		return nil, err
	}
	// First of all: the marker that lets `make test` and `make demo` use this cluster (disposable.go).
	if err := WriteMarker(ctx, c.Clientset, markerCreator(), time.Now()); err != nil {
		return nil, err
	}
	return admin, nil
}

// withAdminLimits sets cfg's client-side rate limit and timeout to those of the admin clients.
// quietConfig is a copy of cfg whose clients drop the API server's warnings.
func quietConfig(cfg *rest.Config) *rest.Config {
	quiet := rest.CopyConfig(cfg)
	quiet.WarningHandler = rest.NoWarnings{}
	return quiet
}

func withAdminLimits(cfg *rest.Config) *rest.Config {
	cfg.QPS, cfg.Burst, cfg.Timeout = 200, 400, 30*time.Second
	return cfg
}

// startNamespaceFinalizer runs the stand-in for the namespace controller until Stop,
// unless disabled; either way c.done is closed once it is not running.
func (c *Cluster) startNamespaceFinalizer(disabled bool) error {
	bgCtx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	if disabled {
		close(c.done)
		return nil
	}
	// Quiet: listing every resource type draws deprecation warnings (v1 Endpoints).
	quiet := quietConfig(c.RESTConfig)
	quiet.QPS = -1 // no client-side limit: its workers bound it, and it LISTs a lot
	nf, err := namespaceFinalizerFor(quiet)
	if err != nil {
		return err
	}
	c.finalizer = nf
	go func() {
		defer close(c.done)
		nf.run(bgCtx)
	}()
	return nil
}

// Stop stops the control plane, removes the kubeconfig (it points at a dead server
// afterwards) and, for a temporary WorkDir, the WorkDir. Logs in a given WorkDir are kept.
// Safe to call more than once. It does nothing to a cluster from Attach: the process that
// started it stops it.
func (c *Cluster) Stop() error {
	if c.attached {
		return nil
	}
	c.stopOnce.Do(func() {
		var errs []error
		if c.cancel != nil {
			c.cancel()
			<-c.done
		}
		// Kueue first: it would log errors while the API server goes away.
		_ = c.kueue.stop()
		if c.env != nil {
			if err := c.env.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("stopping the local control plane: %w", err))
			}
		}
		for _, f := range c.logs {
			_ = f.Close()
		}
		if c.stateDir != "" {
			if err := os.RemoveAll(c.stateDir); err != nil {
				errs = append(errs, err)
			}
		}
		if c.KubeconfigPath != "" {
			if err := os.Remove(c.KubeconfigPath); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		if c.tempWork {
			_ = os.RemoveAll(c.WorkDir)
		}
		c.stopResult = errors.Join(errs...)
	})
	return c.stopResult
}

func (c *Cluster) openLog(name string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(c.WorkDir, name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	c.logs = append(c.logs, f)
	return f, nil
}

// logTails returns the last lines of the control plane logs, for error messages.
func (c *Cluster) logTails() string {
	var b strings.Builder
	for _, l := range []struct {
		name  string
		lines int
	}{{EtcdLog, 5}, {APIServerLog, 20}} {
		path := filepath.Join(c.WorkDir, l.name)
		if tail := TailFile(path, l.lines); tail != "" {
			fmt.Fprintf(&b, "\n--- last lines of %s ---\n%s", path, tail)
		}
	}
	return b.String()
}

// TailFile returns up to the last n lines of a file ("" when it cannot be read).
func TailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const maxBytes = 64 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > maxBytes {
		_, _ = f.Seek(-maxBytes, io.SeekEnd)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitEstablished waits until every CRD reports Established=True. envtest already waited
// for discovery to list them; this also covers the Established condition itself.
func waitEstablished(ctx context.Context, cfg *rest.Config, crds []*apiextensionsv1.CustomResourceDefinition) error {
	cs, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, crd := range crds {
		var last string
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				last = err.Error()
				return false, nil
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established {
					last = string(cond.Status) + ": " + cond.Message
					return cond.Status == apiextensionsv1.ConditionTrue, nil
				}
			}
			last = "no Established condition yet"
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established (%s): %w", crd.Name, last, err)
		}
	}
	return nil
}

// freeLoopbackPorts sets each of ports to a free port on 127.0.0.1, all different: each stays
// taken until all are found.
func freeLoopbackPorts(ports ...*int) error {
	for _, port := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("finding a free port on 127.0.0.1: %w", err)
		}
		defer l.Close()
		*port = l.Addr().(*net.TCPAddr).Port
	}
	return nil
}

func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// warmUp pays, in parallel and before Start returns, the one-off cost the API server
// charges on the first list (~1 s) and the first write (~2 s) of each new custom resource,
// so that the first test to touch a Kueue kind is not slower than the rest. The write is
// a server-side dry run of an invalid object: nothing is stored.
func warmUp(ctx context.Context, cfg *rest.Config, crds []*apiextensionsv1.CustomResourceDefinition) error {
	dyn, err := dynamic.NewForConfig(quietConfig(cfg))
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if !v.Storage {
				continue
			}
			gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: crd.Spec.Names.Plural}
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": gvr.GroupVersion().String(),
				"kind":       crd.Spec.Names.Kind,
				"metadata":   map[string]any{"name": "localcluster-warm-up"},
				"spec":       "not an object", // invalid on purpose
			}}
			var ri dynamic.ResourceInterface = dyn.Resource(gvr)
			if crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
				ri = dyn.Resource(gvr).Namespace(metav1.NamespaceDefault)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = ri.List(ctx, metav1.ListOptions{Limit: 1})
				_, _ = ri.Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			}()
		}
	}
	wg.Wait()
	return ctx.Err()
}
