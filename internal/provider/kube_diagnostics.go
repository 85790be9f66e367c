package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// kubeErrorDetail explains a failed request, with the permission it needs when it was refused.
func kubeErrorDetail(action, verb, resource string, err error) string {
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

// kubeKind is a Kubernetes kind the provider reads or writes, with how its diagnostics name it.
type kubeKind struct {
	gvr  schema.GroupVersionResource
	name string // the kind, e.g. ClusterQueue
	// the: summaries say "the ClusterQueue" rather than "ClusterQueue".
	the bool
	// versionedReads and versionedWrites: the details of failed requests name the Kueue API
	// version, where a cluster may serve another one.
	versionedReads, versionedWrites bool
	// createdByApply: the provider creates it with a server-side apply, which needs create and
	// patch permission.
	createdByApply bool
}

var (
	clusterQueueKind   = kubeKind{gvr: kueue.ClusterQueues, name: "ClusterQueue", the: true}
	resourceFlavorKind = kubeKind{gvr: kueue.ResourceFlavors, name: "ResourceFlavor", the: true, createdByApply: true}
	namespaceKind      = kubeKind{gvr: kube.Namespaces, name: "Namespace"}
	localQueueKind     = kubeKind{gvr: kueue.LocalQueues, name: "LocalQueue", versionedReads: true, versionedWrites: true, createdByApply: true}
	priorityClassKind  = kubeKind{gvr: kueue.WorkloadPriorityClasses, name: "WorkloadPriorityClass", versionedReads: true}
)

// kindsByName are the kinds a backend names in its errors.
var kindsByName = map[string]kubeKind{}

func init() {
	for _, k := range []kubeKind{clusterQueueKind, resourceFlavorKind, namespaceKind, localQueueKind, priorityClassKind} {
		kindsByName[k.name] = k
	}
}

// storeGet reads key through get, with a failed request as a diagnostic.
func storeGet[T any](ctx context.Context, get func(context.Context, string) (T, error), key string) (T, diag.Diagnostics) {
	var diags diag.Diagnostics
	v, err := get(ctx, key)
	if err != nil {
		storeError(err).addTo(&diags)
	}
	return v, diags
}

// storeError words a failed backend request as the constructors below do, and a problem the
// backend worded itself as it is.
func storeError(err error) kubeError {
	var re *backend.RequestError
	if errors.As(err, &re) {
		k, isKube := kindsByName[re.Kind]
		if !isKube {
			return apiStoreError(re)
		}
		o := k.object(re.Namespace, re.Name)
		switch re.Op {
		case backend.OpCreate:
			return o.createFailed(re.Err)
		case backend.OpApply:
			return o.applyFailed(re.Err)
		case backend.OpDelete:
			return o.deleteFailed(re.Err)
		default:
			return o.readFailed(re.Err)
		}
	}
	var p backend.Problem
	if errors.As(err, &p) {
		return kubeError{p.Summary, p.Detail}
	}
	return kubeError{"Request failed", err.Error()}
}

// apiStoreError words a failed request of a store that is not Kubernetes (the SageMaker API):
// its error carries the operation, the attempts and the API's code and reason already.
func apiStoreError(re *backend.RequestError) kubeError {
	verb := map[backend.Op]string{backend.OpRead: "read", backend.OpCreate: "create", backend.OpApply: "update", backend.OpDelete: "delete"}[re.Op]
	detail := fmt.Sprintf("%s %q: %s.", re.Kind, re.Name, re.Err)
	if strings.Contains(re.Err.Error(), "AccessDenied") {
		detail += " The provider's AWS credentials need the SageMaker actions of the IAM policy in the provider's " +
			"documentation (examples/iam/task-governance-policy.json)."
	}
	return kubeError{fmt.Sprintf("Cannot %s the %s", verb, re.Kind), detail}
}

// apiDeleteError words a failed delete on a store that is not Kubernetes: the API's reason (a
// DeleteFailed status carries its FailureReason), then that the object stays in state and what
// to do. timeout is the delete's.
func apiDeleteError(err error, timeout time.Duration) kubeError {
	e := storeError(err)
	if errors.Is(err, backend.ErrStillExists) {
		e.detail += fmt.Sprintf(" SageMaker had not finished deleting it within timeouts.delete (%s). It stays in state: "+
			"run destroy again once SageMaker has deleted it, or raise timeouts.delete.", durationText(timeout))
	} else {
		e.detail += " It stays in state: fix what the reason names, then run destroy again."
	}
	return e
}

// changedOutside is the error of a write over the version the state last saw that the store
// refused (ErrChanged): someone changed the object since the refresh. The kind comes from err,
// since the record the write was given carries only the id and version.
func changedOutside(summary string, err error, over *backend.Record) kubeError {
	kind := "The object"
	var re *backend.RequestError
	if errors.As(err, &re) && re.Kind != "" {
		kind = re.Kind
	}
	return kubeError{summary, fmt.Sprintf("%s %s was changed outside Terraform since the last refresh (it is no longer at "+
		"version %s), so this apply would overwrite that change blindly. Run terraform plan again to see the change, then apply.",
		kind, over.ID, over.Version)}
}

// storeCause is the failure a backend request reported, without what it means.
func storeCause(err error) error {
	var re *backend.RequestError
	if errors.As(err, &re) {
		return re.Err
	}
	return err
}

// object names one object of the kind; namespace is "" for cluster-scoped kinds.
func (k kubeKind) object(namespace, name string) kubeObject {
	return kubeObject{kind: k, namespace: namespace, name: name}
}

// resource is the kind's resource as RBAC rules name it, e.g. clusterqueues.kueue.x-k8s.io.
func (k kubeKind) resource() string { return k.gvr.GroupResource().String() }

func (k kubeKind) summaryName() string {
	if k.the {
		return "the " + k.name
	}
	return k.name
}

// kubeObject is one object, named in diagnostics and handled by the create protocol.
type kubeObject struct {
	kind            kubeKind
	namespace, name string
}

func (o kubeObject) String() string { return o.ref().String() }

// ref names o to a backend.
func (o kubeObject) ref() backend.ObjectRef {
	return backend.ObjectRef{Kind: o.kind.name, Namespace: o.namespace, Name: o.name}
}

func (o kubeObject) versioned(yes bool) string {
	if yes {
		return fmt.Sprintf("%s %s", kueue.GroupVersion, o)
	}
	return o.String()
}

// kubeError is the error diagnostic of a failed request on one object.
type kubeError struct{ summary, detail string }

func (e kubeError) addTo(diags *diag.Diagnostics) { diags.AddError(e.summary, e.detail) }

func (e kubeError) addAt(diags *diag.Diagnostics, at path.Path) {
	diags.AddAttributeError(at, e.summary, e.detail)
}

// readFailed is the error of a GET of o.
func (o kubeObject) readFailed(err error) kubeError {
	return kubeError{"Cannot read " + o.kind.summaryName(),
		kubeErrorDetail("Reading "+o.versioned(o.kind.versionedReads), "get", o.kind.resource(), err)}
}

// createFailed is the error of the create of o: a POST, or the server-side apply of a kind
// created that way.
func (o kubeObject) createFailed(err error) kubeError {
	return kubeError{"Cannot create " + o.kind.summaryName(),
		kubeErrorDetail("Creating "+o.versioned(o.kind.versionedWrites), o.kind.writeVerb("create"), o.kind.resource(), err)}
}

// applyFailed is the error of a server-side apply of o.
func (o kubeObject) applyFailed(err error) kubeError {
	return kubeError{"Cannot apply " + o.kind.summaryName(),
		kubeErrorDetail("Server-side apply of "+o.versioned(o.kind.versionedWrites), o.kind.writeVerb("patch"), o.kind.resource(), err)}
}

// deleteFailed is the error of a DELETE of o.
func (o kubeObject) deleteFailed(err error) kubeError {
	return kubeError{"Cannot delete " + o.kind.summaryName(),
		kubeErrorDetail("Deleting "+o.versioned(o.kind.versionedWrites), "delete", o.kind.resource(), err)}
}

// adoptFailed is the error of removing the mark of an interrupted run from o.
func (o kubeObject) adoptFailed(err error) kubeError {
	return kubeError{"Cannot adopt " + o.kind.name,
		kubeErrorDetail(fmt.Sprintf("Removing the %s annotation of %s", quota.AnnotationUnconfirmed, o), "patch", o.kind.resource(), err)}
}

func (k kubeKind) writeVerb(verb string) string {
	if k.createdByApply {
		return "create and patch"
	}
	return verb
}

// leftInPlace warns that a destroy did not delete o because it is managed by another owner (by);
// then says what that meant for this resource.
func (o kubeObject) leftInPlace(diags *diag.Diagnostics, by, then string) {
	diags.AddWarning(o.kind.name+" left in place", fmt.Sprintf("%s %q is managed by %s, not by this resource, so %s",
		o.kind.name, o.name, by, then))
}

// refused refuses to change o, which is managed by another owner (by).
func (o kubeObject) refused(diags *diag.Diagnostics, at path.Path, by string) {
	diags.AddAttributeError(at, "Owned by another resource", fmt.Sprintf(
		"%s %q is managed by %s, not by this resource, so it was not changed. Import it to take it over "+
			"explicitly, or remove this resource from state.", o.kind.name, o.name, by))
}
