package localcluster

// The disposable-cluster marker. `make test` and `make demo` create and delete Nodes,
// Namespaces and Kueue objects in the cluster they run against, so they refuse a cluster
// unless it carries the marker (every cluster this repository's harness creates does:
// Start, which `make cluster-up`, the acceptance tests and the bench use, and
// scripts/kind-up.sh) or the user confirms with HYPERPOD_DISPOSABLE_CLUSTER=1 that the
// cluster is disposable.
//
// The marker is a Namespace: cluster-scoped, readable with one GET, and `get namespaces` is
// a permission the provider needs anyway (hyperpod_team_namespace). Its name and label are
// specific to this repository, so a real cluster does not carry them by accident. It carries
// no app.kubernetes.io/managed-by label, so the provider's label-selected LISTs never see it.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
)

const (
	// MarkerNamespace is the Namespace that marks a cluster as created by this repository's
	// harness (scripts/kind-up.sh spells it out too).
	MarkerNamespace = "hyperpod-provider-dev-cluster"
	// MarkerLabel must be MarkerLabelValue on MarkerNamespace: a Namespace of that name
	// without it (made by hand) does not count.
	MarkerLabel      = "hyperpod.quotaworks.io/disposable-cluster"
	MarkerLabelValue = "true"
	// Annotations of MarkerNamespace: which tool created it, when (RFC 3339, UTC), and why it
	// is there, for whoever finds it.
	MarkerCreatedByAnnotation = "hyperpod.quotaworks.io/created-by"
	MarkerCreatedAtAnnotation = "hyperpod.quotaworks.io/created-at"
	MarkerNoteAnnotation      = "hyperpod.quotaworks.io/note"
	// MarkerNote is the value of MarkerNoteAnnotation.
	MarkerNote = "This cluster was created by the terraform-provider-hyperpod development harness and may be " +
		"written to by its acceptance tests and demo. Never create this Namespace on a cluster that matters."

	// EnvDisposableCluster set to 1 (or true, yes) confirms that the cluster is disposable:
	// the check passes without looking for the marker.
	EnvDisposableCluster = "HYPERPOD_DISPOSABLE_CLUSTER"

	// markerCheckTimeout bounds the one GET of the check, so an unreachable cluster fails
	// quickly.
	markerCheckTimeout = 15 * time.Second
)

// MarkerObject returns the marker Namespace, created by createdBy at at.
func MarkerObject(createdBy string, at time.Time) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   MarkerNamespace,
		Labels: map[string]string{MarkerLabel: MarkerLabelValue},
		Annotations: map[string]string{
			MarkerCreatedByAnnotation: createdBy,
			MarkerCreatedAtAnnotation: at.UTC().Format(time.RFC3339),
			MarkerNoteAnnotation:      MarkerNote,
		},
	}}
}

// WriteMarker marks the cluster cs talks to as disposable, created by createdBy at at. When
// the marker exists already its label and annotations are set again.
func WriteMarker(ctx context.Context, cs kubernetes.Interface, createdBy string, at time.Time) error {
	want := MarkerObject(createdBy, at)
	_, err := cs.CoreV1().Namespaces().Create(ctx, want, metav1.CreateOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("writing the disposable-cluster marker (Namespace %s): %w", MarkerNamespace, err)
	}
	got, err := cs.CoreV1().Namespaces().Get(ctx, MarkerNamespace, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the disposable-cluster marker (Namespace %s): %w", MarkerNamespace, err)
	}
	if got.Labels == nil {
		got.Labels = map[string]string{}
	}
	if got.Annotations == nil {
		got.Annotations = map[string]string{}
	}
	for k, v := range want.Labels {
		got.Labels[k] = v
	}
	for k, v := range want.Annotations {
		got.Annotations[k] = v
	}
	if _, err := cs.CoreV1().Namespaces().Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating the disposable-cluster marker (Namespace %s): %w", MarkerNamespace, err)
	}
	return nil
}

// markerCreator names, for the marker's annotation, the program that called Start.
func markerCreator() string {
	return fmt.Sprintf("localcluster.Start (%s, pid %d)", filepath.Base(os.Args[0]), os.Getpid())
}

