package sagemakeremulator_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

func describeQuota(t *testing.T, c *sagemaker.Client, id string) *sagemaker.DescribeComputeQuotaOutput {
	t.Helper()
	out, err := c.DescribeComputeQuota(context.Background(), &sagemaker.DescribeComputeQuotaInput{ComputeQuotaId: aws.String(id)})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wantStatuses describes the quota once per wanted status and checks each answer.
func wantStatuses(t *testing.T, c *sagemaker.Client, id string, want ...types.SchedulerResourceStatus) {
	t.Helper()
	for i, w := range want {
		if got := describeQuota(t, c, id).Status; got != w {
			t.Fatalf("describe %d: status %s, want %s", i+1, got, w)
		}
	}
}

func TestComputeQuotaLifecycle(t *testing.T) {
	ctx := context.Background()
	e := start(t, sagemakeremulator.Options{})
	c := client(e)
	in := &sagemaker.CreateComputeQuotaInput{
		Name:        aws.String("ml-quota"),
		Description: aws.String("GPUs of the ML team"),
		ClusterArn:  aws.String(e.ClusterARN(testCluster.Name)),
		ComputeQuotaConfig: &types.ComputeQuotaConfig{
			ComputeQuotaResources: []types.ComputeQuotaResourceConfig{
				{InstanceType: "ml.g5.12xlarge", Accelerators: aws.Int32(2), VCpu: aws.Float32(24), MemoryInGiB: aws.Float32(96.5)},
				{InstanceType: "ml.p4d.24xlarge", AcceleratorPartition: &types.AcceleratorPartitionConfig{Type: types.MIGProfileTypeMig1g5gb, Count: aws.Int32(3)}},
			},
			ResourceSharingConfig: &types.ResourceSharingConfig{
				Strategy:             types.ResourceSharingStrategyLendandborrow,
				BorrowLimit:          aws.Int32(100),
				AbsoluteBorrowLimits: []types.ComputeQuotaResourceConfig{{InstanceType: "ml.g5.12xlarge", Accelerators: aws.Int32(4)}},
			},
			PreemptTeamTasks: types.PreemptTeamTasksNever,
		},
		ComputeQuotaTarget: &types.ComputeQuotaTarget{TeamName: aws.String("ml"), FairShareWeight: aws.Int32(10)},
		ActivationState:    types.ActivationStateDisabled,
		Tags:               []types.Tag{{Key: aws.String("owner"), Value: aws.String("terraform")}},
	}
	created, err := c.CreateComputeQuota(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(created.ComputeQuotaId)
	if want := "arn:aws:sagemaker:us-west-2:123456789012:compute-quota/" + id; aws.ToString(created.ComputeQuotaArn) != want || len(id) != 12 {
		t.Fatalf("created %s %s, want ARN %s with a 12-character ID", id, aws.ToString(created.ComputeQuotaArn), want)
	}

	// Everything sent comes back, through the SDK's deserializer.
	got := describeQuota(t, c, id)
	if !reflect.DeepEqual(got.ComputeQuotaConfig, in.ComputeQuotaConfig) || !reflect.DeepEqual(got.ComputeQuotaTarget, in.ComputeQuotaTarget) {
		t.Errorf("described config %+v target %+v, want what was sent", got.ComputeQuotaConfig, got.ComputeQuotaTarget)
	}
	if aws.ToString(got.Name) != "ml-quota" || aws.ToString(got.Description) != "GPUs of the ML team" || got.ActivationState != types.ActivationStateDisabled ||
		aws.ToString(got.ClusterArn) != e.ClusterARN(testCluster.Name) || aws.ToInt32(got.ComputeQuotaVersion) != 1 || got.CreationTime == nil {
		t.Errorf("described %+v", got)
	}
	if stored, _ := e.Quota(id); len(stored.Tags) != 1 || aws.ToString(stored.Tags[0].Key) != "owner" {
		t.Errorf("stored tags %+v", stored.Tags)
	}
	// That was the first of two observations of Creating.
	wantStatuses(t, c, id, types.SchedulerResourceStatusCreating, types.SchedulerResourceStatusCreated, types.SchedulerResourceStatusCreated)

	updated, err := c.UpdateComputeQuota(ctx, &sagemaker.UpdateComputeQuotaInput{
		ComputeQuotaId:     aws.String(id),
		TargetVersion:      aws.Int32(1),
		ComputeQuotaTarget: &types.ComputeQuotaTarget{TeamName: aws.String("ml"), FairShareWeight: aws.Int32(20)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToInt32(updated.ComputeQuotaVersion) != 2 || aws.ToString(updated.ComputeQuotaArn) != aws.ToString(created.ComputeQuotaArn) {
		t.Fatalf("update answered version %d ARN %s", aws.ToInt32(updated.ComputeQuotaVersion), aws.ToString(updated.ComputeQuotaArn))
	}
	wantStatuses(t, c, id, types.SchedulerResourceStatusUpdating, types.SchedulerResourceStatusUpdating, types.SchedulerResourceStatusUpdated)
	now := describeQuota(t, c, id)
	if aws.ToInt32(now.ComputeQuotaTarget.FairShareWeight) != 20 || !reflect.DeepEqual(now.ComputeQuotaConfig, in.ComputeQuotaConfig) ||
		aws.ToString(now.Description) != "GPUs of the ML team" {
		t.Errorf("after the update: target %+v config %+v description %q; only the weight should have changed",
			now.ComputeQuotaTarget, now.ComputeQuotaConfig, aws.ToString(now.Description))
	}

	// Version 1 can still be described.
	v1, err := c.DescribeComputeQuota(ctx, &sagemaker.DescribeComputeQuotaInput{ComputeQuotaId: aws.String(id), ComputeQuotaVersion: aws.Int32(1)})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToInt32(v1.ComputeQuotaVersion) != 1 || aws.ToInt32(v1.ComputeQuotaTarget.FairShareWeight) != 10 {
		t.Errorf("version 1: version %d weight %d", aws.ToInt32(v1.ComputeQuotaVersion), aws.ToInt32(v1.ComputeQuotaTarget.FairShareWeight))
	}
	_, err = c.DescribeComputeQuota(ctx, &sagemaker.DescribeComputeQuotaInput{ComputeQuotaId: aws.String(id), ComputeQuotaVersion: aws.Int32(9)})
	var nf *types.ResourceNotFound
	if !errors.As(err, &nf) {
		t.Errorf("describing version 9: %v, want ResourceNotFound", err)
	}

	if _, err := c.DeleteComputeQuota(ctx, &sagemaker.DeleteComputeQuotaInput{ComputeQuotaId: aws.String(id)}); err != nil {
		t.Fatal(err)
	}
	// Deleting again while it is being deleted is accepted.
	if _, err := c.DeleteComputeQuota(ctx, &sagemaker.DeleteComputeQuotaInput{ComputeQuotaId: aws.String(id)}); err != nil {
		t.Fatal(err)
	}
	wantStatuses(t, c, id, types.SchedulerResourceStatusDeleting, types.SchedulerResourceStatusDeleting)
	_, err = c.DescribeComputeQuota(ctx, &sagemaker.DescribeComputeQuotaInput{ComputeQuotaId: aws.String(id)})
	if !errors.As(err, &nf) {
		t.Fatalf("describing the deleted quota: %v, want ResourceNotFound", err)
	}
	_, err = c.DeleteComputeQuota(ctx, &sagemaker.DeleteComputeQuotaInput{ComputeQuotaId: aws.String(id)})
	if !errors.As(err, &nf) {
		t.Errorf("deleting the deleted quota: %v, want ResourceNotFound", err)
	}
}

func TestUpdateComputeQuotaVersions(t *testing.T) {
	ctx := context.Background()
	e := start(t, sagemakeremulator.Options{})
	c := client(e)
	id := aws.String(createQuota(t, c, quotaInput(e, "ml-quota", "ml")))
	update := func(target int32) error {
		_, err := c.UpdateComputeQuota(ctx, &sagemaker.UpdateComputeQuotaInput{ComputeQuotaId: id, TargetVersion: aws.Int32(target), Description: aws.String("v")})
		return err
	}
	steps := []struct {
		target  int32
		wantErr string
		version int32
	}{
		{target: 0, wantErr: "ConflictException", version: 1},
		{target: 2, wantErr: "ConflictException", version: 1},
		{target: 1, version: 2},
		{target: 1, wantErr: "ConflictException", version: 2},
		{target: 2, version: 3},
	}
	for i, s := range steps {
		err := update(s.target)
		if errorCode(err) != s.wantErr {
			t.Fatalf("step %d: update with TargetVersion %d: %v, want %q", i, s.target, err, s.wantErr)
		}
		if v := aws.ToInt32(describeQuota(t, c, *id).ComputeQuotaVersion); v != s.version {
			t.Fatalf("step %d: version %d, want %d", i, v, s.version)
		}
	}
	// A change made elsewhere bumps the version, so an update from the old version conflicts.
	if err := e.UpdateQuota(*id, func(q *sagemakeremulator.ComputeQuota) { q.Target.FairShareWeight = aws.Int32(90) }); err != nil {
		t.Fatal(err)
	}
	if err := update(3); errorCode(err) != "ConflictException" {
		t.Errorf("update from version 3 after a change elsewhere: %v, want ConflictException", err)
	}
	if got := describeQuota(t, c, *id); aws.ToInt32(got.ComputeQuotaVersion) != 4 || aws.ToInt32(got.ComputeQuotaTarget.FairShareWeight) != 90 {
		t.Errorf("after the change elsewhere: version %d weight %d", aws.ToInt32(got.ComputeQuotaVersion), aws.ToInt32(got.ComputeQuotaTarget.FairShareWeight))
	}
	// A change elsewhere is checked as the API checks it.
	err := e.UpdateQuota(*id, func(q *sagemakeremulator.ComputeQuota) { q.Target.FairShareWeight = aws.Int32(101) })
	if err == nil || !strings.Contains(err.Error(), "fairShareWeight") {
		t.Errorf("UpdateQuota with weight 101: %v, want a validation error", err)
	}
	if err := e.UpdateQuota("000000000000", func(*sagemakeremulator.ComputeQuota) {}); err == nil {
		t.Error("UpdateQuota of a missing quota succeeded")
	}
	// An update of a quota being deleted conflicts; the quota stays Deleting.
	if err := e.DeleteQuota(*id); err != nil {
		t.Fatal(err)
	}
	if err := update(4); errorCode(err) != "ConflictException" {
		t.Errorf("update while deleting: %v, want ConflictException", err)
	}
	wantStatuses(t, c, *id, types.SchedulerResourceStatusDeleting)
}

// TestCreateComputeQuotaValidation covers the API model's constraints, each at its bounds.
func TestCreateComputeQuotaValidation(t *testing.T) {
	ctx := context.Background()
	e := start(t, sagemakeremulator.Options{})
	c := client(e)
	resources := func(n int) []types.ComputeQuotaResourceConfig {
		var rs []types.ComputeQuotaResourceConfig
		for range n {
			rs = append(rs, types.ComputeQuotaResourceConfig{InstanceType: "ml.c5.2xlarge", Count: aws.Int32(1)})
		}
		return rs
	}
	tests := []struct {
		name   string
		change func(*sagemaker.CreateComputeQuotaInput)
		code   string // "" for success
		msg    string
	}{
		{name: "valid"},
		{name: "name of 63", change: func(in *sagemaker.CreateComputeQuotaInput) { in.Name = aws.String(strings.Repeat("a", 63)) }},
		{name: "name of 64", change: func(in *sagemaker.CreateComputeQuotaInput) { in.Name = aws.String(strings.Repeat("a", 64)) },
			code: "ValidationException", msg: "at 'name' failed to satisfy constraint: Member must have length less than or equal to 63"},
		{name: "name with hyphens", change: func(in *sagemaker.CreateComputeQuotaInput) { in.Name = aws.String("A--b-9") }},
		{name: "name ending in a hyphen", change: func(in *sagemaker.CreateComputeQuotaInput) { in.Name = aws.String("ab-") },
			code: "ValidationException", msg: "Value 'ab-' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$"},
		{name: "description of 1024", change: func(in *sagemaker.CreateComputeQuotaInput) { in.Description = aws.String(strings.Repeat("é", 1024)) }},
		{name: "description of 1025", change: func(in *sagemaker.CreateComputeQuotaInput) { in.Description = aws.String(strings.Repeat("x", 1025)) },
			code: "ValidationException", msg: "at 'description' failed to satisfy constraint: Member must have length less than or equal to 1024"},
		{name: "description with a newline", change: func(in *sagemaker.CreateComputeQuotaInput) { in.Description = aws.String("two\nlines") },
			code: "ValidationException", msg: "at 'description' failed to satisfy constraint: Member must satisfy regular expression pattern"},
		{name: "team with hyphen", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.ComputeQuotaTarget.TeamName = aws.String("ml-research-2")
		}},
		{name: "team in capitals", change: func(in *sagemaker.CreateComputeQuotaInput) { in.ComputeQuotaTarget.TeamName = aws.String("ML") },
			code: "ValidationException", msg: "at 'computeQuotaTarget.teamName'"},
		{name: "weight 100", change: func(in *sagemaker.CreateComputeQuotaInput) { in.ComputeQuotaTarget.FairShareWeight = aws.Int32(100) }},
		{name: "weight 101", change: func(in *sagemaker.CreateComputeQuotaInput) { in.ComputeQuotaTarget.FairShareWeight = aws.Int32(101) },
			code: "ValidationException", msg: "Value '101' at 'computeQuotaTarget.fairShareWeight' failed to satisfy constraint: Member must have value less than or equal to 100"},
		{name: "weight -1", change: func(in *sagemaker.CreateComputeQuotaInput) { in.ComputeQuotaTarget.FairShareWeight = aws.Int32(-1) },
			code: "ValidationException", msg: "Member must have value greater than or equal to 0"},
		{name: "15 resources", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.ComputeQuotaConfig.ComputeQuotaResources = resources(15)
		}},
		{name: "16 resources", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.ComputeQuotaConfig.ComputeQuotaResources = resources(16)
		},
			code: "ValidationException", msg: "at 'computeQuotaConfig.computeQuotaResources' failed to satisfy constraint: Member must have length less than or equal to 15"},
		{name: "no resources", change: func(in *sagemaker.CreateComputeQuotaInput) { in.ComputeQuotaConfig.ComputeQuotaResources = nil }},
		{name: "amounts at the maximum", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.ComputeQuotaConfig.ComputeQuotaResources[0] = types.ComputeQuotaResourceConfig{InstanceType: "ml.g5.12xlarge",
				Count: aws.Int32(10_000_000), Accelerators: aws.Int32(10_000_000), VCpu: aws.Float32(10_000_000), MemoryInGiB: aws.Float32(0)}
		}},
		{name: "count above the maximum", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.ComputeQuotaConfig.ComputeQuotaResources[0].Count = aws.Int32(10_000_001)
		}, code: "ValidationException", msg: "at 'computeQuotaConfig.computeQuotaResources.1.member.count'"},
		{name: "negative memory", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.ComputeQuotaConfig.ComputeQuotaResources[0].MemoryInGiB = aws.Float32(-0.5)
		}, code: "ValidationException", msg: "Value '-0.5' at 'computeQuotaConfig.computeQuotaResources.1.member.memoryInGiB'"},
		{name: "unknown MIG profile", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.ComputeQuotaConfig.ComputeQuotaResources[0].AcceleratorPartition = &types.AcceleratorPartitionConfig{Type: "mig-9g.1gb", Count: aws.Int32(1)}
		}, code: "ValidationException", msg: "acceleratorPartition.type' failed to satisfy constraint: Member must satisfy enum value set"},
		{name: "absolute borrow limits by count and by partition", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.ComputeQuotaConfig.ResourceSharingConfig.AbsoluteBorrowLimits = []types.ComputeQuotaResourceConfig{
				{InstanceType: "ml.g5.12xlarge", Count: aws.Int32(2), VCpu: aws.Float32(10)},
				{InstanceType: "ml.g5.12xlarge", AcceleratorPartition: &types.AcceleratorPartitionConfig{Type: "mig-1g.5gb", Count: aws.Int32(3)}}}
		}},
		{name: "absolute borrow limit count above the maximum", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.ComputeQuotaConfig.ResourceSharingConfig.AbsoluteBorrowLimits = []types.ComputeQuotaResourceConfig{{InstanceType: "ml.g5.12xlarge", Count: aws.Int32(10_000_001)}}
		}, code: "ValidationException", msg: "Value '10000001' at 'computeQuotaConfig.resourceSharingConfig.absoluteBorrowLimits.1.member.count' failed to satisfy constraint: Member must have value less than or equal to 10000000"},
		{name: "absolute borrow limit negative count", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.ComputeQuotaConfig.ResourceSharingConfig.AbsoluteBorrowLimits = []types.ComputeQuotaResourceConfig{{InstanceType: "ml.g5.12xlarge", Count: aws.Int32(-1)}}
		}, code: "ValidationException", msg: "at 'computeQuotaConfig.resourceSharingConfig.absoluteBorrowLimits.1.member.count'"},
		{name: "absolute borrow limit unknown MIG profile", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.ComputeQuotaConfig.ResourceSharingConfig.AbsoluteBorrowLimits = []types.ComputeQuotaResourceConfig{{InstanceType: "ml.g5.12xlarge",
				AcceleratorPartition: &types.AcceleratorPartitionConfig{Type: "1g.5gb", Count: aws.Int32(1)}}}
		}, code: "ValidationException", msg: "Value '1g.5gb' at 'computeQuotaConfig.resourceSharingConfig.absoluteBorrowLimits.1.member.acceleratorPartition.type' failed to satisfy constraint: Member must satisfy enum value set"},
		{name: "borrow limit 10000", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.ComputeQuotaConfig.ResourceSharingConfig.BorrowLimit = aws.Int32(10_000)
		}},
		{name: "borrow limit 10001", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.ComputeQuotaConfig.ResourceSharingConfig.BorrowLimit = aws.Int32(10_001)
		}, code: "ValidationException", msg: "resourceSharingConfig.borrowLimit"},
		{name: "unknown strategy", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.ComputeQuotaConfig.ResourceSharingConfig.Strategy = "LendandBorrow"
		}, code: "ValidationException", msg: "Value 'LendandBorrow' at 'computeQuotaConfig.resourceSharingConfig.strategy' failed to satisfy constraint: Member must satisfy enum value set: [Lend, DontLend, LendAndBorrow]"},
		{name: "unknown preemption", change: func(in *sagemaker.CreateComputeQuotaInput) { in.ComputeQuotaConfig.PreemptTeamTasks = "Always" },
			code: "ValidationException", msg: "computeQuotaConfig.preemptTeamTasks"},
		{name: "unknown activation state", change: func(in *sagemaker.CreateComputeQuotaInput) { in.ActivationState = "On" },
			code: "ValidationException", msg: "activationState"},
		{name: "bad tag key", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.Tags = []types.Tag{{Key: aws.String("a*b"), Value: aws.String("")}}
		},
			code: "ValidationException", msg: "at 'tags.1.member.key'"},
		{name: "two violations", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.Name = aws.String("-")
			in.ComputeQuotaTarget.FairShareWeight = aws.Int32(200)
		}, code: "ValidationException", msg: "2 validation errors detected: "},
		{name: "cluster ARN malformed", change: func(in *sagemaker.CreateComputeQuotaInput) { in.ClusterArn = aws.String("ml-cluster") },
			code: "ValidationException", msg: "at 'clusterArn'"},
		{name: "cluster in another region", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.ClusterArn = aws.String("arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdef012345")
		}, code: "ValidationException", msg: "ARN should be scoped to correct region: us-west-2"},
		{name: "cluster not in the account", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.ClusterArn = aws.String("arn:aws:sagemaker:us-west-2:123456789012:cluster/000000000000")
		}, code: "ResourceNotFound"},
		{name: "instance type the cluster lacks", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.ComputeQuotaConfig.ComputeQuotaResources[0].InstanceType = "ml.p5.48xlarge"
		}, code: "ValidationException", msg: "Cluster ml-cluster has no instance group of instance type ml.p5.48xlarge."},
		{name: "borrow limit on an instance type the cluster lacks", change: func(in *sagemaker.CreateComputeQuotaInput) {
			in.ComputeQuotaConfig.ResourceSharingConfig.AbsoluteBorrowLimits = []types.ComputeQuotaResourceConfig{{InstanceType: "ml.trn1.32xlarge"}}
		}, code: "ValidationException", msg: "ml.trn1.32xlarge"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := quotaInput(e, fmt.Sprintf("quota-%d", i), "ml")
			if tt.change != nil {
				tt.change(in)
			}
			_, err := c.CreateComputeQuota(ctx, in)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if errorCode(err) != tt.code || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error %v, want %s containing %q", err, tt.code, tt.msg)
			}
		})
	}
}

