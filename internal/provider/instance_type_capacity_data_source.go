package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/capacity"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

type instanceTypeCapacityDataSource struct {
	dataSourceBase[instanceTypeCapacityModel]
}

func (d *instanceTypeCapacityDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	computedInt := func(text string) schema.Int64Attribute {
		return schema.Int64Attribute{Computed: true, Description: text}
	}
	computedFloat := func(text string) schema.Float64Attribute {
		return schema.Float64Attribute{Computed: true, Description: text}
	}
	var m instanceTypeCapacityModel
	resp.Schema = schema.Schema{
		Description: "Per-instance capacity of a HyperPod instance type (from the provider's `instance_types` or the " +
			"built-in catalog) and what the cluster has of it: its Nodes, their allocatable resources, and how much " +
			"of that the ClusterQueues already hand out as nominal quota.",
		Attributes: attributesOf(&m, slices.Concat([]fieldSchema[schema.Attribute]{
			{&m.InstanceType, schema.StringAttribute{
				Required:    true,
				Description: "Instance type, e.g. `ml.g5.12xlarge`. Unknown types are an error that names the closest known ones.",
			}},
			{&m.Accelerators, computedInt("Accelerator devices per instance (0 for CPU types).")},
			{&m.AcceleratorType, schema.StringAttribute{Computed: true, Description: "Accelerator model, e.g. `A10G` or `Trainium`; empty for CPU types and provider-defined types."}},
			{&m.AcceleratorResource, schema.StringAttribute{Computed: true, Description: "Extended resource the accelerators are requested as, e.g. `nvidia.com/gpu`; empty for CPU types."}},
			{&m.VCPU, computedFloat("vCPUs per instance.")},
			{&m.MemoryInGiB, computedFloat("Memory per instance in GiB.")},
			{&m.EFA, computedInt("EFA interfaces per instance.")},
			{&m.MIGProfiles, schema.ListAttribute{Computed: true, ElementType: types.StringType, Description: "MIG profiles the GPUs can be partitioned into, e.g. `mig-1g.10gb`."}},
			{&m.Source, schema.StringAttribute{Computed: true, Description: "`catalog` for built-in figures, `provider` when the provider's `instance_types` defines or overrides them."}},

			{&m.NodeCount, computedInt("Nodes labelled `node.kubernetes.io/instance-type=<instance_type>`.")},
			{&m.SchedulableNodeCount, computedInt("Those Nodes that new pods can land on: Ready, not cordoned, and healthy: HyperPod's " +
				"`" + capacity.HealthLabel + "` label is `" + capacity.HealthSchedulable + "` or absent.")},
			{&m.NotReadyNodeCount, computedInt("Those Nodes whose `Ready` condition is not `True` (`False`, `Unknown` or not reported " +
				"yet), whatever their health status; on the SageMaker path also the instances that have not joined as Nodes. Null " +
				"on the SageMaker path without a Kubernetes connection.")},
			{&m.UnhealthyNodeCounts, schema.MapAttribute{Computed: true, ElementType: types.Int64Type, Description: "Those Nodes whose " +
				"`" + capacity.HealthLabel + "` label is other than `" + capacity.HealthSchedulable + "`, counted by its value: " +
				"`Unschedulable` (deep health checks running), `UnschedulablePendingReplacement` or `UnschedulablePendingReboot` " +
				"(" + capacity.HealthStatusDoc + "). Empty when every Node is healthy; a Node can be both here and in " +
				"`not_ready_node_count`. Null on the SageMaker path without a Kubernetes connection."}},
		},
			amountFields(&m.TotalAccelerators, &m.TotalVCPU, &m.TotalMemoryInGiB, "Sum of the Nodes' allocatable {amount}."),
			amountFields(&m.AllocatedAccelerators, &m.AllocatedVCPU, &m.AllocatedMemoryInGiB,
				"Sum of the nominal quotas of {amount} of every ClusterQueue for this flavor."),
			amountFields(&m.UnallocatedAccelerators, &m.UnallocatedVCPU, &m.UnallocatedMemoryInGiB,
				"`total_{attribute} - allocated_{attribute}`; negative when quotas promise more than the nodes have."),
			amountFields(&m.SchedulableAccelerators, &m.SchedulableVCPU, &m.SchedulableMemoryInGiB,
				"Sum of the allocatable {amount} of the Nodes in `schedulable_node_count`: what new pods can use now."),
			amountFields(&m.UnallocatedSchedulableAccelerators, &m.UnallocatedSchedulableVCPU, &m.UnallocatedSchedulableMemoryInGiB,
				"`schedulable_{attribute} - allocated_{attribute}`: what a new quota can still claim on healthy, schedulable "+
					"Nodes. Negative when quotas promise more than those Nodes have: Kueue admits against quotas alone, so jobs it "+
					"admits beyond this stay pending in the scheduler."),
		)),
	}
}

