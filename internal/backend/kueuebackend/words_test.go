package kueuebackend

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Each failed request is worded by its kind and operation: tests and users match the permission
// hint ("need <verb> permission on <resource>").
func TestRequestErrorWording(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "kueue.x-k8s.io", Resource: "x"}, "n", errors.New("no"))
	problem := func(op backend.Op, kind, namespace, name string) backend.Problem {
		var re *backend.RequestError
		if !errors.As(requestError(op, kind, namespace, name, forbidden), &re) {
			t.Fatalf("requestError is not a RequestError")
		}
		return re.Problem
	}
	adopt := func(kind, name string) backend.Problem {
		var re *backend.RequestError
		if !errors.As(unmarkError(kind, name, forbidden), &re) {
			t.Fatalf("unmarkError is not a RequestError")
		}
		return re.Problem
	}
	for _, c := range []struct {
		got                   backend.Problem
		summary, detailAction string
		verb, resource        string
	}{
		{problem(backend.OpRead, kindClusterQueue, "", "cq"), "Cannot read the ClusterQueue", `Reading ClusterQueue "cq"`, "get", "clusterqueues.kueue.x-k8s.io"},
		{problem(backend.OpCreate, kindClusterQueue, "", "cq"), "Cannot create the ClusterQueue", `Creating ClusterQueue "cq"`, "create", "clusterqueues.kueue.x-k8s.io"},
		{problem(backend.OpApply, kindClusterQueue, "", "cq"), "Cannot apply the ClusterQueue", `Server-side apply of ClusterQueue "cq"`, "patch", "clusterqueues.kueue.x-k8s.io"},
		{problem(backend.OpRead, kindResourceFlavor, "", "ml.p5.48xlarge"), "Cannot read the ResourceFlavor", `Reading ResourceFlavor "ml.p5.48xlarge"`, "get", "resourceflavors.kueue.x-k8s.io"},
		{problem(backend.OpCreate, kindResourceFlavor, "", "ml.p5.48xlarge"), "Cannot create the ResourceFlavor", `Creating ResourceFlavor "ml.p5.48xlarge"`, "create and patch", "resourceflavors.kueue.x-k8s.io"},
		{problem(backend.OpRead, kindNamespace, "", "hyperpod-ns-a"), "Cannot read Namespace", `Reading Namespace "hyperpod-ns-a"`, "get", "namespaces"},
		{problem(backend.OpCreate, kindNamespace, "", "hyperpod-ns-a"), "Cannot create Namespace", `Creating Namespace "hyperpod-ns-a"`, "create", "namespaces"},
		{problem(backend.OpApply, kindNamespace, "", "hyperpod-ns-a"), "Cannot apply Namespace", `Server-side apply of Namespace "hyperpod-ns-a"`, "patch", "namespaces"},
		{problem(backend.OpRead, kindLocalQueue, "hyperpod-ns-a", "lq"), "Cannot read LocalQueue", fmt.Sprintf(`Reading %s LocalQueue "lq" in namespace "hyperpod-ns-a"`, kueue.GroupVersion), "get", "localqueues.kueue.x-k8s.io"},
		{problem(backend.OpApply, kindLocalQueue, "hyperpod-ns-a", "lq"), "Cannot apply LocalQueue", fmt.Sprintf(`Server-side apply of %s LocalQueue "lq" in namespace "hyperpod-ns-a"`, kueue.GroupVersion), "create and patch", "localqueues.kueue.x-k8s.io"},
		{problem(backend.OpRead, kindPriorityClass, "", "training-priority"), "Cannot read WorkloadPriorityClass", fmt.Sprintf(`Reading %s WorkloadPriorityClass "training-priority"`, kueue.GroupVersion), "get", "workloadpriorityclasses.kueue.x-k8s.io"},
		{problem(backend.OpCreate, kindPriorityClass, "", "training-priority"), "Cannot create WorkloadPriorityClass", `Creating WorkloadPriorityClass "training-priority"`, "create", "workloadpriorityclasses.kueue.x-k8s.io"},
		{problem(backend.OpApply, kindPriorityClass, "", "training-priority"), "Cannot apply WorkloadPriorityClass", `Server-side apply of WorkloadPriorityClass "training-priority"`, "patch", "workloadpriorityclasses.kueue.x-k8s.io"},
		{problem(backend.OpDelete, kindPriorityClass, "", "training-priority"), "Cannot delete WorkloadPriorityClass", `Deleting WorkloadPriorityClass "training-priority"`, "delete", "workloadpriorityclasses.kueue.x-k8s.io"},
		{adopt(kindNamespace, "hyperpod-ns-a"), "Cannot adopt Namespace", fmt.Sprintf(`Removing the %s annotation of Namespace "hyperpod-ns-a"`, quota.AnnotationUnconfirmed), "patch", "namespaces"},
	} {
		wantDetail := fmt.Sprintf("%s failed: %s. The provider's credentials need %s permission on %s (see the provider documentation's permissions table).",
			c.detailAction, forbidden, c.verb, c.resource)
		if c.got.Summary != c.summary || c.got.Detail != wantDetail {
			t.Errorf("got\n  %q\n  %q\nwant\n  %q\n  %q", c.got.Summary, c.got.Detail, c.summary, wantDetail)
		}
	}
}

