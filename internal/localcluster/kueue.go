package localcluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/loopbackcert"
)

// Kueue's controller manager in the local control plane: built from the sigs.k8s.io/kueue
// module by scripts/controlplane-assets.sh, run as a process outside the cluster against the
// local API server (leader election off, the batch/job and kubeflow.org/pytorchjob integrations
// on, fair sharing on), with its validating, mutating and CRD conversion webhooks registered by
// URL on loopback. Then Kueue validates and defaults what the provider writes, and admits
// workloads, as it does on EKS.
const (
	KueueManagerBinary = "kueue-manager"
	// KueueDir holds the module's webhook manifests and CRD conversion patches.
	KueueDir = "kueue"
	KueueLog = "kueue.log"
	// EnvKueue turns the manager off with "off" (also "0" or "false"); it is on otherwise.
	EnvKueue = "HYPERPOD_KUEUE"
	// KueueNamespace is the manager's namespace (Configuration.namespace).
	KueueNamespace = kueue.ManagerNamespace
)

// KueueFromEnv reports whether the local control plane runs Kueue's manager: on unless
// $HYPERPOD_KUEUE says off.
func KueueFromEnv() bool {
	switch strings.ToLower(os.Getenv(EnvKueue)) {
	case "off", "0", "false", "no":
		return false
	}
	return true
}

// missingKueueAssets lists what Kueue's manager needs and dir lacks.
func missingKueueAssets(dir string) []string {
	var missing []string
	if fi, err := os.Stat(filepath.Join(dir, KueueManagerBinary)); err != nil || fi.Mode().Perm()&0o111 == 0 {
		missing = append(missing, KueueManagerBinary)
	}
	if _, err := os.Stat(filepath.Join(dir, KueueDir, "webhook", "manifests.yaml")); err != nil {
		missing = append(missing, KueueDir+"/webhook/manifests.yaml")
	}
	return missing
}

type kueueProcess struct {
	cmd  *exec.Cmd
	done chan error
}

// exited reports whether the manager has exited, leaving its exit for whoever waits next.
func (p *kueueProcess) exited() bool {
	select {
	case err := <-p.done:
		p.done <- err
		return true
	default:
		return false
	}
}

// startKueueManager starts the manager's process with a configuration of these ports.
func startKueueManager(assets, dir, certDir, kubeconfigPath string, webhookPort, healthPort int, logFile *os.File) (*kueueProcess, error) {
	configPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(configPath, []byte(kueueConfiguration(webhookPort, healthPort, certDir)), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(assets, KueueManagerBinary),
		"--config", configPath, "--kubeconfig", kubeconfigPath, "--feature-gates=VisibilityOnDemand=false")
	// The one change the assets script makes to Kueue's main: the metrics certificates, which
	// Kueue otherwise reads from /etc/kueue/metrics/certs, come from here (metrics are off).
	cmd.Env = append(os.Environ(), "KUEUE_METRICS_CERT_DIR="+certDir)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("kueue: starting %s: %w", cmd.Path, err)
	}
	p := &kueueProcess{cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	return p, nil
}

// StartKueue starts Kueue's manager, as Start does with Options.Kueue, on a control plane this
// process started without it. The bench measures most of its commands without the manager and
// its admission preview section, which needs Kueue's decisions, with it on the same control
// plane. timeout bounds the manager's start (0 means 120 s).
func (c *Cluster) StartKueue(ctx context.Context, assets string, timeout time.Duration) error {
	if c.attached {
		return errors.New("localcluster: cannot start Kueue on a control plane this process did not start")
	}
	if c.kueue != nil {
		return errors.New("localcluster: Kueue's manager already runs")
	}
	assets, err := filepath.Abs(assets)
	if err != nil {
		return err
	}
	if missing := missingKueueAssets(assets); len(missing) > 0 {
		return fmt.Errorf("%w: %s has no %s; run `make controlplane` (scripts/controlplane-assets.sh) to build Kueue's manager",
			ErrAssetsMissing, assets, strings.Join(missing, ", "))
	}
	kubeconfig, err := os.ReadFile(c.KubeconfigPath)
	if err != nil {
		return fmt.Errorf("kueue: the admin kubeconfig: %w", err)
	}
	if timeout == 0 {
		timeout = 120 * time.Second
	}
	return c.startKueue(ctx, assets, string(kubeconfig), timeout)
}

