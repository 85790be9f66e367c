package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// BenchmarkRefreshPlan measures the provider's share of a no-op plan of compute quotas on the
// SageMaker path, per quota: the RPCs Terraform makes for each resource in state (validate the
// configuration, upgrade the stored state, read it, plan it against its configuration), answered
// by a provider process that has listed the cluster's quotas once, as in a run of Terraform.
// The plan is checked to be empty first.
//
//	go test ./internal/provider -run '^$' -bench RefreshPlan -cpuprofile cpu.out
func BenchmarkRefreshPlan(b *testing.B) {
	const quotas = 100
	emu, err := sagemakeremulator.Start(sagemakeremulator.Options{
		Clusters: []sagemakeremulator.Cluster{{Name: "bench", InstanceGroups: []sagemakeremulator.InstanceGroup{
			{Name: "p5", InstanceType: "ml.p5.48xlarge", Count: 4}, {Name: "trn1", InstanceType: "ml.trn1.32xlarge", Count: 4},
			{Name: "c5", InstanceType: "ml.c5.4xlarge", Count: 4},
		}}},
		Settle: &sagemakeremulator.SettleRule{After: time.Nanosecond}, // a waiter's first Describe sees the outcome
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = emu.Close() })
	attrs := func(pt tftypes.Object) map[string]tftypes.Value {
		tg := pt.AttributeTypes["task_governance"].(tftypes.Object)
		s := func(v string) tftypes.Value { return tftypes.NewValue(tftypes.String, v) }
		return map[string]tftypes.Value{"task_governance": objectOf(tg, map[string]tftypes.Value{
			"cluster_arn": s(emu.ClusterARN("bench")), "endpoint": s(emu.URL()), "access_key": s("bench"), "secret_key": s("bench"),
		})}
	}
	const typeName = "hyperpod_compute_quota"
	writer := newPlanCostServer(b, attrs)
	configs := make([]tfprotov6.DynamicValue, quotas)
	states := make([]*tfprotov6.DynamicValue, quotas)
	privates := make([][]byte, quotas)
	var wg sync.WaitGroup
	for i := range configs {
		configs[i] = writer.benchQuotaConfig(b, fmt.Sprintf("bench-%04d", i+1))
		wg.Go(func() { states[i], privates[i] = writer.create(b, typeName, configs[i]) })
	}
	wg.Wait()

	p := newPlanCostServer(b, attrs) // a new process: it lists the quotas once
	t := p.types[typeName]
	raw := make([][]byte, quotas)
	for i, s := range states {
		v, err := s.Unmarshal(t)
		if err != nil {
			b.Fatal(err)
		}
		if raw[i], err = json.Marshal(jsonOf(v)); err != nil {
			b.Fatal(err)
		}
		if changed := p.refreshPlan(b, typeName, configs[i], raw[i], privates[i]); changed {
			b.Fatalf("quota %d: the plan after a refresh of the quota as created is not empty", i)
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		j := i % quotas
		p.refreshPlan(b, typeName, configs[j], raw[j], privates[j])
	}
}

// create plans and applies a new resource, and returns its state and private state.
func (p *planCostServer) create(tb testing.TB, typeName string, config tfprotov6.DynamicValue) (*tfprotov6.DynamicValue, []byte) {
	ctx := context.Background()
	t := p.types[typeName]
	prior := dynamicValue(tb, t, tftypes.NewValue(t, nil))
	plan, err := p.srv.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName: typeName, PriorState: &prior, ProposedNewState: &config, Config: &config,
	})
	if err != nil || hasError(plan.Diagnostics) {
		tb.Errorf("PlanResourceChange: %v %v", err, plan.Diagnostics)
		return nil, nil
	}
	resp, err := p.srv.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{
		TypeName: typeName, PriorState: &prior, PlannedState: plan.PlannedState, Config: &config, PlannedPrivate: plan.PlannedPrivate,
	})
	if err != nil || hasError(resp.Diagnostics) {
		tb.Errorf("ApplyResourceChange: %v %v", err, resp.Diagnostics)
		return nil, nil
	}
	return resp.NewState, resp.Private
}

