package provider

import (
	"context"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

// Provider-defined functions need Terraform 1.8.
var functionVersionChecks = []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)}

// defaultsValue is an expected quota_defaults result; partition is nil for a null one.
func defaultsValue(acc int64, vcpu, mem float64, efa int64, partition map[string]knownvalue.Check) knownvalue.Check {
	var p knownvalue.Check = knownvalue.Null()
	if partition != nil {
		p = knownvalue.ObjectExact(partition)
	}
	return knownvalue.ObjectExact(map[string]knownvalue.Check{
		"accelerators": knownvalue.Int64Exact(acc), "vcpu": knownvalue.Float64Exact(vcpu),
		"memory_in_gib": knownvalue.Float64Exact(mem), "efa": knownvalue.Int64Exact(efa), "accelerator_partition": p,
	})
}

func mig(profile string, count int64) map[string]knownvalue.Check {
	return map[string]knownvalue.Check{"type": knownvalue.StringExact(profile), "count": knownvalue.Int64Exact(count)}
}

// Expected numbers are the documented ratio rule worked by hand from the built-in catalog
// figures (accelerators, vCPU, GiB, EFA per instance), which each case quotes.
func TestFunction_quotaDefaults(t *testing.T) {
	cases := []struct {
		name, call string
		want       knownvalue.Check
	}{
		// ml.p5.48xlarge 8/192/2048/32; r = 4/8: vcpu 96, memory 1024, efa ceil(1/2) x 32.
		{"p5_accelerators", `"ml.p5.48xlarge", { accelerators = 4 }`, defaultsValue(4, 96, 1024, 32, nil)},
		// ml.g5.12xlarge 4/48/192/1; r = count = 1.
		{"g5_count", `"ml.g5.12xlarge", { count = 1 }`, defaultsValue(4, 48, 192, 1, nil)},
		// ml.p4d.24xlarge 8/96/1152/4; r = 2 x 1 / (8 x 7) = 1/28: vcpu 3.4285.. -> 3.428,
		// memory 41.1428.. GiB = 42130.28 MiB -> 42130/1024, efa ceil(1/28) x 4.
		{"p4d_partition", `"ml.p4d.24xlarge", { accelerator_partition = { type = "mig-1g.5gb", count = 2 } }`,
			defaultsValue(0, 3.428, 41.142578125, 4, mig("mig-1g.5gb", 2))},
		// ml.c5.9xlarge 0/36/72/0; r = 2.9/72: vcpu 1.45 exactly (not 1.449).
		{"c5_memory_decimal", `"ml.c5.9xlarge", { memory_in_gib = 2.9 }`, defaultsValue(0, 1.45, 2.9, 0, nil)},
		// ml.g5.24xlarge 4/96/384/1; everything configured but efa: r = 16/4, efa 4 x 1.
		{"g5_configured", `"ml.g5.24xlarge", { accelerators = 16, vcpu = 200, memory_in_gib = 2 }`, defaultsValue(16, 200, 2, 4, nil)},
		// ml.c5n.9xlarge 0/36/96/1; r = 5/36: memory 13.33.. GiB = 13653.33 MiB -> 13653/1024.
		{"c5n_vcpu", `"ml.c5n.9xlarge", { vcpu = 5 }`, defaultsValue(0, 5, 13.3330078125, 1, nil)},
		// ml.trn1.32xlarge 16/128/512/8; r = 8/16.
		{"trn1_accelerators", `"ml.trn1.32xlarge", { accelerators = 8 }`, defaultsValue(8, 64, 256, 8, nil)},
		// ml.p5.48xlarge, count 2: 16 GPUs, 384 vCPU, 4096 GiB; the configured efa = 0 wins over 64.
		{"configured_efa_wins", `"ml.p5.48xlarge", { count = 2, efa = 0 }`, defaultsValue(16, 384, 4096, 0, nil)},
		// Null attributes are unset, as in an object variable with optional attributes: r = 2/4
		// of ml.g5.12xlarge.
		{"null_attributes", `"ml.g5.12xlarge", { count = null, accelerators = 2, vcpu = null }`, defaultsValue(2, 24, 96, 1, nil)},
		// A whole resources entry: ml.g5.xlarge 1/4/16/0, r = 8/16.
		{"whole_entry", `"ml.g5.xlarge", { instance_type = "ml.g5.xlarge", memory_in_gib = 8 }`, defaultsValue(0, 2, 8, 0, nil)},
		// A map works too, and numeric strings convert as in the resource: r = 1 of ml.g5.12xlarge.
		{"map_of_strings", `"ml.g5.12xlarge", tomap({ count = "1" })`, defaultsValue(4, 48, 192, 1, nil)},
	}
	var config strings.Builder
	var checks []statecheck.StateCheck
	for _, c := range cases {
		fmt.Fprintf(&config, "output %q {\n  value = provider::hyperpod::quota_defaults(%s)\n}\n", c.name, c.call)
		checks = append(checks, statecheck.ExpectKnownOutputValue(c.name, c.want))
	}
	resource.UnitTest(t, resource.TestCase{
		TerraformVersionChecks:   functionVersionChecks,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:            config.String(),
			ConfigStateChecks: checks,
		}},
	})
}

