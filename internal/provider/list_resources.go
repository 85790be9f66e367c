package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// List resources, for `terraform query` (Terraform 1.14 and later): each lists the objects of its
// resource type that the store holds, through the backend's listing, page by page. A result
// carries the object's identity and, with include_resource (which -generate-config-out sets),
// the state an import of it would save, built by the resource's own read code. An object the
// resource cannot hold exactly, or cannot read, is listed with its identity and a warning that
// names what an apply would change, and without resource data: no configuration that would
// change it is generated.

func (p *hyperpodProvider) ListResources(_ context.Context) []func() list.ListResource {
	return []func() list.ListResource{
		func() list.ListResource { return &computeQuotaList{listBase{typeName: "_compute_quota", provider: p}} },
		func() list.ListResource {
			return &teamNamespaceList{listBase{typeName: "_team_namespace", provider: p}}
		},
		func() list.ListResource {
			return &clusterSchedulerConfigList{listBase{typeName: "_cluster_scheduler_config", provider: p}}
		},
	}
}

var _ provider.ProviderWithListResources = (*hyperpodProvider)(nil)

// listBase is what every list resource shares: the type name of the resource it lists (and
// Metadata), and the provider whose last Configure it lists with (ConfigureProvider comes before
// any list).
type listBase struct {
	typeName
	provider *hyperpodProvider
}

// data is the provider data to list with; nil, with the reason in diags, when the provider is
// not configured or cannot reach the cluster. what says what needed the cluster.
func (b *listBase) data(what string, diags *diag.Diagnostics) *providerData {
	data, _ := b.provider.lastConfigure()
	pd := configuredData(data, diags)
	if !pd.configured(diags) || pd.client(what, diags) == nil {
		return nil
	}
	return pd
}

// clusterARNAttribute is a list block's cluster_arn: only on the SageMaker path, and only the
// provider's cluster.
func clusterARNAttribute(objects string) schema.StringAttribute {
	return schema.StringAttribute{Optional: true, Description: "Only with the provider's `task_governance` block: the ARN of " +
		"the HyperPod cluster whose " + objects + " to list, which must be the provider's `task_governance.cluster_arn`. The " +
		"results are imported through the provider that lists them, so a query of another cluster uses a provider (alias) " +
		"configured for it; setting the ARN makes a query file fail rather than list another cluster than the one it names."}
}

// checkCluster refuses a cluster_arn that is not the cluster of the provider's store.
func (pd *providerData) checkCluster(arn types.String, diags *diag.Diagnostics) {
	if arn.IsNull() || arn.ValueString() == pd.backend.Cluster {
		return
	}
	at := path.Root(tagOf[quotaListModel]("ClusterARN"))
	if pd.backend.Cluster == "" {
		diags.AddAttributeError(at, "Not available on this cluster", fmt.Sprintf("cluster_arn is %q, but the provider "+
			"block has no task_governance block: it lists what the Kubernetes cluster it connects to holds. Remove cluster_arn.",
			arn.ValueString()))
		return
	}
	diags.AddAttributeError(at, "Another cluster", fmt.Sprintf("cluster_arn is %q, but the provider manages %q "+
		"(task_governance.cluster_arn), and the listed objects are imported through it. List that cluster with a provider "+
		"configured for it (a provider alias, and provider = hyperpod.<alias> in the list block).", arn.ValueString(), pd.backend.Cluster))
}

// quotaFilter is what a list block of quotas or namespaces selects; a cohort is refused where
// the store has no cohort, as the resource refuses one (quota.CheckStore).
func (pd *providerData) quotaFilter(m quotaListModel, diags *diag.Diagnostics) quota.ListFilter {
	f := quota.ListFilter{TeamPrefix: m.TeamPrefix.ValueString(), Cohort: m.Cohort.ValueString(), InstanceType: m.InstanceType.ValueString()}
	if f.Cohort != "" {
		for _, p := range pd.checkStore(quota.Config{Cohort: &f.Cohort}, quota.ResolvedConfig{}) {
			diags.AddAttributeError(path.Root(tagOf[quotaListModel]("Cohort")), p.Summary, p.Detail)
		}
	}
	pd.checkCluster(m.ClusterARN, diags)
	return f
}

