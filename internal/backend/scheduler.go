package backend

import (
	"context"
	"fmt"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// SchedulerPolicy stores the cluster's scheduling policy, the hyperpod_cluster_scheduler_config
// resource: its priority classes and, where the store holds them, its fair-sharing switches. A
// store holds it as one object per class (Kubernetes: a WorkloadPriorityClass each) or as one
// object for the cluster (the SageMaker API's cluster scheduler config); the resource does not
// know which.
type SchedulerPolicy interface {
	// Create writes p (p.Tags: the tags it carries) as a new policy recording owner, refusing
	// what exists already and is not an interrupted run's. On failure, written holds what the
	// create wrote or may have (written.Stored nil: nothing).
	Create(ctx context.Context, p quota.SchedulerPolicy, owner string) (written PolicyWritten, err error)
	// Read reads what the state s holds; nil when the store no longer holds it.
	Read(ctx context.Context, s PolicyState) (*StoredPolicy, error)
	// Update writes p over the state s (over its version where the store versions it:
	// ErrChanged when it moved), recording owner; it checks every object before writing any,
	// so a refused update changes nothing.
	Update(ctx context.Context, p quota.SchedulerPolicy, owner string, s PolicyState) (PolicyWritten, error)
	// Delete deletes what the state s holds and waits until it is gone; a failure, or a delete
	// not done within timeout, is worded by the store. written.Left is what it left in place.
	Delete(ctx context.Context, s PolicyState, timeout time.Duration) (written PolicyWritten, err error)
	// Import reads the policy an import of id takes over; an id the store cannot import, or a
	// policy it does not hold, is a Problem.
	Import(ctx context.Context, id string) (*StoredPolicy, error)
	// List is the store's policy for `terraform query`, as an import and the read after it save
	// it (its tags read only withTags), with NotRepresented and Description set; nil when the
	// store holds none.
	List(ctx context.Context, withTags bool) (*StoredPolicy, error)
}

// PolicyState is what a resource's state holds of a policy.
type PolicyState struct {
	// Record is the store's record (ID, ARN, Version, and Tags: tags_all as last saved, nil when
	// none is known), ID "" where the state holds none.
	Record
	Policy quota.SchedulerPolicy
	// Owner is the owner identity the state records; Takeover reports an import not yet applied,
	// which takes the objects over.
	Owner    string
	Takeover bool
	// ReadTags: a read reads the stored tags where that costs a request of its own.
	ReadTags bool
}

// StoredPolicy is the cluster's scheduling policy as stored.
type StoredPolicy struct {
	// Record is the policy's record where the store holds it as one object (ID "" otherwise);
	// Owner.Intrinsic says the store records no owner, so an import takes nothing over.
	Record
	// Policy is what the store holds; Policy.Tags the tags it carries (nil: not read).
	Policy quota.SchedulerPolicy
	// OwnerID is the owner identity a state records for it ("" after an import that takes it over).
	OwnerID string
	// Drift is what differs in the store that the attributes cannot show.
	Drift []string
	// Conflict is an object of the policy that another manager owns, nil when none.
	Conflict *Record
	// Description names the stored objects for a person, and NotRepresented is what the resource
	// cannot hold of them: set by List.
	Description    string
	NotRepresented []string
}

// PolicyWritten is what a write of a policy did.
type PolicyWritten struct {
	// Stored is the policy as the write left it; nil when nothing exists.
	Stored *StoredPolicy
	// Objects are the objects a create wrote (or may have), in order, for its hand-over; Touched
	// are those and the one whose write failed, for its clean-up after Terraform went away.
	Objects, Touched []ObjectRef
	// NotWritten names, when a create of several objects stopped halfway, what it did not write.
	NotWritten []string
	// Adopted are objects an interrupted run left (Record.Unconfirmed: its mark) that the write
	// took over; Left are objects another manager owns that a delete left in place.
	Adopted, Left []Record
}

// ClassError is a failed write of one of a policy's priority classes: Class is its index in
// the policy.
type ClassError struct {
	Class int
	Err   error
}

func (e *ClassError) Error() string { return e.Err.Error() }
func (e *ClassError) Unwrap() error { return e.Err }

// OwnedError refuses a write over an object another manager owns. Managed reports that the
// resource's state holds it (the write would take it from that manager).
type OwnedError struct {
	Record
	Managed bool
}

func (e *OwnedError) Error() string {
	return fmt.Sprintf("%s %q is managed by %s", e.Kind, e.Name, e.Owner.Description)
}

// SchedulerPolicyResource is the resource type a store's words name in the import commands
// they suggest.
const SchedulerPolicyResource = "hyperpod_cluster_scheduler_config"

// PolicyImportCommand is the command that imports the policy object id.
func PolicyImportCommand(id string) string {
	return fmt.Sprintf("terraform import %s.<name> %s", SchedulerPolicyResource, id)
}