// startKueue starts the manager, waits until it is ready and registers its webhooks. On a
// timeout the error carries the tail of its log.
func (c *Cluster) startKueue(ctx context.Context, assets, kubeconfig string, timeout time.Duration) error {
	dir := filepath.Join(c.stateDir, "kueue")
	certDir := filepath.Join(dir, "certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	caPEM, err := writeServingCert(certDir)
	if err != nil {
		return fmt.Errorf("kueue: certificates: %w", err)
	}
	kubeconfigPath := filepath.Join(dir, "kubeconfig")
	if err := writeFileAtomic(kubeconfigPath, []byte(kubeconfig), 0o600); err != nil {
		return err
	}
	if _, err := c.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: KueueNamespace}},
		metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("kueue: creating namespace %s: %w", KueueNamespace, err)
	}
	logFile, err := c.openLog(KueueLog)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		return fmt.Errorf("kueue: %w\n--- last lines of %s ---\n%s", err, logFile.Name(), TailFile(logFile.Name(), 30))
	}
	var webhookPort int
	// The ports are free when chosen, but another process on the machine (a control plane
	// starting beside this one) may take one before the manager binds it: then the manager
	// exits, and starts again on other ports.
	for attempt := 1; ; attempt++ {
		var healthPort int
		if err := freeLoopbackPorts(&webhookPort, &healthPort); err != nil {
			return err
		}
		p, err := startKueueManager(assets, dir, certDir, kubeconfigPath, webhookPort, healthPort, logFile)
		if err != nil {
			return err
		}
		c.kueue = p
		err = waitKueueReady(ctx, p, healthPort, webhookPort, timeout)
		if err == nil {
			break
		}
		if attempt < 3 && p.exited() && strings.Contains(TailFile(logFile.Name(), 5), "address already in use") {
			c.kueue = nil
			continue
		}
		return fail(err)
	}
	if err := registerKueueWebhooks(ctx, c.RESTConfig, assets, webhookPort, caPEM); err != nil {
		return fail(fmt.Errorf("registering webhooks: %w", err))
	}
	if version := KueueVersionOf(assets); version != "" {
		if err := c.recordKueueManager(ctx, version); err != nil {
			return fmt.Errorf("kueue: %w", err)
		}
	}
	return nil
}

// KueueManagerImage is the image of Kueue's released manager.
const KueueManagerImage = "registry.k8s.io/kueue/kueue"

// recordKueueManager writes the manager's Deployment as Kueue's installations have it, with the
// image of the release this control plane runs as a process. Nothing runs the Deployment (there
// is no controller manager); it is there for what reads the manager's version from it, as the
// admission preview does on EKS.
func (c *Cluster) recordKueueManager(ctx context.Context, version string) error {
	deployments := c.Clientset.AppsV1().Deployments(KueueNamespace)
	image := KueueManagerImage + ":" + version
	d, err := deployments.Get(ctx, kueue.ManagerDeployment, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		labels := map[string]string{"control-plane": "controller-manager"}
		d = &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: kueue.ManagerDeployment, Namespace: KueueNamespace, Labels: labels},
			Spec: appsv1.DeploymentSpec{
				Replicas: new(int32),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: image}}},
				},
			},
		}
		_, err = deployments.Create(ctx, d, metav1.CreateOptions{})
	} else if err == nil && d.Spec.Template.Spec.Containers[0].Image != image {
		d.Spec.Template.Spec.Containers[0].Image = image
		_, err = deployments.Update(ctx, d, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("recording the manager's Deployment %s/%s: %w", KueueNamespace, kueue.ManagerDeployment, err)
	}
	return nil
}

