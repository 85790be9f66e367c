package provider

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// borrowLimitsBody is a quota with absolute borrow limits by count (with memory set beside it,
// which wins) and by a MIG partition that no entry has a quota in. Both paths render it alike:
// ml.g5.12xlarge may borrow 2 instances' worth (96 vCPU, 8 GPUs, 2 EFA) but 100 GiB of memory,
// ml.p5.48xlarge 3 partitions of mig-1g.10gb and 50 % of the rest.
const borrowLimitsBody = `
  resources = [
    { instance_type = "ml.g5.12xlarge", count = 1 },
    { instance_type = "ml.p5.48xlarge", count = 1 },
  ]
  resource_sharing = {
    absolute_borrow_limits = [
      { instance_type = "ml.g5.12xlarge", count = 2, memory_in_gib = 100 },
      { instance_type = "ml.p5.48xlarge", accelerator_partition = { type = "mig-1g.10gb", count = 3 } },
    ]
  }
`

// borrowLimitsRendered are the borrowing limits borrowLimitsBody gives, by flavor and resource.
var borrowLimitsRendered = []struct{ flavor, res, want string }{
	{"ml.g5.12xlarge", "cpu", "96"},
	{"ml.g5.12xlarge", "memory", "100Gi"},
	{"ml.g5.12xlarge", "nvidia.com/gpu", "8"},
	{"ml.g5.12xlarge", "vpc.amazonaws.com/efa", "2"},
	{"ml.g5.12xlarge", "nvidia.com/mig-1g.10gb", "0"},
	{"ml.p5.48xlarge", "cpu", "96"},
	{"ml.p5.48xlarge", "nvidia.com/gpu", "4"},
	{"ml.p5.48xlarge", "nvidia.com/mig-1g.10gb", "3"},
}

// checkBorrowLimitsRendered checks borrowLimitsRendered in the ClusterQueue get returns.
func checkBorrowLimitsRendered(get func() (kueue.ClusterQueue, error)) resource.TestCheckFunc {
	return func(*terraform.State) error {
		cq, err := get()
		if err != nil {
			return err
		}
		for _, c := range borrowLimitsRendered {
			cell, ok := quotaCell(cq, c.flavor, c.res)
			switch {
			case !ok:
				return fmt.Errorf("ClusterQueue %s: flavor %s does not cover %s", cq.Name, c.flavor, c.res)
			case cell.BorrowingLimit == nil || cell.BorrowingLimit.Cmp(k8sresource.MustParse(c.want)) != 0:
				return fmt.Errorf("ClusterQueue %s: flavor %s %s borrowingLimit %v, want %s", cq.Name, c.flavor, c.res, cell.BorrowingLimit, c.want)
			}
		}
		return nil
	}
}

// expectAttribute is a plan check of attr of the quota: with changes, the update changes it
// (what the refresh or import read differs from what the configuration plans); without, it does not.
type expectAttribute struct {
	attr    string
	changes bool
}

func (e expectAttribute) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != quotaAddr || rc.Change == nil {
			continue
		}
		before, _ := rc.Change.Before.(map[string]any)
		after, _ := rc.Change.After.(map[string]any)
		if reflect.DeepEqual(before[e.attr], after[e.attr]) == e.changes {
			resp.Error = fmt.Errorf("the plan changes %s = %v to %v; want a change: %v", e.attr, before[e.attr], after[e.attr], e.changes)
		}
		return
	}
	resp.Error = fmt.Errorf("the plan has no change of %s", quotaAddr)
}

// Absolute borrow limits by count and by partition on the Kubernetes path: rendered as the
// borrowing limits of the flavor's resources, a borrowing limit changed out of band is a diff of
// resource_sharing that the update restores, and import reads back what the user set.
func TestAccComputeQuota_absoluteBorrowLimits(t *testing.T) {
	const team = "qacc-abs-limits"
	cleanupQueue(t, team)
	cfg := acctest.Quota(team).Body(borrowLimitsBody).HCL()
	rendered := checkBorrowLimitsRendered(func() (kueue.ClusterQueue, error) {
		cq, ok := getClusterQueue(t, team)
		if !ok {
			return cq, fmt.Errorf("ClusterQueue of team %s not found", team)
		}
		return cq, nil
	})
	drifted := preApply(plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionUpdate), expectAttribute{"resource_sharing", true})
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkQueueGone(t, team),
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: resource.ComposeAggregateTestCheckFunc(rendered,
					resource.TestCheckResourceAttr(quotaAddr, "resource_sharing.absolute_borrow_limits.0.count", "2"),
					resource.TestCheckResourceAttr(quotaAddr, "resource_sharing.absolute_borrow_limits.1.accelerator_partition.type", "mig-1g.10gb"),
					resource.TestCheckResourceAttr(quotaAddr, "resource_sharing.absolute_borrow_limits.1.accelerator_partition.count", "3"),
				),
			},
			{
				// The cpu borrowing limit that count set (flavor 0, resource 0).
				PreConfig: func() {
					editQueueJSONPatch(t, team, `[{"op":"replace","path":"/spec/resourceGroups/0/flavors/0/resources/0/borrowingLimit","value":"10"}]`)
				},
				Config: cfg, ConfigPlanChecks: drifted, Check: rendered,
			},
			{
				// The partition's borrowing limit (flavor 1, resource 5: nvidia.com/mig-1g.10gb).
				PreConfig: func() {
					editQueueJSONPatch(t, team, `[{"op":"replace","path":"/spec/resourceGroups/0/flavors/1/resources/5/borrowingLimit","value":"1"}]`)
				},
				Config: cfg, ConfigPlanChecks: drifted, Check: rendered,
			},
			{
				Config:                               cfg,
				ResourceName:                         quotaAddr,
				ImportState:                          true,
				ImportStateId:                        team,
				ImportStateVerify:                    true,
				ImportStateVerifyIdentifierAttribute: "id",
				ImportStateVerifyIgnore:              []string{"timeouts", "owner_id", "drift"},
			},
			{
				// An import takes the queue over (a new owner_id), and changes nothing else.
				Config:             cfg,
				ResourceName:       quotaAddr,
				ImportState:        true,
				ImportStateKind:    resource.ImportBlockWithID,
				ImportStateId:      team,
				ExpectNonEmptyPlan: true,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionUpdate),
					expectAttribute{"resource_sharing", false},
					expectAttribute{"resources", false},
				}},
			},
		},
	})
}

