package provider

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

var (
	_ resource.ResourceWithConfigure   = (*computeQuotaResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*computeQuotaResource)(nil)
	_ resource.ResourceWithImportState = (*computeQuotaResource)(nil)
)

// NewComputeQuotaResource returns the hyperpod_compute_quota resource.
func NewComputeQuotaResource() resource.Resource {
	return &computeQuotaResource{}
}

type computeQuotaResource struct {
	data *providerData
}

const (
	defaultQuotaTimeout = 10 * time.Minute
	deletePoll          = 500 * time.Millisecond
	// outOfSync is written to cluster_queue_name in state when the cluster holds something the
	// attributes cannot express (an extra resource group, a foreign label value, a missing
	// flavor): the plan derives the real name from team, so the difference plans an update that
	// rewrites the queue and its flavors.
	outOfSync = "(out of sync with the cluster)"
)

var (
	teamValidators = []validator.String{
		stringvalidator.LengthBetween(1, quota.MaxTeamLength),
		stringvalidator.RegexMatches(quota.TeamPattern,
			"must be lower-case letters, digits and '-', starting and ending with a letter or digit (the AWS TeamName pattern)"),
	}
	quotaNameValidators = []validator.String{
		stringvalidator.RegexMatches(quota.NamePattern,
			"must be 1-63 letters, digits and '-', starting and ending with a letter or digit (the AWS Name pattern)"),
	}
)

func (r *computeQuotaResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_compute_quota"
}

var partitionAttrTypes = map[string]attr.Type{"type": types.StringType, "count": types.Int64Type}

var absoluteLimitAttrTypes = map[string]attr.Type{
	"instance_type": types.StringType, "accelerators": types.Int64Type, "vcpu": types.Float64Type, "memory_in_gib": types.Float64Type,
}

var resourceEntryAttrTypes = map[string]attr.Type{
	"instance_type": types.StringType, "count": types.Int64Type, "accelerators": types.Int64Type, "vcpu": types.Float64Type,
	"memory_in_gib": types.Float64Type, "efa": types.Int64Type,
	"accelerator_partition": types.ObjectType{AttrTypes: partitionAttrTypes},
}

var resourceSharingAttrTypes = map[string]attr.Type{
	"strategy": types.StringType, "borrow_limit": types.Int64Type,
	"absolute_borrow_limits": types.ListType{ElemType: types.ObjectType{AttrTypes: absoluteLimitAttrTypes}},
}

