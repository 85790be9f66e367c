package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// The admission preview as a user bound only to a shipped ClusterRole of examples/rbac: every
// read it makes is granted, and a refused read costs one warning per plan.

// refusedReadSummary is the summary of the warning a plan gives when a read of the preview is
// refused.
const refusedReadSummary = "Admission preview: a read was refused"

// previewRead is one read the admission preview makes: the verb and resource as the shipped
// roles grant them, and as the refused-read warning names them.
type previewRead struct {
	resource, verb string
	// named is the request as the warning names it: "<verb> <resource>[ <namespace>/<name>]".
	named string
	// required: without it no preview is made; otherwise the previews are made without what it reads.
	required bool
}

// previewReads are the reads of one preview (kube.ListKueue), each granted by both shipped roles.
var previewReads = []previewRead{
	{resource: "clusterqueues", verb: "list", named: "list clusterqueues.kueue.x-k8s.io", required: true},
	{resource: "localqueues", verb: "list", named: "list localqueues.kueue.x-k8s.io", required: true},
	{resource: "resourceflavors", verb: "list", named: "list resourceflavors.kueue.x-k8s.io", required: true},
	{resource: "workloadpriorityclasses", verb: "list", named: "list workloadpriorityclasses.kueue.x-k8s.io", required: true},
	{resource: "workloads", verb: "list", named: "list workloads.kueue.x-k8s.io", required: true},
	{resource: "cohorts", verb: "list", named: "list cohorts.kueue.x-k8s.io"},
	{resource: "namespaces", verb: "list", named: "list namespaces"},
	{resource: "deployments", verb: "get", named: "get deployments.apps " + kueue.ManagerNamespace + "/" + kueue.ManagerDeployment},
	{resource: "configmaps", verb: "get", named: "get configmaps " + kueue.ManagerNamespace + "/kueue-manager-config"},
}

// isPreviewRead reports whether verb on resource is a read of the preview, which the refused-read
// tests remove from the role in turn.
func isPreviewRead(resource, verb string) bool {
	for _, r := range previewReads {
		if r.resource == resource && r.verb == verb {
			return true
		}
	}
	return false
}

// previewRolePath is one path the preview runs on, as a user bound only to its shipped role.
type previewRolePath struct {
	user *rbacUser
	// provider is the user's provider block; cohort the quotas' cohort attribute ("" sets none).
	provider, cohort string
	// role is the shipped role's file, as the refused-read warning names it.
	role string
	jobs jobCluster
	// admin reads the manager's Deployment, whose image says which version the preview models.
	admin kubernetes.Interface
	// settled returns once the quotas' Kueue objects exist.
	settled func() error
}

// modelledVersion is what a preview says of the version it models when it read the manager's
// Deployment: the release of the manager's image, or, for a release modelled as another, at
// least that release's name.
func (p previewRolePath) modelledVersion(t *testing.T) string {
	t.Helper()
	d, err := p.admin.AppsV1().Deployments(kueue.ManagerNamespace).Get(context.Background(), kueue.ManagerDeployment, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the manager's Deployment as the admin: %v", err)
	}
	image := d.Spec.Template.Spec.Containers[0].Image
	tag := image[strings.LastIndex(image, ":")+1:]
	minor := strings.Join(strings.SplitN(tag, ".", 3)[:2], ".") // v0.19.2: v0.19
	if v, err := admission.ParseVersion(tag); err == nil && v.String() == minor {
		return fmt.Sprintf("modelled on Kueue %s, the manager's version", v)
	}
	return minor
}

// warningsNamed are the warnings among diags with the summary.
func warningsNamed(diags []tfDiagnostic, summary string) []tfDiagnostic {
	var out []tfDiagnostic
	for _, d := range diags {
		if d.Severity == "warning" && d.Summary == summary {
			out = append(out, d)
		}
	}
	return out
}

