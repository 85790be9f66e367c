package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

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

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

var (
	_ resource.Resource                   = (*clusterSchedulerConfigResource)(nil)
	_ resource.ResourceWithConfigure      = (*clusterSchedulerConfigResource)(nil)
	_ resource.ResourceWithImportState    = (*clusterSchedulerConfigResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*clusterSchedulerConfigResource)(nil)
	_ resource.ResourceWithValidateConfig = (*clusterSchedulerConfigResource)(nil)
)

const (
	schedulerConfigResourceKind = "hyperpod_cluster_scheduler_config"
	// schedulerConfigTimeout bounds one create, update or delete: a few small writes.
	schedulerConfigTimeout      = 2 * time.Minute
	schedulerConfigPollInterval = 500 * time.Millisecond
)

// priorityClassAttrTypes is the object type of one priority_classes element.
var priorityClassAttrTypes = map[string]attr.Type{
	"name":                types.StringType,
	"weight":              types.Int64Type,
	"priority_class_name": types.StringType,
}

// NewClusterSchedulerConfigResource returns the hyperpod_cluster_scheduler_config resource.
func NewClusterSchedulerConfigResource() resource.Resource {
	return &clusterSchedulerConfigResource{}
}

type clusterSchedulerConfigResource struct {
	data *providerData
}

func (r *clusterSchedulerConfigResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster_scheduler_config"
}

func (r *clusterSchedulerConfigResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "The priority classes of HyperPod's cluster policy (the AWS cluster scheduler config): each " +
			"becomes a Kueue WorkloadPriorityClass `<name>-priority` whose value is the class's weight. Jobs take a " +
			"class with the label `kueue.x-k8s.io/priority-class: <name>-priority`; within a team, a higher class is " +
			"admitted first and, where the team's `preempt_team_tasks` is `LowerPriority`, preempts lower ones. " +
			"Fair sharing of idle compute (HyperPod's `FairShare` switch) is Kueue manager configuration, which this " +
			"resource cannot change: see the documentation.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true,
				Description: "The class names joined by commas, in configuration order (e.g. `inference,training`); " +
					"the same form is the import ID.",
			},
			"priority_classes": schema.ListNestedAttribute{
				Required: true,
				Description: fmt.Sprintf("Up to %d priority classes, like HyperPod's cluster policy. Each name appears "+
					"once. Removing a class deletes its WorkloadPriorityClass; workloads that already took its value "+
					"keep it. An empty list manages no class.", quota.MaxPriorityClasses),
				Validators: []validator.List{listvalidator.SizeAtMost(quota.MaxPriorityClasses)},
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name": schema.StringAttribute{
						Required: true,
						Description: fmt.Sprintf("Class name: 1-%d lower-case letters, digits and hyphens, starting and "+
							"ending with a letter or digit (the AWS rule), e.g. `training`. Jobs reference "+
							"`<name>-priority`.", quota.MaxPriorityClassNameLength),
						Validators: []validator.String{
							stringvalidator.LengthBetween(1, quota.MaxPriorityClassNameLength),
							stringvalidator.RegexMatches(quota.TeamPattern, quota.PriorityClassRule),
						},
					},
					"weight": schema.Int64Attribute{
						Required: true,
						Description: fmt.Sprintf("Priority, 0-%d: the WorkloadPriorityClass value. Higher weights are "+
							"admitted first and may preempt lower ones within a team.", quota.MaxPriorityWeight),
						Validators: []validator.Int64{int64validator.Between(0, quota.MaxPriorityWeight)},
					},
					"priority_class_name": schema.StringAttribute{
						Computed: true,
						Description: "The WorkloadPriorityClass, `<name>-priority`: the value of the job label " +
							"`kueue.x-k8s.io/priority-class`.",
					},
				}},
			},
			"owner_id": schema.StringAttribute{
				Computed: true,
				Description: "Identity of this resource, recorded on each WorkloadPriorityClass as the annotation `" +
					quota.AnnotationOwner + "` when it is created. A resource in this or any other state that declares " +
					"a class already recorded for another owner is refused instead of taking it over; import takes " +
					"classes over explicitly, and the first apply after an import records a new identity.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"drift": schema.ListAttribute{
				ElementType: types.StringType, Computed: true,
				Description: "What the last refresh found changed in the cluster that `priority_classes` cannot show, one " +
					"readable line each: an edited label or annotation this provider owns, or another owner. Empty when " +
					"the cluster matches. A changed value shows as a `weight` change and a deleted class as a missing " +
					"element.",
			},
		},
	}
}

