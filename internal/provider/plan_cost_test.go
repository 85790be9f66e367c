package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/rpcctx"
)

// planCostServer is the provider as main.go serves it, configured for one of the two paths,
// with the resource types of its schema: the RPCs a plan of new resources makes, without
// Terraform or gRPC around them.
type planCostServer struct {
	srv   tfprotov6.ProviderServer
	types map[string]tftypes.Object
}

// newPlanCostServer starts the provider and configures it with the attributes providerAttrs
// returns for the provider block's type.
func newPlanCostServer(tb testing.TB, providerAttrs func(tftypes.Object) map[string]tftypes.Value) *planCostServer {
	tb.Helper()
	ctx := context.Background()
	s, err := NewServer("bench")()
	if err != nil {
		tb.Fatal(err)
	}
	srv := rpcctx.Wrap(s)
	schemas, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || len(schemas.Diagnostics) > 0 {
		tb.Fatalf("GetProviderSchema: %v %v", err, schemas.Diagnostics)
	}
	p := &planCostServer{srv: srv, types: map[string]tftypes.Object{}}
	for name, sch := range schemas.ResourceSchemas {
		p.types[name] = sch.ValueType().(tftypes.Object)
	}
	providerType := schemas.Provider.ValueType().(tftypes.Object)
	cfg := dynamicValue(tb, providerType, objectOf(providerType, providerAttrs(providerType)))
	resp, err := srv.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: &cfg})
	if err != nil || len(resp.Diagnostics) > 0 {
		tb.Fatalf("ConfigureProvider: %v %v", err, resp.Diagnostics)
	}
	return p
}

// objectOf is an object of type t with the attributes in set and every other one null.
func objectOf(t tftypes.Object, set map[string]tftypes.Value) tftypes.Value {
	vals := make(map[string]tftypes.Value, len(t.AttributeTypes))
	for name, at := range t.AttributeTypes {
		if v, ok := set[name]; ok {
			vals[name] = v
		} else {
			vals[name] = tftypes.NewValue(at, nil)
		}
	}
	return tftypes.NewValue(t, vals)
}

func dynamicValue(tb testing.TB, t tftypes.Type, v tftypes.Value) tfprotov6.DynamicValue {
	tb.Helper()
	dv, err := tfprotov6.NewDynamicValue(t, v)
	if err != nil {
		tb.Fatal(err)
	}
	return dv
}

// planNew is what Terraform asks of the provider to plan one new resource: validate its
// configuration, then plan its creation.
func (p *planCostServer) planNew(tb testing.TB, typeName string, config tfprotov6.DynamicValue) {
	ctx := context.Background()
	t := p.types[typeName]
	v, err := p.srv.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: typeName, Config: &config})
	if err != nil || hasError(v.Diagnostics) {
		tb.Fatalf("ValidateResourceConfig: %v %v", err, v.Diagnostics)
	}
	prior := dynamicValue(tb, t, tftypes.NewValue(t, nil))
	resp, err := p.srv.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName: typeName, PriorState: &prior, ProposedNewState: &config, Config: &config,
	})
	if err != nil || hasError(resp.Diagnostics) {
		tb.Fatalf("PlanResourceChange: %v %v", err, resp.Diagnostics)
	}
}

func hasError(ds []*tfprotov6.Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			return true
		}
	}
	return false
}

// benchQuotaConfig is a quota as the bench writes it: three instance types, sized by
// accelerators or vCPU.
func (p *planCostServer) benchQuotaConfig(tb testing.TB, team string) tfprotov6.DynamicValue {
	t := p.types["hyperpod_compute_quota"]
	entryType := t.AttributeTypes["resources"].(tftypes.List).ElementType.(tftypes.Object)
	entry := func(instanceType, field string, amount tftypes.Value) tftypes.Value {
		return objectOf(entryType, map[string]tftypes.Value{
			"instance_type": tftypes.NewValue(tftypes.String, instanceType), field: amount,
		})
	}
	one := tftypes.NewValue(tftypes.Number, 1)
	return dynamicValue(tb, t, objectOf(t, map[string]tftypes.Value{
		"name": tftypes.NewValue(tftypes.String, team),
		"team": tftypes.NewValue(tftypes.String, team),
		"resources": tftypes.NewValue(t.AttributeTypes["resources"], []tftypes.Value{
			entry("ml.p5.48xlarge", "accelerators", one),
			entry("ml.trn1.32xlarge", "accelerators", one),
			entry("ml.c5.4xlarge", "vcpu", one),
		}),
	}))
}

func (p *planCostServer) benchNamespaceConfig(tb testing.TB, team string) tfprotov6.DynamicValue {
	t := p.types["hyperpod_team_namespace"]
	return dynamicValue(tb, t, objectOf(t, map[string]tftypes.Value{"team": tftypes.NewValue(tftypes.String, team)}))
}

// BenchmarkPlanNew measures the provider's share of planning new resources, per resource, on
// both paths: Terraform's validate and plan RPCs, answered by the framework and the provider.
//
//	go test ./internal/provider -run '^$' -bench PlanNew -cpuprofile cpu.out
func BenchmarkPlanNew(b *testing.B) {
	paths := []struct {
		name  string
		attrs func(providerType tftypes.Object) map[string]tftypes.Value
	}{
		{"kubernetes", func(tftypes.Object) map[string]tftypes.Value {
			return map[string]tftypes.Value{"host": tftypes.NewValue(tftypes.String, "http://127.0.0.1:1")}
		}},
		{"sagemaker", func(pt tftypes.Object) map[string]tftypes.Value {
			tg := pt.AttributeTypes["task_governance"].(tftypes.Object)
			s := func(v string) tftypes.Value { return tftypes.NewValue(tftypes.String, v) }
			return map[string]tftypes.Value{"task_governance": objectOf(tg, map[string]tftypes.Value{
				"cluster_arn": s("arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdefghijkl"),
				"endpoint":    s("http://127.0.0.1:1"), "access_key": s("bench"), "secret_key": s("bench"),
			})}
		}},
	}
	for _, path := range paths {
		b.Run(path.name, func(b *testing.B) {
			p := newPlanCostServer(b, path.attrs)
			for _, typeName := range []string{"hyperpod_compute_quota", "hyperpod_team_namespace"} {
				b.Run(typeName, func(b *testing.B) {
					configs := make([]tfprotov6.DynamicValue, 100)
					for i := range configs {
						team := fmt.Sprintf("bench-%04d", i+1)
						if typeName == "hyperpod_compute_quota" {
							configs[i] = p.benchQuotaConfig(b, team)
						} else {
							configs[i] = p.benchNamespaceConfig(b, team)
						}
					}
					b.ReportAllocs()
					for i := 0; b.Loop(); i++ {
						p.planNew(b, typeName, configs[i%len(configs)])
					}
				})
			}
		})
	}
}
