package provider

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
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
	var m schedulerConfigListModel
	diags := req.Config.Get(ctx, &m)
	pd := l.data("list the cluster scheduler config", &diags)
	if diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	pd.checkCluster(m.ClusterARN, &diags)
	if diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	r := &clusterSchedulerConfigResource{resourceBase{typeName: l.typeName, data: pd}}
	stream.Results = func(push func(list.ListResult) bool) {
		s := &listStream{push: push, limit: req.Limit}
		res, found, err := r.listConfig(ctx, req)
		if err != nil {
			s.fail(err)
			return
		}
		if found {
			s.fail(s.send(res))
		}
		logListed(ctx, "the cluster scheduler config", s)
	}
}

// listConfig is the result of the cluster's config; found is false when it has none.
func (r *clusterSchedulerConfigResource) listConfig(ctx context.Context, req list.ListRequest) (res list.ListResult, found bool, err error) {
	if store := r.data.backend.SchedulerConfig; store != nil {
		c, err := store.Get(ctx)
		if err != nil || c == nil || c.Terminating {
			return res, false, err
		}
		res = req.NewListResult(ctx)
		m := importedConfig(c)
		res.DisplayName = fmt.Sprintf("%s %q (id %s)", c.Kind, c.Name, c.ID)
		res.Diagnostics.Append(res.Identity.Set(ctx, schedulerConfigIdentityModel{ID: m.ID})...)
		if req.IncludeResource {
			if state, ok := r.configState(ctx, m, c, &res.Diagnostics); ok {
				res.Diagnostics.Append(res.Resource.Set(ctx, &state)...)
			}
		}
		return res, true, nil
	}
	stored, err := r.data.backend.PriorityClassList.List(ctx)
	if err != nil {
		return res, false, err
	}
	var classes []quota.PriorityClass
	byName := map[string]*backend.StoredPriorityClass{}
	var names []string
	for _, c := range stored {
		name, _ := quota.PriorityClassOfObjectName(c.Name)
		if c.Terminating {
			continue
		}
		classes = append(classes, quota.PriorityClass{Name: name, Weight: c.Weight})
		byName[name], names = c, append(names, c.Name)
	}
	if len(classes) == 0 {
		return res, false, nil
	}
	return r.classesResult(ctx, req, classes, byName, "WorkloadPriorityClasses "+strings.Join(names, ", ")), true, nil
}

// classesResult is the result of the cluster's priority classes, stored as byName holds them.
func (r *clusterSchedulerConfigResource) classesResult(ctx context.Context, req list.ListRequest, classes []quota.PriorityClass,
	byName map[string]*backend.StoredPriorityClass, object string) list.ListResult {
	res := req.NewListResult(ctx)
	id := types.StringValue(schedulerConfigID(classes))
	res.DisplayName = object
	res.Diagnostics.Append(res.Identity.Set(ctx, schedulerConfigIdentityModel{ID: id})...)
	if lost := classesNotRepresented(classes, byName); len(lost) > 0 {
		return notListable(req, res, schedulerConfigResourceKind, object, lost, nil)
	}
	if !req.IncludeResource {
		return res
	}
	// As an import of the id saves it, then reads it.
	state := clusterSchedulerConfigModel{ID: id, PriorityClasses: priorityClassList(classes),
		tagsModel: tagsModel{Tags: types.MapNull(types.StringType), TagsAll: types.MapNull(types.StringType)},
		Timeouts:  timeouts.Value{Object: types.ObjectNull(timeoutsAttrTypes)}}
	get := func(_ context.Context, class string) (*backend.StoredPriorityClass, diag.Diagnostics) {
		return byName[class], nil
	}
	if _, ok := r.readClasses(ctx, &state, true, get, &res.Diagnostics); ok {
		res.Diagnostics.Append(res.Resource.Set(ctx, &state)...)
	}
	return res
}

// classesNotRepresented lists what of the classes the resource cannot hold: what the resource's
// own checks refuse, and different tags on different classes (it writes one set on all).
func classesNotRepresented(classes []quota.PriorityClass, byName map[string]*backend.StoredPriorityClass) []string {
	var out []string
	for _, p := range quota.ValidatePriorityClasses(classes) {
		out = append(out, p.Detail)
	}
	first := byName[classes[0].Name]
	for _, c := range classes[1:] {
		if other := byName[c.Name]; !maps.Equal(first.Tags, other.Tags) {
			out = append(out, fmt.Sprintf("%s %q carries the tags %v and %s %q the tags %v: an apply writes the same tags on "+
				"every class", first.Kind, first.Name, first.Tags, other.Kind, other.Name, other.Tags))
			break
		}
	}
	return out
}
