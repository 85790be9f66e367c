package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

const (
	schedulerConfigResourceKind = "hyperpod_cluster_scheduler_config"
	// defaultSchedulerConfigTimeout is each operation's default in the timeouts block: on the
	// SageMaker path an operation waits until the API has applied the config, which takes as long
	// as a compute quota's, so it has the quota's default.
	defaultSchedulerConfigTimeout = 10 * time.Minute
)

type clusterSchedulerConfigResource struct{ resourceBase }

func (r *clusterSchedulerConfigResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	var (
		m     clusterSchedulerConfigModel
		class priorityClassModel
	)
	attributes, blocks := attributesAndBlocksOf(&m, append([]fieldSchema[schema.Attribute]{
		{&m.ID, schema.StringAttribute{
			Computed: true,
			Description: "The class names joined by commas, in configuration order (e.g. `inference,training`); " +
				"the same form is the import ID.",
		}},
		{&m.PriorityClasses, schema.ListNestedAttribute{
			Required: true,
			Description: fmt.Sprintf("Up to %d priority classes, like HyperPod's cluster policy. Each name appears "+
				"once. Removing a class deletes its WorkloadPriorityClass; workloads that already took its value "+
				"keep it. An empty list manages no class.", quota.MaxPriorityClasses),
			Validators: []validator.List{listvalidator.SizeAtMost(quota.MaxPriorityClasses)},
			NestedObject: schema.NestedAttributeObject{Attributes: attributesOf(&class, []fieldSchema[schema.Attribute]{
				{&class.Name, schema.StringAttribute{
					Required: true,
					Description: fmt.Sprintf("Class name: 1-%d lower-case letters, digits and hyphens, starting and "+
						"ending with a letter or digit (the AWS rule), e.g. `training`. Jobs reference "+
						"`<name>-priority`.", quota.MaxPriorityClassNameLength),
					Validators: []validator.String{
						stringvalidator.LengthBetween(1, quota.MaxPriorityClassNameLength),
						stringvalidator.RegexMatches(quota.TeamPattern, quota.PriorityClassRule),
					},
				}},
				{&class.Weight, schema.Int64Attribute{
					Required: true,
					Description: fmt.Sprintf("Priority, 0-%d: the WorkloadPriorityClass value. Higher weights are "+
						"admitted first and may preempt lower ones within a team.", quota.MaxPriorityWeight),
					Validators: []validator.Int64{int64validator.Between(0, quota.MaxPriorityWeight)},
				}},
				{&class.PriorityClassName, schema.StringAttribute{
					Computed: true,
					Description: "The WorkloadPriorityClass, `<name>-priority`: the value of the job label " +
						"`kueue.x-k8s.io/priority-class`.",
				}},
			})},
		}},
		{&m.FairShare, schema.StringAttribute{
			Optional: true, Computed: true,
			Description: "`Enabled` (the default) lets teams borrow idle compute in proportion to their " +
				"`fair_share_weight`; `Disabled` lends it first come, first served. Only on a cluster managed through " +
				"`task_governance`: with your own Kueue, fair sharing is the Kueue manager's configuration, and setting " +
				"it here is an error.",
			Validators: []validator.String{stringvalidator.OneOf(quota.ActivationEnabled, quota.ActivationDisabled)},
		}},
		{&m.IdleResourceSharing, schema.StringAttribute{
			Optional: true, Computed: true,
			Description: "`Enabled` makes unallocated compute available for teams to borrow; `Disabled` does not. " +
				"Only on a cluster managed through `task_governance`; unset, the SageMaker API's own default applies " +
				"(AWS documents none), and it is known after apply.",
			Validators:    []validator.String{stringvalidator.OneOf(quota.ActivationEnabled, quota.ActivationDisabled)},
			PlanModifiers: keptWhileUnknown,
		}},
		{&m.ConfigID, storeIDAttribute("cluster scheduler config", "")},
		{&m.OwnerID, schema.StringAttribute{
			Computed: true,
			Description: "Identity of this resource, recorded on each WorkloadPriorityClass as the annotation `" +
				quota.AnnotationOwner + "` when it is created. A resource in this or any other state that declares " +
				"a class already recorded for another owner is refused instead of taking it over; import takes " +
				"classes over explicitly, and the first apply after an import records a new identity." +
				apiHoldsNoOwner("cluster scheduler config"),
			PlanModifiers: keptWhileUnknown,
		}},
		{&m.Drift, schema.ListAttribute{
			ElementType: types.StringType, Computed: true,
			Description: "What the last refresh found changed in the cluster that `priority_classes` cannot show, one " +
				"readable line each: an edited label or annotation this provider owns, or another owner. Empty when " +
				"the cluster matches. A changed value shows as a `weight` change and a deleted class as a missing " +
				"element.",
		}},
	}, taggedStoreAttributes(&m.tagsModel, &m.storeRecordModel, "cluster scheduler config", " (on a cluster that runs its own Kueue: of each WorkloadPriorityClass it writes)")...), []fieldSchema[schema.Block]{
		{&m.Timeouts, waitingTimeoutsBlock(ctx, defaultSchedulerConfigTimeout,
			"creating the WorkloadPriorityClasses or, with `task_governance`, creating the cluster scheduler config and "+
				"waiting until SageMaker has applied it.",
			", including, with `task_governance`, the wait until SageMaker has deleted the cluster scheduler config.")},
	})
	resp.Schema = schema.Schema{
		Description: "HyperPod's cluster policy (the AWS cluster scheduler config). Its priority classes: each " +
			"becomes a Kueue WorkloadPriorityClass `<name>-priority` whose value is the class's weight. Jobs take a " +
			"class with the label `kueue.x-k8s.io/priority-class: <name>-priority`; within a team, a higher class is " +
			"admitted first and, where the team's `preempt_team_tasks` is `LowerPriority`, preempts lower ones. With " +
			"the provider's `task_governance` block it is the cluster's one ClusterSchedulerConfig in the SageMaker API, " +
			"with `fair_share` and `idle_resource_sharing` too; on a cluster that runs its own Kueue, fair sharing is " +
			"Kueue's manager configuration, which this resource cannot change: see the documentation.",
		Attributes: attributes,
		Blocks:     blocks,
	}
}

