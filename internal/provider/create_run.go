package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/rpcctx"
)

// A create writes several objects one after the other. When it stops halfway, two things must
// hold: nothing it wrote is left in the cluster without state (the next apply would find the
// objects and refuse them as another owner's), and the state claims nothing that does not exist.
//
//   - Terraform is still there (an error, a timeout): the create saves what it wrote to the
//     state and fails, so Terraform marks the resource tainted; the next plan refreshes it from
//     the cluster and replaces it.
//   - Terraform went away (killed, its connection lost): the RPC context is cancelled and nobody
//     will store a state, so the create deletes what it wrote, if it still carries this create's
//     owner identity.

// A createRun is one Create: it holds what every create needs besides the objects it writes, so
// that a resource's Create states only those, in order:
//
//	run := r.data.startCreate(ctx, kind, "create a ...", plan.Timeouts.Create, defaultTimeout, &resp.Diagnostics)
//	                                 // (run, team := r.data.startTeamCreate(ctx, req, &plan, ...) for a team resource)
//	if run == nil { return }
//	defer run.end()
//	run.saveTainted = ...            // the state to save when the create stops halfway (savesTeamState for a team resource)
//	if run.claimStopped(r.claim(run.ctx, ...), claimed) { return }
//	... write; on failure: if !run.undoIfGone(...) { run.partlyCreated(...) }
//	... save the state; run.handOver(claimed)
type createRun struct {
	// rpcCtx is the RPC's own context: cancelled when Terraform goes away, which nothing else
	// tells apart from the timeout.
	rpcCtx context.Context
	// ctx is rpcCtx bounded by the create timeout: the context of every request the create makes.
	ctx    context.Context
	cancel context.CancelFunc
	data   *providerData
	// resourceKind names the resource type in diagnostics, e.g. hyperpod_compute_quota.
	resourceKind string
	// owner is the fresh owner identity the create records on everything it writes.
	owner string
	diags *diag.Diagnostics
	// saveTainted saves the state of a create that stopped halfway: with the error the create
	// returns, Terraform marks the resource tainted.
	saveTainted func()
	// saveState saves the state with the drift given (tainted when the create also reports an
	// error).
	saveState func(drift types.List)
}

// startCreate begins a create as begin does, nil when it cannot start. The caller defers end.
func (pd *providerData) startCreate(rpcCtx context.Context, resourceKind, what string, get timeoutGetter, def time.Duration,
	diags *diag.Diagnostics) *createRun {
	ctx, cancel, _, ok := pd.begin(rpcCtx, what, get, def, diags)
	if !ok {
		return nil
	}
	return &createRun{rpcCtx: rpcCtx, ctx: ctx, cancel: cancel, data: pd, resourceKind: resourceKind, owner: newOwnerID(), diags: diags}
}

// createdTeamModel is the plan of a team resource's create.
type createdTeamModel interface {
	teamModel
	// plannedTeam is the team the plan names; createTimeout reads its timeouts block's create
	// timeout.
	plannedTeam() string
	createTimeout() timeoutGetter
}

// startTeamCreate begins the create of a team resource as startCreate does, with req's plan read
// into m, and returns the team it names; the run is nil when the create cannot start. The caller
// defers end.
func (pd *providerData) startTeamCreate(ctx context.Context, req resource.CreateRequest, m createdTeamModel, resourceKind, what string,
	def time.Duration, diags *diag.Diagnostics) (*createRun, string) {
	diags.Append(req.Plan.Get(ctx, m)...)
	return pd.startCreate(ctx, resourceKind, what, m.createTimeout(), def, diags), m.plannedTeam()
}

// end releases the timeout and, when Terraform went away, marks what this process's creates
// handed to it (see finishedCreates).
func (c *createRun) end() {
	c.cancel()
	c.data.finished.markIfTerraformGone(c.rpcCtx, c.data.backend.Claims)
}

