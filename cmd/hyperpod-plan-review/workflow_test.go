package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/yaml"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

const (
	repoRoot     = "../.."
	workflowFile = "examples/guides/reviewing-quota-changes/github-actions.yml"
	guideFile    = "docs/guides/reviewing-quota-changes.md"
	roleFile     = "examples/rbac/plan-review-clusterrole.yaml"
)

// workflow is the part of a GitHub Actions workflow the test runs.
type workflow struct {
	Jobs map[string]struct {
		Defaults struct {
			Run struct {
				WorkingDirectory string `json:"working-directory"`
			} `json:"run"`
		} `json:"defaults"`
		Steps []step `json:"steps"`
	} `json:"jobs"`
}

type step struct {
	Name             string            `json:"name"`
	Uses             string            `json:"uses"`
	With             map[string]any    `json:"with"`
	Env              map[string]string `json:"env"`
	Run              string            `json:"run"`
	WorkingDirectory string            `json:"working-directory"`
}

// The guide's GitHub Actions workflow, run step by step on the local control plane as a user
// bound only to the read-only ClusterRole: the pinned install (the provider from this checkout
// by make install, into Terraform's implied local mirror), init, plan, show -json and the review
// of a change that starts a pending job, on an instance type only the provider block defines.
func TestAccPlanReview_workflow(t *testing.T) {
	acctest.RequireKueue(t)
	e := acctest.Current()
	if e.Cluster == nil {
		t.Skip("the workflow runs as a user whose client certificate the local control plane issues; " +
			"KUBE_CONFIG_PATH names an external cluster (unset it to run against the local control plane)")
	}
	version := changelogVersion(t)
	module := modulePath(t)
	raw, err := os.ReadFile(filepath.Join(repoRoot, workflowFile))
	if err != nil {
		t.Fatal(err)
	}
	checkGuide(t, string(raw), module, version)
	var wf workflow
	if err := yaml.Unmarshal(raw, &wf); err != nil {
		t.Fatalf("%s: %v", workflowFile, err)
	}
	if len(wf.Jobs) != 1 {
		t.Fatalf("%s: want one job, got %d", workflowFile, len(wf.Jobs))
	}

	// The scenario: one team of an instance type only the provider block defines. Its quota of
	// one instance runs one job of all its GPUs; a second such job waits; the pull request
	// raises the quota to two instances.
	const (
		team, cohort = "wf-review", "wf-review"
		instanceType = "ml.wfcustom.xlarge"
		gpus         = 4
		vcpu, memGiB = 48, 192
	)
	config := func(count int) string {
		return fmt.Sprintf(`terraform {
  required_providers {
    hyperpod = { source = "quotaworks/hyperpod", version = %q }
  }
}

provider "hyperpod" {
  instance_types = {
    %q = { accelerators = %d, vcpu = %d, memory_in_gib = %d }
  }
}
`, version, instanceType, gpus, vcpu, memGiB) +
			acctest.TeamNamespace(team).ForceDestroy().HCL() +
			acctest.Quota(team).Resource(instanceType).Count(count).Body(fmt.Sprintf("  cohort = %q", cohort)).HCL()
	}
	kubeconfig := readOnlyUser(t, e, "plan-review-wf")
	userKubeconfig, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	r := newRunner(t, module, version)
	quotas := filepath.Join(r.workspace, "quotas")
	if err := os.MkdirAll(quotas, 0o755); err != nil {
		t.Fatal(err)
	}
	r.expressions["secrets.KUBECONFIG"] = string(userKubeconfig)
	var running, waiting admission.WorkloadRef
	r.before["Plan"] = func() {
		// What the main branch applied, with the role that writes; then the jobs; then the
		// pull request's change.
		r.writeFile(t, filepath.Join(quotas, "main.tf"), config(1))
		admin := []string{"KUBE_CONFIG_PATH=" + e.Cluster.KubeconfigPath}
		r.command(t, quotas, admin, "terraform init -input=false && terraform apply -input=false -auto-approve")
		t.Cleanup(func() { r.command(t, quotas, admin, "terraform destroy -input=false -auto-approve") })
		ns := quota.NamespaceName(team)
		requests := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(fmt.Sprint(gpus))}
		acctest.MakePyTorchJob("running", ns).Queue(quota.LocalQueueName(team)).Replicas("Worker", 1, instanceType, requests).Create(t)
		running = waitForWorkload(t, ns, "running", "Admitted", "True", "")
		acctest.MakePyTorchJob("waiting", ns).Queue(quota.LocalQueueName(team)).Replicas("Worker", 1, instanceType, requests).Create(t)
		waiting = waitForWorkload(t, ns, "waiting", "QuotaReserved", "False", "Pending")
		if running == waiting {
			t.Fatalf("one Workload for both jobs: %s", running)
		}
		r.writeFile(t, filepath.Join(quotas, "main.tf"), config(2))
	}
	r.run(t, wf)

	report, err := os.ReadFile(filepath.Join(quotas, "review.md"))
	if err != nil {
		t.Fatalf("the workflow wrote no review: %v", err)
	}
	md := string(report)
	t.Logf("the workflow's commands:\n%s\nthe review:\n%s", r.output.String(), md)
	for _, want := range []string{
		// The role lets it read the manager's Deployment, whose image says which Kueue to model.
		", the manager's version",
		"| `hyperpod_compute_quota.test` | " + team + " | update |",
		fmt.Sprintf("| %s | %s | starts on %s |", quota.ClusterQueueName(team), waiting, instanceType),
		// The instance type's figures are the provider block's: two instances of them.
		fmt.Sprintf("| %s | 0 of 0 | %d accelerators, %d vCPU, %d GiB |", instanceType, 2*gpus, 2*vcpu, 2*memGiB),
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the review lacks %q:\n%s", want, md)
		}
	}
	for _, unwanted := range []string{"not in the plan", "refused", running.String()} {
		if strings.Contains(md, unwanted) {
			t.Errorf("the review has %q (the instance types not in the plan, a read refused, the job that runs already):\n%s", unwanted, md)
		}
	}
	if out := strings.ToLower(r.output.String()); strings.Contains(out, "forbidden") || strings.Contains(out, "refused") {
		t.Errorf("the read-only role refused a read of the workflow:\n%s", r.output.String())
	}
}