// The Kubernetes path: as a user bound only to examples/rbac/clusterrole.yaml, a plan whose
// quota change starts a pending job previews it, modelled on the manager's version.
func TestAccAdmissionPreview_shippedRole(t *testing.T) {
	acctest.RequireKueue(t)
	u := newRBACUser(t, "preview")
	const lender, borrower = "e2e-role-lender", "e2e-role-borrower"
	e2eCleanup(t, lender, borrower)
	previewAsShippedRole(t, previewRolePath{
		user: u, provider: u.provider(), cohort: "e2e-role", role: "examples/rbac/clusterrole.yaml", jobs: suiteJobs(),
		admin: acc.clientset, settled: func() error { return nil },
	}, lender, borrower)
}

// The same on the SageMaker path, with a Kubernetes connection as a user bound only to
// examples/rbac/task-governance-clusterrole.yaml: the preview reads the add-on's Kueue objects.
func TestAccTaskGovernance_admissionPreviewShippedRole(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	u := newRBACUserOn(t, tgRBAC(tg), "tg-preview")
	const lender, borrower = "tg-role-lender", "tg-role-borrower"
	tgCleanup(t, tg, lender, borrower)
	previewAsShippedRole(t, previewRolePath{
		user: u, provider: tgProviderAs(tg, u), role: "examples/rbac/task-governance-clusterrole.yaml", jobs: tgJobs(tg),
		admin: tg.Clientset, settled: func() error { return tg.Emulator.Settle(context.Background()) },
	}, lender, borrower)
}

// previewAsShippedRole is the story of TestAccAdmissionPreview_plan run as p's user: the
// lender's second instance lends the GPUs the borrower's pending job waits for.
func previewAsShippedRole(t *testing.T, p previewRolePath, lender, borrower string) {
	cohort := lendingCohort{lender: lender, borrower: borrower, cohort: p.cohort}
	config := func(lenderCount int) string { return p.provider + cohort.quotas(lenderCount) }
	cli := newTFCLI(t)
	cli.writeConfig(config(1))
	cli.init()
	if r := cli.apply(3 * time.Minute); r.exitCode != 0 {
		t.Fatalf("apply as %s: %s", p.user.name, r)
	}
	defer func() {
		// Destroying a queue waits while Kueue holds admitted workloads: end them first.
		p.jobs.deleteAllWork(t, []string{lender, borrower})
		if r := cli.destroy(3 * time.Minute); r.exitCode != 0 {
			t.Errorf("destroy as %s: %s", p.user.name, r)
		}
	}()
	if err := p.settled(); err != nil {
		t.Fatal(err)
	}
	next := cohort.fill(t, p.jobs)
	nextRef := admission.WorkloadRef{Namespace: next.GetNamespace(), Name: next.GetName()}

	cli.writeConfig(config(2))
	r, diags := cli.planJSON(2 * time.Minute)
	if r.exitCode != 2 {
		t.Fatalf("plan of the change as %s: want exit 2, got %s", p.user.name, r)
	}
	for _, summary := range []string{refusedReadSummary, "No admission preview"} {
		if ws := warningsNamed(diags, summary); len(ws) != 0 {
			t.Errorf("as a user bound only to %s: %q warnings %+v", p.role, summary, ws)
		}
	}
	got := warningsNamed(diags, "Admission preview: team "+lender)
	if len(got) != 1 {
		t.Fatalf("want one admission preview for %s, got %d among %+v", lender, len(got), diags)
	}
	for _, part := range []string{
		"ClusterQueue " + quota.ClusterQueueName(borrower) + ":\n  admitted " + nextRef.String() + " on ml.g5.12xlarge, borrowing",
		p.modelledVersion(t),
	} {
		if !strings.Contains(got[0].Detail, part) {
			t.Errorf("the preview lacks %q:\n%s", part, got[0].Detail)
		}
	}
}