// Every problem the resource's plan reports for an entry is a function error naming the
// argument, and so are allocations the function cannot read.
func TestFunction_quotaDefaultsErrors(t *testing.T) {
	cases := []struct{ call, want string }{
		{`"ml.p5.48xl", { count = 1 }`, `Invalid value for "instance_type" parameter: Unknown instance type:.*Did you mean "ml\.p5\.48xlarge".*Known types, by family:.*ml\.trn2\.\{3xlarge, 48xlarge\}.*instance_types`},
		{`"ml.g5.12xlarge", { count = 1, accelerators = 2 }`, `Invalid value for "allocation" parameter: Conflicting attributes: allocation\.accelerators: count and accelerators are both set`},
		{`"ml.p4d.24xlarge", { count = 1, accelerator_partition = { type = "mig-1g.5gb", count = 1 } }`, `"allocation" parameter: Conflicting attributes: allocation\.accelerator_partition: count and accelerator_partition`},
		{`"ml.p4d.24xlarge", { accelerators = 1, accelerator_partition = { type = "mig-1g.5gb", count = 1 } }`, `"allocation" parameter: Conflicting attributes:.*accelerators and accelerator_partition are both set`},
		{`"ml.g5.12xlarge", {}`, `"allocation" parameter: No quota size: allocation: none of count,`},
		{`"ml.g5.12xlarge", null`, `"allocation" parameter: No quota size`},
		{`"ml.c5.xlarge", { vcpu = -1 }`, `"allocation" parameter: Negative value: allocation\.vcpu: vcpu is -1`},
		{`"ml.c5.xlarge", { vcpu = 0.0001 }`, `"allocation" parameter: Too many decimal places: allocation\.vcpu`},
		{`"ml.p5.48xlarge", { count = 10000000 }`, `"allocation" parameter: Computed value too large: allocation\.accelerators: accelerators would be 80000000`},
		{`"ml.c5.xlarge", { accelerators = 1, vcpu = 1 }`, `"allocation" parameter: Instance type has no accelerators: allocation\.accelerators: accelerators = 1, but ml\.c5\.xlarge has no accelerators`},
		{`"ml.p4d.24xlarge", { accelerator_partition = { type = "mig-1g.18gb", count = 1 } }`, `"allocation" parameter: MIG profile not offered: allocation\.accelerator_partition\.type:.*"mig-1g\.5gb"`},
		{`"ml.p4d.24xlarge", { accelerator_partition = { type = "mig-1g.5gb" } }`, `"allocation" parameter: allocation\.accelerator_partition\.count is missing`},
		{`"ml.g5.12xlarge", { acelerators = 4 }`, `"allocation" parameter: allocation has no attribute "acelerators"`},
		{`"ml.g5.12xlarge", { count = 1.5 }`, `"allocation" parameter: allocation\.count = 1\.5 is not a whole number`},
		{`"ml.g5.12xlarge", { count = "many" }`, `"allocation" parameter: allocation\.count must be a number`},
		{`"ml.g5.12xlarge", 4`, `"allocation" parameter: allocation must be an object, e.g. \{ accelerators = 4 \}, not a number`},
		{`"ml.g5.12xlarge", { instance_type = "ml.g5.24xlarge", count = 1 }`, `"allocation" parameter: allocation\.instance_type is "ml\.g5\.24xlarge" but the instance_type argument is "ml\.g5\.12xlarge"`},
	}
	var steps []resource.TestStep
	for _, c := range cases {
		step := resource.TestStep{
			Config:      fmt.Sprintf("output \"x\" {\n  value = provider::hyperpod::quota_defaults(%s)\n}\n", c.call),
			PlanOnly:    true,
			ExpectError: wrappedText(c.want),
		}
		if acctest.OpenTofu() && strings.HasSuffix(c.call, ", null") {
			// OpenTofu never calls a provider function with an argument of no type (a bare
			// null): it plans the result as unknown instead, so the provider cannot report.
			step.ExpectError, step.ExpectNonEmptyPlan = nil, true
			step.ConfigPlanChecks.PostApplyPreRefresh = []plancheck.PlanCheck{plancheck.ExpectUnknownOutputValue("x")}
		}
		steps = append(steps, step)
	}
	resource.UnitTest(t, resource.TestCase{
		TerraformVersionChecks:   functionVersionChecks,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps:                    steps,
	})
}

