package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

func stringList(values ...string) knownvalue.Check {
	checks := []knownvalue.Check{}
	for _, v := range values {
		checks = append(checks, knownvalue.StringExact(v))
	}
	return knownvalue.ListExact(checks)
}

// The expected figures are the catalog lines of each type (internal/catalog/builtin.go): a GPU
// type with MIG, a Trainium type, and a CPU type with fractional memory.
func TestFunction_instanceType(t *testing.T) {
	resource.UnitTest(t, resource.TestCase{
		TerraformVersionChecks:   functionVersionChecks,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
output "p4d" {
  value = provider::hyperpod::instance_type("ml.p4d.24xlarge")
}

output "trn1" {
  value = provider::hyperpod::instance_type("ml.trn1.32xlarge")
}

output "c5n" {
  value = provider::hyperpod::instance_type("ml.c5n.large")
}

# The figures compose with quota_defaults: half the GPUs of one instance.
output "half_p4d_vcpu" {
  value = provider::hyperpod::quota_defaults("ml.p4d.24xlarge", {
    accelerators = provider::hyperpod::instance_type("ml.p4d.24xlarge").accelerators / 2
  }).vcpu
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("p4d", knownvalue.ObjectExact(map[string]knownvalue.Check{
					"accelerators": knownvalue.Int64Exact(8), "accelerator_type": knownvalue.StringExact("A100 40GB"),
					"accelerator_resource": knownvalue.StringExact("nvidia.com/gpu"), "vcpu": knownvalue.Float64Exact(96),
					"memory_in_gib": knownvalue.Float64Exact(1152), "efa": knownvalue.Int64Exact(4),
					"mig_profiles": stringList("mig-1g.5gb", "mig-1g.10gb", "mig-2g.10gb", "mig-3g.20gb", "mig-4g.20gb", "mig-7g.40gb"),
				})),
				statecheck.ExpectKnownOutputValue("trn1", knownvalue.ObjectExact(map[string]knownvalue.Check{
					"accelerators": knownvalue.Int64Exact(16), "accelerator_type": knownvalue.StringExact("Trainium"),
					"accelerator_resource": knownvalue.StringExact("aws.amazon.com/neurondevice"), "vcpu": knownvalue.Float64Exact(128),
					"memory_in_gib": knownvalue.Float64Exact(512), "efa": knownvalue.Int64Exact(8), "mig_profiles": stringList(),
				})),
				// No accelerators: empty strings and an empty list, as the data source reports them.
				statecheck.ExpectKnownOutputValue("c5n", knownvalue.ObjectExact(map[string]knownvalue.Check{
					"accelerators": knownvalue.Int64Exact(0), "accelerator_type": knownvalue.StringExact(""),
					"accelerator_resource": knownvalue.StringExact(""), "vcpu": knownvalue.Float64Exact(2),
					"memory_in_gib": knownvalue.Float64Exact(5.25), "efa": knownvalue.Int64Exact(0), "mig_profiles": stringList(),
				})),
				// 8 / 2 = 4 of 8 GPUs: r = 1/2 of 96 vCPU.
				statecheck.ExpectKnownOutputValue("half_p4d_vcpu", knownvalue.Float64Exact(48)),
			},
		}},
	})
}

func TestFunction_instanceTypeErrors(t *testing.T) {
	cases := []struct{ call, want string }{
		// A typo names the closest types and lists every known one.
		{`"ml.g5.13xlarge"`, `Invalid value for "name" parameter: Unknown instance type: instance type "ml\.g5\.13xlarge" is not in the provider's built-in catalog\. Did you mean "ml\.g5\.12xlarge".*ml\.g5\.\{xlarge, 2xlarge, 4xlarge, 8xlarge, 12xlarge, 16xlarge, 24xlarge, 48xlarge\}`},
		// The EC2 spelling without "ml." is suggested its HyperPod name.
		{`"p5.48xlarge"`, `"name" parameter: Unknown instance type:.*Did you mean "ml\.p5\.48xlarge"`},
		// Types of the provider's instance_types are not visible to functions; the error says where to look.
		{`"ml.g7.12xlarge"`, `"name" parameter: Unknown instance type:.*Provider functions cannot see the provider's instance_types setting.*hyperpod_instance_type_capacity data source`},
	}
	// The provider defines ml.g7.12xlarge, but functions are not given its configuration.
	const provider = `
provider "hyperpod" {
  instance_types = {
    "ml.g7.12xlarge" = { accelerators = 4, vcpu = 48, memory_in_gib = 384, efa = 1 }
  }
}
`
	var steps []resource.TestStep
	for _, c := range cases {
		steps = append(steps, resource.TestStep{
			Config:      provider + `output "x" { value = provider::hyperpod::instance_type(` + c.call + `) }`,
			PlanOnly:    true,
			ExpectError: wrappedText(c.want),
		})
	}
	resource.UnitTest(t, resource.TestCase{
		TerraformVersionChecks:   functionVersionChecks,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps:                    steps,
	})
}

// The example of the documentation plans what its comments say. It has a quota, so it is
// planned only, with the cluster unreachable.
func TestFunction_instanceTypeExample(t *testing.T) {
	// ml.p5.48xlarge has 8 GPUs, so the quota is one whole instance: 192 vCPU, 2048 GiB, 32 EFA.
	quota := tfjsonpath.New("resources").AtSliceIndex(0)
	addr := "hyperpod_compute_quota.one_p5_of_gpus"
	resource.UnitTest(t, resource.TestCase{
		TerraformVersionChecks:   functionVersionChecks,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:             unreachableProvider + exampleConfig(t, "functions/instance_type/function.tf"),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
				plancheck.ExpectKnownOutputValueAtPath("p4d", tfjsonpath.New("accelerator_type"), knownvalue.StringExact("A100 40GB")),
				plancheck.ExpectKnownValue(addr, quota.AtMapKey("accelerators"), knownvalue.Int64Exact(8)),
				plancheck.ExpectKnownValue(addr, quota.AtMapKey("vcpu"), knownvalue.Float64Exact(192)),
				plancheck.ExpectKnownValue(addr, quota.AtMapKey("memory_in_gib"), knownvalue.Float64Exact(2048)),
				plancheck.ExpectKnownValue(addr, quota.AtMapKey("efa"), knownvalue.Int64Exact(32)),
			}},
		}},
	})
}