// claimStopped finishes a create whose claim did not succeed and reports whether it must stop:
// after Terraform went away it deletes what the POST may have made; an unknown outcome is
// reported and saved tainted; a refusal has said why already.
func (c *createRun) claimStopped(result claimResult, claimed backend.ObjectRef) bool {
	switch {
	case result == claimOK:
		return false
	case c.undoIfGone(claimed):
		// The POST may have reached the server before the context ended.
	case result == claimMaybe:
		createOutcomeUnknown(c.diags, c.resourceKind, claimed)
		c.saveTainted()
	}
	return true
}

// undoIfGone reports whether Terraform went away, after deleting objs (what the create wrote or
// may have written), each only while it carries this create's owner.
func (c *createRun) undoIfGone(objs ...backend.ObjectRef) bool {
	if !terraformGone(c.rpcCtx) {
		return false
	}
	undoAbandonedCreate(c.rpcCtx, c.data.backend.Claims, c.owner, objs...)
	return true
}

// cleanUp runs f with a context that outlives the RPC's, for clean-up after Terraform went away.
func (c *createRun) cleanUp(f func(ctx context.Context)) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.rpcCtx), abandonedCleanupTimeout)
	defer cancel()
	f(ctx)
}

// partlyCreated reports a create that stopped after writing some objects and saves them tainted.
func (c *createRun) partlyCreated(written []backend.ObjectRef, notWritten []string) {
	partlyCreated(c.diags, c.resourceKind, written, notWritten)
	c.saveTainted()
}

// savesTeamState sets how the create of a team resource saves its state: m recorded as this
// create's, with the team identity, and claimed handed over. A create that stopped halfway saves
// a drift that says so and that the next refresh reads refreshed (what the create wrote).
func (c *createRun) savesTeamState(resp *resource.CreateResponse, m teamModel, team string, claimed backend.ObjectRef, refreshed string) {
	c.saveState = func(drift types.List) {
		saveTeamState(c.ctx, &resp.State, resp.Identity, m, team, c.owner, drift, &resp.Diagnostics)
		c.handOver(claimed)
	}
	c.saveTainted = func() {
		c.saveState(driftList([]string{"the create stopped before it finished: the next refresh reads " + refreshed}))
	}
}

// handOver records claimed objects whose create returned a state.
func (c *createRun) handOver(objs ...backend.ObjectRef) {
	c.data.finished.add(c.owner, objs...)
}

// claimResult is how a claim ended: the object is this resource's, it is not, or nobody knows.
type claimResult int

const (
	claimOK claimResult = iota
	claimFailed
	claimMaybe // the create's answer does not say whether the object was created
)

// failedClaim is how a claim whose POST returned err ended: cut off mid-request (an interrupt,
// the timeout), the POST may have been handled.
func failedClaim(ctx context.Context, err error) claimResult {
	if errors.Is(err, backend.ErrOutcomeUnknown) || ctx.Err() != nil {
		return claimMaybe
	}
	return claimFailed
}

// abandonedCleanupTimeout bounds the clean-up after Terraform went away.
const abandonedCleanupTimeout = 30 * time.Second

// terraformGone reports whether the RPC's own context was cancelled without Terraform asking the
// provider to stop: Terraform (or its connection to the provider) went away while the create
// ran, as opposed to the create's timeout ending or an interrupt, after which Terraform still
// saves the state the create returns.
func terraformGone(rpcCtx context.Context) bool {
	return errors.Is(rpcCtx.Err(), context.Canceled) && !rpcctx.StopRequested(rpcCtx)
}

// undoAbandonedCreate deletes the objects a create wrote after Terraform went away, each only
// while it still carries owner. Failures are logged: there is nobody to tell.
func undoAbandonedCreate(rpcCtx context.Context, claims backend.Claims, owner string, objs ...backend.ObjectRef) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(rpcCtx), abandonedCleanupTimeout)
	defer cancel()
	for i := len(objs) - 1; i >= 0; i-- {
		claims.Abandon(ctx, objs[i], owner)
	}
}