func (r *computeQuotaResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A HyperPod task-governance compute quota for one team, written to the cluster as the Kueue " +
			"ClusterQueue `hyperpod-ns-<team>-clusterqueue` (plus a ResourceFlavor per instance type when missing). " +
			"Unset `accelerators`, `vcpu`, `memory_in_gib` and `efa` of each entry follow HyperPod's ratio rule and are " +
			"computed during plan, exactly, so the plan shows the numbers that will be applied. Planning needs no cluster access.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true, Description: "The team, which identifies the quota (one ClusterQueue per team).",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				Required:    true,
				Description: "Name of the compute quota (AWS Name pattern, 1-63 characters). Changing it replaces the quota.",
				Validators:  quotaNameValidators,
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIf(
					func(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
						// A queue imported from another tool has no name yet: naming it is an update.
						resp.RequiresReplace = req.StateValue.ValueString() != ""
					}, "Replaces the quota when the name changes.", "Replaces the quota when the name changes.")},
			},
			"description": schema.StringAttribute{
				Optional: true, Description: "Free text, up to 1024 characters. Stored as an annotation on the ClusterQueue.",
				Validators: []validator.String{stringvalidator.LengthBetween(1, quota.MaxDescriptionLength)},
			},
			"team": schema.StringAttribute{
				Required:      true,
				Description:   "Team the quota belongs to (AWS TeamName pattern, at most 40 characters). Jobs of the namespace `hyperpod-ns-<team>` use it. Changing it replaces the quota.",
				Validators:    teamValidators,
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"activation_state": schema.StringAttribute{
				Optional: true, Computed: true,
				Description: "`Enabled` (default) admits new jobs; `Disabled` holds them (ClusterQueue `stopPolicy: Hold`).",
				Validators:  []validator.String{stringvalidator.OneOf(quota.ActivationEnabled, quota.ActivationDisabled)},
			},
			"preempt_team_tasks": schema.StringAttribute{
				Optional: true, Computed: true,
				Description: "`LowerPriority` (default) lets a team's higher-priority jobs preempt its lower-priority ones; `Never` does not.",
				Validators:  []validator.String{stringvalidator.OneOf(quota.PreemptLowerPriority, quota.PreemptNever)},
			},
			"fair_share_weight": schema.Int64Attribute{
				Optional: true, Computed: true,
				Description: "Weight 0-100 (default 0) when teams compete for idle capacity; 0 is the lowest.",
				Validators:  []validator.Int64{int64validator.Between(0, quota.MaxFairShareWeight)},
			},
			"cohort": schema.StringAttribute{
				Optional: true, Computed: true,
				Description: "Kueue cohort of teams that lend to and borrow from each other (default `" + quota.DefaultCohort + "`).",
			},
			"cluster_queue_name": schema.StringAttribute{
				Computed: true, Description: "Name of the ClusterQueue, `hyperpod-ns-<team>-clusterqueue`.",
			},
			"resource_sharing": schema.SingleNestedAttribute{
				Optional: true, Computed: true,
				Description: "How the team lends idle quota and borrows from the cohort.",
				Attributes: map[string]schema.Attribute{
					"strategy": schema.StringAttribute{
						Optional: true, Computed: true,
						Description: "`LendAndBorrow` (default): lends idle quota and borrows up to `borrow_limit`. `Lend`: lends, never borrows. `DontLend`: neither.",
						Validators:  []validator.String{stringvalidator.OneOf(quota.StrategyLendAndBorrow, quota.StrategyLend, quota.StrategyDontLend)},
					},
					"borrow_limit": schema.Int64Attribute{
						Optional: true, Computed: true,
						Description: "Percent of the nominal quota the team may borrow on top, 0-10000 (default 50 with `LendAndBorrow`; not allowed with the other strategies).",
						Validators:  []validator.Int64{int64validator.Between(0, quota.MaxBorrowLimit)},
					},
					"absolute_borrow_limits": schema.ListNestedAttribute{
						Optional:    true,
						Description: "Per instance type caps on borrowing that replace the percentage for the resources they set.",
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"instance_type": schema.StringAttribute{Required: true, Description: "An instance type of `resources`."},
							"accelerators":  schema.Int64Attribute{Optional: true, Description: "Accelerators the team may borrow."},
							"vcpu":          schema.Float64Attribute{Optional: true, Description: "vCPU the team may borrow."},
							"memory_in_gib": schema.Float64Attribute{Optional: true, Description: "Memory in GiB the team may borrow."},
						}},
					},
				},
			},
			"resources": schema.ListNestedAttribute{
				Required:    true,
				Description: "1-15 entries, one per instance type. Size each by `count`, `accelerators`, `accelerator_partition`, `vcpu` or `memory_in_gib`; the unset amounts follow the ratio of the first one set (count, accelerators, partition, vcpu, memory).",
				Validators:  []validator.List{listvalidator.SizeBetween(1, quota.MaxResources)},
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"instance_type": schema.StringAttribute{Required: true, Description: "Instance type, e.g. `ml.p5.48xlarge`; also the ResourceFlavor's name."},
					"count":         schema.Int64Attribute{Optional: true, Description: "Whole instances. Not with `accelerators` or `accelerator_partition`."},
					"accelerators": schema.Int64Attribute{Optional: true, Computed: true,
						Description: "Accelerator devices. Computed: `count` x the type's accelerators when sized by count, else 0."},
					"vcpu": schema.Float64Attribute{Optional: true, Computed: true,
						Description: "vCPU (at most 3 decimals). Computed: ratio x the type's vCPU, rounded down to 0.001."},
					"memory_in_gib": schema.Float64Attribute{Optional: true, Computed: true,
						Description: "Memory in GiB. Computed: ratio x the type's memory, rounded down to whole MiB."},
					"efa": schema.Int64Attribute{Optional: true, Computed: true,
						Description: "EFA interfaces. Computed: the ratio rounded up x the type's EFA interfaces."},
					"accelerator_partition": schema.SingleNestedAttribute{
						Optional:    true,
						Description: "GPU partitions instead of whole GPUs (NVIDIA MIG). Not with `count` or `accelerators`.",
						Attributes: map[string]schema.Attribute{
							"type":  schema.StringAttribute{Required: true, Description: "MIG profile the type offers, e.g. `mig-1g.10gb`."},
							"count": schema.Int64Attribute{Required: true, Description: "Number of partitions."},
						},
					},
				}},
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

