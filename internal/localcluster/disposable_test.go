package localcluster

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var testTarget = Target{
	Server:     "https://prod.example.com:6443",
	Context:    "prod-admin",
	Kubeconfig: "/home/me/.kube/config",
	Vars:       []string{"KUBE_CONFIG_PATH"},
}

// countingClientset is a fake clientset that records every request.
func countingClientset(objs ...runtime.Object) (*fake.Clientset, *[]k8stesting.Action) {
	cs := fake.NewClientset(objs...)
	var actions []k8stesting.Action
	cs.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		actions = append(actions, a)
		return false, nil, nil
	})
	return cs, &actions
}

func wantOneGet(t *testing.T, actions []k8stesting.Action) {
	t.Helper()
	if len(actions) != 1 || actions[0].GetVerb() != "get" || actions[0].GetResource().Resource != "namespaces" ||
		actions[0].(k8stesting.GetAction).GetName() != MarkerNamespace {
		t.Errorf("requests %v, want exactly one GET of namespace %s", actions, MarkerNamespace)
	}
}

func wantRefusal(t *testing.T, err error, reason string) *NotDisposableError {
	t.Helper()
	var nd *NotDisposableError
	if !errors.As(err, &nd) {
		t.Fatalf("error %v (%T), want a *NotDisposableError", err, err)
	}
	msg := err.Error()
	for _, want := range []string{
		"refusing to use the cluster at https://prod.example.com:6443 (context \"prod-admin\", kubeconfig /home/me/.kube/config): ",
		reason,
		"unset KUBE_CONFIG_PATH: make test and make demo then use a local control plane they start",
		"set HYPERPOD_DISPOSABLE_CLUSTER=1",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal lacks %q:\n%s", want, msg)
		}
	}
	return nd
}

func TestCheckDisposableMarked(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	cs, actions := countingClientset(MarkerObject("kind-up.sh", at))
	msg, err := CheckDisposable(t.Context(), cs, testTarget, "")
	if err != nil {
		t.Fatal(err)
	}
	want := "the cluster at https://prod.example.com:6443 (context \"prod-admin\", kubeconfig /home/me/.kube/config) is a " +
		"disposable development cluster: its Namespace hyperpod-provider-dev-cluster was created by kind-up.sh at 2025-03-04T05:06:07Z"
	if msg != want {
		t.Errorf("got  %q\nwant %q", msg, want)
	}
	wantOneGet(t, *actions)
}

func TestCheckDisposableUnmarked(t *testing.T) {
	cs, actions := countingClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	_, err := CheckDisposable(t.Context(), cs, testTarget, "")
	_ = wantRefusal(t, err, "it has no Namespace hyperpod-provider-dev-cluster, the marker this repository's harness puts on the clusters it creates")
	wantOneGet(t, *actions)
}

// A Namespace of the marker's name made by hand (without the label) does not count.
func TestCheckDisposableWithoutLabel(t *testing.T) {
	cs, _ := countingClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: MarkerNamespace,
		Labels: map[string]string{MarkerLabel: "yes please"}}})
	_, err := CheckDisposable(t.Context(), cs, testTarget, "0")
	_ = wantRefusal(t, err, "lacks the label hyperpod.quotaworks.io/disposable-cluster=true")
}

func TestCheckDisposableForbidden(t *testing.T) {
	cs, actions := countingClientset(MarkerObject("localcluster", time.Now()))
	cs.PrependReactor("get", "namespaces", func(a k8stesting.Action) (bool, runtime.Object, error) {
		*actions = append(*actions, a) // in front of the counting reactor
		return true, nil, apierrors.NewForbidden(corev1.Resource("namespaces"), MarkerNamespace, errors.New("RBAC: no"))
	})
	_, err := CheckDisposable(t.Context(), cs, testTarget, "")
	_ = wantRefusal(t, err, "may not read the Namespace hyperpod-provider-dev-cluster")
	wantOneGet(t, *actions)
}

// Anything else that keeps the marker from being read (an unreachable cluster) refuses too.
func TestCheckDisposableUnreadable(t *testing.T) {
	cs, _ := countingClientset()
	cs.PrependReactor("get", "namespaces", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New(`Get "https://127.0.0.1:1/api/v1/namespaces/hyperpod-provider-dev-cluster": dial tcp 127.0.0.1:1: connect: connection refused`)
	})
	_, err := CheckDisposable(t.Context(), cs, testTarget, "false")
	_ = wantRefusal(t, err, "its marker (Namespace hyperpod-provider-dev-cluster) could not be read, so nothing shows the cluster is disposable: Get")
}

