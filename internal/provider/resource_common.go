package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Helpers both resources share: ownership of a team's objects, private state, import by team,
// and diagnostics for quota problems.

// stateOf reads a resource's prior state into model M; ok is false when it cannot be read.
func stateOf[M any](ctx context.Context, s tfsdk.State, diags *diag.Diagnostics) (m M, ok bool) {
	diags.Append(getModel(ctx, s, &m)...)
	return m, !diags.HasError()
}

// updateModels reads an update's plan and prior state into model M; ok is false when either
// cannot be read.
func updateModels[M any](ctx context.Context, req resource.UpdateRequest, diags *diag.Diagnostics) (plan, prior M, ok bool) {
	diags.Append(getModel(ctx, req.Plan, &plan)...)
	diags.Append(getModel(ctx, req.State, &prior)...)
	return plan, prior, !diags.HasError()
}

// Private state keys.
const (
	// privateConflict holds an ownerConflict found by the last refresh: the objects now record
	// another owner, so planning an update is refused.
	privateConflict = "owner_conflict"
	// privateTakeover marks a resource imported by team: its next apply records this
	// resource's owner identity on the objects, replacing the one they record.
	privateTakeover = "takeover"
	// privateUsage holds what the team's workloads held at the last refresh (storedUsage), so
	// a plan can warn when it lowers a limit below it without another request.
	privateUsage = "usage"
	// privateUnnamed marks a quota whose stored object records no name (one this provider did not
	// write): its name in state is the team, and naming it differently is an update.
	privateUnnamed = "unnamed"
	// privateTerminating marks a quota that the last refresh found being deleted (something holds
	// it, Record.Holding): a plan that keeps the quota replaces it.
	privateTerminating = "terminating"
)

// privateGetter and privateSetter are the parts of the framework's private state used here.
type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// ownerConflict says which object records which other owner.
type ownerConflict struct {
	Object string `json:"object"`
	Owner  string `json:"owner"`
}

// newOwnerID is a fresh owner identity for a resource's objects.
func newOwnerID() string { return uuid.NewString() }

// recordConflict stores (or, with nil, clears) the ownership conflict of a refresh.
func recordConflict(ctx context.Context, p privateSetter, c *ownerConflict, diags *diag.Diagnostics) {
	var raw []byte
	if c != nil {
		raw, _ = json.Marshal(c)
	}
	diags.Append(p.SetKey(ctx, privateConflict, raw)...)
}

// refuseForeignOwner fails a plan whose refresh found the resource's objects owned by another
// resource: applying it would take them from that resource, which would take them back.
func refuseForeignOwner(ctx context.Context, p privateGetter, resourceKind string, diags *diag.Diagnostics) {
	refuseStoredConflict(ctx, p, path.Root("team"), "Team owned by another resource", resourceKind, "team",
		"If the other resource should manage it, remove this one from the configuration or "+
			"from state (terraform state rm <address>). If this one should, import it again to take it over "+
			"explicitly (terraform state rm <address>, then terraform import <address> <team>).", diags)
}

// refuseStoredConflict adds the error at attribute at when the last refresh recorded the
// objects owned by another resource; one names what they are, fix how to resolve it.
func refuseStoredConflict(ctx context.Context, p privateGetter, at path.Path, summary, resourceKind, one, fix string, diags *diag.Diagnostics) {
	c, d := storedConflict(ctx, p)
	diags.Append(d...)
	if c == nil {
		return
	}
	diags.AddAttributeError(at, summary, fmt.Sprintf(
		"%s is now managed by %s, not by this %s. Two resources managing one %s would undo each other's changes "+
			"on every apply. ", c.Object, c.Owner, resourceKind, one)+fix)
}

// storedConflict is the ownership conflict the last refresh recorded, or nil.
func storedConflict(ctx context.Context, p privateGetter) (*ownerConflict, diag.Diagnostics) {
	raw, d := p.GetKey(ctx, privateConflict)
	if len(raw) == 0 {
		return nil, d
	}
	var c ownerConflict
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, d
	}
	return &c, d
}

// isTakeover reports whether the resource was imported and has not been applied since.
func isTakeover(ctx context.Context, p privateGetter, diags *diag.Diagnostics) bool {
	raw, d := p.GetKey(ctx, privateTakeover)
	diags.Append(d...)
	return len(raw) > 0
}

// markTakeover sets (or clears) the takeover mark.
func markTakeover(ctx context.Context, p privateSetter, on bool, diags *diag.Diagnostics) {
	var raw []byte
	if on {
		raw = []byte(`true`)
	}
	diags.Append(p.SetKey(ctx, privateTakeover, raw)...)
}

