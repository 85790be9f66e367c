package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/client-go/kubernetes"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator/addon"
)

func capacityConfig(types ...string) string {
	cfg := ""
	for _, t := range types {
		cfg += fmt.Sprintf(`
data "hyperpod_instance_type_capacity" %q {
  instance_type = %q
}
`, dataName(t), t)
	}
	return cfg
}

// dataName turns ml.g5.12xlarge into g5_12xlarge for use as a Terraform name.
func dataName(instanceType string) string {
	return regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(instanceType[len("ml."):], "_")
}

func capacityAddr(instanceType string) string {
	return "data.hyperpod_instance_type_capacity." + dataName(instanceType)
}

func expectAttr(instanceType, attr string, v knownvalue.Check) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(capacityAddr(instanceType), tfjsonpath.New(attr), v)
}

// The per-instance figures and the cluster totals of every instance type in the fake fleet.
func TestAccInstanceTypeCapacity_fleet(t *testing.T) {
	totals, err := localcluster.ExpectedTotals(localcluster.Fleet, catalog.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var checks []statecheck.StateCheck
	for _, spec := range localcluster.Fleet {
		name := spec.InstanceType
		names = append(names, name)
		it, _ := catalog.Builtin().Lookup(name)
		want := totals[name]
		checks = append(checks,
			expectAttr(name, "accelerators", knownvalue.Int64Exact(it.Accelerators)),
			expectAttr(name, "accelerator_type", knownvalue.StringExact(it.AcceleratorType)),
			expectAttr(name, "accelerator_resource", knownvalue.StringExact(it.AcceleratorResource)),
			expectAttr(name, "vcpu", knownvalue.Float64Exact(it.VCPU)),
			expectAttr(name, "memory_in_gib", knownvalue.Float64Exact(it.MemoryGiB)),
			expectAttr(name, "efa", knownvalue.Int64Exact(it.EFA)),
			expectAttr(name, "source", knownvalue.StringExact("catalog")),
			expectAttr(name, "node_count", knownvalue.Int64Exact(int64(want.Nodes))),
			expectAttr(name, "schedulable_node_count", knownvalue.Int64Exact(int64(want.SchedulableNodes))),
			expectAttr(name, "not_ready_node_count", knownvalue.Int64Exact(int64(want.NotReadyNodes))),
			expectAttr(name, "unhealthy_node_counts", knownvalue.MapExact(map[string]knownvalue.Check{})),
			expectAttr(name, "total_accelerators", knownvalue.Int64Exact(want.Accelerators)),
			expectAttr(name, "total_vcpu", knownvalue.Float64Exact(want.VCPU)),
			expectAttr(name, "total_memory_in_gib", knownvalue.Float64Exact(want.MemoryGiB)),
			expectAttr(name, "allocated_accelerators", knownvalue.Int64Exact(0)),
			expectAttr(name, "unallocated_accelerators", knownvalue.Int64Exact(want.Accelerators)),
			expectAttr(name, "unallocated_vcpu", knownvalue.Float64Exact(want.VCPU)),
			expectAttr(name, "schedulable_accelerators", knownvalue.Int64Exact(int64(want.SchedulableNodes)*it.Accelerators)),
			expectAttr(name, "unallocated_schedulable_accelerators", knownvalue.Int64Exact(int64(want.SchedulableNodes)*it.Accelerators)),
		)
	}
	// Spelled out once, so a mistake shared by the fleet helper and the data source still fails.
	checks = append(checks,
		expectAttr("ml.g5.12xlarge", "total_accelerators", knownvalue.Int64Exact(16)),
		expectAttr("ml.g5.12xlarge", "total_memory_in_gib", knownvalue.Float64Exact(768)),
		expectAttr("ml.c5.4xlarge", "node_count", knownvalue.Int64Exact(4)),
		expectAttr("ml.c5.4xlarge", "schedulable_node_count", knownvalue.Int64Exact(3)),
		// The cordoned c5 counts in the totals, not in what is schedulable.
		expectAttr("ml.c5.4xlarge", "total_vcpu", knownvalue.Float64Exact(64)),
		expectAttr("ml.c5.4xlarge", "schedulable_vcpu", knownvalue.Float64Exact(48)),
		expectAttr("ml.c5.4xlarge", "schedulable_memory_in_gib", knownvalue.Float64Exact(96)),
		expectAttr("ml.c5.4xlarge", "unallocated_schedulable_vcpu", knownvalue.Float64Exact(48)),
		expectAttr("ml.c5.4xlarge", "accelerator_resource", knownvalue.StringExact("")),
		expectAttr("ml.c5.4xlarge", "mig_profiles", knownvalue.ListExact([]knownvalue.Check{})),
		expectAttr("ml.p5.48xlarge", "mig_profiles", knownvalue.ListPartial(map[int]knownvalue.Check{
			0: knownvalue.StringExact("mig-1g.10gb"), 5: knownvalue.StringExact("mig-7g.80gb"),
		})),
		expectAttr("ml.trn1.32xlarge", "accelerator_resource", knownvalue.StringExact("aws.amazon.com/neurondevice")),
	)

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:            capacityConfig(names...),
			ConfigStateChecks: checks,
		}},
	})
}