func (r *computeQuotaResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = configuredData(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan validates the quota and computes every default from the configuration, so the plan
// shows concrete numbers. It needs no API call.
func (r *computeQuotaResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.data == nil {
		return
	}
	var cfgModel, plan computeQuotaModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfgModel)...)
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	cfg, diags := quotaConfigFromModel(ctx, cfgModel)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if cfg.IsUnknown("resources") {
		return // nothing to compute yet; the framework already plans the computed values as unknown
	}
	if problems := quota.Validate(r.data.catalog, cfg); len(problems) > 0 {
		addProblems(&resp.Diagnostics, problems)
		return
	}
	rc, problems := quota.Defaults(r.data.catalog, cfg)
	if len(problems) > 0 {
		addProblems(&resp.Diagnostics, problems)
		return
	}
	planned, diags := quotaModelFromResolved(ctx, rc)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	planned.Timeouts = plan.Timeouts
	if cfg.IsUnknown("team") {
		planned.Team, planned.ID, planned.ClusterQueueName = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
	}
	if cfg.IsUnknown("name") {
		planned.Name = types.StringUnknown()
	}
	if !cfgModel.Description.IsUnknown() {
		planned.Description = cfgModel.Description
	} else {
		planned.Description = types.StringUnknown()
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &planned)...)
}