// schedulerConfigIdentityModel is the resource identity: the config's id, the priority class
// names joined by commas, which is also the import ID.
type schedulerConfigIdentityModel struct {
	ID types.String `tfsdk:"id"`
}

func (m schedulerConfigIdentityModel) named() types.String { return m.ID }

// IdentitySchema declares the id as the resource identity, for import by identity and for the
// results of `terraform query`.
func (r *clusterSchedulerConfigResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	var m schedulerConfigIdentityModel
	resp.IdentitySchema = identityschema.Schema{Attributes: attributesOf(&m, []fieldSchema[identityschema.Attribute]{
		{&m.ID, identityschema.StringAttribute{
			RequiredForImport: true,
			Description: "The priority class names joined by commas, e.g. `inference,training`, as the import ID. With " +
				"`task_governance` an import takes the cluster's one scheduler config, whatever the id names.",
		}},
	})}
}

// Metadata declares the identity mutable: it is the id, which follows the classes.
func (r *clusterSchedulerConfigResource) Metadata(ctx context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	r.resourceBase.Metadata(ctx, req, resp)
	resp.ResourceBehavior.MutableIdentity = true
}

// setConfigIdentity records the identity of a state whose id is id; clients without identity
// support pass none.
func setConfigIdentity(ctx context.Context, identity *tfsdk.ResourceIdentity, id types.String, diags *diag.Diagnostics) {
	if identity == nil || id.IsNull() || id.IsUnknown() {
		return
	}
	diags.Append(identity.Set(ctx, schedulerConfigIdentityModel{ID: id})...)
}
