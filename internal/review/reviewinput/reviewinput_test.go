package reviewinput

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/review"
)

// A plan whose provider block writes through the SageMaker API is reviewed with the quotas
// placed as the task-governance add-on writes them: a new team's quota comes with its
// LocalQueue, so a job already waiting in the team's namespace starts.
func TestStoreOfPlan(t *testing.T) {
	const team = "newteam"
	for _, tc := range []struct {
		name        string
		expressions map[string]any
		wantQueue   bool
	}{
		{"kubernetes", map[string]any{"config_path": map[string]any{"constant_value": "~/.kube/config"}}, false},
		{"task governance", map[string]any{"task_governance": []any{map[string]any{}}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := map[string]any{"format_version": "1.2", "configuration": map[string]any{"provider_config": map[string]any{
				"hyperpod": map[string]any{"name": "hyperpod", "full_name": "registry.terraform.io/quotaworks/hyperpod",
					"expressions": tc.expressions}}}}
			raw, err := json.Marshal(plan)
			if err != nil {
				t.Fatal(err)
			}
			read, err := review.ReadPlan(strings.NewReader(string(raw)))
			if err != nil {
				t.Fatal(err)
			}
			planned, problems := quota.Plan(read.Catalog, quota.Config{Name: team, Team: team,
				Resources: []quota.Entry{{InstanceType: "ml.g5.12xlarge", Count: new(int64(1))}}})
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			c, queue, err := Store(read).WithQuota(admission.Cluster{}, read.Catalog, team, &planned)
			if err != nil || queue != quota.ClusterQueueName(team) || len(c.ClusterQueues) != 1 || c.ClusterQueues[0].Name != queue {
				t.Fatalf("placing the quota: %v, queue %q, %+v", err, queue, c.ClusterQueues)
			}
			got := slices.ContainsFunc(c.LocalQueues, func(lq kueue.LocalQueue) bool {
				return lq.Namespace == quota.NamespaceName(team) && lq.Name == quota.LocalQueueName(team) &&
					lq.Spec.ClusterQueue == quota.ClusterQueueName(team)
			})
			if got != tc.wantQueue {
				t.Errorf("the team's LocalQueue placed with its quota: %v, want %v (%+v)", got, tc.wantQueue, c.LocalQueues)
			}
		})
	}
}