// A create whose response was lost and whose read-back failed says both, in Kubernetes terms.
func TestCreateOutcomeUnknownWording(t *testing.T) {
	err := requestError(backend.OpCreate, kindClusterQueue, "", "hyperpod-ns-ml-clusterqueue",
		fmt.Errorf("%w: the response was lost; reading it back failed too: timeout", kube.ErrCreateOutcomeUnknown))
	var re *backend.RequestError
	if !errors.As(err, &re) || !errors.Is(err, backend.ErrOutcomeUnknown) {
		t.Fatalf("requestError = %v, want a RequestError with ErrOutcomeUnknown", err)
	}
	want := `It is not known whether the API server created ClusterQueue "hyperpod-ns-ml-clusterqueue": the response to the ` +
		"create was lost and reading it back failed too."
	if re.Problem.Summary != "Cannot create the ClusterQueue" || !strings.HasSuffix(re.Problem.Detail, want) {
		t.Errorf("got %q: %q\nwant the create summary and a detail ending %q", re.Problem.Summary, re.Problem.Detail, want)
	}
}

// A ClusterQueue that was not deleted names itself and, when the delete failed, the API
// server's answer; a being-deleted record says which finalizers keep it.
func TestNotDeletedAndHolding(t *testing.T) {
	err := requestError(backend.OpDelete, kindClusterQueue, "", "hyperpod-ns-ml-clusterqueue", errors.New("boom"))
	got := words{}.NotDeleted(t.Context(), err, 0)
	if got.Summary != "ClusterQueue not deleted" || got.Detail != `Deleting ClusterQueue "hyperpod-ns-ml-clusterqueue" failed: boom` {
		t.Errorf("NotDeleted = %q: %q", got.Summary, got.Detail)
	}
	if got := (words{}).NotDeleted(t.Context(), ErrAddon, 0); got != ErrAddon {
		t.Errorf("NotDeleted of a refused delete = %q, want the refusal as it is", got)
	}
	now := metav1.Now()
	r := RecordOf(kindClusterQueue, metav1.ObjectMeta{Name: "q", DeletionTimestamp: &now, Finalizers: []string{inUseFinalizer}})
	if want := "Kubernetes keeps it while finalizers [kueue.x-k8s.io/resource-in-use] remain (Kueue keeps a queue while " +
		"admitted workloads still use it)"; r.Holding != want {
		t.Errorf("Holding = %q, want %q", r.Holding, want)
	}
}

// A class another manager owns is refused with its object, its owner and the import that takes it over.
func TestPriorityClassOwnedElsewhere(t *testing.T) {
	existing := &StoredClass{Record: backend.Record{Owner: backend.Ownership{Description: "another tool"}}}
	got := ownedElsewhere(existing, "training")
	want := `WorkloadPriorityClass "training-priority" already exists and is managed by another tool, so this resource will not take it over. ` +
		"To manage it here, import the classes this resource declares, which takes them over explicitly:\n\n" +
		"  terraform import hyperpod_cluster_scheduler_config.<name> training\n\n" +
		`or remove priority class "training" from this resource. On a cluster with HyperPod task governance, the ` +
		"cluster policy belongs to the AWS API (CreateClusterSchedulerConfig) instead."
	if got.Summary != "WorkloadPriorityClass already exists" || got.Detail != want {
		t.Errorf("OwnedElsewhere = %q: %q\nwant detail %q", got.Summary, got.Detail, want)
	}
}

// A data source's read waits for the provider block's values, and says what it would read in
// Kubernetes terms.
func TestReadiness(t *testing.T) {
	r := readiness{}
	if err := r.UsageReady("ml", nil); err != nil {
		t.Errorf("UsageReady with the configuration known = %v", err)
	}
	for what, err := range map[string]error{
		"read ClusterQueue hyperpod-ns-ml-clusterqueue": r.UsageReady("ml", []string{"host"}),
		"read the cluster's Nodes and ClusterQueues":    r.CapacityReady("ml.g5.12xlarge", []string{"host"}),
	} {
		var p backend.Problem
		if !errors.As(err, &p) || p.Summary != "Provider configuration not known yet" ||
			!strings.HasPrefix(p.Detail, "Planning needs to "+what+", but the hyperpod provider's host depend on values") {
			t.Errorf("readiness with host unknown = %v, want it to need to %s", err, what)
		}
	}
	if p := r.NoUsage("ml"); p.Summary != "Team has no ClusterQueue" || !strings.HasPrefix(p.Detail, `ClusterQueue "hyperpod-ns-ml-clusterqueue" does not exist, so team "ml"`) {
		t.Errorf("NoUsage = %q: %q", p.Summary, p.Detail)
	}
}
