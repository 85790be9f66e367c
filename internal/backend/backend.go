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

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/capacity"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Backend is what the provider's resources and data sources reach the cluster through.
type Backend struct {
	Quotas TeamQuotas
	// Exactly one of PriorityClasses and SchedulerConfig is set.
	PriorityClasses PriorityClasses
	SchedulerConfig SchedulerConfigs
	Capacity        Capacity
	Usage           TeamUsage
	// Kueue reads what Kueue admits against, for the plan's admission preview.
	Kueue KueueState
	// Traits is what the plan must know of the store, without knowing which it is.
	Traits     Traits
	Claims     Claims
	Namespaces TeamNamespaces
	// Words words, in the store's own terms, what only the backend can say about a failure.
	Words Words
	// QuotaList and NamespaceList list what the store holds, for `terraform query`;
	// PriorityClassList is set with PriorityClasses (SchedulerConfig lists itself: Get).
	QuotaList         QuotaList
	NamespaceList     NamespaceList
	PriorityClassList PriorityClassList
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
	// QueuesByAddon: a team's LocalQueue is the task-governance add-on's, which creates it with
	// the team's quota under the names the provider plans. The provider never writes or compares
	// it, so it records those names whether or not the queue exists yet.
	QueuesByAddon bool
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

// TeamQuotas reads, writes and deletes the one quota of each team.
type TeamQuotas interface {
	// Get reads the team's quota; nil when there is none. last is the quota as the caller last
	// saw it, or nil: a store whose cheapest read lacks some fields takes them from last when
	// the version shows nothing changed since.
	Get(ctx context.Context, team string, last *Quota) (*Quota, error)
	// TeamOf is the team of the quota the store identifies by id, for an import by id; ok is
	// false when the store has no such quota or assigns no ids.
	TeamOf(ctx context.Context, id string) (team string, ok bool, err error)
	// Claim makes sure that of two creators of the team only one goes on to Put: the store
	// creates the quota holding only the owner identity, or holds the team until this
	// creator's Put has sent its create (or ctx ends). A quota that exists already fails with
	// ErrExists. version is the created quota's, "" when it created none or could not read it
	// back.
	Claim(ctx context.Context, team, owner string) (version string, err error)
	// WaitGone waits until the team's quota, being deleted, is gone.
	WaitGone(ctx context.Context, team string) error
	// Adopt removes the mark an interrupted run left on q (see Record.Unconfirmed).
	Adopt(ctx context.Context, q *Quota) error
	// Put writes the configuration with the owner identity over the quota as the caller last
	// saw it (nil: there is none yet, or the claim holds no content), creating the inputs it
	// relies on that are missing, and waits until the store has applied it. A store that
	// versions its objects refuses a write over a version that is no longer current
	// (ErrChanged). written is the quota as written, once it exists, even when Put fails;
	// createdInputs names the inputs it created (or may have), even when it fails. The
	// quota's tags become rc.Config.Tags (replacing over.Tags).
	Put(ctx context.Context, rc quota.ResolvedConfig, owner string, over *Record) (written Record, createdInputs []string, err error)
	// Drift lists what differs in the store that the configuration's attributes cannot show,
	// comparing q with rc written by owner when compare is set, and the inputs q relies on.
	Drift(ctx context.Context, q *Quota, rc quota.ResolvedConfig, owner string, compare bool) ([]string, error)
	// RemoveUnusedInputs removes the inputs of these instance types that this provider
	// created and no quota uses any more. What it cannot remove is returned as warnings.
	RemoveUnusedInputs(ctx context.Context, instanceTypes []string) []Problem
	// Delete deletes q and waits until it is gone; ErrStillExists when it is not gone in time
	// (something holds it). A store that fails a delete returns its reason in the error.
	Delete(ctx context.Context, q *Quota) error
	// Tags reads the tags q carries. A store that keeps them on the quota's object has read
	// them with it (q.Config.Config.Tags, which Get always fills) and returns those; one that
	// keeps them apart (the SageMaker API, where Get leaves them nil) reads them, a request per
	// quota, so callers ask only for a quota whose state holds tags, or on import.
	Tags(ctx context.Context, q *Quota) (map[string]string, error)
	// Ref names the object that holds the team's quota, named name, in messages and claims.
	Ref(team, name string) ObjectRef
}

// QuotaList lists the store's team quotas.
type QuotaList interface {
	// List hands the quotas f selects to page, one page of the store's list at a time, in the
	// store's order, each as Get reads it (Config.Config.Team set even when ConfigErr is) with
	// NotRepresented set. An error from page ends the listing and is returned.
	List(ctx context.Context, f quota.ListFilter, page func([]*Quota) error) error
}

// NamespaceList lists the store's team namespaces.
type NamespaceList interface {
	// List hands the namespaces of the teams whose name starts with teamPrefix to page, one page
	// of the store's list at a time, each as Get reads it with Team and NotRepresented set. An
	// error from page ends the listing and is returned.
	List(ctx context.Context, teamPrefix string, page func([]*TeamNamespace) error) error
}

// PriorityClassList lists the store's priority classes (a backend with PriorityClasses).
type PriorityClassList interface {
	// List returns every priority class the store holds, as Get reads it, in the store's order.
	List(ctx context.Context) ([]*StoredPriorityClass, error)
}

// Quota is a team's quota as stored.
type Quota struct {
	Record
	// Config is the configuration read back, or ConfigErr why it could not be.
	Config    quota.ResolvedConfig
	ConfigErr error
	// Named reports whether the store records the quota's name (one this provider wrote).
	Named bool
	// Usage is what the team's workloads hold, when the same read carries it (zero otherwise).
	Usage quota.Usage
	// NotRepresented is what an apply of Config would change in the stored quota beyond taking
	// it over, in the store's words: what the resource's attributes cannot hold. Set by List.
	NotRepresented []string
	// Native is the backend's own object, for its own use.
	Native any
}

// PriorityClasses reads and writes the cluster's priority classes, one object each.
type PriorityClasses interface {
	// Get reads a class; nil when it does not exist.
	Get(ctx context.Context, class string) (*StoredPriorityClass, error)
	// Create creates a class with the tags and the owner identity: one that exists fails with
	// ErrExists.
	Create(ctx context.Context, c quota.PriorityClass, tags map[string]string, owner string) error
	// Put writes a class with the tags and the owner identity, whether or not it exists.
	Put(ctx context.Context, c quota.PriorityClass, tags map[string]string, owner string) error
	// Adopt removes the mark an interrupted run left on a class.
	Adopt(ctx context.Context, c *StoredPriorityClass) error
	// Delete deletes a class and waits until it is gone.
	Delete(ctx context.Context, c *StoredPriorityClass) error
	// Drift lists the recorded metadata of the stored class that differs from what owner writes.
	Drift(c *StoredPriorityClass, class, owner string) []string
	// Ref names the object that holds a class, in messages and claims.
	Ref(class string) ObjectRef
	// OwnedElsewhere words why a create of class stops at existing, which another manager
	// owns; importCommand is the command that takes it over.
	OwnedElsewhere(existing *StoredPriorityClass, class, importCommand string) Problem
}

// SchedulerConfigs stores the cluster's scheduling policy as one object, where the store holds
// it so (the SageMaker API's cluster scheduler config, one per cluster). A backend offers
// either this or PriorityClasses (one object per class).
type SchedulerConfigs interface {
	// Get reads the cluster's config; nil when it has none.
	Get(ctx context.Context) (*SchedulerConfig, error)
	// Put creates the config (over == nil) or updates it over the version last seen
	// (ErrChanged when someone changed it since), and waits until the store has applied it;
	// p.Tags replace over.Tags. written is returned once the config exists, even when Put fails.
	Put(ctx context.Context, p quota.SchedulerPolicy, over *Record) (written Record, err error)
	// Delete deletes the config and waits until it is gone.
	Delete(ctx context.Context, c *SchedulerConfig) error
	// Tags reads the tags c carries (Get leaves c.Policy.Tags nil): a request of its own, so
	// callers ask only for a config whose state holds tags, or on import.
	Tags(ctx context.Context, c *SchedulerConfig) (map[string]string, error)
}

// SchedulerConfig is a cluster's scheduler config as stored.
type SchedulerConfig struct {
	Record
	Policy quota.SchedulerPolicy
}

// StoredPriorityClass is a priority class as stored.
type StoredPriorityClass struct {
	Record
	Weight int64
	// Tags are the tags the class carries; nil when none.
	Tags   map[string]string
	Native any
}

// Capacity reads what the capacity data source sums.
type Capacity interface {
	// Nodes are the cluster's Nodes of an instance type.
	Nodes(ctx context.Context, instanceType string) ([]capacity.Node, error)
	// Allocations are what every team's quota gives the instance type, read in one request
	// (paged where the store pages).
	Allocations(ctx context.Context, instanceType string) ([]capacity.Allocation, error)
}

// KueueState reads the cluster's Kueue objects and Workloads.
type KueueState interface {
	// Snapshot lists them, each kind once, every request sent once. A snapshot that cannot be
	// made because the store refused reads it needs fails with a *ReadsRefused.
	Snapshot(ctx context.Context) (KueueSnapshot, error)
	// WithQuota is c as the store holds it once the team's quota is written as the ClusterQueue
	// next (nil: deleted), with whatever else the store writes with it.
	WithQuota(c admission.Cluster, team string, next *kueue.ClusterQueue) admission.Cluster
}

// KueueSnapshot is what the admission preview starts from.
type KueueSnapshot struct {
	Cluster admission.Cluster
	// Version names the Kueue version modelled and how it was found, for a person.
	Version string
	// Refused, when set, are reads the store refused that the snapshot was made without.
	Refused *ReadsRefused
}

// ReadsRefused is reads a store refused, in the store's words.
type ReadsRefused struct {
	// Reads are the permissions refused, as the store names them ("list workloads.kueue.x-k8s.io").
	Reads []string
	// Grant says what grants them.
	Grant string
}

func (r *ReadsRefused) Error() string {
	return "the store refused " + strings.Join(r.Reads, ", ") + ". " + r.Grant
}

// TeamUsage reads what a team's workloads hold and wait for.
type TeamUsage interface {
	// Usage reads the team's usage; nil when the team has no quota.
	Usage(ctx context.Context, team string) (*quota.Usage, error)
}

// TeamNamespaces reads, writes and deletes the namespace of each team and the queue in it that
// feeds the team's quota.
type TeamNamespaces interface {
	// Get reads the team's namespace and, when it exists, its queue; nil when there is no namespace.
	Get(ctx context.Context, team string) (*TeamNamespace, error)
	// Claim creates the team's namespace holding only the owner identity, so that of two
	// creators only one succeeds: a namespace that exists already fails with ErrExists.
	Claim(ctx context.Context, team, owner string) error
	// WaitGone waits until the team's namespace, being deleted, is gone.
	WaitGone(ctx context.Context, team string) error
	// Adopt removes the mark an interrupted run left on ns (see Record.Unconfirmed).
	Adopt(ctx context.Context, ns *TeamNamespace) error
	// Put writes the namespace with the user's labels and annotations beside the provider's own
	// and the owner identity ("" records none), then its queue. current is the namespace as last
	// read (nil when there was none): a queue in it that cannot be changed into the one wanted is
	// deleted first. A failure is a RequestError naming the object it was writing, with OpDelete
	// when it was deleting that queue.
	Put(ctx context.Context, team string, labels, annotations map[string]string, owner string, current *TeamNamespace) error
	// Delete deletes the queue, then the namespace, waiting until each is gone; a failure is a
	// RequestError naming the object, ErrStillExists when it was not gone in time.
	Delete(ctx context.Context, team string) error
	// Work counts what still runs in the team's namespace: the Pods that have not finished and the
	// workloads. A failed list says which permission it needs.
	Work(ctx context.Context, team string) (pods, workloads int, err error)
	// Drift lists how ns and its queue differ from what owner writes, apart from the user's
	// labels and annotations (attributes show those).
	Drift(ns *TeamNamespace, team, owner string) []string
	// Imported are the labels and annotations an import of ns takes into the configuration.
	Imported(ns *TeamNamespace) (labels, annotations map[string]string)
}

// TeamNamespace is a team's namespace as stored.
type TeamNamespace struct {
	Record
	// Labels and Annotations are all the namespace carries, whoever set them.
	Labels, Annotations map[string]string
	// Queue is the namespace's queue; nil when it does not exist.
	Queue *TeamQueue
	// Team and NotRepresented (what an apply would change in the namespace or its queue beyond
	// taking them over, in the store's words) are set by List.
	Team           string
	NotRepresented []string
	// Native is the backend's own object, for its own use.
	Native any
}

// TeamQueue is the queue in a team's namespace.
type TeamQueue struct {
	Record
	// ClusterQueue names the team quota's queue that it feeds.
	ClusterQueue string
	// Native is the backend's own object, for its own use.
	Native any
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
