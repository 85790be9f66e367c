package backend

import (
	"context"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// TeamQuotas reads, writes and deletes the one quota of each team: its lifecycle.
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
	// Delete deletes q and waits until it is gone; ErrStillExists when it is not gone in time
	// (something holds it). A store that fails a delete returns its reason in the error.
	Delete(ctx context.Context, q *Quota) error
	// Ref names the object that holds the team's quota, named name, in messages and claims.
	Ref(team, name string) ObjectRef
}

// QuotaDetails reads and tidies what a team's quota carries or relies on besides the content
// TeamQuotas writes: its tags, the inputs it relies on, and the drift its attributes cannot show.
type QuotaDetails interface {
	// Tags reads the tags q carries. A store that keeps them on the quota's object has read
	// them with it (q.Config.Config.Tags, which Get always fills) and returns those; one that
	// keeps them apart (the SageMaker API, where Get leaves them nil) reads them, a request per
	// quota, so callers ask only for a quota whose state holds tags, or on import.
	Tags(ctx context.Context, q *Quota) (map[string]string, error)
	// Drift lists what differs in the store that the configuration's attributes cannot show,
	// comparing q with rc written by owner when compare is set, and the inputs q relies on.
	Drift(ctx context.Context, q *Quota, rc quota.ResolvedConfig, owner string, compare bool) ([]string, error)
	// RemoveUnusedInputs removes the inputs of these instance types that this provider
	// created and no quota uses any more. What it cannot remove is returned as warnings.
	RemoveUnusedInputs(ctx context.Context, instanceTypes []string) []Problem
}

// QuotaList lists the store's team quotas.
type QuotaList interface {
	// List hands the quotas f selects to page, one page of the store's list at a time, in the
	// store's order, each as Get reads it (Config.Config.Team set even when ConfigErr is) with
	// NotRepresented set. An error from page ends the listing and is returned.
	List(ctx context.Context, f quota.ListFilter, page func([]*Quota) error) error
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
	// Native is the backend's own object, for its own use: a backend handed a record of another
	// store's returns an error.
	Native any
}