// TestRequiredMembers sends what the SDK's own validators would stop, to check the server.
func TestRequiredMembers(t *testing.T) {
	e := start(t, sagemakeremulator.Options{})
	tests := []struct {
		op, body, want string
	}{
		{"CreateComputeQuota", `{}`, "4 validation errors detected: Value null at 'name' failed to satisfy constraint: Member must not be null; " +
			"Value null at 'clusterArn' failed to satisfy constraint: Member must not be null; " +
			"Value null at 'computeQuotaConfig' failed to satisfy constraint: Member must not be null; " +
			"Value null at 'computeQuotaTarget' failed to satisfy constraint: Member must not be null"},
		{"CreateComputeQuota", `{"Name":"a","ClusterArn":"arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdef012345",` +
			`"ComputeQuotaConfig":{"ComputeQuotaResources":[{"Count":1}],"ResourceSharingConfig":{}},"ComputeQuotaTarget":{}}`,
			"3 validation errors detected: Value null at 'computeQuotaConfig.computeQuotaResources.1.member.instanceType' failed to satisfy constraint: Member must not be null; " +
				"Value null at 'computeQuotaConfig.resourceSharingConfig.strategy' failed to satisfy constraint: Member must not be null; " +
				"Value null at 'computeQuotaTarget.teamName' failed to satisfy constraint: Member must not be null"},
		{"UpdateComputeQuota", `{"ComputeQuotaId":"abc"}`, "2 validation errors detected: " +
			"Value 'abc' at 'computeQuotaId' failed to satisfy constraint: Member must satisfy regular expression pattern: ^[a-z0-9]{12}$; " +
			"Value null at 'targetVersion' failed to satisfy constraint: Member must not be null"},
		{"DescribeComputeQuota", `{}`, "Value null at 'computeQuotaId'"},
		{"DeleteComputeQuota", `{"ComputeQuotaId":"ABCDEFGHIJKL"}`, "at 'computeQuotaId'"},
		{"CreateClusterSchedulerConfig", `{"Name":"p","ClusterArn":"arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdef012345",` +
			`"SchedulerConfig":{"PriorityClasses":[{"Name":"x"}]}}`, "Value null at 'schedulerConfig.priorityClasses.1.member.weight'"},
		{"UpdateClusterSchedulerConfig", `{"ClusterSchedulerConfigId":"abcdef012345"}`, "Value null at 'targetVersion'"},
		{"DescribeClusterSchedulerConfig", `{}`, "Value null at 'clusterSchedulerConfigId'"},
		{"DeleteClusterSchedulerConfig", `{}`, "Value null at 'clusterSchedulerConfigId'"},
	}
	for _, tt := range tests {
		t.Run(tt.op, func(t *testing.T) {
			status, code, msg := rawCall(t, e, tt.op, tt.body)
			if status != http.StatusBadRequest || code != "ValidationException" || !strings.Contains(msg, tt.want) {
				t.Errorf("%d %s %q, want ValidationException containing %q", status, code, msg, tt.want)
			}
		})
	}
}