// teamModel is the state of a resource that manages one team's objects.
type teamModel interface {
	// recordOwner sets the owner identity the objects record and the drift last found.
	recordOwner(owner string, drift types.List)
}

// saveTeamState stores m, recorded as owner's with drift, and the team identity.
func saveTeamState(ctx context.Context, state *tfsdk.State, identity *tfsdk.ResourceIdentity, m teamModel, team, owner string, drift types.List, diags *diag.Diagnostics) {
	m.recordOwner(owner, drift)
	diags.Append(state.Set(ctx, m)...)
	setTeamIdentity(ctx, identity, team, diags)
}

// ownerToRecord is the owner identity an update writes: the planned one, or a new one when the
// plan leaves it unknown (the first apply since an import, or of a state written before owner
// identities existed).
func ownerToRecord(planned types.String) string {
	if planned.IsUnknown() || planned.IsNull() {
		return newOwnerID()
	}
	return planned.ValueString()
}

// clearOwnershipMarks forgets the takeover and conflict marks once an apply has recorded this
// resource as the owner.
func clearOwnershipMarks(ctx context.Context, p privateSetter, diags *diag.Diagnostics) {
	markTakeover(ctx, p, false, diags)
	recordConflict(ctx, p, nil, diags)
}

// refuseExisting is the error, at team, of a create that found the team's object already there.
// resourceType names the resource in the import commands it suggests.
func refuseExisting(diags *diag.Diagnostics, resourceType, kind, name string, existing backend.Record, team string) {
	summary, detail := existingObjectError(resourceType, kind, name, existing, team)
	diags.AddAttributeError(path.Root("team"), summary, detail)
}

func existingObjectError(resourceType, kind, name string, existing backend.Record, team string) (string, string) {
	object := fmt.Sprintf("%s %q", kind, name)
	if existing.ID != "" {
		object += " (id " + existing.ID + ")"
	}
	if existing.Terminating {
		return kind + " is being deleted", fmt.Sprintf(
			"%s is being deleted and was not gone within the create timeout, so it cannot be created again yet. "+
				"%s. Wait for it to go, or raise timeouts.create, then apply again.", object, existing.Holding)
	}
	return kind + " already exists", fmt.Sprintf(
		"%s already exists and is managed by %s, so this resource will not take it over on create. "+
			"To manage it with this resource instead, import it, which takes it over explicitly:\n\n"+
			"  terraform import %s.<name> %s\n\n"+
			"or add an import block to the configuration:\n\n"+
			"  import {\n    to = %s.<name>\n    id = %q\n  }\n\n"+
			"then apply. Otherwise choose another team.",
		object, existing.Owner.Description, resourceType, team, resourceType, team)
}

// teamValidators check the team attribute of both resources.
var teamValidators = []validator.String{
	stringvalidator.LengthBetween(1, quota.MaxTeamLength),
	stringvalidator.RegexMatches(quota.TeamPattern, quota.TeamRule),
}

// ownedElsewhere refuses, at team, an update of the team's object o when another resource owns
// it, unless this apply takes it over after an import.
func ownedElsewhere(o backend.ObjectRef, owner backend.Ownership, priorOwnerID types.String, takeover bool, diags *diag.Diagnostics) bool {
	if takeover || owner.Owns(priorOwnerID.ValueString()) {
		return false
	}
	refuseOwned(diags, path.Root("team"), o, owner.Description)
	return true
}

// validImportTeam checks that an import ID is a team name.
func validImportTeam(team, example string, diags *diag.Diagnostics) bool {
	if quota.ValidTeam(team) {
		return true
	}
	diags.AddError("Invalid import ID", fmt.Sprintf(
		"The import ID is the team, which %s; got %q. Import by team, e.g. `terraform import %s ml-research`.",
		quota.TeamRule, team, example))
	return false
}

// importTeam validates an import ID, sets id and team, and marks the takeover. It returns the
// team.
func importTeam(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse, example string) string {
	team := importedName[teamIdentityModel](ctx, req, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !validImportTeam(team, example, &resp.Diagnostics) {
		return team
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), team)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("team"), team)...)
	setTeamIdentity(ctx, resp.Identity, team, &resp.Diagnostics)
	markTakeover(ctx, resp.Private, true, &resp.Diagnostics)
	return team
}

// teamIdentityModel is the resource identity of both team resources: the team, which names
// every object they manage.
type teamIdentityModel struct {
	Team types.String `tfsdk:"team"`
}

func (m teamIdentityModel) named() types.String { return m.Team }