func (r *computeQuotaResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan, config computeQuotaModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultQuotaTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	name := quota.ClusterQueueName(plan.Team.ValueString())
	var existing kueue.ClusterQueue
	found, err := r.data.kube.Get(ctx, kueue.ClusterQueues, "", name, &existing)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the ClusterQueue", fmt.Sprintf("Reading ClusterQueue %q failed: %s", name, err))
		return
	}
	if found && existing.Labels[quota.LabelManagedBy] != quota.ManagedByValue {
		resp.Diagnostics.AddAttributeError(path.Root("team"), "ClusterQueue already exists", fmt.Sprintf(
			"ClusterQueue %q already exists and is managed by %s, so this provider will not take it over on create. "+
				"To manage it with Terraform, import it:\n\n  terraform import <resource address> %s\n\n"+
				"or add an import block { to = <resource address>, id = %q }, then apply.",
			name, ownerOf(existing.Labels), plan.Team.ValueString(), plan.Team.ValueString()))
		return
	}
	if !r.write(ctx, config, &resp.Diagnostics) {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *computeQuotaResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, prior, config computeQuotaModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, defaultQuotaTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	if !r.write(ctx, config, &resp.Diagnostics) {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	r.removeUnusedFlavors(ctx, removedTypes(ctx, prior, plan), &resp.Diagnostics)
}

// write ensures the flavors and server-side applies the ClusterQueue. It resolves from the
// configuration (all known at apply time), not the plan, so the annotation records which
// attributes the user set and import can reproduce them; the values equal the plan's.
func (r *computeQuotaResource) write(ctx context.Context, config computeQuotaModel, diags *diag.Diagnostics) bool {
	cfg, d := quotaConfigFromModel(ctx, config)
	diags.Append(d...)
	if diags.HasError() {
		return false
	}
	rc, problems := quota.Defaults(r.data.catalog, cfg)
	if len(problems) > 0 {
		addProblems(diags, problems)
		return false
	}
	cq, err := quota.RenderClusterQueue(r.data.catalog, rc)
	if err != nil {
		diags.AddError("Cannot render the ClusterQueue", err.Error())
		return false
	}
	for _, e := range rc.Resources {
		if !r.ensureFlavor(ctx, e.Configured.InstanceType, diags) {
			return false
		}
	}
	if err := r.data.kube.Apply(ctx, kueue.ClusterQueues, quota.FieldManager, &cq, nil); err != nil {
		diags.AddError("Cannot apply the ClusterQueue", fmt.Sprintf("Server-side apply of ClusterQueue %q failed: %s", cq.Name, err))
		return false
	}
	tflog.Info(ctx, "applied ClusterQueue", map[string]any{"name": cq.Name})
	return true
}

// ensureFlavor creates the ResourceFlavor of an instance type when it is missing. A flavor that
// exists, whoever made it, is left alone.
func (r *computeQuotaResource) ensureFlavor(ctx context.Context, instanceType string, diags *diag.Diagnostics) bool {
	var rf kueue.ResourceFlavor
	found, err := r.data.kube.Get(ctx, kueue.ResourceFlavors, "", instanceType, &rf)
	if err != nil {
		diags.AddError("Cannot read the ResourceFlavor", fmt.Sprintf("Reading ResourceFlavor %q failed: %s", instanceType, err))
		return false
	}
	if found {
		return true
	}
	want := quota.RenderResourceFlavor(instanceType)
	if err := r.data.kube.Apply(ctx, kueue.ResourceFlavors, quota.FieldManager, &want, nil); err != nil {
		diags.AddError("Cannot create the ResourceFlavor", fmt.Sprintf("Creating ResourceFlavor %q failed: %s", instanceType, err))
		return false
	}
	tflog.Info(ctx, "created ResourceFlavor", map[string]any{"name": instanceType})
	return true
}

// removeUnusedFlavors deletes the flavors of the given types that this provider created and that
// no ClusterQueue uses any more. Failures are warnings: the quota itself is already correct.
func (r *computeQuotaResource) removeUnusedFlavors(ctx context.Context, instanceTypes []string, diags *diag.Diagnostics) {
	for _, t := range instanceTypes {
		used, err := r.data.kube.FlavorInUse(ctx, t)
		if err != nil {
			diags.AddWarning("ResourceFlavors not cleaned up", err.Error())
			return
		}
		if used {
			continue
		}
		var rf kueue.ResourceFlavor
		found, err := r.data.kube.Get(ctx, kueue.ResourceFlavors, "", t, &rf)
		if err != nil || !found || rf.Labels[quota.LabelManagedBy] != quota.ManagedByValue {
			continue
		}
		if err := r.data.kube.DeleteAndWait(ctx, kueue.ResourceFlavors, "", t, deletePoll); err != nil {
			diags.AddWarning("ResourceFlavor not deleted", fmt.Sprintf("ResourceFlavor %q is no longer used but could not be deleted: %s", t, err))
		}
	}
}

func (r *computeQuotaResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var prior computeQuotaModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	team := prior.Team.ValueString()
	if team == "" {
		team = prior.ID.ValueString()
	}
	name := quota.ClusterQueueName(team)
	var cq kueue.ClusterQueue
	found, err := r.data.kube.Get(ctx, kueue.ClusterQueues, "", name, &cq)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the ClusterQueue", fmt.Sprintf("Reading ClusterQueue %q failed: %s", name, err))
		return
	}
	if !found || cq.DeletionTimestamp != nil {
		tflog.Info(ctx, "ClusterQueue is gone; removing the quota from state", map[string]any{"name": name})
		resp.State.RemoveResource(ctx)
		return
	}
	_, rc, err := quota.FromClusterQueue(r.data.catalog, cq)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the ClusterQueue", err.Error())
		return
	}
	state, diags := quotaModelFromResolved(ctx, rc)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if want, err := quota.RenderClusterQueue(r.data.catalog, rc); err != nil ||
		!quota.SpecEqual(want.Spec, cq.Spec) || !quota.ManagedMetadataEqual(want.ObjectMeta, cq.ObjectMeta) {
		state.ClusterQueueName = types.StringValue(outOfSync)
	}
	// A flavor deleted out of band leaves the queue unable to admit anything: plan an update,
	// which creates it again. One GET per flavor, as for every object the quota relies on.
	for _, e := range rc.Resources {
		var rf kueue.ResourceFlavor
		found, err := r.data.kube.Get(ctx, kueue.ResourceFlavors, "", e.Configured.InstanceType, &rf)
		if err != nil {
			resp.Diagnostics.AddError("Cannot read the ResourceFlavor", fmt.Sprintf("Reading ResourceFlavor %q failed: %s", e.Configured.InstanceType, err))
			return
		}
		if !found {
			tflog.Info(ctx, "ResourceFlavor is missing; planning an update", map[string]any{"name": e.Configured.InstanceType})
			state.ClusterQueueName = types.StringValue(outOfSync)
		}
	}
	state.Timeouts = prior.Timeouts
	if state.Timeouts.IsNull() {
		state.Timeouts = timeouts.Value{Object: types.ObjectNull(timeoutsAttrTypes)}
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

var timeoutsAttrTypes = map[string]attr.Type{"create": types.StringType, "update": types.StringType, "delete": types.StringType}

func (r *computeQuotaResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state computeQuotaModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := state.Timeouts.Delete(ctx, defaultQuotaTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	name := quota.ClusterQueueName(state.Team.ValueString())
	if err := r.data.kube.DeleteAndWait(ctx, kueue.ClusterQueues, "", name, deletePoll); err != nil {
		detail := fmt.Sprintf("Deleting ClusterQueue %q failed: %s", name, err)
		if errors.Is(err, kube.ErrStillExists) {
			detail += ". Kueue keeps a ClusterQueue while admitted workloads still run in it: wait for them to finish " +
				"or delete them, or raise timeouts.delete, then destroy again."
		}
		resp.Diagnostics.AddError("ClusterQueue not deleted", detail)
		return
	}
	r.removeUnusedFlavors(ctx, stateTypes(ctx, state), &resp.Diagnostics)
}

func (r *computeQuotaResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	team := req.ID
	if len(team) > quota.MaxTeamLength || !quota.TeamPattern.MatchString(team) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf(
			"%q is not a team name. Import a compute quota by its team, e.g. `terraform import hyperpod_compute_quota.example ml-research`.", team))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), team)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("team"), team)...)
}