// checkGuide checks that the guide shows the workflow the test runs and the pinned install.
func checkGuide(t *testing.T, workflowYAML, module, version string) {
	t.Helper()
	guide, err := os.ReadFile(filepath.Join(repoRoot, guideFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(guide), strings.TrimSpace(workflowYAML)) {
		t.Errorf("%s does not show %s as it is: run make docs", guideFile, workflowFile)
	}
	if install := goInstall(module, version); !strings.Contains(string(guide), install) {
		t.Errorf("%s does not say %q", guideFile, install)
	}
}

func goInstall(module, version string) string {
	return "go install " + module + "/cmd/hyperpod-plan-review@v" + version
}

// runner runs a workflow's steps in a workspace of their own, as a GitHub runner would.
type runner struct {
	module, version string
	workspace       string
	env             []string
	githubEnv       string
	// expressions are the values of the ${{ }} expressions the steps that run use.
	expressions map[string]string
	// before runs before the step of that name.
	before map[string]func()
	output strings.Builder
}

func newRunner(t *testing.T, module, version string) *runner {
	ws := t.TempDir()
	r := &runner{module: module, version: version, workspace: ws, githubEnv: filepath.Join(ws, "github-env"),
		before: map[string]func(){}}
	temp, bin := filepath.Join(ws, "runner-temp"), filepath.Join(ws, "bin")
	for _, d := range []string{temp, bin, filepath.Join(ws, "home"), filepath.Join(ws, "gopath")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The CLI the acceptance tests run (OpenTofu in its phases) is the workflow's terraform.
	tf := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if tf == "" {
		var err error
		if tf, err = exec.LookPath("terraform"); err != nil {
			t.Fatal("the workflow needs terraform: set TF_ACC_TERRAFORM_PATH or put it on PATH")
		}
	}
	if err := os.Symlink(tf, filepath.Join(bin, "terraform")); err != nil {
		t.Fatal(err)
	}
	goEnv := func(name string) string {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		return strings.TrimSpace(string(out))
	}
	cliConfig := filepath.Join(ws, "terraformrc")
	r.writeFile(t, cliConfig, "")
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "KUBE") || strings.HasPrefix(name, "TF_") || strings.HasPrefix(name, "GO") ||
			strings.HasPrefix(name, "AWS_") || name == "HOME" || name == "PATH" {
			continue
		}
		r.env = append(r.env, kv)
	}
	r.env = append(r.env,
		// A fresh home: make install fills Terraform's implied local mirror there, as on a runner.
		"HOME="+filepath.Join(ws, "home"),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TF_CLI_CONFIG_FILE="+cliConfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1",
		// The build caches of this machine; nothing is downloaded.
		"GOCACHE="+goEnv("GOCACHE"), "GOMODCACHE="+goEnv("GOMODCACHE"), "GOFLAGS="+goEnv("GOFLAGS"),
		"GOPATH="+filepath.Join(ws, "gopath"), "GOPROXY=off", "GOTOOLCHAIN=local",
		"RUNNER_TEMP="+temp, "GITHUB_WORKSPACE="+ws, "GITHUB_ENV="+r.githubEnv,
	)
	r.expressions = map[string]string{"runner.temp": temp, "github.workspace": ws}
	return r
}

