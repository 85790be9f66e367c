package provider

import (
	"context"
	"fmt"
	"math/big"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// ValidateConfig checks the classes as a whole (unique names) before any API call; the
// attribute validators check each value.
func (r *clusterSchedulerConfigResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var list types.List
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("priority_classes"), &list)...)
	classes := priorityClassesOf(list)
	var duplicates []quota.Problem
	for _, p := range quota.ValidatePriorityClasses(classes) {
		if p.Summary == "Duplicate priority class" { // the rest is the attribute validators' job
			duplicates = append(duplicates, p)
		}
	}
	addProblems(&resp.Diagnostics, duplicates)
}

// ModifyPlan derives id and each priority_class_name from the names (no API call), plans drift
// empty, and refuses a plan whose refresh found a class owned by another resource.
func (r *clusterSchedulerConfigResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	if r.data != nil {
		r.planStore(ctx, req, resp)
		r.data.planTags(ctx, req, resp)
		defer r.data.planNewVersion(ctx, req, resp)
	}
	if !req.State.Raw.IsNull() {
		refuseForeignPriorityClass(ctx, req.Private, &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return
		}
		var owner types.String
		resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("owner_id"), &owner)...)
		if owner.IsNull() || isTakeover(ctx, req.Private, &resp.Diagnostics) {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("owner_id"), types.StringUnknown())...)
		}
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("drift"), noDrift())...)

	var list types.List
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("priority_classes"), &list)...)
	if resp.Diagnostics.HasError() || list.IsNull() || list.IsUnknown() {
		return
	}
	classes := priorityClassesOf(list)
	allKnown := true
	elems := make([]attr.Value, len(classes))
	for i, e := range list.Elements() {
		o, _ := e.(types.Object)
		m, ok := modelOf[priorityClassModel](o)
		if !ok {
			elems[i], allKnown = e, false
			continue
		}
		m.PriorityClassName = types.StringUnknown()
		if name := knownString(m.Name); name != nil {
			m.PriorityClassName = types.StringValue(quota.PriorityClassObjectName(*name))
		} else {
			allKnown = false
		}
		obj, d := objectFrom(m)
		resp.Diagnostics.Append(d...)
		elems[i] = obj
	}
	planned, d := types.ListValue(types.ObjectType{AttrTypes: priorityClassAttrTypes}, elems)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("priority_classes"), planned)...)
	id := types.StringUnknown()
	if allKnown {
		id = types.StringValue(schedulerConfigID(classes))
		var priorList types.List
		if r.data != nil && !req.State.Raw.IsNull() && !req.State.GetAttribute(ctx, path.Root("priority_classes"), &priorList).HasError() {
			r.data.preview.warnPriorityChange(ctx, path.Root("priority_classes"), priorityClassesOf(priorList), classes, &resp.Diagnostics)
		}
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("id"), id)...)
}

// refuseForeignPriorityClass is refuseForeignOwner for priority classes.
func refuseForeignPriorityClass(ctx context.Context, p privateGetter, diags *diag.Diagnostics) {
	refuseStoredConflict(ctx, p, path.Root("priority_classes"), "Priority class owned by another resource", schedulerConfigResourceKind,
		"class", "Remove the class from this configuration, or import it to take it over explicitly "+
			"(terraform state rm <address>, then terraform import <address> <class,class,...>).", diags)
}

// planStore plans what depends on the store: the policy switches only a store that holds them
// accepts (refused at their path elsewhere), and the store's record of the config.
func (r *clusterSchedulerConfigResource) planStore(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var config, plan, prior clusterSchedulerConfigModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	// A switch the store does not hold is refused when set and planned null; fair_share, where
	// it is held, defaults to Enabled.
	if config.FairShare.IsNull() {
		plan.FairShare = types.StringValue(quota.DefaultFairShare)
	}
	for _, sw := range []struct {
		attr    string
		v       types.String
		planned *types.String
	}{{tagOf[clusterSchedulerConfigModel]("FairShare"), config.FairShare, &plan.FairShare},
		{tagOf[clusterSchedulerConfigModel]("IdleResourceSharing"), config.IdleResourceSharing, &plan.IdleResourceSharing}} {
		why, unsupported := r.data.unsupported(sw.attr)
		if !unsupported {
			continue
		}
		if !sw.v.IsNull() {
			resp.Diagnostics.AddAttributeError(path.Root(sw.attr), "Not available on this cluster",
				fmt.Sprintf("%s is set, but %s. Remove it.", sw.attr, why))
		}
		*sw.planned = types.StringNull()
	}
	plan.ConfigID, plan.storeRecordModel = r.data.plannedStoreRecord(req.State.Raw.IsNull(), prior.ConfigID, prior.storeRecordModel)
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// sameValues reports whether a plan holds the values of the state, as Terraform compares them:
// a fraction is the same number when it is the same float64. Terraform hands a state's 1.45
// back as the decimal 1.45, while the plan holds the float64 nearest to it; a comparison of
// the exact values would plan an update on every run.
func sameValues(plan, state tftypes.Value) bool {
	diffs, err := plan.Diff(state)
	if err != nil {
		return false
	}
	for _, d := range diffs {
		if d.Value1 == nil || d.Value2 == nil || !d.Value1.Type().Is(tftypes.Number) ||
			!d.Value1.IsFullyKnown() || !d.Value2.IsFullyKnown() || d.Value1.IsNull() || d.Value2.IsNull() {
			return false
		}
		var a, b big.Float
		if d.Value1.As(&a) != nil || d.Value2.As(&b) != nil {
			return false
		}
		fa, _ := a.Float64()
		fb, _ := b.Float64()
		if a.IsInt() && b.IsInt() || fa != fb {
			return false // whole numbers compare exactly
		}
	}
	return true
}