func ownerOf(labels map[string]string) string {
	if m := labels[quota.LabelManagedBy]; m != "" {
		return fmt.Sprintf("%q (label %s)", m, quota.LabelManagedBy)
	}
	return "another tool (it has no " + quota.LabelManagedBy + " label)"
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

func stateTypes(ctx context.Context, m computeQuotaModel) []string {
	var entries []quotaResourceModel
	if m.Resources.IsNull() || m.Resources.IsUnknown() {
		return nil
	}
	m.Resources.ElementsAs(ctx, &entries, false)
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.InstanceType.ValueString())
	}
	return out
}

func removedTypes(ctx context.Context, prior, plan computeQuotaModel) []string {
	keep := map[string]bool{}
	for _, t := range stateTypes(ctx, plan) {
		keep[t] = true
	}
	var out []string
	for _, t := range stateTypes(ctx, prior) {
		if !keep[t] {
			out = append(out, t)
		}
	}
	return out
}

// quotaConfigFromModel converts configuration (or plan) values to quota.Config, marking unknown
// values so validation and defaults skip them.
func quotaConfigFromModel(ctx context.Context, m computeQuotaModel) (quota.Config, diag.Diagnostics) {
	var diags diag.Diagnostics
	cfg := quota.Config{
		Name:            m.Name.ValueString(),
		Description:     m.Description.ValueString(),
		Team:            m.Team.ValueString(),
		FairShareWeight: m.FairShareWeight.ValueInt64(),
	}
	str := func(v types.String, key ...string) *string {
		if v.IsUnknown() {
			cfg.MarkUnknown(key...)
		}
		return v.ValueStringPointer()
	}
	for key, v := range map[string]types.String{"name": m.Name, "team": m.Team} {
		if v.IsUnknown() {
			cfg.MarkUnknown(key)
		}
	}
	if m.FairShareWeight.IsUnknown() {
		cfg.MarkUnknown("fair_share_weight")
	}
	cfg.ActivationState = str(m.ActivationState, "activation_state")
	cfg.PreemptTeamTasks = str(m.PreemptTeamTasks, "preempt_team_tasks")
	cfg.Cohort = str(m.Cohort, "cohort")

	switch {
	case m.ResourceSharing.IsUnknown():
		cfg.MarkUnknown("resource_sharing")
	case !m.ResourceSharing.IsNull():
		var rs resourceSharingModel
		diags.Append(m.ResourceSharing.As(ctx, &rs, basetypes.ObjectAsOptions{})...)
		cfg.Sharing.Strategy = str(rs.Strategy, "resource_sharing", "strategy")
		cfg.Sharing.BorrowLimit = int64Ptr(&cfg, rs.BorrowLimit, "resource_sharing", "borrow_limit")
		switch {
		case rs.AbsoluteBorrowLimits.IsUnknown():
			cfg.MarkUnknown("resource_sharing", "absolute_borrow_limits")
		case !rs.AbsoluteBorrowLimits.IsNull():
			var limits []absoluteBorrowLimitModel
			diags.Append(rs.AbsoluteBorrowLimits.ElementsAs(ctx, &limits, false)...)
			for i, l := range limits {
				k := []string{"resource_sharing", "absolute_borrow_limits", strconv.Itoa(i)}
				cfg.Sharing.AbsoluteBorrowLimits = append(cfg.Sharing.AbsoluteBorrowLimits, quota.AbsoluteBorrowLimit{
					InstanceType: derefStr(str(l.InstanceType, append(k, "instance_type")...)),
					Accelerators: int64Ptr(&cfg, l.Accelerators, append(k, "accelerators")...),
					VCPU:         ratPtr(&cfg, l.VCPU, append(k, "vcpu")...),
					MemoryGiB:    ratPtr(&cfg, l.MemoryInGiB, append(k, "memory_in_gib")...),
				})
			}
		}
	}

	if m.Resources.IsUnknown() {
		cfg.MarkUnknown("resources")
		return cfg, diags
	}
	var entries []quotaResourceModel
	diags.Append(m.Resources.ElementsAs(ctx, &entries, false)...)
	for i, e := range entries {
		k := []string{"resources", strconv.Itoa(i)}
		entry := quota.Entry{
			InstanceType: derefStr(str(e.InstanceType, append(k, "instance_type")...)),
			Count:        int64Ptr(&cfg, e.Count, append(k, "count")...),
			Accelerators: int64Ptr(&cfg, e.Accelerators, append(k, "accelerators")...),
			EFA:          int64Ptr(&cfg, e.EFA, append(k, "efa")...),
			VCPU:         ratPtr(&cfg, e.VCPU, append(k, "vcpu")...),
			MemoryGiB:    ratPtr(&cfg, e.MemoryInGiB, append(k, "memory_in_gib")...),
		}
		switch {
		case e.AcceleratorPartition.IsUnknown():
			cfg.MarkUnknown(append(k, "accelerator_partition")...)
		case !e.AcceleratorPartition.IsNull():
			var p acceleratorPartitionModel
			diags.Append(e.AcceleratorPartition.As(ctx, &p, basetypes.ObjectAsOptions{})...)
			if p.Type.IsUnknown() || p.Count.IsUnknown() {
				cfg.MarkUnknown(append(k, "accelerator_partition")...)
			}
			entry.Partition = &quota.Partition{Type: p.Type.ValueString(), Count: p.Count.ValueInt64()}
		}
		cfg.Resources = append(cfg.Resources, entry)
	}
	return cfg, diags
}

