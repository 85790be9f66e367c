package sagemakerclient

import (
	"strings"
	"testing"
)

func TestParseClusterARN(t *testing.T) {
	for _, tc := range []struct {
		name    string
		arn     string
		want    ClusterARN
		wantErr string // substring; every error also names the right shape
	}{
		{name: "commercial", arn: testClusterARN,
			want: ClusterARN{Partition: "aws", Region: "us-west-2", Account: "123456789012", ClusterID: "abcd1234efgh"}},
		{name: "china", arn: "arn:aws-cn:sagemaker:cn-north-1:123456789012:cluster/0123456789ab",
			want: ClusterARN{Partition: "aws-cn", Region: "cn-north-1", Account: "123456789012", ClusterID: "0123456789ab"}},
		{name: "govcloud", arn: "arn:aws-us-gov:sagemaker:us-gov-west-1:123456789012:cluster/zzzzzzzzzzzz",
			want: ClusterARN{Partition: "aws-us-gov", Region: "us-gov-west-1", Account: "123456789012", ClusterID: "zzzzzzzzzzzz"}},

		{name: "empty", arn: "", wantErr: "the HyperPod cluster ARN is empty"},
		{name: "cluster name", arn: "ml-cluster", wantErr: "looks like a cluster name; give the cluster's ARN instead"},
		{name: "garbage", arn: "https://console.aws.amazon.com/", wantErr: "does not start with arn:"},
		{name: "white space", arn: " " + testClusterARN, wantErr: "leading or trailing white space"},
		{name: "too few parts", arn: "arn:aws:sagemaker:us-west-2:cluster/abcd1234efgh", wantErr: "has 5 colon-separated parts, want 6"},
		{name: "partition", arn: "arn:gcp:sagemaker:us-west-2:123456789012:cluster/abcd1234efgh", wantErr: `partition "gcp" is not an AWS partition`},
		{name: "EKS cluster", arn: "arn:aws:eks:us-west-2:123456789012:cluster/ml-eks", wantErr: "it is an EKS cluster ARN; give the ARN of the SageMaker HyperPod cluster"},
		{name: "other service", arn: "arn:aws:ecs:us-west-2:123456789012:cluster/abcd1234efgh", wantErr: `service "ecs" is not sagemaker`},
		{name: "no region", arn: "arn:aws:sagemaker::123456789012:cluster/abcd1234efgh", wantErr: "the region is empty"},
		{name: "bad region", arn: "arn:aws:sagemaker:US_WEST:123456789012:cluster/abcd1234efgh", wantErr: `region "US_WEST" is not an AWS region name`},
		{name: "short account", arn: "arn:aws:sagemaker:us-west-2:12345:cluster/abcd1234efgh", wantErr: `account "12345" is not a 12-digit AWS account id`},
		{name: "other resource", arn: "arn:aws:sagemaker:us-west-2:123456789012:compute-quota/abcd1234efgh", wantErr: `resource "compute-quota/abcd1234efgh" is not cluster/<cluster id>`},
		{name: "cluster name in ARN", arn: "arn:aws:sagemaker:us-west-2:123456789012:cluster/ML-Cluster", wantErr: `cluster id "ML-Cluster" is not 12 lowercase letters and digits`},
		{name: "id too long", arn: "arn:aws:sagemaker:us-west-2:123456789012:cluster/abcd1234efgh0", wantErr: "is not 12 lowercase letters and digits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseClusterARN(tc.arn)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseClusterARN(%q): %v", tc.arn, err)
				}
				if got != tc.want {
					t.Errorf("ParseClusterARN(%q) = %+v, want %+v", tc.arn, got, tc.want)
				}
				if got.String() != tc.arn {
					t.Errorf("String() = %q, want %q", got.String(), tc.arn)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseClusterARN(%q) = %+v, want an error", tc.arn, got)
			}
			for _, want := range []string{tc.wantErr, "arn:<partition>:sagemaker:<region>:<account id>:cluster/<cluster id>"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}