func TestCheckDisposableConfirmed(t *testing.T) {
	for _, v := range []string{"1", "true", "YES", " yes "} {
		cs, actions := countingClientset()
		msg, err := CheckDisposable(t.Context(), cs, testTarget, v)
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		if !strings.HasPrefix(msg, "HYPERPOD_DISPOSABLE_CLUSTER="+v+": using the cluster at https://prod.example.com:6443") ||
			!strings.Contains(msg, "without checking for its marker") {
			t.Errorf("%q: %s", v, msg)
		}
		if len(*actions) != 0 {
			t.Errorf("%q: requests %v, want none", v, *actions)
		}
	}
}

func TestCheckDisposableConfirmationNotUnderstood(t *testing.T) {
	cs, _ := countingClientset()
	_, err := CheckDisposable(t.Context(), cs, testTarget, "prod-is-fine")
	nd := wantRefusal(t, err, "it has no Namespace")
	if nd.Confirmation != "prod-is-fine" || !strings.Contains(err.Error(), `HYPERPOD_DISPOSABLE_CLUSTER="prod-is-fine" is not understood`) {
		t.Errorf("refusal does not mention the value:\n%v", err)
	}
	// Marked clusters pass whatever the variable says.
	cs, _ = countingClientset(MarkerObject("localcluster", time.Now()))
	if _, err := CheckDisposable(t.Context(), cs, testTarget, "prod-is-fine"); err != nil {
		t.Error(err)
	}
}

// Without KUBE_* variables to unset (the caller set them), the advice names the marked clusters.
func TestNotDisposableErrorWithoutVars(t *testing.T) {
	err := &NotDisposableError{Target: Target{Server: "https://x"}, Reason: "r"}
	msg := err.Error()
	if strings.Contains(msg, "unset") || !strings.Contains(msg, "make cluster-up or make kind-up") ||
		!strings.HasPrefix(msg, "refusing to use the cluster at https://x: r.\n") {
		t.Error(msg)
	}
}

func TestWriteMarker(t *testing.T) {
	ctx := t.Context()
	cs := fake.NewClientset()
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600))
	if err := WriteMarker(ctx, cs, "localcluster.Start (provider.test, pid 1)", at); err != nil {
		t.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, MarkerNamespace, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels[MarkerLabel] != "true" || ns.Annotations[MarkerCreatedByAnnotation] != "localcluster.Start (provider.test, pid 1)" ||
		ns.Annotations[MarkerCreatedAtAnnotation] != "2025-01-02T02:04:05Z" || ns.Annotations[MarkerNoteAnnotation] == "" {
		t.Errorf("marker %+v", ns.ObjectMeta)
	}
	// Never the provider's managed-by label: its label-selected LISTs must not see the marker.
	if len(ns.Labels) != 1 {
		t.Errorf("labels %v, want only %s", ns.Labels, MarkerLabel)
	}
	if _, err := CheckDisposable(ctx, cs, testTarget, ""); err != nil {
		t.Errorf("a cluster with the written marker is refused: %v", err)
	}

	// Again, on a Namespace that lost its label: the label comes back, other metadata stays.
	ns.Labels = map[string]string{"other": "x"}
	if _, err := cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarker(ctx, cs, "second", at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	ns, err = cs.CoreV1().Namespaces().Get(ctx, MarkerNamespace, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels[MarkerLabel] != "true" || ns.Labels["other"] != "x" || ns.Annotations[MarkerCreatedByAnnotation] != "second" {
		t.Errorf("marker after the second write %+v", ns.ObjectMeta)
	}
}

func TestWriteMarkerFails(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "namespaces", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("namespaces"), MarkerNamespace, errors.New("no"))
	})
	err := WriteMarker(context.Background(), cs, "x", time.Now())
	if err == nil || !strings.Contains(err.Error(), "writing the disposable-cluster marker (Namespace hyperpod-provider-dev-cluster)") {
		t.Errorf("error %v", err)
	}
}

const testKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster:
    server: https://admin:s3cret@prod.example.com:6443
    certificate-authority-data: bm90IGEgY2VydA==
- name: dev
  cluster:
    server: https://127.0.0.1:1
