package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

type computeQuotaResource struct{ resourceBase }

const defaultQuotaTimeout = 10 * time.Minute

var (
	quotaNameValidators = []validator.String{
		stringvalidator.RegexMatches(quota.NamePattern, quota.NameRule),
	}
)

func (r *computeQuotaResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	var (
		m         computeQuotaModel
		sharing   sharingModel
		limit     limitModel
		entry     resourceEntryModel
		partition partitionModel
		// limitPartition is a second value: a schema lists each field address once.
		limitPartition partitionModel
	)
	attributes, blocks := attributesAndBlocksOf(&m, append([]fieldSchema[schema.Attribute]{
		{&m.ID, schema.StringAttribute{
			Computed: true, Description: "The team, which identifies the quota (one ClusterQueue per team).",
			PlanModifiers: keptWhileUnknown,
		}},
		{&m.Name, schema.StringAttribute{
			Required:    true,
			Description: "Name of the compute quota (AWS Name pattern, 1-63 characters). Changing it replaces the quota.",
			Validators:  quotaNameValidators,
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIf(
				func(ctx context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
					// A queue imported from another tool records no name (state holds the team in
					// its place): naming it is an update.
					unnamed, d := req.Private.GetKey(ctx, privateUnnamed)
					resp.Diagnostics.Append(d...)
					resp.RequiresReplace = req.StateValue.ValueString() != "" && len(unnamed) == 0
				}, "Replaces the quota when the name changes.", "Replaces the quota when the name changes.")},
		}},
		{&m.Description, schema.StringAttribute{
			Optional: true, Description: "Free text, up to 1024 characters: the compute quota's `Description` with " +
				"`task_governance`, an annotation on the ClusterQueue on a cluster that runs its own Kueue.",
			Validators: []validator.String{stringvalidator.LengthBetween(1, quota.MaxDescriptionLength)},
		}},
		{&m.Team, schema.StringAttribute{
			Required:      true,
			Description:   "Team the quota belongs to (AWS TeamName pattern, at most 40 characters). Jobs of the namespace `hyperpod-ns-<team>` use it. Changing it replaces the quota.",
			Validators:    teamValidators,
			PlanModifiers: replacedOnChange,
		}},
		{&m.ActivationState, schema.StringAttribute{
			Optional: true, Computed: true,
			Description: "`Enabled` (default) admits new jobs; `Disabled` holds them (ClusterQueue `stopPolicy: Hold`).",
			Validators:  []validator.String{stringvalidator.OneOf(quota.ActivationEnabled, quota.ActivationDisabled)},
		}},
		{&m.PreemptTeamTasks, schema.StringAttribute{
			Optional: true, Computed: true,
			Description: "`LowerPriority` (default) lets a team's higher-priority jobs preempt its lower-priority ones; `Never` does not.",
			Validators:  []validator.String{stringvalidator.OneOf(quota.PreemptLowerPriority, quota.PreemptNever)},
		}},
		{&m.FairShareWeight, schema.Int64Attribute{
			Optional: true, Computed: true,
			Description: "Weight 0-100 when teams compete for idle capacity (default 0, the AWS API's; 0 is the " +
				"lowest): the compute quota's `FairShareWeight` with `task_governance`, the ClusterQueue's " +
				"`fairSharing.weight` on a cluster that runs its own Kueue. It matters only when Kueue runs with fair " +
				"sharing on (HyperPod's `FairShare = Enabled`); then a team that borrows needs at least 1, see " +
				"[Fair sharing and `fair_share_weight`](../guides/quotas-and-kueue.md#fair-sharing-and-fair_share_weight).",
			Validators: []validator.Int64{int64validator.Between(0, quota.MaxFairShareWeight)},
		}},
		{&m.Cohort, schema.StringAttribute{
			Optional: true, Computed: true,
			Description: "Kueue cohort of teams that lend to and borrow from each other (default `" + quota.DefaultCohort + "`). " +
				"Only on a cluster that runs its own Kueue: with `task_governance` the add-on decides how teams share, and " +
				"setting it is an error at plan time.",
		}},
		{&m.ClusterQueueName, schema.StringAttribute{
			Computed: true, Description: "Name of the team's ClusterQueue, `hyperpod-ns-<team>-clusterqueue`: the one this " +
				"resource writes, or with `task_governance` the one the add-on writes for the compute quota.",
		}},
		{&m.QuotaID, storeIDAttribute("compute quota", " (12 lowercase letters and digits)")},
		{&m.OwnerID, ownerIDAttribute("ClusterQueue", apiHoldsNoOwner("compute quota"))},
		{&m.Drift, driftAttribute("for the ClusterQueue a field outside the attributes (an extra resource group, the " +
			"namespace selector, preemption), an edited label or annotation this provider owns, a deleted " +
			"ResourceFlavor, or another owner; with `task_governance`, a failed status with SageMaker's reason")},
		{&m.ResourceSharing, schema.SingleNestedAttribute{
			Optional: true, Computed: true,
			Description: "How the team lends idle quota and borrows from the cohort.",
			Attributes: attributesOf(&sharing, []fieldSchema[schema.Attribute]{
				{&sharing.Strategy, schema.StringAttribute{
					Optional: true, Computed: true,
					Description: "`LendAndBorrow` (default): lends idle quota and borrows up to `borrow_limit`. `Lend`: lends, never borrows. `DontLend`: neither.",
					Validators:  []validator.String{stringvalidator.OneOf(quota.StrategyLendAndBorrow, quota.StrategyLend, quota.StrategyDontLend)},
				}},
				{&sharing.BorrowLimit, schema.Int64Attribute{
					Optional: true, Computed: true,
					Description: "Percent of the nominal quota the team may borrow on top, 0-10000 (default 50 with `LendAndBorrow`; not allowed with the other strategies).",
					Validators:  []validator.Int64{int64validator.Between(0, quota.MaxBorrowLimit)},
				}},
				{&sharing.AbsoluteBorrowLimits, schema.ListNestedAttribute{
					Optional: true,
					Description: "Per instance type caps on borrowing (the SageMaker API's `AbsoluteBorrowLimits`) that replace the " +
						"percentage for the resources they set; the others keep `borrow_limit`. At most one element per instance type " +
						"of `resources`, checked by the rules of a `resources` entry (`count` not with `accelerators` or " +
						"`accelerator_partition`, `accelerators` not with `accelerator_partition`, a partition only on a type that " +
						"offers the profile). `count` caps every resource of the type at `count` instances' worth (accelerators, " +
						"vCPU, memory and EFA interfaces); `vcpu` and `memory_in_gib` set beside it win for their resource.",
					NestedObject: schema.NestedAttributeObject{Attributes: attributesOf(&limit, []fieldSchema[schema.Attribute]{
						{&limit.InstanceType, schema.StringAttribute{Required: true, Description: "An instance type of `resources`."}},
						{&limit.Count, schema.Int64Attribute{Optional: true,
							Description: "Whole instances the team may borrow: `count` x one instance's accelerators, vCPU, memory and EFA interfaces. Not with `accelerators` or `accelerator_partition`."}},
						{&limit.Accelerators, schema.Int64Attribute{Optional: true, Description: "Accelerators the team may borrow. Not with `count` or `accelerator_partition`."}},
						{&limit.Partition, schema.SingleNestedAttribute{
							Optional: true,
							Description: "GPU partitions (NVIDIA MIG) the team may borrow: the borrowing limit of `nvidia.com/mig-<profile>`, " +
								"which the ClusterQueue then covers even when no entry has a quota in it. Not with `count` or `accelerators`.",
							Attributes: attributesOf(&limitPartition, []fieldSchema[schema.Attribute]{
								{&limitPartition.Type, schema.StringAttribute{Required: true, Description: "MIG profile the type offers, e.g. `mig-1g.10gb`."}},
								{&limitPartition.Count, schema.Int64Attribute{Required: true, Description: "Number of partitions."}},
							}),
						}},
						{&limit.VCPU, schema.Float64Attribute{Optional: true, Description: "vCPU the team may borrow; wins over `count`."}},
						{&limit.MemoryInGiB, schema.Float64Attribute{Optional: true, Description: "Memory in GiB the team may borrow; wins over `count`."}},
					})},
				}},
			}),
		}},
		{&m.Resources, schema.ListNestedAttribute{
			Required:    true,
			Description: "1-15 entries, one per instance type. Size each by `count`, `accelerators`, `accelerator_partition`, `vcpu` or `memory_in_gib`; the unset amounts follow the ratio of the first one set (count, accelerators, partition, vcpu, memory).",
			Validators:  []validator.List{listvalidator.SizeBetween(1, quota.MaxResources)},
			NestedObject: schema.NestedAttributeObject{Attributes: attributesOf(&entry, []fieldSchema[schema.Attribute]{
				{&entry.InstanceType, schema.StringAttribute{Required: true, Description: "Instance type, e.g. `ml.p5.48xlarge`; on a cluster that runs its own Kueue also the ResourceFlavor's name."}},
				{&entry.Count, schema.Int64Attribute{Optional: true, Description: "Whole instances. Not with `accelerators` or `accelerator_partition`."}},
				{&entry.Accelerators, schema.Int64Attribute{Optional: true, Computed: true,
					Description: "Accelerator devices. Computed: `count` x the type's accelerators when sized by count, else 0."}},
				{&entry.VCPU, schema.Float64Attribute{Optional: true, Computed: true,
					Description: "vCPU (at most 3 decimals). Computed: ratio x the type's vCPU, rounded down to 0.001; with " +
						"`task_governance`, further down to the nearest value the API's 32-bit number holds, and a configured " +
						"value it cannot hold is an error at plan time."}},
				{&entry.MemoryInGiB, schema.Float64Attribute{Optional: true, Computed: true,
					Description: "Memory in GiB. Computed: ratio x the type's memory, rounded down to whole MiB; with " +
						"`task_governance`, further down to the nearest value the API's 32-bit number holds, and a configured " +
						"value it cannot hold is an error at plan time."}},
				{&entry.EFA, schema.Int64Attribute{Optional: true, Computed: true,
					Description: "EFA interfaces. Computed: the ratio rounded up x the type's EFA interfaces. Only on a " +
						"cluster that runs its own Kueue: with `task_governance` the add-on decides the EFA quota, it is not " +
						"planned (null), and setting it is an error at plan time."}},
				{&entry.Partition, schema.SingleNestedAttribute{
					Optional:    true,
					Description: "GPU partitions instead of whole GPUs (NVIDIA MIG). Not with `count` or `accelerators`.",
					Attributes: attributesOf(&partition, []fieldSchema[schema.Attribute]{
						{&partition.Type, schema.StringAttribute{Required: true, Description: "MIG profile the type offers, e.g. `mig-1g.10gb`."}},
						{&partition.Count, schema.Int64Attribute{Required: true, Description: "Number of partitions."}},
					}),
				}},
			})},
		}},
	}, taggedStoreAttributes(&m.tagsModel, &m.storeRecordModel, "compute quota", "")...), []fieldSchema[schema.Block]{
		{&m.Timeouts, waitingTimeoutsBlock(ctx, defaultQuotaTimeout,
			"claiming and writing the ClusterQueue and any missing ResourceFlavor or, with `task_governance`, creating "+
				"the compute quota and waiting until SageMaker has applied it.",
			", including the wait until the ClusterQueue is gone: Kueue's finalizer holds it while workloads are still "+
				"admitted to it, and past the timeout the error names them. With `task_governance`, the wait until "+
				"SageMaker has deleted the compute quota.")},
	})
	resp.Schema = schema.Schema{
		Description: "A HyperPod task-governance compute quota for one team: on a cluster that runs its own Kueue, the " +
			"Kueue ClusterQueue `hyperpod-ns-<team>-clusterqueue` (plus a ResourceFlavor per instance type when missing); " +
			"with the provider's `task_governance` block, the cluster's SageMaker compute quota for the team, which the " +
			"task-governance add-on turns into that ClusterQueue. Unset `accelerators`, `vcpu`, `memory_in_gib` and `efa` " +
			"of each entry follow HyperPod's ratio rule and are computed during plan, exactly, so the plan shows the " +
			"numbers that will be applied. Planning needs no cluster access.",
		Attributes: attributes,
		Blocks:     blocks,
	}
}

// IdentitySchema declares the team as the resource identity, for import by identity.
func (r *computeQuotaResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	teamIdentitySchema(resp)
}
