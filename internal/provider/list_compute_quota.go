package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
)

// computeQuotaList lists the teams' quotas: on a cluster that runs its own Kueue, the
// ClusterQueues named after a team; through task_governance, the cluster's compute quotas.
type computeQuotaList struct{ listBase }

func (l *computeQuotaList) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	var m quotaListModel
	resp.Schema = schema.Schema{
		Description: "Lists the teams' compute quotas for `terraform query` (Terraform 1.14 and later): on a cluster that runs " +
			"its own Kueue, the ClusterQueues named after a team (`hyperpod-ns-<team>-clusterqueue`), whoever wrote them; " +
			"with `task_governance`, the cluster's SageMaker compute quotas. Each result is identified by its team; with " +
			"`include_resource` (or `-generate-config-out`) it carries the state an import of the team saves, so the generated " +
			"configuration and import block adopt the quota as it is. A quota the resource cannot hold exactly (a second " +
			"resource group, a resource the rendered queue does not cover or covers besides, two SageMaker quotas of one " +
			"team, ...) is listed with a warning that names what an apply would change, and without its configuration.",
		Attributes: quotaListAttributes(&m, "quotas"),
	}
}

func (l *computeQuotaList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var m quotaListModel
	diags := req.Config.Get(ctx, &m)
	pd := l.data("list compute quotas", &diags)
	if diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	f := pd.quotaFilter(m, &diags)
	if diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	r := &computeQuotaResource{resourceBase{typeName: l.typeName, data: pd}}
	stream.Results = func(push func(list.ListResult) bool) {
		s := &listStream{push: push, limit: req.Limit}
		s.fail(pd.backend.QuotaList.List(ctx, f, func(page []*backend.Quota) error {
			return sendPage(s, page, func(q *backend.Quota) (list.ListResult, bool) { return r.listResult(ctx, req, q) })
		}))
		logListed(ctx, "compute quotas", s)
	}
}

// listResult is the result of a listed quota; false for one being deleted (nothing to adopt).
func (r *computeQuotaResource) listResult(ctx context.Context, req list.ListRequest, q *backend.Quota) (list.ListResult, bool) {
	if q.Terminating {
		return list.ListResult{}, false
	}
	team := q.Config.Config.Team
	res := req.NewListResult(ctx)
	object := fmt.Sprintf("%s %q", q.Kind, q.Name)
	if q.ID != "" {
		object += " (id " + q.ID + ")"
	}
	res.DisplayName = fmt.Sprintf("%s: %s", team, object)
	res.Diagnostics.Append(res.Identity.Set(ctx, teamIdentityModel{Team: types.StringValue(team)})...)
	if q.ConfigErr != nil || len(q.NotRepresented) > 0 {
		return notListable(req, res, quotaResourceKind, fmt.Sprintf("%s of team %q", object, team), q.NotRepresented, q.ConfigErr), true
	}
	if !req.IncludeResource {
		return res, true
	}
	var diags diag.Diagnostics
	state, _, ok := r.storedState(ctx, importedQuota(team), team, q, true, &diags)
	res.Diagnostics.Append(diags...)
	if ok {
		res.Diagnostics.Append(res.Resource.Set(ctx, &state)...)
	}
	return res, true
}

// importedQuota is what an import of the team leaves for the read that follows it: the id and
// the team.
func importedQuota(team string) computeQuotaModel {
	return computeQuotaModel{ID: types.StringValue(team), Team: types.StringValue(team)}
}
