package provider

import (
	"math/big"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Conversion between hyperpod_compute_quota's Terraform values (computeQuotaModel) and the pure
// domain (quota.Config, quota.ResolvedConfig). Attribute names and types are defined once, here.

var partitionAttrTypes = map[string]attr.Type{"type": types.StringType, "count": types.Int64Type}

var absoluteLimitAttrTypes = map[string]attr.Type{
	"instance_type": types.StringType, "accelerators": types.Int64Type, "vcpu": types.Float64Type, "memory_in_gib": types.Float64Type,
}

var resourceEntryAttrTypes = map[string]attr.Type{
	"instance_type": types.StringType, "count": types.Int64Type, "accelerators": types.Int64Type, "vcpu": types.Float64Type,
	"memory_in_gib": types.Float64Type, "efa": types.Int64Type,
	"accelerator_partition": types.ObjectType{AttrTypes: partitionAttrTypes},
}

var resourceSharingAttrTypes = map[string]attr.Type{
	"strategy": types.StringType, "borrow_limit": types.Int64Type,
	"absolute_borrow_limits": types.ListType{ElemType: types.ObjectType{AttrTypes: absoluteLimitAttrTypes}},
}

var timeoutsAttrTypes = map[string]attr.Type{"create": types.StringType, "update": types.StringType, "delete": types.StringType}

// The computed amounts of a resources entry.
const (
	attrAccelerators = "accelerators"
	attrVCPU         = "vcpu"
	attrMemory       = "memory_in_gib"
	attrEFA          = "efa"
)

// valueReader reads the values of one object (the resource, or a nested object) into a
// quota.Config, marking each unknown one at its path. Nothing here fails on an unknown or null
// value, at any depth.
type valueReader struct {
	cfg   *quota.Config
	at    []string
	attrs map[string]attr.Value
}

func (r valueReader) path(name string) []string {
	return append(append([]string(nil), r.at...), name)
}

func (r valueReader) str(name string) *string {
	v, ok := r.attrs[name].(types.String)
	if !ok || v.IsNull() {
		return nil
	}
	if v.IsUnknown() {
		r.cfg.MarkUnknown(r.path(name)...)
		return nil
	}
	return v.ValueStringPointer()
}

func (r valueReader) int64(name string) *int64 {
	v, ok := r.attrs[name].(types.Int64)
	if !ok || v.IsNull() {
		return nil
	}
	if v.IsUnknown() {
		r.cfg.MarkUnknown(r.path(name)...)
		return nil
	}
	return v.ValueInt64Pointer()
}

func (r valueReader) rat(name string) *big.Rat {
	v, ok := r.attrs[name].(types.Float64)
	if !ok || v.IsNull() {
		return nil
	}
	if v.IsUnknown() {
		r.cfg.MarkUnknown(r.path(name)...)
		return nil
	}
	return quota.DecimalFromFloat(v.ValueFloat64())
}

// object reads a nested object; ok is false when it is null or unknown (then marked).
func (r valueReader) object(name string) (valueReader, bool) {
	v, ok := r.attrs[name].(types.Object)
	if !ok || v.IsNull() {
		return valueReader{}, false
	}
	if v.IsUnknown() {
		r.cfg.MarkUnknown(r.path(name)...)
		return valueReader{}, false
	}
	return valueReader{cfg: r.cfg, at: r.path(name), attrs: v.Attributes()}, true
}

// list returns the elements of a nested list, each as a reader, or nil when the list is null
// or unknown (then marked). Unknown elements are marked and returned as readers with no
// attributes; known is false for those and for null elements.
func (r valueReader) list(name string) (elems []valueReader, known []bool, isNull bool) {
	v, ok := r.attrs[name].(types.List)
	if !ok || v.IsNull() {
		return nil, nil, true
	}
	if v.IsUnknown() {
		r.cfg.MarkUnknown(r.path(name)...)
		return nil, nil, false
	}
	for i, e := range v.Elements() {
		at := append(r.path(name), strconv.Itoa(i))
		o, isObj := e.(types.Object)
		switch {
		case !isObj || o.IsNull():
			elems, known = append(elems, valueReader{cfg: r.cfg, at: at}), append(known, false)
		case o.IsUnknown():
			r.cfg.MarkUnknown(at...)
			elems, known = append(elems, valueReader{cfg: r.cfg, at: at}), append(known, false)
		default:
			elems, known = append(elems, valueReader{cfg: r.cfg, at: at, attrs: o.Attributes()}), append(known, true)
		}
	}
	return elems, known, false
}

// quotaConfigFromModel converts configuration (or plan) values to quota.Config. An empty list
// stays an empty (non-nil) slice, a null one nil.
func quotaConfigFromModel(m computeQuotaModel) quota.Config {
	cfg := quota.Config{}
	root := valueReader{cfg: &cfg, attrs: map[string]attr.Value{
		"name": m.Name, "description": m.Description, "team": m.Team, "fair_share_weight": m.FairShareWeight,
		"activation_state": m.ActivationState, "preempt_team_tasks": m.PreemptTeamTasks, "cohort": m.Cohort,
		"resource_sharing": m.ResourceSharing, "resources": m.Resources,
	}}
	cfg.Name = derefStr(root.str("name"))
	cfg.Description = derefStr(root.str("description"))
	cfg.Team = derefStr(root.str("team"))
	if w := root.int64("fair_share_weight"); w != nil {
		cfg.FairShareWeight = *w
	}
	cfg.ActivationState = root.str("activation_state")
	cfg.PreemptTeamTasks = root.str("preempt_team_tasks")
	cfg.Cohort = root.str("cohort")

	if rs, ok := root.object("resource_sharing"); ok {
		cfg.Sharing.Strategy = rs.str("strategy")
		cfg.Sharing.BorrowLimit = rs.int64("borrow_limit")
		limits, _, isNull := rs.list("absolute_borrow_limits")
		if !isNull && !cfg.IsUnknown("resource_sharing", "absolute_borrow_limits") {
			cfg.Sharing.AbsoluteBorrowLimits = []quota.AbsoluteBorrowLimit{}
		}
		for _, l := range limits {
			cfg.Sharing.AbsoluteBorrowLimits = append(cfg.Sharing.AbsoluteBorrowLimits, quota.AbsoluteBorrowLimit{
				InstanceType: derefStr(l.str("instance_type")),
				Accelerators: l.int64("accelerators"),
				VCPU:         l.rat("vcpu"),
				MemoryGiB:    l.rat("memory_in_gib"),
			})
		}
	}

	entries, _, _ := root.list("resources")
	for _, e := range entries {
		entry := quota.Entry{
			InstanceType: derefStr(e.str("instance_type")),
			Count:        e.int64("count"),
			Accelerators: e.int64(attrAccelerators),
			EFA:          e.int64(attrEFA),
			VCPU:         e.rat(attrVCPU),
			MemoryGiB:    e.rat(attrMemory),
		}
		if p, ok := e.object("accelerator_partition"); ok {
			typ, count := p.str("type"), p.int64("count")
			if cfg.IsUnknown(p.path("type")...) || cfg.IsUnknown(p.path("count")...) {
				cfg.MarkUnknown(p.at...) // a partition is checked and sized only as a whole
			}
			entry.Partition = &quota.Partition{Type: derefStr(typ), Count: derefInt(count)}
		}
		cfg.Resources = append(cfg.Resources, entry)
	}
	return cfg
}

func derefStr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefInt(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}

// plannedQuotaModel is the plan of a configuration: every configured value exactly as written
// (unknown, null and empty included) and every unset computed value from rc, or unknown where
// it depends on a value not known yet.
func plannedQuotaModel(config computeQuotaModel, rc quota.ResolvedConfig) (computeQuotaModel, diag.Diagnostics) {
	var diags diag.Diagnostics
	c := rc.Config
	p := config
	p.ID, p.ClusterQueueName = types.StringUnknown(), types.StringUnknown()
	if !config.Team.IsUnknown() {
		p.ID, p.ClusterQueueName = config.Team, types.StringValue(quota.ClusterQueueName(c.Team))
	}
	if config.ActivationState.IsNull() {
		p.ActivationState = types.StringValue(rc.ActivationState)
	}
	if config.PreemptTeamTasks.IsNull() {
		p.PreemptTeamTasks = types.StringValue(rc.PreemptTeamTasks)
	}
	if config.Cohort.IsNull() {
		p.Cohort = types.StringValue(rc.Cohort)
	}
	if config.FairShareWeight.IsNull() {
		p.FairShareWeight = types.Int64Value(rc.FairShareWeight)
	}

	borrow := types.Int64PointerValue(rc.BorrowLimit)
	if c.IsUnknown("resource_sharing", "strategy") {
		borrow = types.Int64Unknown() // the default depends on the strategy
	}
	switch rs := config.ResourceSharing; {
	case rs.IsNull():
		obj, d := types.ObjectValue(resourceSharingAttrTypes, map[string]attr.Value{
			"strategy": types.StringValue(rc.Strategy), "borrow_limit": borrow,
			"absolute_borrow_limits": types.ListNull(types.ObjectType{AttrTypes: absoluteLimitAttrTypes}),
		})
		diags.Append(d...)
		p.ResourceSharing = obj
	case !rs.IsUnknown():
		attrs := copyAttrs(rs.Attributes())
		if attrs["strategy"].IsNull() {
			attrs["strategy"] = types.StringValue(rc.Strategy)
		}
		if attrs["borrow_limit"].IsNull() {
			attrs["borrow_limit"] = borrow
		}
		obj, d := types.ObjectValue(resourceSharingAttrTypes, attrs)
		diags.Append(d...)
		p.ResourceSharing = obj
	}

	if config.Resources.IsNull() || config.Resources.IsUnknown() {
		return p, diags
	}
	var elems []attr.Value
	for i, e := range config.Resources.Elements() {
		o, ok := e.(types.Object)
		if !ok || o.IsNull() || o.IsUnknown() || i >= len(rc.Resources) {
			elems = append(elems, e)
			continue
		}
		r := rc.Resources[i]
		attrs := copyAttrs(o.Attributes())
		computed := map[string]attr.Value{
			attrAccelerators: types.Int64Value(r.Accelerators),
			attrVCPU:         floatOrNull(r.VCPU),
			attrMemory:       floatOrNull(r.MemoryGiB),
			attrEFA:          types.Int64Value(r.EFA),
		}
		for name, v := range computed {
			if !attrs[name].IsNull() {
				continue // configured, or unknown in the configuration
			}
			if r.Unknown {
				v = unknownLike(v)
			}
			attrs[name] = v
		}
		obj, d := types.ObjectValue(resourceEntryAttrTypes, attrs)
		diags.Append(d...)
		elems = append(elems, obj)
	}
	list, d := types.ListValue(types.ObjectType{AttrTypes: resourceEntryAttrTypes}, elems)
	diags.Append(d...)
	p.Resources = list
	return p, diags
}

func copyAttrs(in map[string]attr.Value) map[string]attr.Value {
	out := make(map[string]attr.Value, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

func unknownLike(v attr.Value) attr.Value {
	switch v.(type) {
	case types.Float64:
		return types.Float64Unknown()
	case types.Int64:
		return types.Int64Unknown()
	}
	return types.StringUnknown()
}

// quotaModelFromResolved is the state of a quota read from the cluster (all values known):
// configured-only attributes (count, partition, absolute limits, name, description) come from
// rc.Config, computed ones from the resolved values.
func quotaModelFromResolved(rc quota.ResolvedConfig) (computeQuotaModel, diag.Diagnostics) {
	var diags diag.Diagnostics
	c := rc.Config
	m := computeQuotaModel{
		ID:               types.StringValue(c.Team),
		Name:             types.StringValue(c.Name),
		Description:      types.StringNull(),
		Team:             types.StringValue(c.Team),
		ActivationState:  types.StringValue(rc.ActivationState),
		PreemptTeamTasks: types.StringValue(rc.PreemptTeamTasks),
		FairShareWeight:  types.Int64Value(rc.FairShareWeight),
		Cohort:           types.StringValue(rc.Cohort),
		ClusterQueueName: types.StringValue(quota.ClusterQueueName(c.Team)),
		Timeouts:         timeouts.Value{Object: types.ObjectNull(timeoutsAttrTypes)},
	}
	if c.Description != "" {
		m.Description = types.StringValue(c.Description)
	}

	limitType := types.ObjectType{AttrTypes: absoluteLimitAttrTypes}
	limits := types.ListNull(limitType)
	if rc.AbsoluteBorrowLimits != nil {
		elems := []attr.Value{}
		for _, l := range rc.AbsoluteBorrowLimits {
			obj, d := types.ObjectValue(absoluteLimitAttrTypes, map[string]attr.Value{
				"instance_type": types.StringValue(l.InstanceType),
				"accelerators":  types.Int64PointerValue(l.Accelerators),
				"vcpu":          floatOrNull(l.VCPU),
				"memory_in_gib": floatOrNull(l.MemoryGiB),
			})
			diags.Append(d...)
			elems = append(elems, obj)
		}
		l, d := types.ListValue(limitType, elems)
		diags.Append(d...)
		limits = l
	}
	sharing, d := types.ObjectValue(resourceSharingAttrTypes, map[string]attr.Value{
		"strategy": types.StringValue(rc.Strategy), "borrow_limit": types.Int64PointerValue(rc.BorrowLimit),
		"absolute_borrow_limits": limits,
	})
	diags.Append(d...)
	m.ResourceSharing = sharing

	var elems []attr.Value
	for _, r := range rc.Resources {
		e := r.Configured
		partition := types.ObjectNull(partitionAttrTypes)
		if e.Partition != nil {
			p, d := types.ObjectValue(partitionAttrTypes, map[string]attr.Value{
				"type": types.StringValue(e.Partition.Type), "count": types.Int64Value(e.Partition.Count),
			})
			diags.Append(d...)
			partition = p
		}
		obj, d := types.ObjectValue(resourceEntryAttrTypes, map[string]attr.Value{
			"instance_type":         types.StringValue(e.InstanceType),
			"count":                 types.Int64PointerValue(e.Count),
			attrAccelerators:        types.Int64Value(r.Accelerators),
			attrVCPU:                floatOrNull(r.VCPU),
			attrMemory:              floatOrNull(r.MemoryGiB),
			attrEFA:                 types.Int64Value(r.EFA),
			"accelerator_partition": partition,
		})
		diags.Append(d...)
		elems = append(elems, obj)
	}
	list, d := types.ListValue(types.ObjectType{AttrTypes: resourceEntryAttrTypes}, elems)
	diags.Append(d...)
	m.Resources = list
	return m, diags
}

func floatOrNull(r *big.Rat) types.Float64 {
	if r == nil {
		return types.Float64Null()
	}
	return types.Float64Value(quota.FloatFromRat(r))
}

// instanceTypesOf lists the instance types of a model's resources that are known.
func instanceTypesOf(m computeQuotaModel) []string {
	if m.Resources.IsNull() || m.Resources.IsUnknown() {
		return nil
	}
	var out []string
	for _, e := range m.Resources.Elements() {
		o, ok := e.(types.Object)
		if !ok || o.IsNull() || o.IsUnknown() {
			continue
		}
		if t, ok := o.Attributes()["instance_type"].(types.String); ok && !t.IsNull() && !t.IsUnknown() {
			out = append(out, t.ValueString())
		}
	}
	return out
}

// removedTypes are the instance types of prior that plan no longer has.
func removedTypes(prior, plan computeQuotaModel) []string {
	keep := map[string]bool{}
	for _, t := range instanceTypesOf(plan) {
		keep[t] = true
	}
	var out []string
	for _, t := range instanceTypesOf(prior) {
		if !keep[t] {
			out = append(out, t)
		}
	}
	return out
}