func TestListComputeQuotas(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	// Transitions wait for Settle, so that listing does not complete the delete below.
	e := start(t, sagemakeremulator.Options{Now: clock.Now, Settle: &sagemakeremulator.SettleRule{Observations: -1}})
	c := client(e)
	// Created one second apart: c-quota first, then a-quota, b-quota, and d-quota on the other cluster.
	names := []struct{ name, cluster string }{{"c-quota", testCluster.Name}, {"a-quota", testCluster.Name}, {"b-quota", testCluster.Name}, {"d-quota", otherCluster.Name}}
	ids := map[string]string{}
	for _, n := range names {
		in := quotaInput(e, n.name, strings.TrimSuffix(n.name, "-quota"))
		in.ClusterArn = aws.String(e.ClusterARN(n.cluster))
		out, err := c.CreateComputeQuota(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		ids[n.name] = *out.ComputeQuotaId
		clock.advance(time.Second)
	}
	if err := e.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteComputeQuota(ctx, &sagemaker.DeleteComputeQuotaInput{ComputeQuotaId: aws.String(ids["b-quota"])}); err != nil {
		t.Fatal(err)
	}
	at := func(sec int) *time.Time { t := time.Date(2026, 12, 1, 10, 0, sec, 0, time.UTC); return &t }
	tests := []struct {
		name string
		in   sagemaker.ListComputeQuotasInput
		want string
	}{
		{"default: newest first", sagemaker.ListComputeQuotasInput{}, "d-quota b-quota a-quota c-quota"},
		{"by creation time ascending", sagemaker.ListComputeQuotasInput{SortBy: types.SortQuotaByCreationTime, SortOrder: types.SortOrderAscending}, "c-quota a-quota b-quota d-quota"},
		{"by name", sagemaker.ListComputeQuotasInput{SortBy: types.SortQuotaByName, SortOrder: types.SortOrderAscending}, "a-quota b-quota c-quota d-quota"},
		{"by name descending", sagemaker.ListComputeQuotasInput{SortBy: types.SortQuotaByName}, "d-quota c-quota b-quota a-quota"},
		{"by status", sagemaker.ListComputeQuotasInput{SortBy: types.SortQuotaByStatus, SortOrder: types.SortOrderAscending}, "c-quota a-quota d-quota b-quota"},
		{"one cluster", sagemaker.ListComputeQuotasInput{ClusterArn: aws.String(e.ClusterARN(testCluster.Name)), SortBy: types.SortQuotaByName, SortOrder: types.SortOrderAscending}, "a-quota b-quota c-quota"},
		{"name contains", sagemaker.ListComputeQuotasInput{NameContains: aws.String("A-Q")}, "a-quota"},
		{"status", sagemaker.ListComputeQuotasInput{Status: types.SchedulerResourceStatusDeleting}, "b-quota"},
		{"created between", sagemaker.ListComputeQuotasInput{CreatedAfter: at(0), CreatedBefore: at(3)}, "b-quota a-quota"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			if got := listQuotaNames(t, c, &in); got != tt.want {
				t.Errorf("listed %s, want %s", got, tt.want)
			}
		})
	}
}