// wrappedText matches pattern in Terraform's error output, which wraps lines at any space.
func wrappedText(pattern string) *regexp.Regexp {
	return regexp.MustCompile("(?s)" + strings.ReplaceAll(pattern, " ", `\s+`))
}

// The function's result equals what hyperpod_compute_quota plans for the same entries, in one
// configuration, with the cluster unreachable. Both are also checked against the ratio rule
// worked by hand, so a change to either side shows up here.
func TestFunction_quotaDefaultsMatchesPlan(t *testing.T) {
	want := knownvalue.ListExact([]knownvalue.Check{
		defaultsValue(4, 96, 1024, 32, nil), // see TestFunction_quotaDefaults
		defaultsValue(0, 3.428, 41.142578125, 4, mig("mig-1g.5gb", 2)),
		defaultsValue(0, 1.45, 2.9, 0, nil),
		defaultsValue(16, 200, 2, 4, nil),
		// ml.g6e.48xlarge 8/192/1536/4; r = 0.1/192: memory 0.8 GiB = 819.2 MiB -> 819/1024,
		// efa ceil(r) x 4. vcpu stays the configured 0.1.
		defaultsValue(0, 0.1, 0.7998046875, 4, nil),
	})
	resource.UnitTest(t, resource.TestCase{
		TerraformVersionChecks:   functionVersionChecks,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: unreachableProvider + `
locals {
  entries = [
    { instance_type = "ml.p5.48xlarge", accelerators = 4 },
    { instance_type = "ml.p4d.24xlarge", accelerator_partition = { type = "mig-1g.5gb", count = 2 } },
    { instance_type = "ml.c5.9xlarge", memory_in_gib = 2.9 },
    { instance_type = "ml.g5.24xlarge", accelerators = 16, vcpu = 200, memory_in_gib = 2 },
    { instance_type = "ml.g6e.48xlarge", vcpu = 0.1 },
  ]
  from_function = [for e in local.entries : provider::hyperpod::quota_defaults(e.instance_type, e)]
  planned = [for r in hyperpod_compute_quota.test.resources : {
    accelerators          = r.accelerators
    vcpu                  = r.vcpu
    memory_in_gib         = r.memory_in_gib
    efa                   = r.efa
    accelerator_partition = r.accelerator_partition
  }]
}

resource "hyperpod_compute_quota" "test" {
  name      = "fn-parity-quota"
  team      = "fn-parity"
  resources = local.entries
}

output "from_function" {
  value = local.from_function
}

output "planned" {
  value = local.planned
}

# Terraform's own equality of each pair of objects (attribute names, types and values).
output "same" {
  value = [for i, f in local.from_function : f == local.planned[i]]
}
`,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
				plancheck.ExpectKnownOutputValue("from_function", want),
				plancheck.ExpectKnownOutputValue("planned", want),
				plancheck.ExpectKnownOutputValue("same", knownvalue.ListExact([]knownvalue.Check{
					knownvalue.Bool(true), knownvalue.Bool(true), knownvalue.Bool(true), knownvalue.Bool(true), knownvalue.Bool(true),
				})),
			}},
		}},
	})
}

// quotaDefaultsCase is one resources entry written as HCL literals, with the numbers the ratio rule
// gives for it (worked by hand from the catalog figures) or the error summary the plan reports.
type quotaDefaultsCase struct {
	name, instanceType string
	numbers            map[string]string // attribute -> HCL number literal
	partition          *[2]string        // type, count literal
	acc                int64
	vcpu, mem          string
	efa                int64
	wantErr            string
}

