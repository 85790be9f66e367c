package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// teamNamespaceList lists the teams' namespaces: the Namespaces named after a team, with their
// LocalQueues.
type teamNamespaceList struct{ listBase }

func (l *teamNamespaceList) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	var m quotaListModel
	resp.Schema = schema.Schema{
		Description: "Lists the teams' namespaces for `terraform query` (Terraform 1.14 and later): the Namespaces named " +
			"after a team (`hyperpod-ns-<team>`), whoever created them, with the LocalQueue in each. `cohort` and " +
			"`instance_type` select by the team's compute quota. Each result is identified by its team; with " +
			"`include_resource` (or `-generate-config-out`) it carries the state an import of the team saves, its labels " +
			"and annotations included. A namespace whose LocalQueue feeds another ClusterQueue than the team's is listed with " +
			"a warning (an apply would create that queue again) and without its configuration. With `task_governance` the " +
			"namespaces are read through the provider's Kubernetes connection.",
		Attributes: quotaListAttributes(&m, "namespaces"),
	}
}

func (l *teamNamespaceList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var m quotaListModel
	diags := req.Config.Get(ctx, &m)
	pd := l.data("list team namespaces", &diags)
	if diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	f := pd.quotaFilter(m, &diags)
	if diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	r := &teamNamespaceResource{resourceBase{typeName: l.typeName, data: pd}}
	stream.Results = func(push func(list.ListResult) bool) {
		s := &listStream{push: push, limit: req.Limit}
		teams, err := quotaTeams(ctx, pd, f)
		if err != nil {
			s.fail(err)
			return
		}
		s.fail(pd.backend.NamespaceList.List(ctx, f.TeamPrefix, func(page []*backend.TeamNamespace) error {
			return sendPage(s, page, func(ns *backend.TeamNamespace) (list.ListResult, bool) {
				if teams != nil && !teams[ns.Team] {
					return list.ListResult{}, false
				}
				return r.listResult(ctx, req, ns)
			})
		}))
		logListed(ctx, "team namespaces", s)
	}
}

// quotaTeams are the teams whose quota f selects, when f selects by quota (cohort, instance
// type); nil selects every team.
func quotaTeams(ctx context.Context, pd *providerData, f quota.ListFilter) (map[string]bool, error) {
	if !f.ByQuota() {
		return nil, nil
	}
	teams := map[string]bool{}
	err := pd.backend.QuotaList.List(ctx, f, func(page []*backend.Quota) error {
		for _, q := range page {
			if !q.Terminating {
				teams[q.Config.Config.Team] = true
			}
		}
		return nil
	})
	return teams, err
}

// listResult is the result of a listed namespace; false for one being deleted.
func (r *teamNamespaceResource) listResult(ctx context.Context, req list.ListRequest, ns *backend.TeamNamespace) (list.ListResult, bool) {
	if ns.Terminating {
		return list.ListResult{}, false
	}
	res := req.NewListResult(ctx)
	object := fmt.Sprintf("Namespace %q", ns.Name)
	res.DisplayName = fmt.Sprintf("%s: %s", ns.Team, object)
	res.Diagnostics.Append(res.Identity.Set(ctx, teamIdentityModel{Team: types.StringValue(ns.Team)})...)
	if len(ns.NotRepresented) > 0 {
		return notListable(req, res, teamNamespaceResourceKind, fmt.Sprintf("%s of team %q", object, ns.Team), ns.NotRepresented, nil), true
	}
	if !req.IncludeResource {
		return res, true
	}
	state, diags := r.importedState(ctx, ns.Team, ns)
	_, d := r.readState(ctx, &state, ns.Team, ns, true)
	diags.Append(d...)
	res.Diagnostics.Append(diags...)
	if !diags.HasError() {
		res.Diagnostics.Append(res.Resource.Set(ctx, &state)...)
	}
	return res, true
}