// teamIdentitySchema declares the identity (Terraform 1.12+, OpenTofu with identity support).
func teamIdentitySchema(resp *resource.IdentitySchemaResponse) {
	var m teamIdentityModel
	resp.IdentitySchema = identityschema.Schema{Attributes: attributesOf(&m, []fieldSchema[identityschema.Attribute]{
		{&m.Team, identityschema.StringAttribute{
			RequiredForImport: true,
			Description:       "The team, e.g. `ml-research`: it names the team's objects (`hyperpod-ns-<team>`...).",
		}},
	})}
}

// setTeamIdentity records the identity; clients without identity support pass none.
func setTeamIdentity(ctx context.Context, identity *tfsdk.ResourceIdentity, team string, diags *diag.Diagnostics) {
	if identity == nil || team == "" {
		return
	}
	diags.Append(identity.Set(ctx, teamIdentityModel{Team: types.StringValue(team)})...)
}

// importedName is what an import names: the import ID, or the name in the identity M of an
// import block that gives an identity instead.
func importedName[M interface{ named() types.String }](ctx context.Context, req resource.ImportStateRequest, diags *diag.Diagnostics) string {
	if req.ID != "" || req.Identity == nil {
		return req.ID
	}
	var m M
	diags.Append(req.Identity.Get(ctx, &m)...)
	return m.named().ValueString()
}

// addProblems turns quota problems into attribute diagnostics.
func addProblems(diags *diag.Diagnostics, problems []quota.Problem) {
	for _, p := range problems {
		at := path.Empty()
		if p.Entry >= 0 {
			at = path.Root("resources").AtListIndex(p.Entry)
		}
		for _, step := range p.Path {
			if i, err := strconv.Atoi(step); err == nil {
				at = at.AtListIndex(i)
			} else if len(at.Steps()) == 0 {
				at = path.Root(step)
			} else {
				at = at.AtName(step)
			}
		}
		if len(at.Steps()) == 0 {
			diags.AddError(p.Summary, p.Detail)
			continue
		}
		// The path is repeated in the text: Terraform does not print it for nested list attributes.
		diags.AddAttributeError(at, p.Summary, at.String()+": "+p.Detail)
	}
}

// Plan modifiers of string attributes: keptWhileUnknown plans the state's value where the
// value is computed and does not change once set; replacedOnChange replaces the resource.
var (
	keptWhileUnknown = []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	replacedOnChange = []planmodifier.String{stringplanmodifier.RequiresReplace()}
)

// ownerIDAttribute is the owner identity a resource records on its objects.
func ownerIDAttribute(object, withTaskGovernance string) schema.StringAttribute {
	return schema.StringAttribute{
		Computed: true,
		Description: "Identity of this resource, recorded on the " + object + " as the annotation `" + quota.AnnotationOwner + "` " +
			"when it is created. Another resource, in this or any other state, that declares the same team is refused " +
			"instead of taking the objects over. Import takes them over explicitly: the first apply after an import " +
			"records a new identity." + withTaskGovernance,
		PlanModifiers: keptWhileUnknown,
	}
}

// apiHoldsNoOwner completes owner_id's description for an object the SageMaker API holds: the
// API records no owner, so the object's own id stands for it.
func apiHoldsNoOwner(object string) string {
	return " With `task_governance` the SageMaker API records no owner: it is the " + object + "'s id."
}

// driftAttribute lists, after a refresh, what differs in the cluster that the other attributes
// cannot show. It is planned empty, so a non-empty value plans an update that repairs it.
func driftAttribute(findings string) schema.ListAttribute {
	return schema.ListAttribute{
		ElementType: types.StringType, Computed: true,
		Description: "What the last refresh found changed in the cluster that the other attributes cannot show, one " +
			"readable line each: " + findings + ". Empty when the cluster matches; the plan shows the lines it repairs.",
	}
}

// warnNotRefreshed explains why a resource kept its prior state during a plan whose provider
// configuration is not known yet. The text is the same for every resource, so Terraform shows
// it once with a count.
func warnNotRefreshed(pd *providerData, diags *diag.Diagnostics) {
	diags.AddWarning("Resources not refreshed", fmt.Sprintf(
		"The hyperpod provider's %s depend on values known only after apply, so existing quotas and namespaces "+
			"were not read from the cluster during this plan: the plan compares the configuration with the last "+
			"known state, and changes made outside Terraform since then are not shown. Apply writes the full "+
			"configuration, which repairs them.", strings.Join(pd.pendingConfig, ", ")))
}

// noDrift is the drift attribute of a resource in sync with the cluster.
func noDrift() types.List { return types.ListValueMust(types.StringType, []attr.Value{}) }