contexts:
- name: prod-admin
  context: {cluster: prod, user: admin}
- name: dev
  context: {cluster: dev, user: admin}
current-context: prod-admin
users:
- name: admin
  user:
    token: tok-very-secret
`

func clearKubeEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "KUBE_") {
			t.Setenv(name, "")
		}
	}
}

func TestTargetFromEnv(t *testing.T) {
	clearKubeEnv(t)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(testKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBE_CONFIG_PATH", path)
	target, cfg, err := TargetFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if target.Server != "https://prod.example.com:6443" || target.Context != "prod-admin" || target.Kubeconfig != path ||
		strings.Join(target.Vars, ",") != "KUBE_CONFIG_PATH" {
		t.Errorf("target %+v", target)
	}
	if cfg.BearerToken != "tok-very-secret" {
		t.Errorf("config token %q: TargetFromEnv must return the kubeconfig's credentials", cfg.BearerToken)
	}
	if s := target.String(); strings.Contains(s, "s3cret") || strings.Contains(s, "tok-very-secret") {
		t.Errorf("target description leaks a secret: %s", s)
	}

	// KUBE_CTX picks the context, as the provider does.
	t.Setenv("KUBE_CTX", "dev")
	target, _, err = TargetFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if target.Server != "https://127.0.0.1:1" || target.Context != "dev" || strings.Join(target.Vars, ",") != "KUBE_CONFIG_PATH,KUBE_CTX" {
		t.Errorf("target %+v", target)
	}

	// KUBE_HOST overrides the kubeconfig's server, as the provider does.
	t.Setenv("KUBE_CTX", "")
	t.Setenv("KUBE_HOST", "https://elsewhere.example.com")
	target, _, err = TargetFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if target.Server != "https://elsewhere.example.com" || strings.Join(target.Vars, ",") != "KUBE_CONFIG_PATH,KUBE_HOST" {
		t.Errorf("target %+v", target)
	}
}

// An unreachable cluster fails closed on the refused connection itself (not after the check's
// timeout), naming the cluster and no secret.
func TestCheckDisposableFromEnvUnreachable(t *testing.T) {
	clearKubeEnv(t)
	t.Setenv(EnvDisposableCluster, "")
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(testKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBE_CONFIG_PATH", path)
	t.Setenv("KUBE_CTX", "dev")
	_, target, _, err := CheckDisposableFromEnv(t.Context(), "KUBE_CONFIG_PATH")
	var nd *NotDisposableError
	if !errors.As(err, &nd) {
		t.Fatalf("error %v, want a refusal", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, `refusing to use the cluster at https://127.0.0.1:1 (context "dev", kubeconfig `+path+`): its marker`) ||
		!strings.Contains(msg, "connect: connection refused") || strings.Contains(msg, "no answer within") || strings.Contains(msg, "tok-very-secret") {
		t.Errorf("refusal:\n%s", msg)
	}
	// KUBE_CONFIG_PATH was set by the caller: only KUBE_CTX is to unset.
	if strings.Join(target.Vars, ",") != "KUBE_CTX" || !strings.Contains(msg, "  - unset KUBE_CTX: ") {
		t.Errorf("vars %v, refusal:\n%s", target.Vars, msg)
	}

	t.Setenv(EnvDisposableCluster, "1")
	msg, _, _, err = CheckDisposableFromEnv(t.Context())
	if err != nil || !strings.HasPrefix(msg, "HYPERPOD_DISPOSABLE_CLUSTER=1: using the cluster at https://127.0.0.1:1") {
		t.Errorf("confirmed: %q, %v", msg, err)
	}
}

// scripts/kind-up.sh writes the same marker, in shell.
func TestKindUpWritesTheMarker(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("..", "..", "scripts", "kind-up.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{MarkerNamespace, MarkerLabel + "=" + MarkerLabelValue, MarkerCreatedByAnnotation,
		MarkerCreatedAtAnnotation, MarkerNoteAnnotation} {
		if !strings.Contains(string(script), want) {
			t.Errorf("scripts/kind-up.sh lacks %q", want)
		}
	}
	if _, err := exec.LookPath("bash"); err == nil {
		if out, err := exec.Command("bash", "-n", filepath.Join("..", "..", "scripts", "kind-up.sh")).CombinedOutput(); err != nil {
			t.Errorf("bash -n scripts/kind-up.sh: %v\n%s", err, out)
		}
	}
}
