package provider

import (
	"math/big"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Conversion between hyperpod_compute_quota's Terraform values (computeQuotaModel) and the pure
// domain (quota.Config, quota.ResolvedConfig), through the models of models.go.

// Attribute types of the nested objects, from their models.
var (
	partitionAttrTypes       = attrTypesOf[partitionModel]()
	absoluteLimitAttrTypes   = attrTypesOf[limitModel]()
	resourceEntryAttrTypes   = attrTypesOf[resourceEntryModel]()
	resourceSharingAttrTypes = attrTypesOf[sharingModel]()
	timeoutsAttrTypes        = attrTypesOf[timeoutsModel]()
)

// quotaConfigFromModel converts configuration (or plan) values to quota.Config, marking every
// unknown value at its path. Nothing here fails on an unknown or null value, at any depth. An
// empty list stays an empty (non-nil) slice, a null one nil.
func quotaConfigFromModel(m computeQuotaModel) quota.Config {
	cfg := quota.Config{}
	modelUnknownPaths(m, path.Empty(), func(p path.Path) { cfg.MarkUnknown(pathSteps(p)...) })
	cfg.Name, cfg.Description, cfg.Team = m.Name.ValueString(), m.Description.ValueString(), m.Team.ValueString()
	cfg.FairShareWeight = m.FairShareWeight.ValueInt64()
	cfg.ActivationState = knownString(m.ActivationState)
	cfg.PreemptTeamTasks = knownString(m.PreemptTeamTasks)
	cfg.Cohort = knownString(m.Cohort)

	if s, ok := modelOf[sharingModel](m.ResourceSharing); ok {
		cfg.Sharing.Strategy = knownString(s.Strategy)
		cfg.Sharing.BorrowLimit = knownInt64(s.BorrowLimit)
		if !s.AbsoluteBorrowLimits.IsNull() && !s.AbsoluteBorrowLimits.IsUnknown() {
			cfg.Sharing.AbsoluteBorrowLimits = []quota.AbsoluteBorrowLimit{}
		}
		for j, l := range elementsOf[limitModel](s.AbsoluteBorrowLimits) {
			cfg.Sharing.AbsoluteBorrowLimits = append(cfg.Sharing.AbsoluteBorrowLimits, quota.AbsoluteBorrowLimit{
				InstanceType: l.InstanceType.ValueString(),
				Count:        knownInt64(l.Count),
				Accelerators: knownInt64(l.Accelerators),
				VCPU:         knownDecimal(l.VCPU),
				MemoryGiB:    knownDecimal(l.MemoryInGiB),
				Partition: partitionFromModel(l.Partition, func() {
					cfg.MarkUnknown(tagOf[computeQuotaModel]("ResourceSharing"), tagOf[sharingModel]("AbsoluteBorrowLimits"),
						strconv.Itoa(j), tagOf[limitModel]("Partition"))
				}),
			})
		}
	}

	for i, e := range elementsOf[resourceEntryModel](m.Resources) {
		entry := quota.Entry{
			InstanceType: e.InstanceType.ValueString(),
			Count:        knownInt64(e.Count),
			Accelerators: knownInt64(e.Accelerators),
			EFA:          knownInt64(e.EFA),
			VCPU:         knownDecimal(e.VCPU),
			MemoryGiB:    knownDecimal(e.MemoryInGiB),
		}
		entry.Partition = partitionFromModel(e.Partition, func() {
			cfg.MarkUnknown(tagOf[computeQuotaModel]("Resources"), strconv.Itoa(i), tagOf[resourceEntryModel]("Partition"))
		})
		cfg.Resources = append(cfg.Resources, entry)
	}
	return cfg
}

// partitionFromModel is a configured accelerator_partition, nil when null or unknown; markUnknown
// marks it when it or a part of it is unknown: a partition is checked and sized only as a whole.
func partitionFromModel(o types.Object, markUnknown func()) *quota.Partition {
	p, ok := modelOf[partitionModel](o)
	if !ok {
		return nil
	}
	if p.Type.IsUnknown() || p.Count.IsUnknown() {
		markUnknown()
	}
	return &quota.Partition{Type: p.Type.ValueString(), Count: p.Count.ValueInt64()}
}

// partitionObject is the accelerator_partition value of p: null when p is nil.
func partitionObject(p *quota.Partition, diags *diag.Diagnostics) types.Object {
	if p == nil {
		return types.ObjectNull(partitionAttrTypes)
	}
	o, d := objectFrom(partitionModel{Type: types.StringValue(p.Type), Count: types.Int64Value(p.Count)})
	diags.Append(d...)
	return o
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
	if s, ok := modelOf[sharingModel](config.ResourceSharing); ok || config.ResourceSharing.IsNull() {
		if !ok {
			s.AbsoluteBorrowLimits = types.ListNull(types.ObjectType{AttrTypes: absoluteLimitAttrTypes})
		}
		if s.Strategy.IsNull() {
			s.Strategy = types.StringValue(rc.Strategy)
		}
		if s.BorrowLimit.IsNull() {
			s.BorrowLimit = borrow
		}
		obj, d := objectFrom(s)
		diags.Append(d...)
		p.ResourceSharing = obj
	}

	if config.Resources.IsNull() || config.Resources.IsUnknown() {
		return p, diags
	}
	var elems []attr.Value
	for i, e := range config.Resources.Elements() {
		o, _ := e.(types.Object)
		m, ok := modelOf[resourceEntryModel](o)
		if !ok || i >= len(rc.Resources) {
			elems = append(elems, e)
			continue
		}
		r := rc.Resources[i]
		// Configured values, and values unknown in the configuration, stay.
		if m.Accelerators.IsNull() {
			m.Accelerators = unknownIf(r.Unknown, types.Int64Value(r.Accelerators), types.Int64Unknown())
		}
		if m.VCPU.IsNull() {
			m.VCPU = unknownIf(r.Unknown, floatOrNull(r.VCPU), types.Float64Unknown())
		}
		if m.MemoryInGiB.IsNull() {
			m.MemoryInGiB = unknownIf(r.Unknown, floatOrNull(r.MemoryGiB), types.Float64Unknown())
		}
		if m.EFA.IsNull() {
			m.EFA = unknownIf(r.Unknown, types.Int64Value(r.EFA), types.Int64Unknown())
		}
		obj, d := objectFrom(m)
		diags.Append(d...)
		elems = append(elems, obj)
	}
	list, d := types.ListValue(types.ObjectType{AttrTypes: resourceEntryAttrTypes}, elems)
	diags.Append(d...)
	p.Resources = list
	return p, diags
}

// unknownIf is unknown when the value is not known yet, else known.
func unknownIf[T attr.Value](notKnownYet bool, known, unknown T) T {
	if notKnownYet {
		return unknown
	}
	return known
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
		tagsModel:        tagsModel{Tags: types.MapNull(types.StringType), TagsAll: tagsValue(c.Tags)},
		Timeouts:         timeouts.Value{Object: types.ObjectNull(timeoutsAttrTypes)},
	}
	if c.Description != "" {
		m.Description = types.StringValue(c.Description)
	}

	limits := types.ListNull(types.ObjectType{AttrTypes: absoluteLimitAttrTypes})
	if rc.AbsoluteBorrowLimits != nil {
		models := []limitModel{}
		for _, l := range rc.AbsoluteBorrowLimits {
			models = append(models, limitModel{InstanceType: types.StringValue(l.InstanceType), Count: types.Int64PointerValue(l.Count),
				Accelerators: types.Int64PointerValue(l.Accelerators), Partition: partitionObject(l.Partition, &diags),
				VCPU: floatOrNull(l.VCPU), MemoryInGiB: floatOrNull(l.MemoryGiB)})
		}
		l, d := listFrom(models)
		diags.Append(d...)
		limits = l
	}
	sharing, d := objectFrom(sharingModel{Strategy: types.StringValue(rc.Strategy),
		BorrowLimit: types.Int64PointerValue(rc.BorrowLimit), AbsoluteBorrowLimits: limits})
	diags.Append(d...)
	m.ResourceSharing = sharing

	entries := []resourceEntryModel{} // an empty list, not null, when there is none
	for _, r := range rc.Resources {
		e := r.Configured
		entries = append(entries, resourceEntryModel{limitModel: limitModel{
			InstanceType: types.StringValue(e.InstanceType), Count: types.Int64PointerValue(e.Count),
			Accelerators: types.Int64Value(r.Accelerators), VCPU: floatOrNull(r.VCPU), MemoryInGiB: floatOrNull(r.MemoryGiB),
			Partition: partitionObject(e.Partition, &diags),
		}, EFA: types.Int64Value(r.EFA)})
	}
	list, d := listFrom(entries)
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
	var out []string
	for _, e := range elementsOf[resourceEntryModel](m.Resources) {
		if t := knownString(e.InstanceType); t != nil {
			out = append(out, *t)
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

// storeRecordOf is what a store that assigns ids records of an object; null where the record
// carries no id (an incarnation's UID is not a version the state can send back).
func storeRecordOf(r backend.Record) (id types.String, m storeRecordModel) {
	if r.ID == "" {
		return types.StringNull(), storeRecordModel{ARN: types.StringNull(), Version: types.Int64Null(), Status: types.StringNull()}
	}
	version := types.Int64Null()
	if n, err := strconv.ParseInt(r.Version, 10, 64); err == nil {
		version = types.Int64Value(n)
	}
	status := types.StringNull()
	if r.Status != "" {
		status = types.StringValue(r.Status)
	}
	arn := types.StringNull()
	if r.ARN != "" {
		arn = types.StringValue(r.ARN)
	}
	return types.StringValue(r.ID), storeRecordModel{ARN: arn, Version: version, Status: status}
}

// record is the store's record as the state last saw it: what an update names as its base.
func (m storeRecordModel) record(id types.String) *backend.Record {
	if id.IsNull() || id.IsUnknown() {
		return nil
	}
	r := &backend.Record{ID: id.ValueString(), ARN: m.ARN.ValueString()}
	if !m.Version.IsNull() && !m.Version.IsUnknown() {
		r.Version = strconv.FormatInt(m.Version.ValueInt64(), 10)
	}
	return r
}

// recordOwner sets the owner identity and the drift lines a read found.
func (m *computeQuotaModel) recordOwner(owner string, drift types.List) {
	m.OwnerID, m.Drift = types.StringValue(owner), drift
}

func (m *computeQuotaModel) plannedTeam() string          { return m.Team.ValueString() }
func (m *computeQuotaModel) createTimeout() timeoutGetter { return m.Timeouts.Create }

func (m computeQuotaModel) lastSeen() *backend.Quota {
	r := m.record(m.QuotaID)
	if r == nil {
		return nil
	}
	q := &backend.Quota{Record: *r}
	q.Config.Config.Description = m.Description.ValueString()
	return q
}