// partlyCreated is the error of a create that stopped after writing some objects; the state
// it saves holds them, and Terraform marks the resource tainted.
func partlyCreated(diags *diag.Diagnostics, resourceKind string, written []backend.ObjectRef, notWritten []string) {
	names := make([]string, len(written))
	for i, o := range written {
		names[i] = o.String()
	}
	diags.AddError(fmt.Sprintf("%s partly created", resourceKind), fmt.Sprintf(
		"The create stopped halfway (see the error above for why). Written: %s. Not written: %s.\n\n"+
			"What was written is saved in the state and the resource is marked tainted, so nothing is left in the cluster "+
			"without state. Fix the cause if there is one and run apply again: Terraform reads the objects and replaces "+
			"the resource, which deletes them and creates them again.",
		strings.Join(names, ", "), strings.Join(notWritten, ", ")))
}

// createOutcomeUnknown is the error of a create whose first object may or may not exist: the
// error above, as the backend worded it, says why. The state is saved (tainted) all the same, so
// that the object, if it exists, is not left without state.
func createOutcomeUnknown(diags *diag.Diagnostics, resourceKind string, o backend.ObjectRef) {
	diags.AddError(fmt.Sprintf("%s may have been created", resourceKind), fmt.Sprintf(
		"It is not known whether %s was created (see the error above for why). The resource is saved in the state, "+
			"marked tainted, so that the object is never left without state: the next plan reads it, drops the resource "+
			"from the state if the object does not exist, and replaces it if it does. Running apply again is safe.", o))
}

// finishedCreates remembers the objects this provider process's creates claimed (a team's quota,
// a Namespace, priority classes) and handed to Terraform in a state. If Terraform goes away
// before it saved that state (it is killed, and OpenTofu or a remote backend saves only every 20
// seconds or more), the objects exist with no state: the next apply's create would refuse them as
// another resource's. So when the provider sees Terraform go away it marks them
// (quota.AnnotationUnconfirmed), and a later create of the same object adopts a marked one.
type finishedCreates struct {
	mu     sync.Mutex
	claims []finishedClaim
	marked bool
}

type finishedClaim struct {
	backend.ObjectRef
	owner string
}

// add records a claimed object whose create returned a state.
func (f *finishedCreates) add(owner string, objs ...backend.ObjectRef) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range objs {
		f.claims = append(f.claims, finishedClaim{o, owner})
	}
}

// markIfTerraformGone marks every recorded object, once, when rpcCtx says Terraform went away.
// Failures are logged: there is nobody to tell.
func (f *finishedCreates) markIfTerraformGone(rpcCtx context.Context, claims backend.Claims) {
	if !terraformGone(rpcCtx) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.marked {
		return
	}
	f.marked = true
	ctx, cancel := context.WithTimeout(context.WithoutCancel(rpcCtx), abandonedCleanupTimeout)
	defer cancel()
	value := "Terraform went away at " + time.Now().UTC().Format(time.RFC3339) + " before it could have saved this object's state"
	for _, c := range f.claims {
		claims.MarkUnconfirmed(ctx, c.ObjectRef, c.owner, value)
	}
}

// adoptUnconfirmed takes over an object an interrupted run created and marked (mark): it removes
// the mark with unmark (the caller's write then records the new owner) and warns.
func adoptUnconfirmed(o backend.ObjectRef, mark string, unmark func() error, diags *diag.Diagnostics) bool {
	if err := unmark(); err != nil {
		storeError(err).addTo(diags)
		return false
	}
	warnAdopted(diags, o, mark)
	return true
}

// warnAdopted warns that o, which an interrupted run created and marked (mark), was taken over.
func warnAdopted(diags *diag.Diagnostics, o backend.ObjectRef, mark string) {
	diags.AddWarning(o.Kind+" adopted from an interrupted run", fmt.Sprintf(
		"%s was created by an earlier run that was killed before it could save its state (%s). This resource has "+
			"taken it over and records its own owner identity on it.", o, mark))
}

// notCreated adds to each error of diags that the create wrote nothing: the errors of a read
// the create made before writing, which alone would not say so.
func notCreated(diags diag.Diagnostics, o backend.ObjectRef) diag.Diagnostics {
	out := make(diag.Diagnostics, 0, len(diags))
	for _, d := range diags {
		if d.Severity() == diag.SeverityError {
			d = diag.NewErrorDiagnostic(d.Summary(), fmt.Sprintf("%s %s was not created.", d.Detail(), o))
		}
		out = append(out, d)
	}
	return out
}