// listQuotaNames lists every page, two at a time, and names the quotas in order.
func listQuotaNames(t *testing.T, c *sagemaker.Client, in *sagemaker.ListComputeQuotasInput) string {
	t.Helper()
	in.MaxResults = aws.Int32(2)
	var names []string
	p := sagemaker.NewListComputeQuotasPaginator(c, in)
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(page.ComputeQuotaSummaries) > 2 {
			t.Fatalf("a page of %d with MaxResults 2", len(page.ComputeQuotaSummaries))
		}
		for _, s := range page.ComputeQuotaSummaries {
			names = append(names, aws.ToString(s.Name))
		}
	}
	return strings.Join(names, " ")
}

func TestListComputeQuotasPaging(t *testing.T) {
	ctx := context.Background()
	e := start(t, sagemakeremulator.Options{})
	c := client(e)
	for i := range 23 {
		if _, err := c.CreateComputeQuota(ctx, quotaInput(e, fmt.Sprintf("q%02d", i), fmt.Sprintf("t%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	first, err := c.ListComputeQuotas(ctx, &sagemaker.ListComputeQuotasInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.ComputeQuotaSummaries) != 10 || first.NextToken == nil {
		t.Fatalf("without MaxResults: %d summaries, NextToken %v; want the default page of 10 and a token", len(first.ComputeQuotaSummaries), first.NextToken)
	}
	all, err := c.ListComputeQuotas(ctx, &sagemaker.ListComputeQuotasInput{MaxResults: aws.Int32(100)})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.ComputeQuotaSummaries) != 23 || all.NextToken != nil {
		t.Fatalf("MaxResults 100: %d summaries, NextToken %v", len(all.ComputeQuotaSummaries), all.NextToken)
	}
	tests := []struct {
		name string
		in   sagemaker.ListComputeQuotasInput
		msg  string
	}{
		{"MaxResults 0", sagemaker.ListComputeQuotasInput{MaxResults: aws.Int32(0)}, "at 'maxResults'"},
		{"MaxResults 101", sagemaker.ListComputeQuotasInput{MaxResults: aws.Int32(101)}, "Member must have value less than or equal to 100"},
		{"token not issued", sagemaker.ListComputeQuotasInput{NextToken: aws.String("garbage")}, "NextToken"},
		{"token of another query", sagemaker.ListComputeQuotasInput{NextToken: first.NextToken, SortBy: types.SortQuotaByName}, "NextToken"},
		{"unknown sort key", sagemaker.ListComputeQuotasInput{SortBy: "Team"}, "at 'sortBy'"},
		{"unknown status", sagemaker.ListComputeQuotasInput{Status: "Ready"}, "at 'status'"},
		{"name filter with a space", sagemaker.ListComputeQuotasInput{NameContains: aws.String("a b")}, "at 'nameContains'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			_, err := c.ListComputeQuotas(ctx, &in)
			if errorCode(err) != "ValidationException" || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("%v, want ValidationException containing %q", err, tt.msg)
			}
		})
	}
}

