// Package backend is the seam between the provider's resources and the system that stores a
// cluster's quotas: one small interface per concern, phrased in what the resources need (a
// team's one quota, its owner identity, its version), not in the objects that hold it. Today's
// implementation writes Kueue objects through Kubernetes (package kueuebackend).
//
// Nothing here is a Kubernetes or AWS type: a backend converts what it reads into the pure
// packages' values (quota, capacity), so a second store (the SageMaker API) answers the same
// calls.
package backend

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Backend is what the provider's resources and data sources reach the cluster through.
type Backend struct {
	Quotas       TeamQuotas
	QuotaDetails QuotaDetails
	// Scheduler stores the cluster's scheduling policy.
	Scheduler SchedulerPolicy
	Capacity  Capacity
	Usage     TeamUsage
	// Kueue reads what Kueue admits against, for the plan's admission preview.
	Kueue KueueState
	// Traits is what the plan must know of the store, without knowing which it is.
	Traits           Traits
	Claims           Claims
	Namespaces       TeamNamespaces
	NamespaceDetails NamespaceDetails
	// Words words, in the store's own terms, what only the backend can say about a failure.
	Words Words
	// Ready says whether the data sources' reads can be made now.
	Ready Readiness
	// QuotaList and NamespaceList list what the store holds, for `terraform query`
	// (Scheduler lists itself).
	QuotaList     QuotaList
	NamespaceList NamespaceList
	// Cluster names the cluster whose quotas the store holds where the store names clusters
	// (the SageMaker API: the cluster's ARN); "" where the store is the cluster itself.
	Cluster string
}

// Traits is what the plan must know of a store.
type Traits struct {
	// StoreLimits: attributes the store cannot hold ("cohort", "resources.efa", "fair_share",
	// ...; a configuration that sets one is refused at plan time, and a computed one is planned
	// null) and whether it holds amounts as 32-bit floats.
	quota.StoreLimits
	// AssignsIDs: the store gives each quota and scheduler config an id, an ARN and a version
	// (Record.ID, ARN, Version, Status), so a plan of a new one plans them unknown rather than
	// null, and a state that records an id belongs to such a store. Where a record carries an id,
	// the id addresses the object (a delete needs no read first) and a write over it sends its
	// version back (ErrChanged when it moved).
	AssignsIDs bool
	// CreatesWithContent: a create sends the quota with its content in one request and the
	// store applies it asynchronously; a claim creates nothing (it holds the team while the
	// create is sent). Such a create saves the quota once it exists, tainted when it failed.
	CreatesWithContent bool
}

// Claims deals with what a create claimed and could not hand to Terraform. Nobody is left to
// tell of a failure, so each method logs what it did instead of returning an error.
type Claims interface {
	// Abandon deletes o, if it still records owner, and waits a while for it to go.
	Abandon(ctx context.Context, o ObjectRef, owner string)
	// MarkUnconfirmed marks o, if it still records owner and is not being deleted, as created by
	// a run that may not have saved its state (note says why); a later create of o adopts it.
	MarkUnconfirmed(ctx context.Context, o ObjectRef, owner, note string)
}

// ObjectRef names one stored object.
type ObjectRef struct{ Kind, Namespace, Name string }

func (o ObjectRef) String() string {
	if o.Namespace != "" {
		return fmt.Sprintf("%s %q in namespace %q", o.Kind, o.Name, o.Namespace)
	}
	return fmt.Sprintf("%s %q", o.Kind, o.Name)
}

// Record is what a store records about one object besides its content.
type Record struct {
	// Object names the stored object in messages, e.g. `ClusterQueue "hyperpod-ns-ml-clusterqueue"`.
	Kind, Name string
	// ID and ARN are the store's identifier of the object and its ARN, where the store
	// assigns them ("" otherwise).
	ID, ARN string
	// Version identifies this incarnation (or, where the store versions its objects, this
	// version) of the object: a write or delete that names it fails when the object was
	// replaced (or changed) since it was read.
	Version string
	// Status is the state of the object's last change, where the store applies changes
	// asynchronously (e.g. "Created", "UpdateFailed"); Failure is the store's reason for a
	// failed one.
	Status, Failure string
	// ChangeFailed reports that the store could not apply the object's last change.
	ChangeFailed bool
	// Terminating reports an object being deleted; HeldBy names what holds it, and Holding
	// says, in the store's terms, what keeps it until it is gone.
	Terminating bool
	HeldBy      []string
	Holding     string
	// Owner is who the object records as its manager.
	Owner Ownership
	// Unconfirmed is the mark of a run that was killed before it could save the object's
	// state, "" when there is none; such an object may be adopted.
	Unconfirmed string
	// Tags are the tags the object carried when the caller last saw it, in the record a write
	// goes over: a store that changes tags by key adds and removes what differs from the
	// configuration's. nil when it carried none.
	Tags map[string]string
}

