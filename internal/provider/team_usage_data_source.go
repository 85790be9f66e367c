package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

type teamUsageDataSource struct{ dataSourceBase[teamUsageModel] }

var teamUsageResourceAttrTypes = attrTypesOf[teamUsageResourceModel]()

func (d *teamUsageDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	amount := func(text string) schema.Float64Attribute {
		return schema.Float64Attribute{Computed: true, Description: text + " In vCPU for `cpu`, GiB for `memory`, devices otherwise."}
	}
	var (
		m     teamUsageModel
		usage teamUsageResourceModel
	)
	resp.Schema = schema.Schema{
		Description: "One team's quota and usage, from the live status Kueue reports on the team's ClusterQueue " +
			"`hyperpod-ns-<team>-clusterqueue` (one GET): per instance type and resource the nominal quota, what " +
			"workloads reserve and use, and what they borrow from the cohort; the workload counts; and whether the " +
			"queue is active. It works for any team's queue, including ones this provider does not manage. A team " +
			"without a ClusterQueue (no quota yet, a misspelt name, a deleted queue) is an error, `Team has no " +
			"ClusterQueue` at `team`, never empty figures; read the quota's team from its `hyperpod_compute_quota` " +
			"(`team = hyperpod_compute_quota.x.team`) so the read waits for the create. Only the ClusterQueue is read: " +
			"a team whose namespace or LocalQueue is missing still reports its quota. With " +
			"`task_governance` it needs the provider's Kubernetes connection too.",
		Attributes: attributesOf(&m, []fieldSchema[schema.Attribute]{
			{&m.Team, schema.StringAttribute{Required: true, Validators: teamValidators, Description: "The team."}},
			{&m.ClusterQueueName, schema.StringAttribute{Computed: true, Description: "The ClusterQueue read."}},
			{&m.Active, schema.BoolAttribute{Computed: true, Description: "Whether Kueue reports the queue `Active` (it can admit workloads)."}},
			{&m.ActiveReason, schema.StringAttribute{Computed: true, Description: "The reason of the `Active` condition, e.g. `Ready` or `Stopped`."}},
			{&m.ActiveMessage, schema.StringAttribute{Computed: true, Description: "The message of the `Active` condition."}},
			{&m.AdmittedWorkloads, schema.Int64Attribute{Computed: true, Description: "Workloads admitted by the queue."}},
			{&m.PendingWorkloads, schema.Int64Attribute{Computed: true, Description: "Workloads waiting in the queue."}},
			{&m.ReservingWorkloads, schema.Int64Attribute{Computed: true,
				Description: "Workloads holding quota in the queue (admitted, or with quota reserved and admission checks pending)."}},
			{&m.Resources, schema.ListNestedAttribute{
				Computed:    true,
				Description: "One entry per instance type (flavor) and covered resource, in the queue's order.",
				NestedObject: schema.NestedAttributeObject{Attributes: attributesOf(&usage, []fieldSchema[schema.Attribute]{
					{&usage.InstanceType, schema.StringAttribute{Computed: true, Description: "The instance type (ResourceFlavor)."}},
					{&usage.Resource, schema.StringAttribute{Computed: true, Description: "The resource, e.g. `cpu`, `memory`, `nvidia.com/gpu`."}},
					{&usage.Nominal, amount("The nominal quota.")},
					{&usage.Reserved, amount("Quota reserved by workloads, borrowed quota included.")},
					{&usage.InUse, amount("Quota used by admitted workloads.")},
					{&usage.Borrowed, amount("The part of `reserved` borrowed from the cohort.")},
				})},
			}},
		}),
	}
}

func readTeamUsage(ctx context.Context, pd *providerData, m *teamUsageModel, diags *diag.Diagnostics) bool {
	team := m.Team.ValueString()
	u, ok := readWhenReady(ctx, pd, team, pd.backend.Ready.UsageReady, pd.backend.Usage.Usage, diags)
	if !ok {
		return false
	}
	if u == nil {
		storeDiag(pd.backend.Ready.NoUsage(team)).addAt(diags, path.Root("team"))
		return false
	}
	resources := []teamUsageResourceModel{} // an empty list, not null, when the queue has none
	for _, r := range u.Resources {
		resources = append(resources, teamUsageResourceModel{
			InstanceType: types.StringValue(r.InstanceType), Resource: types.StringValue(r.Resource),
			Nominal: floatOrNull(r.Nominal), Reserved: floatOrNull(r.Reserved), InUse: floatOrNull(r.InUse), Borrowed: floatOrNull(r.Borrowed),
		})
	}
	list, listDiags := types.ListValueFrom(ctx, types.ObjectType{AttrTypes: teamUsageResourceAttrTypes}, resources)
	diags.Append(listDiags...)
	m.ClusterQueueName = types.StringValue(quota.ClusterQueueName(team))
	m.Active, m.ActiveReason, m.ActiveMessage = types.BoolValue(u.Active), types.StringValue(u.ActiveReason), types.StringValue(u.ActiveMessage)
	m.AdmittedWorkloads, m.PendingWorkloads, m.ReservingWorkloads = types.Int64Value(u.AdmittedWorkloads), types.Int64Value(u.PendingWorkloads), types.Int64Value(u.ReservingWorkloads)
	m.Resources = list
	return true
}
