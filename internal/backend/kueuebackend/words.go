package kueuebackend

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// errorDetail explains a failed request, with the permission it needs when it was refused.
func errorDetail(action, verb, resource string, err error) string {
	detail := fmt.Sprintf("%s failed: %s.", action, err)
	switch {
	case kube.IsAPINotServed(err): // the error says what to install
	case apierrors.IsForbidden(err):
		detail += fmt.Sprintf(" The provider's credentials need %s permission on %s (see the provider documentation's permissions table).", verb, resource)
	case apierrors.IsUnauthorized(err):
		detail += " The API server did not accept the provider's credentials: check token, client certificate or exec settings."
	case kube.IsTransient(err):
		// Throttling, a server error or a dropped connection, on every attempt: not a permission
		// or configuration problem, so no hint about either.
		detail += " This is a temporary failure of the API server or the network, retried within the provider's retry " +
			"settings (retry.max_attempts, retry.max_elapsed). Running apply again is safe: it reads what exists and " +
			"continues from there."
	default:
		detail += " Check that the cluster is reachable."
	}
	return detail
}

// objectKind is a Kubernetes kind the backend reads or writes, with how its messages name it.
type objectKind struct {
	gvr  schema.GroupVersionResource
	name string // the kind, e.g. ClusterQueue
	// the: summaries say "the ClusterQueue" rather than "ClusterQueue".
	the bool
	// versionedReads and versionedWrites: the details of failed requests name the Kueue API
	// version, where a cluster may serve another one.
	versionedReads, versionedWrites bool
	// createdByApply: the backend creates it with a server-side apply, which needs create and
	// patch permission.
	createdByApply bool
}

// kinds are the kinds the backend names in its errors, by name.
var kinds = map[string]objectKind{}

func init() {
	for _, k := range []objectKind{
		{gvr: kueue.ClusterQueues, name: kindClusterQueue, the: true},
		{gvr: kueue.ResourceFlavors, name: kindResourceFlavor, the: true, createdByApply: true},
		{gvr: kube.Namespaces, name: kindNamespace},
		{gvr: kueue.LocalQueues, name: kindLocalQueue, versionedReads: true, versionedWrites: true, createdByApply: true},
		{gvr: kueue.WorkloadPriorityClasses, name: kindPriorityClass, versionedReads: true},
	} {
		kinds[k.name] = k
	}
}

// resource is the kind's resource as RBAC rules name it, e.g. clusterqueues.kueue.x-k8s.io.
func (k objectKind) resource() string { return k.gvr.GroupResource().String() }

func (k objectKind) summaryName() string {
	if k.the {
		return "the " + k.name
	}
	return k.name
}

func (k objectKind) writeVerb(verb string) string {
	if k.createdByApply {
		return "create and patch"
	}
	return verb
}

// wordRequest is how a failed request of op on one object reads: a GET, the create of the object
// (a POST, or the server-side apply of a kind created that way), a server-side apply, a DELETE.
func wordRequest(op backend.Op, kind, namespace, name string, err error) backend.Problem {
	k, ok := kinds[kind]
	if !ok {
		k = objectKind{name: kind}
	}
	o := backend.ObjectRef{Kind: kind, Namespace: namespace, Name: name}
	versioned := func(yes bool) string {
		if yes {
			return fmt.Sprintf("%s %s", kueue.GroupVersion, o)
		}
		return o.String()
	}
	switch op {
	case backend.OpCreate:
		return backend.Problem{Summary: "Cannot create " + k.summaryName(),
			Detail: errorDetail("Creating "+versioned(k.versionedWrites), k.writeVerb("create"), k.resource(), err)}
	case backend.OpApply:
		return backend.Problem{Summary: "Cannot apply " + k.summaryName(),
			Detail: errorDetail("Server-side apply of "+versioned(k.versionedWrites), k.writeVerb("patch"), k.resource(), err)}
	case backend.OpDelete:
		return backend.Problem{Summary: "Cannot delete " + k.summaryName(),
			Detail: errorDetail("Deleting "+versioned(k.versionedWrites), "delete", k.resource(), err)}
	default:
		return backend.Problem{Summary: "Cannot read " + k.summaryName(),
			Detail: errorDetail("Reading "+versioned(k.versionedReads), "get", k.resource(), err)}
	}
}

// wordAdopt is how a failed removal of the mark of an interrupted run from an object reads.
func wordAdopt(kind, name string, err error) backend.Problem {
	k := kinds[kind]
	o := backend.ObjectRef{Kind: kind, Name: name}
	return backend.Problem{Summary: "Cannot adopt " + kind,
		Detail: errorDetail(fmt.Sprintf("Removing the %s annotation of %s", quota.AnnotationUnconfirmed, o), "patch", k.resource(), err)}
}

// wordOutcomeUnknown is what is known of a create whose response was lost: kube.Create read the
// object back, and that read failed too.
func wordOutcomeUnknown(o backend.ObjectRef) string {
	return fmt.Sprintf("It is not known whether the API server created %s: the response to the create was lost and "+
		"reading it back failed too.", o)
}