// amountFields are the schemas of one capacity.Amounts of the model (amountValues fills them):
// its accelerators, vCPU and memory, each described by text with the amount in words for
// {amount} and the end of its attribute's name for {attribute}.
func amountFields(accelerators *types.Int64, vcpu, memory *types.Float64, text string) []fieldSchema[schema.Attribute] {
	describe := func(amount, attribute string) string {
		return strings.NewReplacer("{amount}", amount, "{attribute}", attribute).Replace(text)
	}
	return []fieldSchema[schema.Attribute]{
		{accelerators, schema.Int64Attribute{Computed: true, Description: describe("accelerators", "accelerators")}},
		{vcpu, schema.Float64Attribute{Computed: true, Description: describe("vCPU", "vcpu")}},
		{memory, schema.Float64Attribute{Computed: true, Description: describe("memory in GiB", "memory_in_gib")}},
	}
}

func readInstanceTypeCapacity(ctx context.Context, pd *providerData, m *instanceTypeCapacityModel, diags *diag.Diagnostics) bool {
	name := m.InstanceType.ValueString()
	if pd.capacityPending(name) {
		diags.AddAttributeError(path.Root("instance_type"), "Instance type not known yet", fmt.Sprintf(
			"The provider's instance_types entry for %q depends on values known only after apply, so its figures cannot be read yet. "+
				"Apply what those values come from first, or set them from values known at plan time.", name))
		return false
	}
	it, ok := pd.catalog.Lookup(name)
	if !ok {
		diags.AddAttributeError(path.Root("instance_type"), "Unknown instance type", quota.UnknownInstanceTypeDetail(pd.catalog, name))
		return false
	}

	nodes, ok := readWhenReady(ctx, pd, name, pd.backend.Ready.CapacityReady, pd.backend.Capacity.Nodes, diags)
	if !ok {
		return false
	}
	allocations, err := pd.backend.Capacity.Allocations(ctx, name)
	if err != nil {
		diags.AddError("Cannot list the quotas", err.Error())
		return false
	}
	tflog.Debug(ctx, "read instance type capacity", map[string]any{"instance_type": name, "nodes": len(nodes), "allocations": len(allocations)})

	s := capacity.Summarize(it, nodes, allocations)
	figures, figureDiags := figuresOf(ctx, it)
	diags.Append(figureDiags...)
	m.instanceTypeFiguresModel = figures
	m.Source = types.StringValue(string(it.Source))
	m.NodeCount = types.Int64Value(s.NodeCount)
	m.SchedulableNodeCount = types.Int64Value(s.SchedulableNodeCount)
	m.NotReadyNodeCount, m.UnhealthyNodeCounts = healthValues(s)
	m.TotalAccelerators, m.TotalVCPU, m.TotalMemoryInGiB = amountValues(s.Total)
	m.AllocatedAccelerators, m.AllocatedVCPU, m.AllocatedMemoryInGiB = amountValues(s.Allocated)
	m.UnallocatedAccelerators, m.UnallocatedVCPU, m.UnallocatedMemoryInGiB = amountValues(s.Unallocated)
	m.SchedulableAccelerators, m.SchedulableVCPU, m.SchedulableMemoryInGiB = amountValues(s.Schedulable)
	m.UnallocatedSchedulableAccelerators, m.UnallocatedSchedulableVCPU, m.UnallocatedSchedulableMemoryInGiB = amountValues(s.UnallocatedSchedulable)
	return true
}

// healthValues are null when the backend only counted instances and so saw no Node's condition or label.
func healthValues(s capacity.Summary) (types.Int64, types.Map) {
	if !s.HealthKnown {
		return types.Int64Null(), types.MapNull(types.Int64Type)
	}
	counts := make(map[string]attr.Value, len(s.UnhealthyNodeCounts))
	for status, n := range s.UnhealthyNodeCounts {
		counts[status] = types.Int64Value(n)
	}
	return types.Int64Value(s.NotReadyNodeCount), types.MapValueMust(types.Int64Type, counts)
}

func amountValues(a capacity.Amounts) (types.Int64, types.Float64, types.Float64) {
	return types.Int64Value(a.Accelerators), types.Float64Value(a.VCPU), types.Float64Value(a.MemoryGiB)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