// kueueConfiguration is the manager's Configuration (decoded strictly by Kueue). Fair sharing
// is on when the fairSharing block is present.
func kueueConfiguration(webhookPort, healthPort int, certDir string) string {
	return fmt.Sprintf(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: %s
health:
  healthProbeBindAddress: 127.0.0.1:%d
metrics:
  bindAddress: "0"
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %q
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
integrations:
  frameworks:
  - batch/job
  - kubeflow.org/pytorchjob
fairSharing:
  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]
`, KueueNamespace, healthPort, webhookPort, certDir)
}

// waitKueueReady waits until the manager's readiness endpoint answers 200 and its webhook
// server accepts TLS connections.
func waitKueueReady(ctx context.Context, p *kueueProcess, healthPort, webhookPort int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	ready := func() bool {
		resp, err := client.Get("http://127.0.0.1:" + strconv.Itoa(healthPort) + "/readyz")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false
		}
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp",
			"127.0.0.1:"+strconv.Itoa(webhookPort), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only checks that it serves
		if err != nil {
			return false
		}
		_ = conn.Close()
		return true
	}
	for {
		if ready() {
			return nil
		}
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("the manager exited before it was ready: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("the manager was not ready within %s", timeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// stop ends the manager: SIGTERM to its process group, SIGKILL after 10 s.
func (p *kueueProcess) stop() error {
	if p == nil || p.cmd.Process == nil {
		return nil
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	var exit error
	select {
	case exit = <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		exit = <-p.done
	}
	_ = exit // a manager stopped by a signal exits with an error: the expected end
	return nil
}

// writeServingCert writes a fresh serving certificate for 127.0.0.1 as tls.crt and tls.key in
// dir (the names controller-runtime's webhook server reads) and returns the CA that trusts it.
func writeServingCert(dir string) ([]byte, error) {
	cert, err := loopbackcert.New("hyperpod local kueue", 7*24*time.Hour)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), cert.PEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), cert.KeyPEM, 0o600); err != nil {
		return nil, err
	}
	return cert.PEM, nil
}

// registerKueueWebhooks registers the webhooks of the module's manifests and the CRD
// conversion webhooks its kustomization enables, each pointing at the manager on loopback.
func registerKueueWebhooks(ctx context.Context, cfg *rest.Config, assets string, port int, caPEM []byte) error {
	base := "https://127.0.0.1:" + strconv.Itoa(port)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(filepath.Join(assets, KueueDir, "webhook", "manifests.yaml"))
	if err != nil {
		return err
	}
	docs, err := splitYAML(raw)
	if err != nil {
		return err
	}
	for _, doc := range docs {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return err
		}
		var err error
		switch meta.Kind {
		case "MutatingWebhookConfiguration":
			err = createWebhookConfiguration(ctx, doc, base, caPEM, &admissionregistrationv1.MutatingWebhookConfiguration{},
				cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create)
		case "ValidatingWebhookConfiguration":
			err = createWebhookConfiguration(ctx, doc, base, caPEM, &admissionregistrationv1.ValidatingWebhookConfiguration{},
				cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create)
		case "":
		default:
			return fmt.Errorf("unexpected %s in the webhook manifests", meta.Kind)
		}
		if err != nil {
			return err
		}
	}
	return enableConversionWebhooks(ctx, cfg, assets, base, caPEM)
}

// webhookConfiguration is a MutatingWebhookConfiguration or a ValidatingWebhookConfiguration.
type webhookConfiguration interface {
	*admissionregistrationv1.MutatingWebhookConfiguration | *admissionregistrationv1.ValidatingWebhookConfiguration
	metav1.Object
}

// createWebhookConfiguration decodes doc into w and creates it as kueue-<name>, its webhooks
// called at base.
func createWebhookConfiguration[W webhookConfiguration](ctx context.Context, doc []byte, base string, caPEM []byte, w W,
	create func(context.Context, W, metav1.CreateOptions) (W, error)) error {
	if err := yaml.UnmarshalStrict(doc, w); err != nil {
		return err
	}
	w.SetName("kueue-" + w.GetName())
	for _, cc := range clientConfigs(w) {
		*cc = urlClientConfig(base, *cc, caPEM)
	}
	if _, err := create(ctx, w, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: %w", w.GetName(), err)
	}
	return nil
}

// clientConfigs are the client configurations of w's webhooks.
func clientConfigs[W webhookConfiguration](w W) []*admissionregistrationv1.WebhookClientConfig {
	var out []*admissionregistrationv1.WebhookClientConfig
	switch w := any(w).(type) {
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		for i := range w.Webhooks {
			out = append(out, &w.Webhooks[i].ClientConfig)
		}
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		for i := range w.Webhooks {
			out = append(out, &w.Webhooks[i].ClientConfig)
		}
	}
	return out
}

func urlClientConfig(base string, cc admissionregistrationv1.WebhookClientConfig, caPEM []byte) admissionregistrationv1.WebhookClientConfig {
	path := ""
	if cc.Service != nil && cc.Service.Path != nil {
		path = *cc.Service.Path
	}
	url := base + path
	return admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM}
}

// patchLine matches an enabled (uncommented) conversion patch in the CRD kustomization.
var patchLine = regexp.MustCompile(`^- path: (patches/webhook_in_[a-z]+\.yaml)\s*$`)

// enableConversionWebhooks turns on the conversion webhook of each CRD whose patch the
// module's kustomization enables.
func enableConversionWebhooks(ctx context.Context, cfg *rest.Config, assets, base string, caPEM []byte) error {
	kustomization, err := os.ReadFile(filepath.Join(assets, KueueDir, "crd", "kustomization.yaml"))
	if err != nil {
		return err
	}
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(kustomization))
	for sc.Scan() {
		m := patchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(assets, KueueDir, "crd", m[1]))
		if err != nil {
			return err
		}
		var patch struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				Conversion struct {
					Webhook struct {
						ClientConfig struct {
							Service struct {
								Path string `json:"path"`
							} `json:"service"`
						} `json:"clientConfig"`
						ConversionReviewVersions []string `json:"conversionReviewVersions"`
					} `json:"webhook"`
				} `json:"conversion"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(raw, &patch); err != nil {
			return fmt.Errorf("%s: %w", m[1], err)
		}
		if patch.Metadata.Name == "" {
			return fmt.Errorf("%s names no CRD", m[1])
		}
		wh := patch.Spec.Conversion.Webhook
		body, err := json.Marshal(map[string]any{"spec": map[string]any{"conversion": map[string]any{
			"strategy": "Webhook",
			"webhook": map[string]any{
				"clientConfig":             map[string]any{"url": base + wh.ClientConfig.Service.Path, "caBundle": caPEM},
				"conversionReviewVersions": wh.ConversionReviewVersions,
			},
		}}})
		if err != nil {
			return err
		}
		if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Patch(ctx, patch.Metadata.Name, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("conversion webhook of %s: %w", patch.Metadata.Name, err)
		}
	}
	return sc.Err()
}

// splitYAML splits a multi-document YAML file.
func splitYAML(raw []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) > 0 {
			docs = append(docs, doc)
		}
	}
}