func driftList(reasons []string) types.List {
	elems := make([]attr.Value, 0, len(reasons))
	for _, r := range reasons {
		elems = append(elems, types.StringValue(r))
	}
	return types.ListValueMust(types.StringType, elems)
}

// taggedStoreAttributes are the attributes of tagsModel and storeRecordModel, for a SageMaker
// object of the given kind; tagsDetail ends the description of tags (where they go on a cluster
// that runs its own Kueue, when it is not obvious).
func taggedStoreAttributes(tags *tagsModel, rec *storeRecordModel, kind, tagsDetail string) []fieldSchema[schema.Attribute] {
	return []fieldSchema[schema.Attribute]{
		{&tags.Tags, tagsAttribute(kind + tagsDetail)},
		{&tags.TagsAll, tagsAllAttribute(kind)},
		{&rec.ARN, schema.StringAttribute{Computed: true, Description: "ARN of the SageMaker " + kind + " on a cluster " +
			"managed through `task_governance`; null otherwise."}},
		{&rec.Version, schema.Int64Attribute{Computed: true, Description: "Version of the SageMaker " + kind + " as last " +
			"read or written; an update sends it as `TargetVersion`, so a change made outside Terraform since the last " +
			"refresh is refused instead of overwritten. Null on a cluster that runs its own Kueue."}},
		{&rec.Status, schema.StringAttribute{Computed: true, Description: "Status of the SageMaker " + kind + "'s last " +
			"change (`Created`, `Updated`, or a failed status such as `CreateFailed`, whose reason `drift` shows). Null on " +
			"a cluster that runs its own Kueue."}},
	}
}

// storeIDAttribute is the id a store that assigns ids gives the object; form, when not empty, says
// what the id looks like.
func storeIDAttribute(kind, form string) schema.StringAttribute {
	return schema.StringAttribute{Computed: true, Description: "The SageMaker " + kind + "'s id" + form + " on a cluster " +
		"managed through `task_governance`; null on a cluster that runs its own Kueue."}
}

// describedTimeoutsBlock is a resource's timeouts block, described as a whole; opts describe
// each operation with its default.
func describedTimeoutsBlock(ctx context.Context, opts timeouts.Opts) schema.Block {
	block := timeouts.Block(ctx, opts)
	if b, ok := block.(schema.SingleNestedBlock); ok {
		b.Description = "Timeouts of create, update and delete."
		block = b
	}
	return block
}

// waitingTimeoutsBlock is the timeouts block of a resource whose writes, with task_governance,
// wait until SageMaker has applied them: creating and deleting end the create and delete
// descriptions; an update's wait is the same for every such resource.
func waitingTimeoutsBlock(ctx context.Context, def time.Duration, creating, deleting string) schema.Block {
	d := durationText(def)
	return describedTimeoutsBlock(ctx, timeouts.Opts{
		Create:            true,
		Update:            true,
		Delete:            true,
		CreateDescription: fmt.Sprintf("How long creating may take, a Go duration such as `\"20m\"` (default `%s`): %s", d, creating),
		UpdateDescription: fmt.Sprintf("How long an in-place update may take (default `%s`), including, with "+
			"`task_governance`, the wait until SageMaker has applied it.", d),
		DeleteDescription: fmt.Sprintf("How long deleting may take (default `%s`)%s", d, deleting),
	})
}

// timeoutGetter reads one operation's timeout from a timeouts block, def where the block sets none.
type timeoutGetter func(ctx context.Context, def time.Duration) (time.Duration, diag.Diagnostics)

// begin starts a write: the cluster ready for what, and ctx bounded by the timeout that get
// reads from the resource's timeouts block (def where it sets none). ok is false, with the
// problem in diags, when diags already holds one (the plan or state could not be read), the
// cluster is not ready or the block cannot be read. cancel is always safe to defer.
func (pd *providerData) begin(ctx context.Context, what string, get timeoutGetter, def time.Duration,
	diags *diag.Diagnostics) (bounded context.Context, cancel context.CancelFunc, timeout time.Duration, ok bool) {
	if diags.HasError() || !pd.ready(what, diags) {
		return ctx, func() {}, 0, false
	}
	timeout, d := get(ctx, def)
	diags.Append(d...)
	if d.HasError() {
		return ctx, func() {}, timeout, false
	}
	bounded, cancel = context.WithTimeout(ctx, timeout)
	return bounded, cancel, timeout, true
}

// durationText writes a timeout default as users write it: "10m", not "10m0s".
func durationText(d time.Duration) string {
	return strings.TrimSuffix(d.String(), "0s")
}