// Target names a cluster in messages. It never holds credentials.
type Target struct {
	// Server is the API server URL (without any user:password part).
	Server string
	// Context is the kubeconfig context used; "" without a kubeconfig.
	Context string
	// Kubeconfig is the kubeconfig file, or files separated by ", "; "" without one.
	Kubeconfig string
	// Vars are the KUBE_* variables set in the environment that chose this cluster, for the
	// advice of the refusal (unset them to use a control plane started for the run).
	Vars []string
}

func (t Target) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the cluster at %s", t.Server)
	var details []string
	if t.Context != "" {
		details = append(details, fmt.Sprintf("context %q", t.Context))
	}
	if t.Kubeconfig != "" {
		details = append(details, "kubeconfig "+t.Kubeconfig)
	}
	if len(details) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(details, ", "))
	}
	return b.String()
}

// clusterVars are the variables that choose the cluster the provider talks to (the others
// choose credentials and transport).
var clusterVars = []string{kube.EnvConfigPath, kube.EnvConfigPaths, kube.EnvContext, kube.EnvContextCluster, kube.EnvHost}

// TargetFromEnv resolves, from the KUBE_* environment variables exactly as the provider does
// with an empty provider block, the cluster the provider would talk to. It returns its
// description and a client configuration for it (no network access, no exec plugin run).
func TargetFromEnv() (Target, *rest.Config, error) {
	var s kube.Settings
	if err := s.ApplyEnv(nil); err != nil {
		return Target{}, nil, err
	}
	cfg, err := s.RESTConfig()
	if err != nil {
		return Target{}, nil, err
	}
	t := Target{Server: redactURL(cfg.Host), Context: s.ConfigContext}
	var paths []string
	for _, p := range append([]string{s.ConfigPath}, s.ConfigPaths...) {
		if strings.TrimSpace(p) == "" {
			continue
		}
		if tail, ok := strings.CutPrefix(p, "~/"); ok {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, tail)
			}
		}
		paths = append(paths, p)
	}
	if len(paths) > 0 {
		t.Kubeconfig = strings.Join(paths, ", ")
		if t.Context == "" {
			// RESTConfig loaded the same files successfully just now.
			if raw, err := (&clientcmd.ClientConfigLoadingRules{Precedence: paths}).Load(); err == nil {
				t.Context = raw.CurrentContext
			}
		}
	}
	for _, v := range clusterVars {
		if os.Getenv(v) != "" {
			t.Vars = append(t.Vars, v)
		}
	}
	return t, cfg, nil
}

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = nil
	return u.String()
}

// NotDisposableError is the refusal of CheckDisposable. Its message names the cluster and
// says how to proceed.
type NotDisposableError struct {
	Target Target
	// Reason says why the cluster does not count as disposable.
	Reason string
	// Confirmation is an EnvDisposableCluster value that was set but not understood.
	Confirmation string
}

func (e *NotDisposableError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "refusing to use %s: %s.\n", e.Target, e.Reason)
	b.WriteString("Nothing shows that this repository's harness started it, and the acceptance tests and the demo " +
		"create and delete Nodes, Namespaces and Kueue objects in the cluster they use: it could be one that matters.\n")
	if e.Confirmation != "" {
		fmt.Fprintf(&b, "(%s=%q is not understood: only 1, true or yes confirm.)\n", EnvDisposableCluster, e.Confirmation)
	}
	b.WriteString("To proceed, either:\n")
	if len(e.Target.Vars) > 0 {
		fmt.Fprintf(&b, "  - unset %s: make test and make demo then use a local control plane they start (and mark) themselves; or\n",
			strings.Join(e.Target.Vars, " "))
	} else {
		b.WriteString("  - use a cluster started by make cluster-up or make kind-up (they are marked); or\n")
	}
	fmt.Fprintf(&b, "  - if this cluster is disposable (nothing in it matters), set %s=1.", EnvDisposableCluster)
	return b.String()
}