// allocated_* sums nominal quotas of every ClusterQueue for the flavor; unallocated_* is the rest.
func TestAccInstanceTypeCapacity_allocated(t *testing.T) {
	const trn1, g5 = "ml.trn1.32xlarge", "ml.g5.12xlarge"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					acctest.MakeClusterQueue("acc-capacity-a").
						Flavor(g5, acctest.Nominal{CPU: "24", Memory: "96Gi", Accelerators: "2"}).
						Flavor(trn1, acctest.Nominal{CPU: "64", Memory: "256Gi", Accelerators: "8"}).Create(t)
					acctest.MakeClusterQueue("acc-capacity-b").Flavor(g5, acctest.Nominal{CPU: "1500m", Memory: "512Mi", Accelerators: "1"}).Create(t)
				},
				Config: capacityConfig(trn1, g5),
				ConfigStateChecks: []statecheck.StateCheck{
					expectAttr(trn1, "allocated_accelerators", knownvalue.Int64Exact(8)),
					expectAttr(trn1, "allocated_vcpu", knownvalue.Float64Exact(64)),
					expectAttr(trn1, "allocated_memory_in_gib", knownvalue.Float64Exact(256)),
					expectAttr(trn1, "unallocated_accelerators", knownvalue.Int64Exact(24)),
					expectAttr(trn1, "unallocated_vcpu", knownvalue.Float64Exact(192)),
					expectAttr(trn1, "unallocated_memory_in_gib", knownvalue.Float64Exact(768)),
					expectAttr(g5, "allocated_accelerators", knownvalue.Int64Exact(3)),
					expectAttr(g5, "allocated_vcpu", knownvalue.Float64Exact(25.5)),
					expectAttr(g5, "allocated_memory_in_gib", knownvalue.Float64Exact(96.5)),
					expectAttr(g5, "unallocated_accelerators", knownvalue.Int64Exact(13)),
					expectAttr(g5, "unallocated_vcpu", knownvalue.Float64Exact(166.5)),
					expectAttr(g5, "unallocated_memory_in_gib", knownvalue.Float64Exact(671.5)),
					// Every fleet Node is schedulable here: the same as unallocated_*.
					expectAttr(g5, "unallocated_schedulable_accelerators", knownvalue.Int64Exact(13)),
					expectAttr(g5, "unallocated_schedulable_vcpu", knownvalue.Float64Exact(166.5)),
					expectAttr(g5, "unallocated_schedulable_memory_in_gib", knownvalue.Float64Exact(671.5)),
				},
			},
		},
	})
}

// An unknown instance type fails during plan and names the closest known types.
func TestAccInstanceTypeCapacity_unknownType(t *testing.T) {
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      capacityConfig("ml.p5.48xl"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)Unknown instance type.*instance type "ml\.p5\.48xl" is neither in the built-in\s+catalog.*Did you mean\s+"ml\.p5\.48xlarge"`),
		}},
	})
}

// The provider's instance_types add types and override built-in figures.
func TestAccInstanceTypeCapacity_providerOverride(t *testing.T) {
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
provider "hyperpod" {
  instance_types = {
    "ml.g7.12xlarge" = { accelerators = 4, vcpu = 48, memory_in_gib = 384, efa = 1 }
    "ml.c5.4xlarge"  = { vcpu = 15.5 }
  }
}
` + capacityConfig("ml.g7.12xlarge", "ml.c5.4xlarge"),
			ConfigStateChecks: []statecheck.StateCheck{
				expectAttr("ml.g7.12xlarge", "source", knownvalue.StringExact("provider")),
				expectAttr("ml.g7.12xlarge", "accelerators", knownvalue.Int64Exact(4)),
				expectAttr("ml.g7.12xlarge", "accelerator_resource", knownvalue.StringExact("nvidia.com/gpu")),
				expectAttr("ml.g7.12xlarge", "memory_in_gib", knownvalue.Float64Exact(384)),
				expectAttr("ml.g7.12xlarge", "node_count", knownvalue.Int64Exact(0)),
				expectAttr("ml.c5.4xlarge", "source", knownvalue.StringExact("provider")),
				expectAttr("ml.c5.4xlarge", "vcpu", knownvalue.Float64Exact(15.5)),
				expectAttr("ml.c5.4xlarge", "memory_in_gib", knownvalue.Float64Exact(32)),
				// Totals still come from the nodes, not from the override.
				expectAttr("ml.c5.4xlarge", "total_vcpu", knownvalue.Float64Exact(64)),
			},
		}},
	})
}