// refreshPlan is what Terraform asks of the provider for one resource in state in a plan:
// validate the configuration, upgrade the stored state, refresh it, and plan it against the
// configuration. It reports whether the plan changes anything.
func (p *planCostServer) refreshPlan(tb testing.TB, typeName string, config tfprotov6.DynamicValue, rawState, private []byte) bool {
	ctx := context.Background()
	t := p.types[typeName]
	v, err := p.srv.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: typeName, Config: &config})
	if err != nil || hasError(v.Diagnostics) {
		tb.Fatalf("ValidateResourceConfig: %v %v", err, v.Diagnostics)
	}
	up, err := p.srv.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{TypeName: typeName, RawState: &tfprotov6.RawState{JSON: rawState}})
	if err != nil || hasError(up.Diagnostics) {
		tb.Fatalf("UpgradeResourceState: %v %v", err, up.Diagnostics)
	}
	read, err := p.srv.ReadResource(ctx, &tfprotov6.ReadResourceRequest{TypeName: typeName, CurrentState: up.UpgradedState, Private: private})
	if err != nil || hasError(read.Diagnostics) {
		tb.Fatalf("ReadResource: %v %v", err, read.Diagnostics)
	}
	prior, err := read.NewState.Unmarshal(t)
	if err != nil {
		tb.Fatal(err)
	}
	cfg, err := config.Unmarshal(t)
	if err != nil {
		tb.Fatal(err)
	}
	proposed := dynamicValue(tb, t, proposedNew(prior, cfg))
	plan, err := p.srv.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName: typeName, PriorState: read.NewState, ProposedNewState: &proposed, Config: &config, PriorPrivate: read.Private,
	})
	if err != nil || hasError(plan.Diagnostics) {
		tb.Fatalf("PlanResourceChange: %v %v", err, plan.Diagnostics)
	}
	planned, err := plan.PlannedState.Unmarshal(t)
	if err != nil {
		tb.Fatal(err)
	}
	return !planned.Equal(prior) || len(plan.RequiresReplace) > 0
}

// proposedNew is Terraform's proposed new state for a configuration whose every null value the
// provider may compute: the configuration, with the prior state's value wherever it is null.
func proposedNew(prior, config tftypes.Value) tftypes.Value {
	if config.IsNull() {
		return prior
	}
	if !config.IsKnown() || prior.IsNull() || !prior.IsKnown() {
		return config
	}
	switch ty := config.Type().(type) {
	case tftypes.Object:
		var c, p map[string]tftypes.Value
		_ = config.As(&c)
		_ = prior.As(&p)
		out := make(map[string]tftypes.Value, len(c))
		for k, v := range c {
			out[k] = proposedNew(p[k], v)
		}
		return tftypes.NewValue(ty, out)
	case tftypes.List:
		var c, p []tftypes.Value
		_ = config.As(&c)
		_ = prior.As(&p)
		out := make([]tftypes.Value, len(c))
		for i, v := range c {
			if i < len(p) {
				out[i] = proposedNew(p[i], v)
			} else {
				out[i] = v
			}
		}
		return tftypes.NewValue(ty, out)
	}
	return config
}

// jsonOf is a known value as Terraform stores it in a state file.
func jsonOf(v tftypes.Value) any {
	if v.IsNull() {
		return nil
	}
	switch {
	case v.Type().Is(tftypes.String):
		var s string
		_ = v.As(&s)
		return s
	case v.Type().Is(tftypes.Bool):
		var x bool
		_ = v.As(&x)
		return x
	case v.Type().Is(tftypes.Number):
		var f big.Float
		_ = v.As(&f)
		return json.Number(f.Text('g', -1))
	case v.Type().Is(tftypes.Object{}), v.Type().Is(tftypes.Map{}):
		var m map[string]tftypes.Value
		_ = v.As(&m)
		out := make(map[string]any, len(m))
		for k, e := range m {
			out[k] = jsonOf(e)
		}
		return out
	default:
		var l []tftypes.Value
		_ = v.As(&l)
		out := make([]any, len(l))
		for i, e := range l {
			out[i] = jsonOf(e)
		}
		return out
	}
}