// CheckDisposable decides whether the developer commands may write to the cluster cs talks
// to, described by target. confirmation is the value of EnvDisposableCluster: 1, true or yes
// pass without any request. Otherwise it GETs the marker Namespace once: the cluster passes
// when the marker carries MarkerLabel=true. A missing marker, one without the label, one this
// user may not read (Forbidden) and any other failure to read it (an unreachable cluster,
// expired credentials) all refuse, with a *NotDisposableError.
//
// On success it returns a line for the output saying why the cluster may be used.
func CheckDisposable(ctx context.Context, cs kubernetes.Interface, target Target, confirmation string) (string, error) {
	var badConfirmation string
	switch v := strings.ToLower(strings.TrimSpace(confirmation)); v {
	case "1", "true", "yes":
		return fmt.Sprintf("%s=%s: using %s as a disposable cluster, without checking for its marker (Namespace %s)",
			EnvDisposableCluster, confirmation, target, MarkerNamespace), nil
	case "", "0", "false", "no":
	default:
		badConfirmation = confirmation
	}
	refuse := func(format string, args ...any) error {
		return &NotDisposableError{Target: target, Reason: fmt.Sprintf(format, args...), Confirmation: badConfirmation}
	}

	ctx, cancel := context.WithTimeout(ctx, markerCheckTimeout)
	defer cancel()
	ns, err := cs.CoreV1().Namespaces().Get(ctx, MarkerNamespace, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "", refuse("it has no Namespace %s, the marker this repository's harness puts on the clusters it creates", MarkerNamespace)
	case apierrors.IsForbidden(err):
		return "", refuse("this user may not read the Namespace %s, the marker this repository's harness puts on the "+
			"clusters it creates (Forbidden), so it counts as unmarked", MarkerNamespace)
	case err != nil:
		return "", refuse("its marker (Namespace %s) could not be read, so nothing shows the cluster is disposable: %v",
			MarkerNamespace, describeReadError(err))
	case ns.Labels[MarkerLabel] != MarkerLabelValue:
		return "", refuse("its Namespace %s lacks the label %s=%s, so this repository's harness did not create it",
			MarkerNamespace, MarkerLabel, MarkerLabelValue)
	}
	by, at := ns.Annotations[MarkerCreatedByAnnotation], ns.Annotations[MarkerCreatedAtAnnotation]
	if by == "" {
		by = "an unknown tool"
	}
	if at == "" {
		at = ns.CreationTimestamp.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("%s is a disposable development cluster: its Namespace %s was created by %s at %s",
		target, MarkerNamespace, by, at), nil
}

func describeReadError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %s (%w)", markerCheckTimeout, err)
	}
	return err
}

// CheckDisposableFromEnv resolves the cluster as TargetFromEnv does and runs CheckDisposable
// on it with the value of EnvDisposableCluster. setByCaller names variables the caller set
// itself (KUBE_CONFIG_PATH, to the kubeconfig of a control plane it started): the refusal does
// not advise unsetting them. It returns the target and its configuration too, for the
// caller's own clients, so that they talk to the cluster that was checked.
func CheckDisposableFromEnv(ctx context.Context, setByCaller ...string) (string, Target, *rest.Config, error) {
	target, cfg, err := TargetFromEnv()
	if err != nil {
		return "", target, nil, fmt.Errorf("resolving the cluster from the KUBE_* variables: %w", err)
	}
	target.Vars = slices.DeleteFunc(target.Vars, func(v string) bool { return slices.Contains(setByCaller, v) })
	cc := rest.CopyConfig(cfg)
	cc.Timeout = markerCheckTimeout
	cc.WarningHandler = rest.NoWarnings{}
	cs, err := kubernetes.NewForConfig(cc)
	if err != nil {
		return "", target, nil, &NotDisposableError{Target: target,
			Reason: fmt.Sprintf("no client for it could be built, so its marker (Namespace %s) could not be read: %v", MarkerNamespace, err)}
	}
	msg, err := CheckDisposable(ctx, cs, target, os.Getenv(EnvDisposableCluster))
	return msg, target, cfg, err
}
