package provider

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakerclient"
)

// tgAPI is a client of the task-governance cluster's SageMaker API, as the console or the AWS
// CLI would write through it.
func tgAPI(t *testing.T, tg *acctest.TaskGovernance) sagemakerclient.API {
	t.Helper()
	api, err := sagemakerclient.New(context.Background(), sagemakerclient.Settings{ClusterARN: tg.ClusterARN, Endpoint: tg.Emulator.URL(),
		AccessKey: "test", SecretKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// tgOutsideQuota creates a compute quota through the API and deletes it when the test ends
// unless it is gone by then.
func tgOutsideQuota(t *testing.T, tg *acctest.TaskGovernance, api sagemakerclient.API, in *sagemaker.CreateComputeQuotaInput) {
	t.Helper()
	in.ClusterArn = aws.String(tg.ClusterARN)
	out, err := api.CreateComputeQuota(context.Background(), in)
	if err != nil {
		t.Fatalf("creating compute quota %s: %v", aws.ToString(in.Name), err)
	}
	t.Cleanup(func() {
		_, err := api.DeleteComputeQuota(context.Background(), &sagemaker.DeleteComputeQuotaInput{ComputeQuotaId: out.ComputeQuotaId})
		if err != nil && !sagemakerclient.IsNotFound(err) {
			t.Errorf("deleting compute quota %s: %v", aws.ToString(in.Name), err)
		}
	})
}

// quotaOn is a compute quota of one entry of instanceType for team.
func quotaOn(name, team string, fairShare int32, r types.ComputeQuotaResourceConfig, sharing *types.ResourceSharingConfig, tags map[string]string) *sagemaker.CreateComputeQuotaInput {
	in := &sagemaker.CreateComputeQuotaInput{Name: aws.String(name), ActivationState: types.ActivationStateEnabled,
		ComputeQuotaTarget: &types.ComputeQuotaTarget{TeamName: aws.String(team), FairShareWeight: aws.Int32(fairShare)},
		ComputeQuotaConfig: &types.ComputeQuotaConfig{ComputeQuotaResources: []types.ComputeQuotaResourceConfig{r},
			ResourceSharingConfig: sharing, PreemptTeamTasks: types.PreemptTeamTasksLowerpriority}}
	for k, v := range tags {
		in.Tags = append(in.Tags, types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	return in
}

// Quotas and a scheduler config made outside Terraform through the SageMaker API, with tags, are
// adopted with `terraform query -generate-config-out` on a cluster with the task-governance add-on:
// the query lists them (and the team namespaces the add-on wrote) for the provider's cluster,
// writes their configuration and import blocks, an apply imports them, and the next plan is
// empty. A team with two quotas is left out with a warning; a cohort, which the API does not
// hold, and another cluster are refused.
func TestAccTaskGovernance_queryAdoptsQuotas(t *testing.T) {
	acctest.RequireCluster(t)
	cli := newTFCLI(t)
	requireQueryCLI(t, cli) // before the task-governance cluster starts, which takes a while
	tg := acctest.RequireTaskGovernance(t)
	api := tgAPI(t, tg)
	ctx := context.Background()
	tgCleanup(t, tg, "tgq-alpha", "tgq-beta", "tgq-dup", "tgq-gamma")
	// Whole instances, with the amounts of one (as the provider sends them): a count generates.
	tgOutsideQuota(t, tg, api, quotaOn("tgq-alpha-quota", "tgq-alpha", 0,
		types.ComputeQuotaResourceConfig{InstanceType: types.ClusterInstanceTypeMlG512xlarge, Count: aws.Int32(1),
			Accelerators: aws.Int32(4), VCpu: aws.Float32(48), MemoryInGiB: aws.Float32(192)},
		&types.ResourceSharingConfig{Strategy: types.ResourceSharingStrategyLend}, nil))
	// Whole instances without amounts, as the console writes them: an update would add the
	// amounts, so it is left out with a warning.
	tgOutsideQuota(t, tg, api, quotaOn("tgq-gamma-quota", "tgq-gamma", 0,
		types.ComputeQuotaResourceConfig{InstanceType: types.ClusterInstanceTypeMlG512xlarge, Count: aws.Int32(1)}, nil, nil))
	tgOutsideQuota(t, tg, api, quotaOn("tgq-beta-quota", "tgq-beta", 5,
		types.ComputeQuotaResourceConfig{InstanceType: types.ClusterInstanceTypeMlC54xlarge, VCpu: aws.Float32(6), MemoryInGiB: aws.Float32(12)},
		&types.ResourceSharingConfig{Strategy: types.ResourceSharingStrategyLendandborrow, BorrowLimit: aws.Int32(200)},
		map[string]string{"cost-center": "ml-42", "owner": "platform"}))
	for _, name := range []string{"tgq-dup-one", "tgq-dup-two"} {
		tgOutsideQuota(t, tg, api, quotaOn(name, "tgq-dup", 0,
			types.ComputeQuotaResourceConfig{InstanceType: types.ClusterInstanceTypeMlC54xlarge, VCpu: aws.Float32(2)}, nil, nil))
	}
	policy, err := api.CreateClusterSchedulerConfig(ctx, &sagemaker.CreateClusterSchedulerConfigInput{ClusterArn: aws.String(tg.ClusterARN),
		Name: aws.String("tgq-policy"), SchedulerConfig: &types.SchedulerConfig{FairShare: types.FairShareEnabled,
			PriorityClasses: []types.PriorityClass{{Name: aws.String("tgq-high"), Weight: aws.Int32(90)}, {Name: aws.String("tgq-low"), Weight: aws.Int32(10)}}},
		Tags: []types.Tag{{Key: aws.String("env"), Value: aws.String("prod")}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, err := api.DeleteClusterSchedulerConfig(context.Background(), &sagemaker.DeleteClusterSchedulerConfigInput{ClusterSchedulerConfigId: policy.ClusterSchedulerConfigId})
		if err != nil && !sagemakerclient.IsNotFound(err) {
			t.Errorf("deleting the cluster scheduler config: %v", err)
		}
	})
	if err := tg.Emulator.Settle(ctx); err != nil {
		t.Fatal(err)
	}

	cli.writeConfig(tg.ProviderHCL())
	cli.init()
	for attr, refusal := range map[string]*regexp.Regexp{
		`cohort = "any"`: regexp.MustCompile(`(?s)Not available on this cluster.*` + tnsPhrase("cohort is set, but the SageMaker API has no cohort field")),
		`cluster_arn = "arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdefghijkl"`: regexp.MustCompile(`(?s)Another cluster.*` + tnsPhrase("but the provider manages")),
	} {
		cli.writeFile("refused.tfquery.hcl", "list \"hyperpod_compute_quota\" \"refused\" {\n  provider = hyperpod\n  config {\n    "+attr+"\n  }\n}\n")
		if r := cli.run(time.Minute, "query", "-no-color"); r.exitCode == 0 || !refusal.MatchString(r.stderr) {
			t.Errorf("a query with %s is not refused as %s: %s", attr, refusal, r)
		}
	}
	cli.writeFile("refused.tfquery.hcl", "")

	cli.writeFile("adopt.tfquery.hcl", `
list "hyperpod_compute_quota" "quota" {
  provider         = hyperpod
  include_resource = true
  config {
    cluster_arn = "`+tg.ClusterARN+`"
    team_prefix = "tgq-"
  }
}

list "hyperpod_team_namespace" "namespace" {
  provider         = hyperpod
  include_resource = true
  config {
    team_prefix = "tgq-"
  }
}

list "hyperpod_cluster_scheduler_config" "policy" {
  provider         = hyperpod
  include_resource = true
}
`)
	results, diags := cli.query(2 * time.Minute)
	quotas := results["list.hyperpod_compute_quota.quota"]
	if got := teamsListed(quotas, "team"); !slices.Equal(got, []string{"tgq-alpha", "tgq-beta"}) {
		t.Errorf("quotas listed: %v", got)
	}
	if got := teamsListed(results["list.hyperpod_team_namespace.namespace"], "team"); !slices.Equal(got, []string{"tgq-alpha", "tgq-beta", "tgq-dup", "tgq-gamma"}) {
		t.Errorf("namespaces listed: %v", got)
	}
	if got := teamsListed(results["list.hyperpod_cluster_scheduler_config.policy"], "id"); !slices.Equal(got, []string{"tgq-high,tgq-low"}) {
		t.Errorf("scheduler config listed: %v", got)
	}
	if r := resultOf(t, quotas, "team", "tgq-beta"); string(r.ResourceObject["tags"]) != `{"cost-center":"ml-42","owner":"platform"}` {
		t.Errorf("tgq-beta's tags: %s", r.ResourceObject["tags"])
	}
	listedWithout(t, diags, `SageMaker compute quota "tgq-dup-one"`, regexp.MustCompile(`team "tgq-dup" has 2 compute quotas`))
	listedWithout(t, diags, `SageMaker compute quota "tgq-gamma-quota"`, regexp.MustCompile(tnsPhrase("ComputeQuotaResources is [ml.g5.12xlarge {Count 1, Accelerators 0}]; an update would send "+
		"[ml.g5.12xlarge {Accelerators 0, VCpu 0, MemoryInGiB 0}]")))

	r := cli.mustRun(2*time.Minute, "query", "-generate-config-out=adopt.tf", "-no-color")
	generated := cli.readFile("adopt.tf")
	t.Logf("terraform query -generate-config-out:\n%s\ngenerated:\n%s", r.stdout, generated)
	if got, want := generatedImports(generated), []string{
		"hyperpod_cluster_scheduler_config.policy_0", "hyperpod_compute_quota.quota_0", "hyperpod_compute_quota.quota_1",
		"hyperpod_team_namespace.namespace_0", "hyperpod_team_namespace.namespace_1", "hyperpod_team_namespace.namespace_2",
		"hyperpod_team_namespace.namespace_3",
	}; !slices.Equal(got, want) {
		t.Errorf("import blocks for %v, want %v", got, want)
	}
	cli.writeFile("adopt.tfquery.hcl", "")

	if r := cli.apply(5 * time.Minute); r.exitCode != 0 {
		t.Fatalf("apply of the generated configuration: %s", r)
	}
	state := cli.show()
	for addr, id := range map[string]string{"hyperpod_compute_quota.quota_0": "tgq-alpha", "hyperpod_compute_quota.quota_1": "tgq-beta"} {
		if got := state[addr].str("team"); got != id || !tgQuotaID.MatchString(state[addr].str("quota_id")) {
			t.Errorf("%s: team %q, quota_id %q", addr, got, state[addr].str("quota_id"))
		}
	}
	if r := cli.plan(2 * time.Minute); r.exitCode != 0 {
		t.Errorf("the plan after adopting is not empty: %s", r)
	}
	if r := cli.destroy(5 * time.Minute); r.exitCode != 0 {
		t.Errorf("destroy: %s", r)
	}
	if left := strings.Join(teamsWithQuotas(tg, "tgq-alpha", "tgq-beta"), ", "); left != "" {
		t.Errorf("destroy left the quotas of %s", left)
	}
}

// teamsWithQuotas are those of teams whose quotas the API holds.
func teamsWithQuotas(tg *acctest.TaskGovernance, teams ...string) []string {
	var out []string
	for _, team := range teams {
		if len(tgQuotasOf(tg, team)) > 0 {
			out = append(out, team)
		}
	}
	return out
}