// The Kubernetes path: without each read of the preview in turn, a plan of three quota changes
// gives one warning that names the refused read and the role to apply; a required read leaves
// no preview, an optional one the three previews.
func TestAccAdmissionPreview_refusedRead(t *testing.T) {
	acctest.RequireKueue(t)
	u := newRBACUser(t, "refused")
	teams := []string{"e2e-refused-a", "e2e-refused-b", "e2e-refused-c"}
	e2eCleanup(t, teams...)
	refusedReads(t, previewRolePath{
		user: u, provider: u.provider(), cohort: "e2e-refused", role: "examples/rbac/clusterrole.yaml",
		admin: acc.clientset, settled: func() error { return nil },
	}, teams)
}

// The same on the SageMaker path, with its role.
func TestAccTaskGovernance_admissionPreviewRefusedRead(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	u := newRBACUserOn(t, tgRBAC(tg), "tg-refused")
	teams := []string{"tg-refused-a", "tg-refused-b", "tg-refused-c"}
	tgCleanup(t, tg, teams...)
	refusedReads(t, previewRolePath{
		user: u, provider: tgProviderAs(tg, u), role: "examples/rbac/task-governance-clusterrole.yaml",
		admin: tg.Clientset, settled: func() error { return tg.Emulator.Settle(context.Background()) },
	}, teams)
}

// refusedReads applies a quota of each team as p's user, then, for each read of the preview,
// takes it from the user's role and plans a change of every quota.
func refusedReads(t *testing.T, p previewRolePath, teams []string) {
	cohort := ""
	if p.cohort != "" {
		cohort = "\n  cohort = \"" + p.cohort + "\""
	}
	config := func(accelerators int) string {
		out := p.provider
		for _, team := range teams {
			out += e2eTeam(team, fmt.Sprintf(`  resources = [{ instance_type = "ml.g5.12xlarge", accelerators = %d }]`, accelerators)+cohort)
		}
		return out
	}
	cli := newTFCLI(t)
	cli.writeConfig(config(1))
	cli.init()
	if r := cli.apply(3 * time.Minute); r.exitCode != 0 {
		t.Fatalf("apply as %s: %s", p.user.name, r)
	}
	defer func() {
		p.user.setRules(p.user.full, "", "")
		if r := cli.destroy(3 * time.Minute); r.exitCode != 0 {
			t.Errorf("destroy as %s: %s", p.user.name, r)
		}
	}()
	if err := p.settled(); err != nil {
		t.Fatal(err)
	}
	cli.writeConfig(config(2))
	for _, read := range previewReads {
		t.Run(read.resource+"/"+read.verb, func(t *testing.T) {
			p.user.setRules(without(p.user.full, read.resource, read.verb), read.resource, read.verb)
			r, diags := cli.planJSON(2 * time.Minute)
			if r.exitCode != 2 {
				t.Fatalf("plan without %s: want exit 2 (the plan goes on), got %s", read.named, r)
			}
			refused := warningsNamed(diags, refusedReadSummary)
			if len(refused) != 1 {
				t.Fatalf("without %s: want one %q warning for the plan of %d changes, got %d among %+v",
					read.named, refusedReadSummary, len(teams), len(refused), diags)
			}
			for _, part := range []string{read.named, p.role} {
				if !strings.Contains(refused[0].Detail, part) {
					t.Errorf("the warning lacks %q:\n%s", part, refused[0].Detail)
				}
			}
			if ws := warningsNamed(diags, "No admission preview"); len(ws) != 0 {
				t.Errorf("without %s: the refused read is said again per change: %+v", read.named, ws)
			}
			previews := 0
			for _, team := range teams {
				for _, w := range warningsNamed(diags, "Admission preview: team "+team) {
					previews++
					if read.resource == "deployments" && !strings.Contains(w.Detail, "modelled on Kueue "+admission.Latest.String()) {
						t.Errorf("without the manager's Deployment the preview models the newest version; it says:\n%s", w.Detail)
					}
				}
			}
			want := len(teams)
			if read.required {
				want = 0
			}
			if previews != want {
				t.Errorf("without %s: %d previews, want %d", read.named, previews, want)
			}
		})
	}
}