// A broken instance_types entry is a provider configuration error that names the entry and says
// what is missing.
func TestAccInstanceTypeCapacity_invalidOverride(t *testing.T) {
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
provider "hyperpod" {
  instance_types = {
    "ml.g7.12xlarge" = { accelerators = 4, vcpu = 48 }
  }
}
` + capacityConfig("ml.g5.12xlarge"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)Invalid instance type override.*instance_types\["ml\.g7\.12xlarge"\]\.memory_in_gib:\s+required`),
		}},
	})
}

// Nodes that HyperPod marks other than Schedulable, or that are not Ready, leave the schedulable
// count and are reported apart, by health status and as not_ready_node_count.
func TestAccInstanceTypeCapacity_nodeHealth(t *testing.T) {
	acctest.RequireCluster(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps:                    nodeHealthSteps(t, acctest.Current().Clientset, ""),
	})
}

// On the SageMaker path with a Kubernetes connection the Nodes' health counts as on the
// Kubernetes path, beside DescribeCluster's instance count; without one it is unknown (null).
func TestAccTaskGovernance_capacityNodeHealth(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	// An empty config_path and no KUBE_CONFIG_PATH: the provider has no Kubernetes connection.
	t.Setenv("KUBE_CONFIG_PATH", "")
	apiOnly := addon.Connection{ClusterARN: tg.ClusterARN, Endpoint: tg.Emulator.URL()}.ProviderHCL()
	const g5 = "ml.g5.12xlarge"
	steps := append(nodeHealthSteps(t, tg.Clientset, tg.ProviderHCL()), resource.TestStep{
		Config: apiOnly + capacityConfig(g5),
		ConfigStateChecks: []statecheck.StateCheck{
			expectAttr(g5, "node_count", knownvalue.Int64Exact(4)),
			expectAttr(g5, "schedulable_node_count", knownvalue.Int64Exact(4)),
			expectAttr(g5, "not_ready_node_count", knownvalue.Null()),
			expectAttr(g5, "unhealthy_node_counts", knownvalue.Null()),
		},
	})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps:                    steps,
	})
}

// nodeHealthSteps change the health of three of the fleet's four ml.g5.12xlarge nodes on the
// cluster cs reaches, and check what the capacity data source, read through providerHCL, makes
// of it; the last step, and the test's cleanup, bring the fleet back.
func nodeHealthSteps(t *testing.T, cs kubernetes.Interface, providerHCL string) []resource.TestStep {
	const g5 = "ml.g5.12xlarge"
	restore := func() {
		if err := localcluster.CreateFleet(context.Background(), cs, localcluster.Fleet, catalog.Builtin()); err != nil {
			t.Errorf("bringing the fleet back: %v", err)
		}
	}
	t.Cleanup(restore)
	set := func(n int, h localcluster.NodeHealth) {
		if err := localcluster.SetNodeHealth(context.Background(), cs, localcluster.NodeName(g5, n), h); err != nil {
			t.Fatal(err)
		}
	}
	counts := func(schedulable, notReady int64, unhealthy map[string]int64) []statecheck.StateCheck {
		byStatus := map[string]knownvalue.Check{}
		for status, n := range unhealthy {
			byStatus[status] = knownvalue.Int64Exact(n)
		}
		return []statecheck.StateCheck{
			expectAttr(g5, "node_count", knownvalue.Int64Exact(4)),
			expectAttr(g5, "schedulable_node_count", knownvalue.Int64Exact(schedulable)),
			expectAttr(g5, "not_ready_node_count", knownvalue.Int64Exact(notReady)),
			expectAttr(g5, "unhealthy_node_counts", knownvalue.MapExact(byStatus)),
			// Every Node's allocatable still counts in the totals, the schedulable ones' in what is schedulable.
			expectAttr(g5, "total_accelerators", knownvalue.Int64Exact(16)),
			expectAttr(g5, "schedulable_accelerators", knownvalue.Int64Exact(4*schedulable)),
			expectAttr(g5, "unallocated_schedulable_accelerators", knownvalue.Int64Exact(4*schedulable)),
		}
	}
	config := providerHCL + capacityConfig(g5)
	return []resource.TestStep{
		{Config: config, ConfigStateChecks: counts(4, 0, nil)},
		{
			PreConfig:         func() { set(1, localcluster.NodeHealth{Status: "UnschedulablePendingReboot", Ready: true}) },
			Config:            config,
			ConfigStateChecks: counts(3, 0, map[string]int64{"UnschedulablePendingReboot": 1}),
		},
		{
			PreConfig: func() {
				set(1, localcluster.NodeHealth{Status: "UnschedulablePendingReplacement", Ready: false})
				set(2, localcluster.NodeHealth{Status: localcluster.NodeHealthSchedulable, Ready: false})
				set(3, localcluster.NodeHealth{Status: "", Ready: true}) // no label: not HyperPod's to judge
			},
			Config:            config,
			ConfigStateChecks: counts(2, 2, map[string]int64{"UnschedulablePendingReplacement": 1}),
		},
		{PreConfig: restore, Config: config, ConfigStateChecks: counts(4, 0, nil)},
	}
}
