package sagemakeremulator_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

func schedulerInput(e *sagemakeremulator.Emulator, name string) *sagemaker.CreateClusterSchedulerConfigInput {
	return &sagemaker.CreateClusterSchedulerConfigInput{
		Name:       aws.String(name),
		ClusterArn: aws.String(e.ClusterARN(testCluster.Name)),
		SchedulerConfig: &types.SchedulerConfig{
			PriorityClasses: []types.PriorityClass{
				{Name: aws.String("training"), Weight: aws.Int32(50)},
				{Name: aws.String("inference"), Weight: aws.Int32(100)},
			},
			FairShare:           types.FairShareEnabled,
			IdleResourceSharing: types.IdleResourceSharingDisabled,
		},
		Description: aws.String("cluster policy"),
	}
}

func TestClusterSchedulerConfigLifecycle(t *testing.T) {
	ctx := context.Background()
	e := start(t, sagemakeremulator.Options{})
	c := client(e)
	in := schedulerInput(e, "policy")
	created, err := c.CreateClusterSchedulerConfig(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	id := created.ClusterSchedulerConfigId
	if want := "arn:aws:sagemaker:us-west-2:123456789012:cluster-scheduler-config/" + aws.ToString(id); aws.ToString(created.ClusterSchedulerConfigArn) != want {
		t.Fatalf("ARN %s, want %s", aws.ToString(created.ClusterSchedulerConfigArn), want)
	}
	describe := func() *sagemaker.DescribeClusterSchedulerConfigOutput {
		t.Helper()
		out, err := c.DescribeClusterSchedulerConfig(ctx, &sagemaker.DescribeClusterSchedulerConfigInput{ClusterSchedulerConfigId: id})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := describe()
	if !reflect.DeepEqual(got.SchedulerConfig, in.SchedulerConfig) || aws.ToString(got.Description) != "cluster policy" ||
		aws.ToInt32(got.ClusterSchedulerConfigVersion) != 1 || got.Status != types.SchedulerResourceStatusCreating ||
		aws.ToString(got.ClusterArn) != e.ClusterARN(testCluster.Name) || aws.ToString(got.Name) != "policy" {
		t.Errorf("described %+v", got)
	}
	for _, want := range []types.SchedulerResourceStatus{types.SchedulerResourceStatusCreating, types.SchedulerResourceStatusCreated} {
		if s := describe().Status; s != want {
			t.Fatalf("status %s, want %s", s, want)
		}
	}
	// Names are unique per cluster, not across clusters.
	_, err = c.CreateClusterSchedulerConfig(ctx, schedulerInput(e, "policy"))
	var conflict *types.ConflictException
	if !errors.As(err, &conflict) {
		t.Errorf("second policy of the same name: %v, want ConflictException", err)
	}
	other := schedulerInput(e, "policy")
	other.ClusterArn = aws.String(e.ClusterARN(otherCluster.Name))
	if _, err := c.CreateClusterSchedulerConfig(ctx, other); err != nil {
		t.Errorf("the same name on another cluster: %v", err)
	}

	up, err := c.UpdateClusterSchedulerConfig(ctx, &sagemaker.UpdateClusterSchedulerConfigInput{
		ClusterSchedulerConfigId: id, TargetVersion: aws.Int32(1),
		SchedulerConfig: &types.SchedulerConfig{FairShare: types.FairShareDisabled},
	})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToInt32(up.ClusterSchedulerConfigVersion) != 2 {
		t.Fatalf("update answered version %d", aws.ToInt32(up.ClusterSchedulerConfigVersion))
	}
	_, err = c.UpdateClusterSchedulerConfig(ctx, &sagemaker.UpdateClusterSchedulerConfigInput{ClusterSchedulerConfigId: id, TargetVersion: aws.Int32(1)})
	if !errors.As(err, &conflict) {
		t.Errorf("update from version 1 again: %v, want ConflictException", err)
	}
	if got := describe(); got.Status != types.SchedulerResourceStatusUpdating || got.SchedulerConfig.FairShare != types.FairShareDisabled ||
		got.SchedulerConfig.PriorityClasses != nil || aws.ToString(got.Description) != "cluster policy" {
		t.Errorf("after the update: %+v %+v", got.Status, got.SchedulerConfig)
	}
	v1, err := c.DescribeClusterSchedulerConfig(ctx, &sagemaker.DescribeClusterSchedulerConfigInput{ClusterSchedulerConfigId: id, ClusterSchedulerConfigVersion: aws.Int32(1)})
	if err != nil || !reflect.DeepEqual(v1.SchedulerConfig, in.SchedulerConfig) {
		t.Errorf("version 1: %v %+v", err, v1)
	}

	list, err := c.ListClusterSchedulerConfigs(ctx, &sagemaker.ListClusterSchedulerConfigsInput{
		ClusterArn: aws.String(e.ClusterARN(testCluster.Name)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.ClusterSchedulerConfigSummaries) != 1 {
		t.Fatalf("listed %d policies on the cluster, want 1", len(list.ClusterSchedulerConfigSummaries))
	}
	if s := list.ClusterSchedulerConfigSummaries[0]; aws.ToString(s.ClusterSchedulerConfigId) != aws.ToString(id) ||
		aws.ToInt32(s.ClusterSchedulerConfigVersion) != 2 || aws.ToString(s.Name) != "policy" {
		t.Errorf("summary %+v", s)
	}
	_, err = c.ListClusterSchedulerConfigs(ctx, &sagemaker.ListClusterSchedulerConfigsInput{SortBy: "ClusterArn"})
	if errorCode(err) != "ValidationException" {
		t.Errorf("sorting policies by ClusterArn, which only quotas offer: %v, want ValidationException", err)
	}

	if _, err := c.DeleteClusterSchedulerConfig(ctx, &sagemaker.DeleteClusterSchedulerConfigInput{ClusterSchedulerConfigId: id}); err != nil {
		t.Fatal(err)
	}
	if err := e.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	var nf *types.ResourceNotFound
	if _, err := c.DescribeClusterSchedulerConfig(ctx, &sagemaker.DescribeClusterSchedulerConfigInput{ClusterSchedulerConfigId: id}); !errors.As(err, &nf) {
		t.Errorf("describing the deleted policy: %v, want ResourceNotFound", err)
	}
}

func TestClusterSchedulerConfigValidation(t *testing.T) {
	ctx := context.Background()
	e := start(t, sagemakeremulator.Options{})
	c := client(e)
	classes := func(n int) []types.PriorityClass {
		var pcs []types.PriorityClass
		for i := range n {
			pcs = append(pcs, types.PriorityClass{Name: aws.String(fmt.Sprintf("p%d", i)), Weight: aws.Int32(int32(i))})
		}
		return pcs
	}
	tests := []struct {
		name   string
		change func(*sagemaker.CreateClusterSchedulerConfigInput)
		msg    string // "" for success
	}{
		{name: "valid"},
		{name: "10 priority classes", change: func(in *sagemaker.CreateClusterSchedulerConfigInput) {
			in.SchedulerConfig.PriorityClasses = classes(10)
		}},
		{name: "11 priority classes", change: func(in *sagemaker.CreateClusterSchedulerConfigInput) {
			in.SchedulerConfig.PriorityClasses = classes(11)
		},
			msg: "at 'schedulerConfig.priorityClasses' failed to satisfy constraint: Member must have length less than or equal to 10"},
		{name: "weight 0 and 100", change: func(in *sagemaker.CreateClusterSchedulerConfigInput) {
			in.SchedulerConfig.PriorityClasses[0].Weight, in.SchedulerConfig.PriorityClasses[1].Weight = aws.Int32(0), aws.Int32(100)
		}},
		{name: "weight 101", change: func(in *sagemaker.CreateClusterSchedulerConfigInput) {
			in.SchedulerConfig.PriorityClasses[1].Weight = aws.Int32(101)
		},
			msg: "Value '101' at 'schedulerConfig.priorityClasses.2.member.weight'"},
		{name: "class name in capitals", change: func(in *sagemaker.CreateClusterSchedulerConfigInput) {
			in.SchedulerConfig.PriorityClasses[0].Name = aws.String("Training")
		},
			msg: "Value 'Training' at 'schedulerConfig.priorityClasses.1.member.name' failed to satisfy constraint: Member must satisfy regular expression pattern: ^[a-z0-9]([-a-z0-9]*[a-z0-9]){0,39}?$"},
		{name: "unknown fair share", change: func(in *sagemaker.CreateClusterSchedulerConfigInput) { in.SchedulerConfig.FairShare = "On" },
			msg: "at 'schedulerConfig.fairShare' failed to satisfy constraint: Member must satisfy enum value set: [Enabled, Disabled]"},
		{name: "unknown idle sharing", change: func(in *sagemaker.CreateClusterSchedulerConfigInput) { in.SchedulerConfig.IdleResourceSharing = "Off" },
			msg: "at 'schedulerConfig.idleResourceSharing'"},
		{name: "empty config", change: func(in *sagemaker.CreateClusterSchedulerConfigInput) { in.SchedulerConfig = &types.SchedulerConfig{} }},
		{name: "bad name", change: func(in *sagemaker.CreateClusterSchedulerConfigInput) { in.Name = aws.String("my policy") },
			msg: "at 'name'"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := schedulerInput(e, fmt.Sprintf("policy-%d", i))
			if tt.change != nil {
				tt.change(in)
			}
			_, err := c.CreateClusterSchedulerConfig(ctx, in)
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if errorCode(err) != "ValidationException" || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error %v, want ValidationException containing %q", err, tt.msg)
			}
		})
	}
}

// UpdateSchedulerConfig is a change made elsewhere: checked as the API checks an update, over
// the current version, which it bumps, so an update from the old version conflicts.
func TestUpdateSchedulerConfigElsewhere(t *testing.T) {
	ctx := context.Background()
	e := start(t, sagemakeremulator.Options{})
	c := client(e)
	created, err := c.CreateClusterSchedulerConfig(ctx, schedulerInput(e, "policy"))
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(created.ClusterSchedulerConfigId)
	if err := e.UpdateSchedulerConfig(id, func(sc *sagemakeremulator.ClusterSchedulerConfig) {
		sc.Config.PriorityClasses[0].Weight = aws.Int32(70)
		sc.Config.FairShare = "Disabled"
	}); err != nil {
		t.Fatal(err)
	}
	got, err := c.DescribeClusterSchedulerConfig(ctx, &sagemaker.DescribeClusterSchedulerConfigInput{ClusterSchedulerConfigId: &id})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToInt32(got.ClusterSchedulerConfigVersion) != 2 || got.Status != types.SchedulerResourceStatusUpdating ||
		aws.ToInt32(got.SchedulerConfig.PriorityClasses[0].Weight) != 70 || got.SchedulerConfig.FairShare != types.FairShareDisabled ||
		aws.ToString(got.Description) != "cluster policy" {
		t.Errorf("after the change elsewhere: %+v, want version 2, Updating, weight 70, FairShare Disabled, the description kept", got)
	}
	_, err = c.UpdateClusterSchedulerConfig(ctx, &sagemaker.UpdateClusterSchedulerConfigInput{ClusterSchedulerConfigId: &id,
		TargetVersion: aws.Int32(1), SchedulerConfig: &types.SchedulerConfig{FairShare: types.FairShareEnabled}})
	if errorCode(err) != "ConflictException" {
		t.Errorf("update from version 1 after a change elsewhere: %v, want ConflictException", err)
	}
	err = e.UpdateSchedulerConfig(id, func(sc *sagemakeremulator.ClusterSchedulerConfig) {
		sc.Config.PriorityClasses[0].Weight = aws.Int32(101)
	})
	if err == nil || !strings.Contains(err.Error(), "schedulerConfig.priorityClasses.1.member.weight") {
		t.Errorf("UpdateSchedulerConfig with weight 101: %v, want a validation error", err)
	}
	if err := e.UpdateSchedulerConfig("000000000000", func(*sagemakeremulator.ClusterSchedulerConfig) {}); err == nil {
		t.Error("UpdateSchedulerConfig of a missing config succeeded")
	}
}