func derefStr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func int64Ptr(cfg *quota.Config, v types.Int64, key ...string) *int64 {
	if v.IsUnknown() {
		cfg.MarkUnknown(key...)
		return nil
	}
	return v.ValueInt64Pointer()
}

func ratPtr(cfg *quota.Config, v types.Float64, key ...string) *big.Rat {
	if v.IsUnknown() {
		cfg.MarkUnknown(key...)
		return nil
	}
	if v.IsNull() {
		return nil
	}
	return quota.DecimalFromFloat(v.ValueFloat64())
}

// quotaModelFromResolved is the inverse: the planned or refreshed attributes of a resolved quota.
// Configured-only attributes (count, partition, absolute limits, name, description) come from
// rc.Config; computed ones from the resolved values.
func quotaModelFromResolved(ctx context.Context, rc quota.ResolvedConfig) (computeQuotaModel, diag.Diagnostics) {
	var diags diag.Diagnostics
	c := rc.Config
	m := computeQuotaModel{
		ID:               types.StringValue(c.Team),
		Name:             types.StringValue(c.Name),
		Description:      types.StringNull(),
		Team:             types.StringValue(c.Team),
		ActivationState:  types.StringValue(rc.ActivationState),
		PreemptTeamTasks: types.StringValue(rc.PreemptTeamTasks),
		FairShareWeight:  types.Int64Value(rc.FairShareWeight),
		Cohort:           types.StringValue(rc.Cohort),
		ClusterQueueName: types.StringValue(quota.ClusterQueueName(c.Team)),
		Timeouts:         timeouts.Value{Object: types.ObjectNull(timeoutsAttrTypes)},
	}
	if c.Description != "" {
		m.Description = types.StringValue(c.Description)
	}
	if c.IsUnknown("activation_state") {
		m.ActivationState = types.StringUnknown()
	}
	if c.IsUnknown("preempt_team_tasks") {
		m.PreemptTeamTasks = types.StringUnknown()
	}
	if c.IsUnknown("cohort") {
		m.Cohort = types.StringUnknown()
	}
	if c.IsUnknown("fair_share_weight") {
		m.FairShareWeight = types.Int64Unknown()
	}

	// resource_sharing
	limitType := types.ObjectType{AttrTypes: absoluteLimitAttrTypes}
	limits := types.ListNull(limitType)
	if c.IsUnknown("resource_sharing", "absolute_borrow_limits") {
		limits = types.ListUnknown(limitType)
	} else if rc.AbsoluteBorrowLimits != nil {
		var elems []attr.Value
		for _, l := range rc.AbsoluteBorrowLimits {
			obj, d := types.ObjectValue(absoluteLimitAttrTypes, map[string]attr.Value{
				"instance_type": types.StringValue(l.InstanceType),
				"accelerators":  types.Int64PointerValue(l.Accelerators),
				"vcpu":          floatOrNull(l.VCPU),
				"memory_in_gib": floatOrNull(l.MemoryGiB),
			})
			diags.Append(d...)
			elems = append(elems, obj)
		}
		l, d := types.ListValue(limitType, elems)
		diags.Append(d...)
		limits = l
	}
	strategy := types.StringValue(rc.Strategy)
	borrow := types.Int64PointerValue(rc.BorrowLimit)
	if c.IsUnknown("resource_sharing", "strategy") {
		strategy = types.StringUnknown()
		if c.Sharing.BorrowLimit == nil {
			borrow = types.Int64Unknown()
		}
	}
	if c.IsUnknown("resource_sharing", "borrow_limit") {
		borrow = types.Int64Unknown()
	}
	sharing, d := types.ObjectValue(resourceSharingAttrTypes, map[string]attr.Value{
		"strategy": strategy, "borrow_limit": borrow, "absolute_borrow_limits": limits,
	})
	diags.Append(d...)
	m.ResourceSharing = sharing
	if c.IsUnknown("resource_sharing") {
		m.ResourceSharing = types.ObjectUnknown(resourceSharingAttrTypes)
	}

	// resources
	entryType := types.ObjectType{AttrTypes: resourceEntryAttrTypes}
	var elems []attr.Value
	for i, r := range rc.Resources {
		e := r.Configured
		k := []string{"resources", strconv.Itoa(i)}
		partition := types.ObjectNull(partitionAttrTypes)
		if c.IsUnknown(append(k, "accelerator_partition")...) {
			partition = types.ObjectUnknown(partitionAttrTypes)
		} else if e.Partition != nil {
			p, d := types.ObjectValue(partitionAttrTypes, map[string]attr.Value{
				"type": types.StringValue(e.Partition.Type), "count": types.Int64Value(e.Partition.Count),
			})
			diags.Append(d...)
			partition = p
		}
		vals := map[string]attr.Value{
			"instance_type":         types.StringValue(e.InstanceType),
			"count":                 types.Int64PointerValue(e.Count),
			"accelerators":          types.Int64Value(r.Accelerators),
			"vcpu":                  floatOrNull(r.VCPU),
			"memory_in_gib":         floatOrNull(r.MemoryGiB),
			"efa":                   types.Int64Value(r.EFA),
			"accelerator_partition": partition,
		}
		if r.Unknown {
			// An input is unknown: configured values stay as written, the rest is known after apply.
			vals["accelerators"] = knownOr(types.Int64PointerValue(e.Accelerators), types.Int64Unknown(), e.Accelerators != nil, c.IsUnknown(append(k, "accelerators")...))
			vals["efa"] = knownOr(types.Int64PointerValue(e.EFA), types.Int64Unknown(), e.EFA != nil, c.IsUnknown(append(k, "efa")...))
			vals["vcpu"] = knownOr(floatOrNull(e.VCPU), types.Float64Unknown(), e.VCPU != nil, c.IsUnknown(append(k, "vcpu")...))
			vals["memory_in_gib"] = knownOr(floatOrNull(e.MemoryGiB), types.Float64Unknown(), e.MemoryGiB != nil, c.IsUnknown(append(k, "memory_in_gib")...))
			if c.IsUnknown(append(k, "count")...) {
				vals["count"] = types.Int64Unknown()
			}
			if c.IsUnknown(append(k, "instance_type")...) {
				vals["instance_type"] = types.StringUnknown()
			}
		}
		obj, d := types.ObjectValue(resourceEntryAttrTypes, vals)
		diags.Append(d...)
		elems = append(elems, obj)
	}
	list, d := types.ListValue(entryType, elems)
	diags.Append(d...)
	m.Resources = list
	return m, diags
}

// knownOr returns the configured value when it is set and known, else unknown.
func knownOr(configured, unknown attr.Value, set, isUnknown bool) attr.Value {
	if set && !isUnknown {
		return configured
	}
	return unknown
}

func floatOrNull(r *big.Rat) types.Float64 {
	if r == nil {
		return types.Float64Null()
	}
	return types.Float64Value(quota.FloatFromRat(r))
}