// The actions the workflow uses, and what stands for each here.
var actions = map[string]string{
	"actions/checkout@v6":                      "the pull request's checkout is the workspace; the provider's, this repository",
	"actions/setup-go@v6":                      "go on PATH",
	"hashicorp/setup-terraform@v3":             "terraform on PATH (TF_ACC_TERRAFORM_PATH)",
	"aws-actions/configure-aws-credentials@v4": "the local control plane's kubeconfig authenticates with a client certificate",
}

// Steps that do not run here, and why.
var notRun = map[string]string{"Comment": "posts on GitHub"}

// run runs the steps of the workflow's job.
func (r *runner) run(t *testing.T, wf workflow) {
	t.Helper()
	for _, job := range wf.Jobs {
		for _, s := range job.Steps {
			if f := r.before[s.Name]; f != nil {
				f()
			}
			switch {
			case s.Uses != "":
				if _, ok := actions[s.Uses]; !ok {
					t.Fatalf("step %q uses %s, which this test does not stand in for", s.Name, s.Uses)
				}
				if s.With["repository"] != nil {
					r.checkoutProvider(t, s)
				}
			case notRun[s.Name] != "":
			default:
				dir := cmp.Or(s.WorkingDirectory, job.Defaults.Run.WorkingDirectory)
				env := r.stepEnv(t, s)
				r.command(t, filepath.Join(r.workspace, dir), env, r.script(t, s))
			}
		}
	}
}

// checkoutProvider stands for the checkout of the provider's release: it must be the release of
// this repository's CHANGELOG, and is this repository.
func (r *runner) checkoutProvider(t *testing.T, s step) {
	t.Helper()
	repo := strings.TrimPrefix(r.module, "github.com/")
	if s.With["repository"] != repo || s.With["ref"] != "v"+r.version {
		t.Fatalf("step %q checks out %v at %v, want %s at v%s", s.Name, s.With["repository"], s.With["ref"], repo, r.version)
	}
	path, _ := s.With["path"].(string)
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(r.workspace, path)); err != nil {
		t.Fatal(err)
	}
}

// script is the step's run script with its expressions replaced; the pinned go install, which
// would fetch the release from the module proxy, builds this checkout instead.
func (r *runner) script(t *testing.T, s step) string {
	t.Helper()
	script := r.substitute(t, s.Name, s.Run)
	install := goInstall(r.module, r.version)
	if strings.Contains(script, "go install") {
		lines := strings.Split(script, "\n")
		i := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) == install })
		if i < 0 {
			t.Fatalf("step %q installs with a command other than %q:\n%s", s.Name, install, script)
		}
		lines[i] = `go build -o "$(go env GOPATH)/bin/hyperpod-plan-review" ./cmd/hyperpod-plan-review`
		script = strings.Join(lines, "\n")
	}
	return script
}

var expression = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

func (r *runner) substitute(t *testing.T, stepName, s string) string {
	t.Helper()
	return expression.ReplaceAllStringFunc(s, func(m string) string {
		name := expression.FindStringSubmatch(m)[1]
		v, ok := r.expressions[name]
		if !ok {
			t.Fatalf("step %q uses ${{ %s }}, which this test gives no value", stepName, name)
		}
		return v
	})
}

// stepEnv is the step's env, with the variables earlier steps wrote to $GITHUB_ENV.
func (r *runner) stepEnv(t *testing.T, s step) []string {
	t.Helper()
	var env []string
	for k, v := range s.Env {
		env = append(env, k+"="+r.substitute(t, s.Name, v))
	}
	return env
}

// command runs a bash script as GitHub runs a step's, then takes in what it wrote to $GITHUB_ENV.
func (r *runner) command(t *testing.T, dir string, env []string, script string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(slices.Clone(r.env), env...)
	out, err := cmd.CombinedOutput()
	fmt.Fprintf(&r.output, "$ %s\n%s\n", script, out)
	if err != nil {
		t.Fatalf("in %s:\n%s\n%v\n%s", dir, script, err, out)
	}
	written, err := os.ReadFile(r.githubEnv)
	if errors.Is(err, os.ErrNotExist) {
		return
	} else if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(written)), "\n") {
		if line != "" {
			r.env = append(r.env, line)
		}
	}
	if err := os.Remove(r.githubEnv); err != nil {
		t.Fatal(err)
	}
}