// quotaListAttributes are the filters of the quota and namespace list blocks; objects names what
// they select.
func quotaListAttributes(m *quotaListModel, objects string) map[string]schema.Attribute {
	return attributesOf(m, []fieldSchema[schema.Attribute]{
		{&m.TeamPrefix, schema.StringAttribute{Optional: true, Description: "Only the " + objects + " of teams whose " +
			"name starts with this, e.g. `ml-`."}},
		{&m.Cohort, schema.StringAttribute{Optional: true, Description: "Only the " + objects + " of teams whose quota " +
			"is in this cohort (the ClusterQueue's `cohortName`). Not with `task_governance`: the SageMaker API has no cohort."}},
		{&m.InstanceType, schema.StringAttribute{Optional: true, Description: "Only the " + objects + " of teams whose " +
			"quota has a `resources` entry of this instance type, e.g. `ml.p5.48xlarge`."}},
		{&m.ClusterARN, clusterARNAttribute(objects)},
	})
}

// errListed ends a listing whose results Terraform needs no more of.
var errListed = errors.New("listing ended")

// listStream pushes results onto a list stream, up to the request's limit, and stops a listing
// once Terraform wants no more.
type listStream struct {
	push   func(list.ListResult) bool
	limit  int64
	pushed int64
}

// send pushes res; errListed when the listing should end.
func (s *listStream) send(res list.ListResult) error {
	if !s.push(res) {
		return errListed
	}
	if s.pushed++; s.limit > 0 && s.pushed >= s.limit {
		return errListed
	}
	return nil
}

// fail pushes err, a failed listing, as an error result, unless the listing ended on purpose.
func (s *listStream) fail(err error) {
	if err == nil || errors.Is(err, errListed) {
		return
	}
	var diags diag.Diagnostics
	storeError(err).addTo(&diags)
	s.push(list.ListResult{Diagnostics: diags})
}

// sendPage converts the items of one page with convert, listWorkers at once (a conversion may
// read from the store, as a refresh does), and sends the results in the page's order; an item
// convert skips (false) sends nothing.
func sendPage[T any](s *listStream, items []T, convert func(T) (list.ListResult, bool)) error {
	results := make([]list.ListResult, len(items))
	keep := make([]bool, len(items))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(listWorkers, len(items)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i], keep[i] = convert(items[i])
			}
		}()
	}
	for i := range items {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, res := range results {
		if !keep[i] {
			continue
		}
		if err := s.send(res); err != nil {
			return err
		}
	}
	return nil
}

// listWorkers bounds the conversions in flight, as Terraform's -parallelism bounds a refresh's.
const listWorkers = 10

// notListable is the result of an object the resource cannot hold exactly (lost: what an apply of
// the configuration read from it would change) or cannot read (readErr): res, its identity set,
// with a warning and without resource data. With include_resource (which -generate-config-out
// sets) it is the warning alone: Terraform 1.15 generates a configuration and an import block
// for every result with an identity, and fails (it panics) generating one from a result without
// resource data.
func notListable(req list.ListRequest, res list.ListResult, resourceType, object string, lost []string, readErr error) list.ListResult {
	what := fmt.Sprintf("%s cannot hold %s exactly: an apply of the configuration read from it would change it:\n  - %s",
		resourceType, object, strings.Join(lost, "\n  - "))
	if readErr != nil {
		what = fmt.Sprintf("%s cannot read %s: %s.", resourceType, object, readErr)
	}
	listed := "It is listed with its identity only"
	if req.IncludeResource {
		listed = "It is left out of the results, which carry resource data"
	}
	res.Diagnostics.AddWarning("Listed without its configuration", what+"\n\n"+listed+", so no configuration is generated "+
		"for it. To manage it with this provider, write the configuration it should have, import it, and review the plan "+
		"before applying: the apply changes it as shown.")
	if req.IncludeResource {
		return list.ListResult{Diagnostics: res.Diagnostics}
	}
	res.Resource = nil
	return res
}

// logListed logs the end of a listing.
func logListed(ctx context.Context, what string, s *listStream) {
	tflog.Debug(ctx, "listed "+what, map[string]any{"results": s.pushed, "limit": s.limit})
}
