package sagemakerbackend

import (
	"context"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakerclient"
)

// The API holds a quota's and a scheduler config's tags apart from its definition: sent with
// the create, changed by key with AddTags and DeleteTags and read with ListTags, each by the
// object's ARN. Tag changes do not move the object's version.

// sdkTags is tags as a create sends them, sorted by key; nil when there are none.
func sdkTags(tags map[string]string) []types.Tag {
	if len(tags) == 0 {
		return nil
	}
	out := make([]types.Tag, 0, len(tags))
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		out = append(out, types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return out
}

// readTags reads the tags of the object arn with a paged ListTags; nil when it has none.
func readTags(ctx context.Context, api sagemakerclient.API, arn string) (map[string]string, error) {
	var out map[string]string
	in := &sagemaker.ListTagsInput{ResourceArn: aws.String(arn), MaxResults: aws.Int32(100)}
	for {
		page, err := api.ListTags(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, t := range page.Tags {
			if out == nil {
				out = map[string]string{}
			}
			out[aws.ToString(t.Key)] = aws.ToString(t.Value)
		}
		if aws.ToString(page.NextToken) == "" {
			return out, nil
		}
		in.NextToken = page.NextToken
	}
}

// writeTags turns the tags of the object arn from from into to: one AddTags for the keys to
// set and one DeleteTags for those to remove, each only when needed.
func writeTags(ctx context.Context, api sagemakerclient.API, arn string, from, to map[string]string) error {
	set, remove := quota.TagChanges(from, to)
	if len(set) > 0 {
		if _, err := api.AddTags(ctx, &sagemaker.AddTagsInput{ResourceArn: aws.String(arn), Tags: sdkTags(set)}); err != nil {
			return err
		}
	}
	if len(remove) > 0 {
		if _, err := api.DeleteTags(ctx, &sagemaker.DeleteTagsInput{ResourceArn: aws.String(arn), TagKeys: remove}); err != nil {
			return err
		}
	}
	if len(set)+len(remove) > 0 {
		tflog.Info(ctx, "changed tags", map[string]any{"arn": arn, "set": len(set), "removed": len(remove)})
	}
	return nil
}