// words are the Kubernetes path's own messages.
type words struct{ quotas *teamQuotas }

// ForeignID: only the SageMaker API gives this provider's objects ids.
func (words) ForeignID(id string) backend.Problem {
	return backend.Problem{Summary: "Object held by the SageMaker API", Detail: fmt.Sprintf("This resource was created "+
		"through the SageMaker API (its id there is %s), but the provider block has no task_governance block, so it would "+
		"look for it in Kubernetes instead and lose track of it. Add the task_governance block back, or, to stop managing "+
		"it here without deleting it, use a removed block with lifecycle { destroy = false }.", id)}
}

func (words) NoQuotaToImport(team string) backend.Problem {
	return backend.Problem{Summary: "Cannot import compute quota", Detail: fmt.Sprintf("ClusterQueue %q does not exist (or is being "+
		"deleted), so there is nothing to import for team %q. Check the team name, or remove the import and let "+
		"terraform apply create the quota.", quota.ClusterQueueName(team), team)}
}

// NotDeleted explains a ClusterQueue that was not deleted: the API server's answer, or, when it
// outlived the timeout, the finalizers holding it and, for Kueue's, the workloads still admitted
// to it (one GET and one LIST, made only now).
func (w words) NotDeleted(ctx context.Context, err error, timeout time.Duration) backend.Problem {
	var re *backend.RequestError
	if !errors.As(err, &re) {
		var p backend.Problem
		if errors.As(err, &p) {
			return p // refused before any request, e.g. on a cluster with the task-governance add-on
		}
		return backend.Problem{Summary: "ClusterQueue not deleted", Detail: err.Error()}
	}
	name := re.Name
	if !errors.Is(err, backend.ErrStillExists) {
		return backend.Problem{Summary: "ClusterQueue not deleted", Detail: fmt.Sprintf("Deleting ClusterQueue %q failed: %s", name, re.Err)}
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	held, workloads, listErr := w.quotas.holders(ctx, name)
	finalizers := "its finalizers"
	if len(held) > 0 {
		finalizers = fmt.Sprintf("finalizers %v", held)
	}
	detail := fmt.Sprintf("Deleting ClusterQueue %q did not finish within timeouts.delete (%s): it is held by %s. "+
		"Kueue removes its finalizer (%s) once no workload is admitted to the queue any more.", name, timeout, finalizers, inUseFinalizer)
	switch {
	case listErr != nil:
		detail += fmt.Sprintf(" The workloads still admitted could not be listed: %s.", listErr)
	case len(workloads) > 0:
		detail += " Workloads still admitted to it: " + strings.Join(workloads, ", ") + "."
	default:
		detail += " No workload is admitted to it now, so Kueue should release it shortly."
	}
	return backend.Problem{Summary: "ClusterQueue not deleted", Detail: detail + " To proceed: wait for the workloads to " +
		"finish, or delete them (for a Job, kubectl delete job -n <namespace> <job>), or raise timeouts.delete; then run " +
		"destroy again. Removing the finalizer by hand would leave running workloads without a queue."}
}

// inUseFinalizer is the finalizer Kueue puts on ClusterQueues with admitted workloads.
const inUseFinalizer = "kueue.x-k8s.io/resource-in-use"

// ownedElsewhere refuses to take over a WorkloadPriorityClass another manager owns.
func ownedElsewhere(existing *StoredClass, class string) backend.Problem {
	o := classRef(class)
	return backend.Problem{Summary: o.Kind + " already exists", Detail: fmt.Sprintf(
		"%s %q already exists and is managed by %s, so this resource will not take it over. "+
			"To manage it here, import the classes this resource declares, which takes them over explicitly:\n\n"+
			"  %s\n\n"+
			"or remove priority class %q from this resource. On a cluster with HyperPod task governance, the "+
			"cluster policy belongs to the AWS API (CreateClusterSchedulerConfig) instead.",
		o.Kind, o.Name, existing.Owner.Description, backend.PolicyImportCommand(class), class)}
}

// readiness: a read needs only the cluster, reachable once the provider block is known.
type readiness struct{}

func (readiness) UsageReady(team string, pending []string) error {
	if len(pending) > 0 {
		return backend.NotKnownYet("read ClusterQueue "+quota.ClusterQueueName(team), pending)
	}
	return nil
}

func (readiness) CapacityReady(_ string, pending []string) error {
	if len(pending) > 0 {
		return backend.NotKnownYet("read the cluster's Nodes and ClusterQueues", pending)
	}
	return nil
}

// NoUsage: a team's quota is its ClusterQueue.
func (readiness) NoUsage(team string) backend.Problem {
	return backend.Problem{Summary: "Team has no ClusterQueue", Detail: fmt.Sprintf(
		"ClusterQueue %q does not exist, so team %q has no quota to report on. Check the team name, or create its "+
			"quota first (hyperpod_compute_quota); a data source that depends on it reads after it is created.",
		quota.ClusterQueueName(team), team)}
}