func (r *clusterSchedulerConfigResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = configuredData(req.ProviderData, &resp.Diagnostics)
}

// priorityClassElements reads a priority_classes value element by element. An unknown name is
// "" and an unknown weight 0; known reports, per element, whether both are known.
func priorityClassElements(list types.List) (classes []quota.PriorityClass, known []bool) {
	if list.IsNull() || list.IsUnknown() {
		return nil, nil
	}
	for _, e := range list.Elements() {
		var c quota.PriorityClass
		ok := false
		if o, isObj := e.(types.Object); isObj && !o.IsNull() && !o.IsUnknown() {
			attrs := o.Attributes()
			name, _ := attrs["name"].(types.String)
			weight, _ := attrs["weight"].(types.Int64)
			if !name.IsUnknown() && !name.IsNull() {
				c.Name = name.ValueString()
			}
			if !weight.IsUnknown() && !weight.IsNull() {
				c.Weight = weight.ValueInt64()
			}
			ok = c.Name != "" && !weight.IsUnknown() && !weight.IsNull()
		}
		classes = append(classes, c)
		known = append(known, ok)
	}
	return classes, known
}

// priorityClassList is the priority_classes value of known classes.
func priorityClassList(classes []quota.PriorityClass) types.List {
	elems := make([]attr.Value, 0, len(classes))
	for _, c := range classes {
		elems = append(elems, types.ObjectValueMust(priorityClassAttrTypes, map[string]attr.Value{
			"name":                types.StringValue(c.Name),
			"weight":              types.Int64Value(c.Weight),
			"priority_class_name": types.StringValue(quota.PriorityClassObjectName(c.Name)),
		}))
	}
	return types.ListValueMust(types.ObjectType{AttrTypes: priorityClassAttrTypes}, elems)
}

// schedulerConfigID is the id of a set of classes: their names joined by commas.
func schedulerConfigID(classes []quota.PriorityClass) string {
	names := make([]string, len(classes))
	for i, c := range classes {
		names[i] = c.Name
	}
	return strings.Join(names, ",")
}

// ValidateConfig checks the classes as a whole (unique names) before any API call; the
// attribute validators check each value.
func (r *clusterSchedulerConfigResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var list types.List
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("priority_classes"), &list)...)
	classes, _ := priorityClassElements(list)
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
	classes, _ := priorityClassElements(list)
	allKnown := true
	elems := make([]attr.Value, len(classes))
	for i, e := range list.Elements() {
		o, ok := e.(types.Object)
		if !ok || o.IsNull() || o.IsUnknown() {
			elems[i], allKnown = e, false
			continue
		}
		attrs := make(map[string]attr.Value, len(priorityClassAttrTypes))
		for k, v := range o.Attributes() {
			attrs[k] = v
		}
		attrs["priority_class_name"] = types.StringUnknown()
		if name, _ := attrs["name"].(types.String); !name.IsUnknown() && !name.IsNull() {
			attrs["priority_class_name"] = types.StringValue(quota.PriorityClassObjectName(name.ValueString()))
		} else {
			allKnown = false
		}
		obj, d := types.ObjectValue(priorityClassAttrTypes, attrs)
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
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("id"), id)...)
}

// refuseForeignPriorityClass is refuseForeignOwner for priority classes.
func refuseForeignPriorityClass(ctx context.Context, p privateGetter, diags *diag.Diagnostics) {
	c, d := storedConflict(ctx, p)
	diags.Append(d...)
	if c == nil {
		return
	}
	diags.AddAttributeError(path.Root("priority_classes"), "Priority class owned by another resource", fmt.Sprintf(
		"%s is now managed by %s, not by this %s. Two resources managing one class would undo each other's changes "+
			"on every apply. Remove the class from this configuration, or import it to take it over explicitly "+
			"(terraform state rm <address>, then terraform import <address> <class,class,...>).",
		c.Object, c.Owner, schedulerConfigResourceKind))
}