// TestListCarriesLessThanDescribe pins down what a refresh by ListComputeQuotas lacks.
func TestListCarriesLessThanDescribe(t *testing.T) {
	ctx := context.Background()
	e := start(t, sagemakeremulator.Options{})
	c := client(e)
	in := quotaInput(e, "ml-quota", "ml")
	in.Description = aws.String("described only")
	e.FailCreate("ml-quota", "the add-on is not installed")
	if _, err := c.CreateComputeQuota(ctx, in); err != nil {
		t.Fatal(err)
	}
	if err := e.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListComputeQuotas(ctx, &sagemaker.ListComputeQuotasInput{})
	if err != nil {
		t.Fatal(err)
	}
	s := list.ComputeQuotaSummaries[0]
	d := describeQuota(t, c, aws.ToString(s.ComputeQuotaId))
	if aws.ToInt32(s.ComputeQuotaVersion) != 1 || !reflect.DeepEqual(s.ComputeQuotaConfig, d.ComputeQuotaConfig) ||
		!reflect.DeepEqual(s.ComputeQuotaTarget, d.ComputeQuotaTarget) || s.ActivationState != d.ActivationState ||
		s.Status != types.SchedulerResourceStatusCreateFailed || aws.ToString(s.ClusterArn) != aws.ToString(d.ClusterArn) ||
		s.LastModifiedTime == nil || !s.CreationTime.Equal(*d.CreationTime) {
		t.Errorf("summary %+v does not carry what Describe does", s)
	}
	// types.ComputeQuotaSummary has no Description and no FailureReason; Describe has both.
	if aws.ToString(d.Description) != "described only" || aws.ToString(d.FailureReason) != "the add-on is not installed" {
		t.Errorf("Describe: description %q failure %q", aws.ToString(d.Description), aws.ToString(d.FailureReason))
	}
	for _, field := range []string{"Description", "FailureReason", "CreatedBy", "LastModifiedBy"} {
		if _, ok := reflect.TypeOf(types.ComputeQuotaSummary{}).FieldByName(field); ok {
			t.Errorf("ComputeQuotaSummary has %s now; the refresh could skip Describe for it", field)
		}
	}
}

// TestMistypedMember sends members of the wrong JSON type: the error names the member as the
// API does, also one that inputs share through an embedded struct.
func TestMistypedMember(t *testing.T) {
	e := start(t, sagemakeremulator.Options{})
	tests := []struct {
		op, body, want string
	}{
		{"CreateComputeQuota", `{"Name":5}`, "Value at 'Name' is not a valid string"},
		{"CreateComputeQuota", `{"ComputeQuotaTarget":{"TeamName":5}}`, "Value at 'ComputeQuotaTarget.TeamName' is not a valid string"},
		{"AddTags", `{"ResourceArn":5}`, "Value at 'ResourceArn' is not a valid string"},
		{"ListTags", `{"ResourceArn":5}`, "Value at 'ResourceArn' is not a valid string"},
	}
	for _, tt := range tests {
		t.Run(tt.op, func(t *testing.T) {
			status, code, msg := rawCall(t, e, tt.op, tt.body)
			if status != http.StatusBadRequest || code != "ValidationException" || msg != tt.want {
				t.Errorf("%d %s %q, want ValidationException %q", status, code, msg, tt.want)
			}
		})
	}
}