// The function runs the code path the resource's plan runs: for each entry, ModifyPlan of
// hyperpod_compute_quota (given the values Terraform would send for the same literals) and
// the function's Run give the same numbers, bit for bit, or fail with the same problem.
func TestQuotaDefaultsMatchesResourcePlan(t *testing.T) {
	cases := []quotaDefaultsCase{
		// ml.g5.12xlarge 4/48/192/1; r = 1.
		{name: "count", instanceType: "ml.g5.12xlarge", numbers: map[string]string{"count": "1"}, acc: 4, vcpu: "48", mem: "192", efa: 1},
		// ml.p5.48xlarge 8/192/2048/32; r = 1/2.
		{name: "accelerators", instanceType: "ml.p5.48xlarge", numbers: map[string]string{"accelerators": "4"}, acc: 4, vcpu: "96", mem: "1024", efa: 32},
		// ml.p4d.24xlarge 8/96/1152/4; r = 1/28.
		{name: "partition", instanceType: "ml.p4d.24xlarge", partition: &[2]string{"mig-1g.5gb", "2"}, acc: 0, vcpu: "3.428", mem: "41.142578125", efa: 4},
		// ml.p5.48xlarge; r = 7 x 3 / (8 x 7) = 3/8: vcpu 72, memory 768, efa 1 x 32.
		{name: "partition 3g", instanceType: "ml.p5.48xlarge", partition: &[2]string{"mig-3g.40gb", "7"}, acc: 0, vcpu: "72", mem: "768", efa: 32},
		// ml.c5.9xlarge 0/36/72/0; r = 2.9/72.
		{name: "memory decimal", instanceType: "ml.c5.9xlarge", numbers: map[string]string{"memory_in_gib": "2.9"}, acc: 0, vcpu: "1.45", mem: "2.9", efa: 0},
		// ml.g6e.48xlarge 8/192/1536/4; r = 0.1/192: memory 819.2 MiB -> 819/1024.
		{name: "vcpu decimal", instanceType: "ml.g6e.48xlarge", numbers: map[string]string{"vcpu": "0.1"}, acc: 0, vcpu: "0.1", mem: "0.7998046875", efa: 4},
		// ml.c5n.9xlarge 0/36/96/1; r = 5/36: memory 13653.33 MiB -> 13653/1024.
		{name: "vcpu source", instanceType: "ml.c5n.9xlarge", numbers: map[string]string{"vcpu": "5"}, acc: 0, vcpu: "5", mem: "13.3330078125", efa: 1},
		// ml.g5.24xlarge 4/96/384/1; r = 16/4 sizes only efa.
		{name: "all configured", instanceType: "ml.g5.24xlarge", numbers: map[string]string{"accelerators": "16", "vcpu": "200", "memory_in_gib": "2"}, acc: 16, vcpu: "200", mem: "2", efa: 4},
		// ml.p5.48xlarge x 2; configured efa wins.
		{name: "configured efa", instanceType: "ml.p5.48xlarge", numbers: map[string]string{"count": "2", "efa": "0"}, acc: 16, vcpu: "384", mem: "4096", efa: 0},

		{name: "conflict", instanceType: "ml.g5.12xlarge", numbers: map[string]string{"count": "1", "accelerators": "2"}, wantErr: "Conflicting attributes"},
		{name: "no accelerators", instanceType: "ml.c5.xlarge", numbers: map[string]string{"accelerators": "1", "vcpu": "1"}, wantErr: "Instance type has no accelerators"},
		{name: "profile not offered", instanceType: "ml.p4d.24xlarge", partition: &[2]string{"mig-1g.18gb", "1"}, wantErr: "MIG profile not offered"},
		{name: "decimal places", instanceType: "ml.c5.xlarge", numbers: map[string]string{"vcpu": "0.0001"}, wantErr: "Too many decimal places"},
		{name: "computed too large", instanceType: "ml.p5.48xlarge", numbers: map[string]string{"count": "10000000"}, wantErr: "Computed value too large"},
		{name: "no size", instanceType: "ml.g5.12xlarge", wantErr: "No quota size"},
		{name: "unknown type", instanceType: "ml.g5.13xlarge", numbers: map[string]string{"count": "1"}, wantErr: "Unknown instance type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			planned, planErr := planOneEntry(t, c.resourceEntry(t))
			got, fnErr := callQuotaDefaults(t, c.instanceType, c.allocation(t))
			if c.wantErr != "" {
				if planErr != c.wantErr {
					t.Errorf("plan error %q, want %q", planErr, c.wantErr)
				}
				if fnErr == nil || !strings.HasPrefix(fnErr.Text, c.wantErr+": ") || fnErr.FunctionArgument == nil {
					t.Fatalf("function error %v, want one on an argument starting with %q", fnErr, c.wantErr)
				}
				wantArg := argAllocation
				if c.wantErr == "Unknown instance type" {
					wantArg = argInstanceType
				}
				if *fnErr.FunctionArgument != wantArg {
					t.Errorf("error on argument %d, want %d", *fnErr.FunctionArgument, wantArg)
				}
				return
			}
			if planErr != "" || fnErr != nil {
				t.Fatalf("plan error %q, function error %v", planErr, fnErr)
			}
			hand := map[string]string{"accelerators": strconv.FormatInt(c.acc, 10), "vcpu": c.vcpu, "memory_in_gib": c.mem, "efa": strconv.FormatInt(c.efa, 10)}
			for _, name := range []string{"accelerators", "vcpu", "memory_in_gib", "efa"} {
				p, f := tfNumber(t, planned.Attributes()[name]), tfNumber(t, got.Attributes()[name])
				if p.Cmp(f) != 0 {
					t.Errorf("%s: planned %s, function %s", name, p.Text('g', 40), f.Text('g', 40))
				}
				// Terraform shows the float64 nearest to the value; the hand-worked decimal must be it.
				pf, _ := p.Float64()
				if want, _ := strconv.ParseFloat(hand[name], 64); pf != want {
					t.Errorf("%s = %v, want %s", name, pf, hand[name])
				}
			}
			fp, pp := got.Attributes()["accelerator_partition"], planned.Attributes()["accelerator_partition"]
			if !fp.Equal(pp) {
				t.Errorf("accelerator_partition: function %v, planned %v", fp, pp)
			}
		})
	}
}