func (r *runner) writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readOnlyUser creates a user bound only to the read-only ClusterRole of examples/rbac (role and
// binding renamed after the user, removed when the test ends) and returns its kubeconfig.
func readOnlyUser(t *testing.T, e *acctest.Env, name string) string {
	t.Helper()
	role, binding := readRole(t)
	for _, rule := range role.Rules {
		for _, v := range rule.Verbs {
			if v != "get" && v != "list" {
				t.Fatalf("%s grants %s on %v: the review's role reads only", roleFile, v, rule.Resources)
			}
		}
	}
	role.Name, binding.Name, binding.RoleRef.Name = name, name, name
	for i := range binding.Subjects {
		binding.Subjects[i].Name = name
	}
	ctx := context.Background()
	rbac := e.Clientset.RbacV1()
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rbac.ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rbac.ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	path, err := e.Cluster.AddUser(name, []string{name})
	if err != nil {
		t.Fatal(err)
	}
	// The authorizer learns of the binding from a watch: wait until it grants the role's reads.
	err = acctest.Eventually(ctx, 30*time.Second, "the authorizer granting "+name+" its role", func(ctx context.Context) (bool, string, error) {
		for _, rule := range role.Rules {
			for _, v := range rule.Verbs {
				attrs := &authzv1.ResourceAttributes{Verb: v, Group: rule.APIGroups[0], Resource: rule.Resources[0]}
				if len(rule.ResourceNames) > 0 {
					attrs.Name = rule.ResourceNames[0]
				}
				sar, err := e.Clientset.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{
					Spec: authzv1.SubjectAccessReviewSpec{User: name, Groups: []string{name}, ResourceAttributes: attrs},
				}, metav1.CreateOptions{})
				if err != nil {
					return false, "", err
				}
				if !sar.Status.Allowed {
					return false, fmt.Sprintf("%s of %s not allowed yet", v, rule.Resources[0]), nil
				}
			}
		}
		return true, "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func readRole(t *testing.T) (*rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding) {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, roleFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var role *rbacv1.ClusterRole
	var binding *rbacv1.ClusterRoleBinding
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", roleFile, err)
		}
		var into any
		switch u.GetKind() {
		case "ClusterRole":
			role = &rbacv1.ClusterRole{}
			into = role
		case "ClusterRoleBinding":
			binding = &rbacv1.ClusterRoleBinding{}
			into = binding
		default:
			t.Fatalf("%s: unexpected kind %q", roleFile, u.GetKind())
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
			t.Fatal(err)
		}
	}
	if role == nil || binding == nil {
		t.Fatalf("%s must hold a ClusterRole and a ClusterRoleBinding", roleFile)
	}
	return role, binding
}

// waitForWorkload waits, on a watch, until the Workload of the PyTorchJob has the condition, and
// returns it.
func waitForWorkload(t *testing.T, ns, job, condition, status, reason string) admission.WorkloadRef {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	workloads := acctest.Current().Dynamic.Resource(kueue.Workloads).Namespace(ns)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return workloads.List(ctx, o) },
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return workloads.Watch(ctx, o)
		},
	}
	var found admission.WorkloadRef
	_, err := watchtools.UntilWithSync(ctx, lw, &unstructured.Unstructured{}, nil, func(ev watch.Event) (bool, error) {
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || !slices.ContainsFunc(u.GetOwnerReferences(), func(o metav1.OwnerReference) bool {
			return o.Kind == acctest.PyTorchJobKind && o.Name == job
		}) {
			return false, nil
		}
		conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conditions {
			m, _ := c.(map[string]any)
			if m["type"] == condition && m["status"] == status && (reason == "" || m["reason"] == reason) {
				found = admission.WorkloadRef{Namespace: u.GetNamespace(), Name: u.GetName()}
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the Workload of PyTorchJob %s/%s: no condition %s=%s %s: %v", ns, job, condition, status, reason, err)
	}
	return found
}

// changelogVersion is the version at the top of CHANGELOG.md, as make install takes it.
func changelogVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## ([0-9]+\.[0-9]+\.[0-9]+)( .*)?$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("CHANGELOG.md has no '## X.Y.Z' heading")
	}
	return string(m[1])
}

// modulePath is the module path of go.mod.
func modulePath(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^module (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod names no module")
	}
	return string(m[1])
}
