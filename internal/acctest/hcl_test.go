package acctest

import (
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

func TestQuotaHCL(t *testing.T) {
	for _, c := range []struct {
		name string
		got  string
		want string
	}{
		{
			"one entry",
			Quota("ml").Resource("ml.g5.12xlarge").Count(2).HCL(),
			`
resource "hyperpod_compute_quota" "test" {
  name = "ml-quota"
  team = "ml"
  resources = [{ instance_type = "ml.g5.12xlarge", count = 2 }]
}
`,
		},
		{
			"two entries",
			Quota("qacc-cost").Resource("ml.g5.12xlarge").Count(1).Resource("ml.c5.4xlarge").VCPU(2).HCL(),
			`
resource "hyperpod_compute_quota" "test" {
  name = "qacc-cost-quota"
  team = "qacc-cost"
  resources = [{ instance_type = "ml.g5.12xlarge", count = 1 }, { instance_type = "ml.c5.4xlarge", vcpu = 2 }]
}
`,
		},
		{
			"fractional vcpu and accelerators",
			Quota("t").Resource("ml.c5.4xlarge").VCPU(0.5).Resource("ml.g6e.48xlarge").Accelerators(4).HCL(),
			`
resource "hyperpod_compute_quota" "test" {
  name = "t-quota"
  team = "t"
  resources = [{ instance_type = "ml.c5.4xlarge", vcpu = 0.5 }, { instance_type = "ml.g6e.48xlarge", accelerators = 4 }]
}
`,
		},
		{
			"raw body",
			Quota("t").Body("  resources = []\n  cohort = \"c\"").HCL(),
			`
resource "hyperpod_compute_quota" "test" {
  name = "t-quota"
  team = "t"
  resources = []
  cohort = "c"
}
`,
		},
		{
			"entries then body",
			Quota("t").Resource("ml.g5.12xlarge").Count(1).Body(`  cohort = "c"`).HCL(),
			`
resource "hyperpod_compute_quota" "test" {
  name = "t-quota"
  team = "t"
  resources = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
  cohort = "c"
}
`,
		},
		{
			"team namespace",
			TeamNamespace("ml").HCL(),
			`
resource "hyperpod_team_namespace" "test" {
  team = "ml"

}
`,
		},
		{
			"team namespace, force_destroy",
			TeamNamespace("ml").ForceDestroy().HCL(),
			`
resource "hyperpod_team_namespace" "test" {
  team = "ml"
  force_destroy = true
}
`,
		},
		{
			"scheduler config",
			SchedulerConfig(quota.PriorityClass{Name: "a", Weight: 10}).Class("b", 5).HCL(),
			`
resource "hyperpod_cluster_scheduler_config" "test" {
  priority_classes = [
    { name = "a", weight = 10 },
    { name = "b", weight = 5 },
  ]
}
`,
		},
		{
			"provider host",
			ProviderHost("http://127.0.0.1:1"),
			`
provider "hyperpod" {
  host = "http://127.0.0.1:1"
}
`,
		},
	} {
		if c.got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, c.got, c.want)
		}
	}
}

func TestQuotaAmountBeforeResourcePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Count before Resource did not panic")
		}
	}()
	Quota("t").Count(1)
}
