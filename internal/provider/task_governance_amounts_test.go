package provider

import (
	"fmt"
	"math/big"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// The SageMaker API holds vcpu and memory_in_gib as 32-bit floats. Computed amounts that are
// fractions (memory 2.9 of ml.c5.4xlarge gives 1.45 vCPU), a MIG partition's share, and large
// amounts a float32 cannot hold to the millicore or MiB (rounded down to one it holds) are
// planned as the API keeps them, so the API records the planned numbers, the plan after the
// apply is empty, and a second apply sends nothing (the version stays 1).
func TestAccTaskGovernance_exactAmounts(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	team := "tg-exact"
	cfg := tg.ProviderHCL() + fmt.Sprintf(`
resource "hyperpod_compute_quota" "test" {
  name = "%[1]s-quota"
  team = %[1]q
  resources = [
    { instance_type = "ml.c5.4xlarge", memory_in_gib = 2.9 },
    { instance_type = "ml.p5.48xlarge", accelerator_partition = { type = "mig-1g.10gb", count = 10001 } },
  ]
  resource_sharing = {
    absolute_borrow_limits = [{ instance_type = "ml.c5.4xlarge", vcpu = 20000.002, memory_in_gib = 16384.5 }]
  }
}
`, team)
	// What the plan shows, and the API must hold. Below 16384 the ratio's own rounding; above,
	// the largest value a float32 holds under it (the Kubernetes path plans 34289.142 vCPU and
	// 365750.8564453125 GiB).
	want := []struct{ vcpu, memory string }{
		{"1.45", "2.9"},
		{"34289.141", "365750.84375"},
	}
	entry := func(i int, attr string) tfjsonpath.Path {
		return tfjsonpath.New("resources").AtSliceIndex(i).AtMapKey(attr)
	}
	var planned []plancheck.PlanCheck
	var stored []statecheck.StateCheck
	for i, w := range want {
		for _, a := range [][2]string{{"vcpu", w.vcpu}, {"memory_in_gib", w.memory}} {
			attr, f := a[0], quota.FloatFromRat(mustRat(t, a[1]))
			planned = append(planned, plancheck.ExpectKnownValue(tgQuota, entry(i, attr), knownvalue.Float64Exact(f)))
			stored = append(stored, statecheck.ExpectKnownValue(tgQuota, entry(i, attr), knownvalue.Float64Exact(f)))
		}
	}
	stored = append(stored, statecheck.ExpectKnownValue(tgQuota, tfjsonpath.New("version"), knownvalue.Int64Exact(1)))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             tgTeamHoldsNothing(tg, team),
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             planned,
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: stored,
				Check: func(*terraform.State) error {
					q := emulatorQuota(t, tg, team)
					rs := q.Config.ComputeQuotaResources
					if len(rs) != len(want) {
						return fmt.Errorf("the API holds %d resources, want %d", len(rs), len(want))
					}
					for i, w := range want {
						if err := holdsExactly(rs[i].VCpu, w.vcpu, quota.VCPUGrid); err != nil {
							return fmt.Errorf("%s VCpu: %w", rs[i].InstanceType, err)
						}
						if err := holdsExactly(rs[i].MemoryInGiB, w.memory, quota.MemoryGrid); err != nil {
							return fmt.Errorf("%s MemoryInGiB: %w", rs[i].InstanceType, err)
						}
					}
					l := q.Config.ResourceSharingConfig.AbsoluteBorrowLimits[0]
					if err := holdsExactly(l.VCpu, "20000.002", quota.VCPUGrid); err != nil {
						return fmt.Errorf("absolute borrow limit VCpu: %w", err)
					}
					if err := holdsExactly(l.MemoryInGiB, "16384.5", quota.MemoryGrid); err != nil {
						return fmt.Errorf("absolute borrow limit MemoryInGiB: %w", err)
					}
					// The add-on's ClusterQueue gets the planned number too.
					return tgClusterQueueHolds(tg, team, "cpu", "34289141m")
				},
			},
			{
				// Applied again: nothing to change, nothing sent.
				Config:           cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(tgQuota, tfjsonpath.New("version"), knownvalue.Int64Exact(1)),
				},
				Check: func(*terraform.State) error {
					if v := emulatorQuota(t, tg, team).Version; v != 1 {
						return fmt.Errorf("the API's quota is at version %d, want 1: an apply sent the same amounts again", v)
					}
					return nil
				},
			},
		},
	})
}

func mustRat(t *testing.T, s string) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("not a decimal: %s", s)
	}
	return r
}

// holdsExactly checks that the float32 the API holds reads back as want.
func holdsExactly(held *sagemakeremulator.Float32, want string, grid int64) error {
	if held == nil {
		return fmt.Errorf("not held, want %s", want)
	}
	w, _ := new(big.Rat).SetString(want)
	if got := quota.DecimalFromFloat32(float32(*held), grid); got.Cmp(w) != 0 {
		return fmt.Errorf("the API holds %v, which reads back as %s, want %s", float32(*held), quota.RatString(got), want)
	}
	return nil
}

// Terraform hands back a state's fraction as the decimal it saved (1.45 to 512 bits) while a
// plan holds the float64 nearest to it: the same number for the version's plan, as for
// Terraform. Different numbers, and whole numbers that differ, are not the same.
func TestSameValuesTakesAStateDecimalAsItsFloat64(t *testing.T) {
	typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"vcpu": tftypes.Number, "count": tftypes.Number}}
	decimal := func(s string) *big.Float {
		f, _, err := big.ParseFloat(s, 10, 512, big.ToNearestEven)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	obj := func(vcpu, count any) tftypes.Value {
		return tftypes.NewValue(typ, map[string]tftypes.Value{
			"vcpu": tftypes.NewValue(tftypes.Number, vcpu), "count": tftypes.NewValue(tftypes.Number, count)})
	}
	tests := []struct {
		name        string
		plan, state tftypes.Value
		same        bool
	}{
		{"a float64 and its decimal", obj(big.NewFloat(1.45), big.NewFloat(3)), obj(decimal("1.45"), decimal("3")), true},
		{"identical", obj(big.NewFloat(1.45), big.NewFloat(3)), obj(big.NewFloat(1.45), big.NewFloat(3)), true},
		{"another fraction", obj(big.NewFloat(1.46), big.NewFloat(3)), obj(decimal("1.45"), decimal("3")), false},
		{"a fraction a float64 cannot tell apart is the same", obj(big.NewFloat(1.45), big.NewFloat(3)),
			obj(decimal("1.45000000000000000001"), decimal("3")), true},
		{"another whole number", obj(big.NewFloat(1.45), decimal("9007199254740993")), obj(decimal("1.45"), decimal("9007199254740992")), false},
		{"unknown", obj(tftypes.UnknownValue, big.NewFloat(3)), obj(decimal("1.45"), decimal("3")), false},
		{"null", obj(nil, big.NewFloat(3)), obj(decimal("1.45"), decimal("3")), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sameValues(tt.plan, tt.state); got != tt.same {
				t.Errorf("sameValues(%s, %s) = %v, want %v", tt.plan, tt.state, got, tt.same)
			}
		})
	}
}
