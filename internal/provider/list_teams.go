package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// The list resources of teams' objects: one list of quotas, one of namespaces, each selected by
// the same filters (quotaListModel) and identified by its team.

// computeQuotaList lists the teams' quotas: on a cluster that runs its own Kueue, the
// ClusterQueues named after a team; through task_governance, the cluster's compute quotas.
type computeQuotaList = teamList[quotaListKind]

// teamNamespaceList lists the teams' namespaces: the Namespaces named after a team, with their
// LocalQueues.
type teamNamespaceList = teamList[namespaceListKind]

// teamList is the list resource of one kind of teams' objects, K.
type teamList[K teamListKind] struct{ listBase }

// teamListKind is what a list of teams' objects lists: how its schema describes it, and the
// listing of what f selects, each object's result built by the resource r.
type teamListKind interface {
	text() teamListText
	listing(ctx context.Context, req list.ListRequest, pd *providerData, r resourceBase, f quota.ListFilter, s *listStream) error
}

func (l *teamList[K]) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	var k K
	resp.Schema = quotaListSchema(k.text())
}

func (l *teamList[K]) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var k K
	streamList(ctx, &l.listBase, req, stream, k.text().logged, func(pd *providerData, m quotaListModel, diags *diag.Diagnostics) func(*listStream) error {
		f := pd.quotaFilter(m, diags)
		r := resourceBase{typeName: l.typeName, data: pd}
		return func(s *listStream) error { return k.listing(ctx, req, pd, r, f, s) }
	})
}

// teamListText describes a list block of teams' objects: the objects (in the filters' words,
// filtered), which of the store's it lists (stored), what an import of one saves besides its
// identity (imported), which it cannot hold (notHeld) and what its warning says of them
// (warning), and what the log and a provider that cannot list call a listing (logged).
type teamListText struct{ objects, filtered, stored, imported, notHeld, warning, logged string }

// quotaListSchema is the schema of a list block of teams' objects (quotas or namespaces),
// selected by quotaListModel's filters.
func quotaListSchema(t teamListText) schema.Schema {
	var m quotaListModel
	return schema.Schema{
		Description: "Lists the teams' " + t.objects + " for `terraform query` (Terraform 1.14 and later): " + t.stored +
			" Each result is identified by its team; with `include_resource` (or `-generate-config-out`) it carries the " +
			"state an import of the team saves, " + t.imported + ". " + t.notHeld + " is listed with a warning that " + t.warning +
			", and without its configuration.",
		Attributes: quotaListAttributes(&m, t.filtered),
	}
}

type quotaListKind struct{}

func (quotaListKind) text() teamListText {
	return teamListText{objects: "compute quotas", filtered: "quotas", logged: "compute quotas",
		stored: "on a cluster that runs its own Kueue, the ClusterQueues named after a team " +
			"(`hyperpod-ns-<team>-clusterqueue`), whoever wrote them; with `task_governance`, the cluster's SageMaker compute quotas.",
		imported: "so the generated configuration and import block adopt the quota as it is",
		notHeld: "A quota the resource cannot hold exactly (a second resource group, a resource the rendered queue does not " +
			"cover or covers besides, two SageMaker quotas of one team, ...)",
		warning: "names what an apply would change"}
}

func (quotaListKind) listing(ctx context.Context, req list.ListRequest, pd *providerData, r resourceBase, f quota.ListFilter, s *listStream) error {
	q := &computeQuotaResource{r}
	return pd.backend.QuotaList.List(ctx, f, func(page []*backend.Quota) error {
		return sendPage(s, page, func(stored *backend.Quota) (list.ListResult, bool) { return q.listResult(ctx, req, stored) })
	})
}

type namespaceListKind struct{}

func (namespaceListKind) text() teamListText {
	return teamListText{objects: "namespaces", filtered: "namespaces", logged: "team namespaces",
		stored: "the Namespaces named after a team (`hyperpod-ns-<team>`), whoever created them, with the LocalQueue in " +
			"each. `cohort` and `instance_type` select by the team's compute quota. With `task_governance` the namespaces " +
			"are read through the provider's Kubernetes connection.",
		imported: "its labels and annotations included",
		notHeld:  "A namespace whose LocalQueue feeds another ClusterQueue than the team's",
		warning:  "says that an apply would create that queue again"}
}

func (namespaceListKind) listing(ctx context.Context, req list.ListRequest, pd *providerData, r resourceBase, f quota.ListFilter, s *listStream) error {
	teams, err := quotaTeams(ctx, pd, f)
	if err != nil {
		return err
	}
	tn := &teamNamespaceResource{r}
	return pd.backend.NamespaceList.List(ctx, f.TeamPrefix, func(page []*backend.TeamNamespace) error {
		return sendPage(s, page, func(ns *backend.TeamNamespace) (list.ListResult, bool) {
			if teams != nil && !teams[ns.Team] {
				return list.ListResult{}, false
			}
			return tn.listResult(ctx, req, ns)
		})
	})
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
		res.Diagnostics.Append(setModel(ctx, res.Resource, &state)...)
	}
	return res, true
}

// importedQuota is what an import of the team leaves for the read that follows it: the id and
// the team.
func importedQuota(team string) computeQuotaModel {
	return computeQuotaModel{ID: types.StringValue(team), Team: types.StringValue(team)}
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
		res.Diagnostics.Append(setModel(ctx, res.Resource, &state)...)
	}
	return res, true
}
