package sagemakerclient

import (
	"fmt"
	"regexp"
	"strings"
)

// ClusterARN is a parsed HyperPod cluster ARN,
// arn:<partition>:sagemaker:<region>:<account>:cluster/<cluster id>.
type ClusterARN struct {
	Partition string
	Region    string
	Account   string
	ClusterID string
}

// String is the ARN again.
func (a ClusterARN) String() string {
	return "arn:" + a.Partition + ":sagemaker:" + a.Region + ":" + a.Account + ":cluster/" + a.ClusterID
}

// clusterARNShape is how a HyperPod cluster ARN looks, for error messages.
const clusterARNShape = "arn:<partition>:sagemaker:<region>:<account id>:cluster/<cluster id>, " +
	"e.g. arn:aws:sagemaker:us-west-2:123456789012:cluster/abcd1234efgh " +
	"(aws sagemaker describe-cluster --cluster-name <name> --query ClusterArn prints it)"

// The parts of SageMaker's ClusterArn pattern,
// arn:aws[a-z\-]*:sagemaker:[a-z0-9\-]*:[0-9]{12}:cluster/[a-z0-9]{12}; the
// region may not be empty here, since the client takes its region from it.
var (
	partitionPattern   = regexp.MustCompile(`^aws[a-z-]*$`)
	regionPattern      = regexp.MustCompile(`^[a-z0-9-]+$`)
	accountPattern     = regexp.MustCompile(`^[0-9]{12}$`)
	clusterIDPattern   = regexp.MustCompile(`^[a-z0-9]{12}$`)
	clusterNamePattern = regexp.MustCompile(`^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$`)
)

// ParseClusterARN splits a HyperPod cluster ARN into its parts. The error
// says which part is wrong and what the whole should look like.
func ParseClusterARN(arn string) (ClusterARN, error) {
	wrong := func(format string, args ...any) (ClusterARN, error) {
		return ClusterARN{}, fmt.Errorf("%q is not a HyperPod cluster ARN: %s; the shape is %s", arn, fmt.Sprintf(format, args...), clusterARNShape)
	}
	if arn == "" {
		return ClusterARN{}, fmt.Errorf("the HyperPod cluster ARN is empty; the shape is %s", clusterARNShape)
	}
	if arn != strings.TrimSpace(arn) {
		return wrong("it has leading or trailing white space")
	}
	if !strings.HasPrefix(arn, "arn:") {
		if clusterNamePattern.MatchString(arn) {
			return wrong("it looks like a cluster name; give the cluster's ARN instead")
		}
		return wrong("it does not start with arn:")
	}
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 {
		return wrong("it has %d colon-separated parts, want 6", len(parts))
	}
	partition, service, region, account, resource := parts[1], parts[2], parts[3], parts[4], parts[5]
	switch {
	case !partitionPattern.MatchString(partition):
		return wrong("partition %q is not an AWS partition (aws, aws-cn, aws-us-gov, ...)", partition)
	case service == "eks":
		return wrong("it is an EKS cluster ARN; give the ARN of the SageMaker HyperPod cluster that uses the EKS cluster")
	case service != "sagemaker":
		return wrong("service %q is not sagemaker", service)
	case region == "":
		return wrong("the region is empty")
	case !regionPattern.MatchString(region):
		return wrong("region %q is not an AWS region name", region)
	case !accountPattern.MatchString(account):
		return wrong("account %q is not a 12-digit AWS account id", account)
	}
	id, ok := strings.CutPrefix(resource, "cluster/")
	switch {
	case !ok:
		return wrong("resource %q is not cluster/<cluster id>", resource)
	case !clusterIDPattern.MatchString(id):
		return wrong("cluster id %q is not 12 lowercase letters and digits (the id, not the cluster name)", id)
	}
	return ClusterARN{Partition: partition, Region: region, Account: account, ClusterID: id}, nil
}