// hclNumber is a number literal as Terraform holds it: parsed at 512 bits, as cty parses it.
func hclNumber(t *testing.T, s string) *big.Float {
	t.Helper()
	f, _, err := big.ParseFloat(s, 10, 512, big.ToNearestEven)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// allocation is the function argument Terraform sends for { <numbers>, accelerator_partition = ... }.
func (c quotaDefaultsCase) allocation(t *testing.T) types.Dynamic {
	attrTypes, values := map[string]attr.Type{}, map[string]attr.Value{}
	for name, lit := range c.numbers {
		attrTypes[name], values[name] = types.NumberType, types.NumberValue(hclNumber(t, lit))
	}
	if c.partition != nil {
		pt := map[string]attr.Type{"type": types.StringType, "count": types.NumberType}
		attrTypes["accelerator_partition"] = types.ObjectType{AttrTypes: pt}
		values["accelerator_partition"] = types.ObjectValueMust(pt, map[string]attr.Value{
			"type": types.StringValue(c.partition[0]), "count": types.NumberValue(hclNumber(t, c.partition[1])),
		})
	}
	return types.DynamicValue(types.ObjectValueMust(attrTypes, values))
}

// resourceEntry is the resources element Terraform sends for the same literals.
func (c quotaDefaultsCase) resourceEntry(t *testing.T) types.Object {
	ctx := context.Background()
	values := map[string]attr.Value{
		"instance_type": types.StringValue(c.instanceType), "count": types.Int64Null(), "accelerators": types.Int64Null(),
		"vcpu": types.Float64Null(), "memory_in_gib": types.Float64Null(), "efa": types.Int64Null(),
		"accelerator_partition": types.ObjectNull(partitionAttrTypes),
	}
	for name, lit := range c.numbers {
		v, err := resourceEntryAttrTypes[name].ValueFromTerraform(ctx, tftypes.NewValue(tftypes.Number, hclNumber(t, lit)))
		if err != nil {
			t.Fatal(err)
		}
		values[name] = v
	}
	if c.partition != nil {
		n, err := strconv.ParseInt(c.partition[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		values["accelerator_partition"] = types.ObjectValueMust(partitionAttrTypes, map[string]attr.Value{
			"type": types.StringValue(c.partition[0]), "count": types.Int64Value(n),
		})
	}
	return types.ObjectValueMust(resourceEntryAttrTypes, values)
}

// planOneEntry runs hyperpod_compute_quota's ModifyPlan for a new quota with this one entry and
// returns the planned entry, or the summary of the first error.
func planOneEntry(t *testing.T, entry types.Object) (types.Object, string) {
	t.Helper()
	ctx := context.Background()
	r := &computeQuotaResource{resourceBase{data: &providerData{catalog: catalog.Builtin()}}}
	var sr fwresource.SchemaResponse
	r.Schema(ctx, fwresource.SchemaRequest{}, &sr)
	config := computeQuotaModel{
		ID: types.StringNull(), Name: types.StringValue("fn-parity-quota"), Description: types.StringNull(), Team: types.StringValue("fn-parity"),
		ActivationState: types.StringNull(), PreemptTeamTasks: types.StringNull(), FairShareWeight: types.Int64Null(), Cohort: types.StringNull(),
		ResourceSharing:  types.ObjectNull(resourceSharingAttrTypes),
		Resources:        types.ListValueMust(types.ObjectType{AttrTypes: resourceEntryAttrTypes}, []attr.Value{entry}),
		ClusterQueueName: types.StringNull(), OwnerID: types.StringNull(), Drift: types.ListNull(types.StringType),
		tagsModel: tagsModel{Tags: types.MapNull(types.StringType), TagsAll: types.MapNull(types.StringType)},
		Timeouts:  timeouts.Value{Object: types.ObjectNull(timeoutsAttrTypes)},
	}
	tfType := sr.Schema.Type().TerraformType(ctx)
	plan := tfsdk.Plan{Schema: sr.Schema, Raw: tftypes.NewValue(tfType, nil)}
	if diags := plan.Set(ctx, &config); diags.HasError() {
		t.Fatal(diags)
	}
	req := fwresource.ModifyPlanRequest{
		Config: tfsdk.Config{Schema: sr.Schema, Raw: plan.Raw},
		Plan:   plan,
		State:  tfsdk.State{Schema: sr.Schema, Raw: tftypes.NewValue(tfType, nil)},
	}
	resp := fwresource.ModifyPlanResponse{Plan: plan}
	r.ModifyPlan(ctx, req, &resp)
	if resp.Diagnostics.HasError() {
		return types.Object{}, resp.Diagnostics.Errors()[0].Summary()
	}
	var planned computeQuotaModel
	if diags := resp.Plan.Get(ctx, &planned); diags.HasError() {
		t.Fatal(diags)
	}
	return planned.Resources.Elements()[0].(types.Object), ""
}

// callQuotaDefaults runs the function as the framework does for a CallFunction request.
func callQuotaDefaults(t *testing.T, instanceType string, allocation types.Dynamic) (types.Object, *function.FuncError) {
	t.Helper()
	ctx := context.Background()
	resp := function.RunResponse{Result: function.NewResultData(types.ObjectUnknown(quotaDefaultsReturnAttrTypes))}
	(&quotaDefaultsFunction{}).Run(ctx, function.RunRequest{
		Arguments: function.NewArgumentsData([]attr.Value{types.StringValue(instanceType), allocation}),
	}, &resp)
	if resp.Error != nil {
		return types.Object{}, resp.Error
	}
	obj, ok := resp.Result.Value().(types.Object)
	if !ok {
		t.Fatalf("result %T, want an object", resp.Result.Value())
	}
	return obj, nil
}

// tfNumber is the number Terraform receives for an Int64, Float64 or Number value.
func tfNumber(t *testing.T, v attr.Value) *big.Float {
	t.Helper()
	tv, err := v.ToTerraformValue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var f *big.Float
	if err := tv.As(&f); err != nil || f == nil {
		t.Fatalf("%v is not a known number: %v", v, err)
	}
	return f
}

// The example of the documentation runs and prints what its comments say.
func TestFunction_quotaDefaultsExample(t *testing.T) {
	resource.UnitTest(t, resource.TestCase{
		TerraformVersionChecks:   functionVersionChecks,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: exampleConfig(t, "functions/quota_defaults/function.tf"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("half_a_p5", defaultsValue(4, 96, 1024, 32, nil)),
				statecheck.ExpectKnownOutputValue("research_vcpu", knownvalue.MapExact(map[string]knownvalue.Check{
					"ml.p4d.24xlarge": knownvalue.Float64Exact(3.428), "ml.c5.9xlarge": knownvalue.Float64Exact(1.45),
				})),
			},
		}},
	})
}

// Terraform calls a function only with known arguments; a partly unknown allocation all the
// same gives an unknown result, never a wrong number.
func TestQuotaDefaultsUnknownAllocation(t *testing.T) {
	alloc := types.DynamicValue(types.ObjectValueMust(
		map[string]attr.Type{"accelerators": types.NumberType, "vcpu": types.NumberType},
		map[string]attr.Value{"accelerators": types.NumberValue(big.NewFloat(4)), "vcpu": types.NumberUnknown()}))
	got, fnErr := callQuotaDefaults(t, "ml.p5.48xlarge", alloc)
	if fnErr != nil || !got.IsUnknown() {
		t.Fatalf("got %v, %v; want an unknown result", got, fnErr)
	}
}