// Ownership is who a stored object records as its manager.
type Ownership struct {
	// Recorded is the owner identity the object records, "" when none.
	Recorded string
	// Description names the manager for messages.
	Description string
	// Owns reports whether the object is owner's.
	Owns func(owner string) bool
	// Intrinsic: the store records no owner, so the object's own id (Recorded) stands for the
	// owner identity; no write changes it, and an import has nothing to take over.
	Intrinsic bool
}

// Problem is a failure or warning a backend words itself.
type Problem struct{ Summary, Detail string }

func (p Problem) Error() string { return p.Detail }

// Words is what a backend says, in its own terms, where a message depends on the store: the
// provider adds only what holds for every store (what the state keeps, what to run next).
type Words interface {
	// ForeignID refuses a state that records id, the store id of an object this backend does
	// not hold (it was written through another store), before the resource loses track of it.
	ForeignID(id string) Problem
	// NoQuotaToImport is why an import of team finds no quota.
	NoQuotaToImport(team string) Problem
	// NotDeleted words a delete of a quota or a scheduler config that failed with err (a
	// RequestError), or did not finish within timeout (ErrStillExists); it may read what holds
	// the object with ctx, which outlives the delete's.
	NotDeleted(ctx context.Context, err error, timeout time.Duration) Problem
}

// Readiness says, in the store's words, whether a data source's read can be made now: pending
// names the provider block's attributes whose values are known only after apply (none: the
// configuration is known). Each is nil when the read can be made, else a Problem.
type Readiness interface {
	// UsageReady: the read of team's usage (TeamUsage).
	UsageReady(team string, pending []string) error
	// CapacityReady: the read of an instance type's capacity (Capacity).
	CapacityReady(instanceType string, pending []string) error
	// NoUsage is why team has no usage to report: the store holds no quota for it.
	NoUsage(team string) Problem
}

// NotKnownYet is why the store cannot be reached yet for what (e.g. "read ClusterQueue ..."):
// the provider block's pending attributes are known only after apply.
func NotKnownYet(what string, pending []string) Problem {
	return Problem{Summary: "Provider configuration not known yet", Detail: fmt.Sprintf(
		"Planning needs to %s, but the hyperpod provider's %s depend on values known only after apply, so "+
			"it cannot reach the cluster yet. New quotas and namespaces plan without the cluster; existing ones and "+
			"the capacity data source need it. Apply what those values come from first (for example "+
			"terraform apply -target=<the cluster resource>), or set them from values known at plan time.",
		what, strings.Join(pending, ", "))}
}

// Op is what a failed request did.
type Op int

const (
	OpRead Op = iota
	OpCreate
	OpApply
	OpDelete
)

// RequestError is a failed request on one stored object.
type RequestError struct {
	Op              Op
	Kind            string
	Namespace, Name string
	// Err is the failure as the store reported it.
	Err error
	// Problem is the failure as the backend words it: what was requested of which object, the
	// store's answer and, where the answer calls for it, what to do. With Outcome
	// ErrOutcomeUnknown, its Detail says what is known of whether the object was created.
	Problem Problem
	// Outcome is what the failure means for the caller: ErrExists, ErrOutcomeUnknown,
	// ErrStillExists, or nil.
	Outcome error
}

func (e *RequestError) Error() string   { return e.Err.Error() }
func (e *RequestError) Unwrap() []error { return []error{e.Err, e.Outcome} }

var (
	// ErrExists: a create found the object there already.
	ErrExists = errors.New("object already exists")
	// ErrOutcomeUnknown: a create's answer does not say whether the store created the object.
	ErrOutcomeUnknown = errors.New("the create's outcome is unknown")
	// ErrStillExists: a delete did not finish in time.
	ErrStillExists = errors.New("object still exists")
	// ErrChanged: a write named a version that someone else has changed since it was read.
	ErrChanged = errors.New("object changed since it was read")
)