// Absolute borrow limits by count and by partition on the SageMaker path: sent as Count and
// AcceleratorPartition, rendered by the add-on's stand-in as the Kubernetes path renders them, a
// limit changed in the API is a diff of resource_sharing that the update restores, and import
// reads back what the user set.
func TestAccTaskGovernance_absoluteBorrowLimits(t *testing.T) {
	tg := acctest.RequireTaskGovernance(t)
	const team = "tg-abs-limits"
	cfg := tg.ProviderHCL() + acctest.Quota(team).Body(borrowLimitsBody).HCL()
	rendered := checkBorrowLimitsRendered(func() (kueue.ClusterQueue, error) {
		var cq kueue.ClusterQueue
		if err := tg.Emulator.Settle(context.Background()); err != nil {
			return cq, err
		}
		c := kube.NewClient(kube.Settings{ConfigPath: tg.Kubeconfig})
		found, err := c.Get(context.Background(), kueue.ClusterQueues, "", quota.ClusterQueueName(team), &cq)
		if err != nil || !found {
			return cq, fmt.Errorf("the add-on wrote no ClusterQueue for team %q (%v)", team, err)
		}
		return cq, nil
	})
	sent := func(*terraform.State) error {
		s := emulatorQuota(t, tg, team).Config.ResourceSharingConfig
		if s == nil || len(s.AbsoluteBorrowLimits) != 2 {
			return fmt.Errorf("the API holds resource sharing %+v, want two absolute borrow limits", s)
		}
		byCount, byPartition := s.AbsoluteBorrowLimits[0], s.AbsoluteBorrowLimits[1]
		switch {
		case byCount.Count == nil || *byCount.Count != 2 || byCount.MemoryInGiB == nil || *byCount.MemoryInGiB != 100:
			return fmt.Errorf("the API holds %+v, want Count 2 and MemoryInGiB 100", byCount)
		case byPartition.AcceleratorPartition == nil || byPartition.AcceleratorPartition.Type != "mig-1g.10gb" ||
			byPartition.AcceleratorPartition.Count == nil || *byPartition.AcceleratorPartition.Count != 3:
			return fmt.Errorf("the API holds %+v, want AcceleratorPartition mig-1g.10gb x 3", byPartition)
		}
		return nil
	}
	change := func(edit func(*sagemakeremulator.ResourceSharingConfig)) func() {
		return func() {
			q := emulatorQuota(t, tg, team)
			if err := tg.Emulator.UpdateQuota(q.ID, func(q *sagemakeremulator.ComputeQuota) { edit(q.Config.ResourceSharingConfig) }); err != nil {
				t.Fatal(err)
			}
		}
	}
	drifted := preApply(plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionUpdate), expectAttribute{"resource_sharing", true})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             tgTeamHoldsNothing(tg, team),
		Steps: []resource.TestStep{
			{Config: cfg, Check: resource.ComposeAggregateTestCheckFunc(sent, rendered)},
			{
				PreConfig: change(func(s *sagemakeremulator.ResourceSharingConfig) {
					n := int32(5)
					s.AbsoluteBorrowLimits[0].Count = &n
				}),
				Config: cfg, ConfigPlanChecks: drifted, Check: resource.ComposeAggregateTestCheckFunc(sent, rendered),
			},
			{
				PreConfig: change(func(s *sagemakeremulator.ResourceSharingConfig) {
					n := int32(1)
					s.AbsoluteBorrowLimits[1].AcceleratorPartition.Count = &n
				}),
				Config: cfg, ConfigPlanChecks: drifted, Check: resource.ComposeAggregateTestCheckFunc(sent, rendered),
			},
			{ResourceName: quotaAddr, ImportState: true, ImportStateId: team, ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"owner_id", "timeouts", "drift"}},
			// The import block's plan is empty.
			{Config: cfg, ResourceName: quotaAddr, ImportState: true, ImportStateKind: resource.ImportBlockWithID, ImportStateId: team},
		},
	})
}
