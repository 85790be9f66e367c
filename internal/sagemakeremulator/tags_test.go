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

func tagList(kv ...string) []types.Tag {
	var out []types.Tag
	for i := 0; i < len(kv); i += 2 {
		out = append(out, types.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1])})
	}
	return out
}

func listTags(t *testing.T, c *sagemaker.Client, arn string) map[string]string {
	t.Helper()
	out, err := c.ListTags(context.Background(), &sagemaker.ListTagsInput{ResourceArn: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tag := range out.Tags {
		got[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
	}
	return got
}

func TestTagsByARN(t *testing.T) {
	ctx := context.Background()
	e := start(t, sagemakeremulator.Options{})
	c := client(e)
	in := quotaInput(e, "ml-quota", "ml")
	in.Tags = tagList("team", "ml", "env", "prod")
	created, err := c.CreateComputeQuota(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(created.ComputeQuotaArn)
	if got := listTags(t, c, arn); !reflect.DeepEqual(got, map[string]string{"team": "ml", "env": "prod"}) {
		t.Errorf("tags sent with the create: %v", got)
	}

	if _, err := c.AddTags(ctx, &sagemaker.AddTagsInput{ResourceArn: aws.String(arn), Tags: tagList("env", "dev", "cost", "42")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteTags(ctx, &sagemaker.DeleteTagsInput{ResourceArn: aws.String(arn), TagKeys: []string{"team", "absent"}}); err != nil {
		t.Fatal(err)
	}
	if got := listTags(t, c, arn); !reflect.DeepEqual(got, map[string]string{"env": "dev", "cost": "42"}) {
		t.Errorf("after AddTags and DeleteTags: %v", got)
	}
	if v := describeQuota(t, c, aws.ToString(created.ComputeQuotaId)).ComputeQuotaVersion; aws.ToInt32(v) != 1 {
		t.Errorf("tag changes moved the version to %d", aws.ToInt32(v))
	}

	// A scheduler config is tagged the same way.
	cfg, err := c.CreateClusterSchedulerConfig(ctx, &sagemaker.CreateClusterSchedulerConfigInput{
		Name: aws.String("policy"), ClusterArn: aws.String(e.ClusterARN(testCluster.Name)),
		SchedulerConfig: &types.SchedulerConfig{FairShare: types.FairShareEnabled}, Tags: tagList("a", "1"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SetTags(aws.ToString(cfg.ClusterSchedulerConfigArn), map[string]string{"b": "2"}); err != nil {
		t.Fatal(err)
	}
	if got := listTags(t, c, aws.ToString(cfg.ClusterSchedulerConfigArn)); !reflect.DeepEqual(got, map[string]string{"b": "2"}) {
		t.Errorf("scheduler config tags after SetTags: %v", got)
	}
	if counts := e.CallCounts(); counts["AddTags"] != 1 || counts["DeleteTags"] != 1 || counts["ListTags"] != 3 {
		t.Errorf("call record %v", counts)
	}
}

func TestListTagsPages(t *testing.T) {
	ctx := context.Background()
	e := start(t, sagemakeremulator.Options{})
	c := client(e)
	in := quotaInput(e, "ml-quota", "ml")
	for i := range 50 {
		in.Tags = append(in.Tags, tagList(fmt.Sprint("k", i), "v")...)
	}
	created, err := c.CreateComputeQuota(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	p := sagemaker.NewListTagsPaginator(c, &sagemaker.ListTagsInput{ResourceArn: created.ComputeQuotaArn, MaxResults: aws.Int32(50)})
	pages := 0
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		seen += len(out.Tags)
	}
	if seen != 50 || pages != 1 {
		t.Errorf("%d tags in %d pages, want 50 in 1", seen, pages)
	}
}

func TestTagsRefused(t *testing.T) {
	ctx := context.Background()
	e := start(t, sagemakeremulator.Options{})
	c := client(e)
	in := quotaInput(e, "ml-quota", "ml")
	in.Tags = tagList("aws:owner", "x")
	if _, err := c.CreateComputeQuota(ctx, in); errorCode(err) != "ValidationException" {
		t.Errorf("create with an aws: key: %v", err)
	}
	in.Tags = nil
	created, err := c.CreateComputeQuota(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	arn := created.ComputeQuotaArn
	var fifty []types.Tag
	for i := range 50 {
		fifty = append(fifty, tagList(fmt.Sprint("k", i), "v")...)
	}
	if _, err := c.AddTags(ctx, &sagemaker.AddTagsInput{ResourceArn: arn, Tags: fifty}); err != nil {
		t.Fatal(err)
	}
	_, err = c.AddTags(ctx, &sagemaker.AddTagsInput{ResourceArn: arn, Tags: tagList("one-more", "v")})
	var limit *types.ResourceLimitExceeded
	if !errors.As(err, &limit) {
		t.Errorf("51st tag: %v, want ResourceLimitExceeded", err)
	}
	tests := []struct {
		name string
		call func() error
		code string
	}{
		{"key too long", func() error {
			_, err := c.AddTags(ctx, &sagemaker.AddTagsInput{ResourceArn: arn, Tags: tagList(strings.Repeat("k", 129), "v")})
			return err
		}, "ValidationException"},
		{"bad value", func() error {
			_, err := c.AddTags(ctx, &sagemaker.AddTagsInput{ResourceArn: arn, Tags: tagList("k", "a#b")})
			return err
		}, "ValidationException"},
		{"no keys", func() error {
			_, err := c.DeleteTags(ctx, &sagemaker.DeleteTagsInput{ResourceArn: arn, TagKeys: []string{}})
			return err
		}, "ValidationException"},
		{"unknown ARN", func() error {
			_, err := c.ListTags(ctx, &sagemaker.ListTagsInput{ResourceArn: aws.String("arn:aws:sagemaker:us-west-2:123456789012:compute-quota/aaaaaaaaaaaa")})
			return err
		}, "ResourceNotFound"},
		{"bad ARN", func() error {
			_, err := c.ListTags(ctx, &sagemaker.ListTagsInput{ResourceArn: aws.String("not-an-arn")})
			return err
		}, "ValidationException"},
		{"page size", func() error {
			_, err := c.ListTags(ctx, &sagemaker.ListTagsInput{ResourceArn: arn, MaxResults: aws.Int32(10)})
			return err
		}, "ValidationException"},
	}
	for _, tt := range tests {
		if code := errorCode(tt.call()); code != tt.code {
			t.Errorf("%s: %s, want %s", tt.name, code, tt.code)
		}
	}
	if got := listTags(t, c, aws.ToString(arn)); len(got) != 50 {
		t.Errorf("refused changes changed the tags: %d", len(got))
	}
}
