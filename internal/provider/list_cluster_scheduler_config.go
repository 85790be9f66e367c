package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/list/schema"
)

// clusterSchedulerConfigList lists the cluster's scheduler config: at most one result, the
// cluster's priority classes (its WorkloadPriorityClasses, or its SageMaker cluster scheduler
// config).
type clusterSchedulerConfigList struct{ listBase }

func (l *clusterSchedulerConfigList) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	var m schedulerConfigListModel
	resp.Schema = schema.Schema{
		Description: "Lists the cluster's scheduler config for `terraform query` (Terraform 1.14 and later): one result at " +
			"most. On a cluster that runs its own Kueue it holds every WorkloadPriorityClass named after a class " +
			"(`<class>-priority`), in name order; with `task_governance`, the cluster's SageMaker cluster scheduler config. " +
			"It is identified by its id, the class names joined by commas; with `include_resource` (or " +
			"`-generate-config-out`) it carries the state an import of that id saves. Classes the resource cannot hold " +
			"(more than 10, a weight outside 0-100, classes that carry different tags) are listed with a warning and " +
			"without the configuration.",
		Attributes: attributesOf(&m, []fieldSchema[schema.Attribute]{
			{&m.ClusterARN, clusterARNAttribute("scheduler config")},
		}),
	}
}

func (l *clusterSchedulerConfigList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	streamList(ctx, &l.listBase, req, stream, "the cluster scheduler config", func(pd *providerData, m schedulerConfigListModel, diags *diag.Diagnostics) func(*listStream) error {
		pd.checkCluster(m.ClusterARN, diags)
		r := &clusterSchedulerConfigResource{resourceBase{typeName: l.typeName, data: pd}}
		return func(s *listStream) error {
			res, found, err := r.listConfig(ctx, req)
			if err != nil || !found {
				return err
			}
			return s.send(res)
		}
	})
}

// listConfig is the result of the cluster's policy; found is false when the store holds none.
func (r *clusterSchedulerConfigResource) listConfig(ctx context.Context, req list.ListRequest) (res list.ListResult, found bool, err error) {
	stored, err := r.policy().List(ctx, req.IncludeResource)
	if err != nil || stored == nil {
		return res, false, err
	}
	res = req.NewListResult(ctx)
	m := importedConfig(stored)
	res.DisplayName = stored.Description
	res.Diagnostics.Append(res.Identity.Set(ctx, schedulerConfigIdentityModel{ID: m.ID})...)
	if len(stored.NotRepresented) > 0 {
		return notListable(req, res, schedulerConfigResourceKind, stored.Description, stored.NotRepresented, nil), true, nil
	}
	if req.IncludeResource {
		// As an import of the id saves it, then reads it.
		m.tagsModel = r.data.refreshed(m.tagsModel, stored.Policy.Tags)
		res.Diagnostics.Append(setModel(ctx, res.Resource, &m)...)
	}
	return res, true, nil
}
