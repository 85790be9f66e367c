package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Defaults of the timeouts block. Create also bounds in-place updates, which may have to
// delete and recreate the LocalQueue (its spec.clusterQueue is immutable).
const (
	teamNamespaceCreateTimeout = 5 * time.Minute
	teamNamespaceDeleteTimeout = 10 * time.Minute
)

type teamNamespaceResource struct{ resourceBase }

func (r *teamNamespaceResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	timeoutsBlock := describedTimeoutsBlock(ctx, timeouts.Opts{
		Create: true,
		Update: true,
		Delete: true,
		CreateDescription: fmt.Sprintf("How long creating the Namespace and LocalQueue may take, a Go duration such as "+
			"`\"2m\"` (default `%s`).", durationText(teamNamespaceCreateTimeout)),
		UpdateDescription: fmt.Sprintf("How long an in-place update may take, including recreating a LocalQueue that "+
			"points at another ClusterQueue (default `%s`).", durationText(teamNamespaceCreateTimeout)),
		DeleteDescription: fmt.Sprintf("How long deleting may take, including the wait until the LocalQueue and the "+
			"Namespace (with everything in it) are gone, a Go duration such as `\"20m\"` (default `%s`).",
			durationText(teamNamespaceDeleteTimeout)),
	})

	computedName := func(text string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, Description: text}
	}
	var m teamNamespaceModel
	attributes, blocks := attributesAndBlocksOf(&m, []fieldSchema[schema.Attribute]{
		{&m.ID, computedName("Same as `team`; the import ID.")},
		{&m.Team, schema.StringAttribute{
			Required: true,
			Description: fmt.Sprintf("Team name: 1-%d lower-case letters, digits and hyphens, starting and ending "+
				"with a letter or digit (the AWS TeamName rule). Use the same value as the `team` of the matching "+
				"`hyperpod_compute_quota`. Changing it replaces the namespace.", quota.MaxTeamLength),
			PlanModifiers: replacedOnChange,
			Validators:    teamValidators,
		}},
		{&m.Labels, schema.MapAttribute{
			ElementType: types.StringType,
			Optional:    true,
			Description: "Labels added to the Namespace. Keys the provider sets itself (`app.kubernetes.io/managed-by`, " +
				"`sagemaker.amazonaws.com/quota-allocation-id`, `sagemaker.amazonaws.com/sagemaker-managed-queue`, " +
				"`kubernetes.io/metadata.name` and anything under `hyperpod.quotaworks.io/`) are rejected. A label " +
				"removed from this map is removed from the Namespace; labels other tools add are left alone.",
		}},
		{&m.Annotations, schema.MapAttribute{
			ElementType: types.StringType,
			Optional:    true,
			Description: "Annotations added to the Namespace. The keys reserved for `labels` are rejected here too. " +
				"An annotation removed from this map is removed from the Namespace; annotations other tools add are " +
				"left alone.",
		}},
		{&m.ForceDestroy, schema.BoolAttribute{
			Optional: true,
			Computed: true,
			Default:  booldefault.StaticBool(false),
			Description: "Destroy the namespace even while it still holds Pods or Kueue Workloads, deleting them with " +
				"it. Default `false`: destroy fails and names how many are left. Set it to `true` and apply before " +
				"destroying.",
		}},
		// The three names below are derived from team at plan time, so they are always known
		// in the plan; in state they are what the cluster holds, so a difference plans the repair.
		{&m.Namespace, computedName("Name of the team's Namespace, `hyperpod-ns-<team>`.")},
		{&m.LocalQueueName, computedName("Name of the team's Kueue LocalQueue, `hyperpod-ns-<team>-localqueue`; jobs " +
			"select it with the label `kueue.x-k8s.io/queue-name`. On a cluster that runs its own Kueue, null in state " +
			"when a refresh found the LocalQueue missing, so the next plan creates it again. With `task_governance` the " +
			"add-on creates the LocalQueue, " +
			"under this name, once the team's `hyperpod_compute_quota` exists; the provider neither writes nor " +
			"checks it, and state holds the name either way.")},
		{&m.ClusterQueueName, computedName("Name of the ClusterQueue the LocalQueue feeds, " +
			"`hyperpod-ns-<team>-clusterqueue`, managed by the `hyperpod_compute_quota` of the same team. In state it " +
			"is the LocalQueue's `spec.clusterQueue` as read from the cluster (null without a LocalQueue), so a " +
			"LocalQueue that points elsewhere shows in the next plan and is recreated. With `task_governance` it is " +
			"the name the add-on gives the team's ClusterQueue, as for `local_queue_name`.")},
		{&m.OwnerID, ownerIDAttribute("Namespace (and on a cluster that runs its own Kueue its LocalQueue)", "")},
		{&m.Drift, driftAttribute("a label this provider sets (`app.kubernetes.io/managed-by`, " +
			"`sagemaker.amazonaws.com/quota-allocation-id`, `sagemaker.amazonaws.com/sagemaker-managed-queue`) or its " +
			"owner annotation missing or edited on the Namespace or the LocalQueue; the LocalQueue missing, being " +
			"deleted, or feeding another ClusterQueue than the team's; the Namespace managed by another owner; an " +
			"import whose owner the next apply records; or a create that stopped before it finished. Labels and " +
			"annotations of your own show in `labels` and `annotations`, not here")},
	}, []fieldSchema[schema.Block]{
		{&m.Timeouts, timeoutsBlock},
	})
	resp.Schema = schema.Schema{
		Description: "A HyperPod team's namespace: the Namespace `hyperpod-ns-<team>`, labelled like the ones " +
			"SageMaker HyperPod task governance creates, and the Kueue LocalQueue `hyperpod-ns-<team>-localqueue` in it, " +
			"which feeds the team's ClusterQueue `hyperpod-ns-<team>-clusterqueue`. With the provider's " +
			"`task_governance` block it writes the Namespace only, through the provider's Kubernetes connection, and " +
			"the task-governance add-on creates the LocalQueue. Pair it with a " +
			"`hyperpod_compute_quota` of the same `team`, which manages that ClusterQueue. Jobs reach the team's quota " +
			"by running in this namespace with the label `kueue.x-k8s.io/queue-name: hyperpod-ns-<team>-localqueue`.",
		Attributes: attributes,
		Blocks:     blocks,
	}
}

// ValidateConfig rejects label and annotation keys the provider owns and keys or values
// Kubernetes would refuse, before any API call.
func (r *teamNamespaceResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	for _, attr := range []string{"labels", "annotations"} {
		var m types.Map
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root(attr), &m)...)
		if m.IsNull() || m.IsUnknown() {
			continue
		}
		values := map[string]*string{}
		for key, v := range m.Elements() {
			values[key] = nil
			if s, ok := v.(types.String); ok && !s.IsNull() && !s.IsUnknown() {
				values[key] = s.ValueStringPointer()
			}
		}
		for _, p := range quota.NamespaceMetadataProblems(attr, values) {
			at := path.Root(attr)
			if len(p.Path) > 1 {
				at = at.AtMapKey(p.Path[1])
			}
			resp.Diagnostics.AddAttributeError(at, p.Summary, p.Detail)
		}
	}
}

// IdentitySchema declares the team as the resource identity, for import by identity.
func (r *teamNamespaceResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	teamIdentitySchema(resp)
}
