package sagemakerclient

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"
	"github.com/aws/smithy-go/logging"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// LogSubsystem is the terraform-plugin-log subsystem this package logs to
// (its entries show @module=<provider>.sagemaker).
const LogSubsystem = "sagemaker"

// AppID identifies the provider in the User-Agent of every request.
const AppID = "terraform-provider-hyperpod"

// API is exactly the SageMaker operations the provider uses, with the SDK's
// own input and output types. *sagemaker.Client satisfies it, so do the
// retrying Client and test fakes; Actions derives the IAM actions the
// provider needs from its method names.
type API interface {
	CreateComputeQuota(ctx context.Context, params *sagemaker.CreateComputeQuotaInput, optFns ...func(*sagemaker.Options)) (*sagemaker.CreateComputeQuotaOutput, error)
	DescribeComputeQuota(ctx context.Context, params *sagemaker.DescribeComputeQuotaInput, optFns ...func(*sagemaker.Options)) (*sagemaker.DescribeComputeQuotaOutput, error)
	UpdateComputeQuota(ctx context.Context, params *sagemaker.UpdateComputeQuotaInput, optFns ...func(*sagemaker.Options)) (*sagemaker.UpdateComputeQuotaOutput, error)
	DeleteComputeQuota(ctx context.Context, params *sagemaker.DeleteComputeQuotaInput, optFns ...func(*sagemaker.Options)) (*sagemaker.DeleteComputeQuotaOutput, error)
	ListComputeQuotas(ctx context.Context, params *sagemaker.ListComputeQuotasInput, optFns ...func(*sagemaker.Options)) (*sagemaker.ListComputeQuotasOutput, error)

	CreateClusterSchedulerConfig(ctx context.Context, params *sagemaker.CreateClusterSchedulerConfigInput, optFns ...func(*sagemaker.Options)) (*sagemaker.CreateClusterSchedulerConfigOutput, error)
	DescribeClusterSchedulerConfig(ctx context.Context, params *sagemaker.DescribeClusterSchedulerConfigInput, optFns ...func(*sagemaker.Options)) (*sagemaker.DescribeClusterSchedulerConfigOutput, error)
	UpdateClusterSchedulerConfig(ctx context.Context, params *sagemaker.UpdateClusterSchedulerConfigInput, optFns ...func(*sagemaker.Options)) (*sagemaker.UpdateClusterSchedulerConfigOutput, error)
	DeleteClusterSchedulerConfig(ctx context.Context, params *sagemaker.DeleteClusterSchedulerConfigInput, optFns ...func(*sagemaker.Options)) (*sagemaker.DeleteClusterSchedulerConfigOutput, error)
	ListClusterSchedulerConfigs(ctx context.Context, params *sagemaker.ListClusterSchedulerConfigsInput, optFns ...func(*sagemaker.Options)) (*sagemaker.ListClusterSchedulerConfigsOutput, error)

	DescribeCluster(ctx context.Context, params *sagemaker.DescribeClusterInput, optFns ...func(*sagemaker.Options)) (*sagemaker.DescribeClusterOutput, error)

	// Tags of a quota or scheduler config, by ARN (tags sent with a create need AddTags too).
	AddTags(ctx context.Context, params *sagemaker.AddTagsInput, optFns ...func(*sagemaker.Options)) (*sagemaker.AddTagsOutput, error)
	DeleteTags(ctx context.Context, params *sagemaker.DeleteTagsInput, optFns ...func(*sagemaker.Options)) (*sagemaker.DeleteTagsOutput, error)
	ListTags(ctx context.Context, params *sagemaker.ListTagsInput, optFns ...func(*sagemaker.Options)) (*sagemaker.ListTagsOutput, error)
}

var _ API = (*sagemaker.Client)(nil)

// Actions returns the IAM actions the provider needs on the SageMaker path,
// sorted: "sagemaker:" and the name of each method of API (an operation's IAM
// action has the operation's name).
func Actions() []string {
	t := reflect.TypeFor[API]()
	out := make([]string, 0, t.NumMethod())
	for i := range t.NumMethod() {
		out = append(out, "sagemaker:"+t.Method(i).Name)
	}
	sort.Strings(out)
	return out
}

// Client is the SageMaker API of one HyperPod cluster. Its API methods are
// the SDK client's, retried by the settings' retry policy (see WithRetries).
type Client struct {
	API

	cluster ClusterARN
	region  string
	config  aws.Config
}

var _ API = (*Client)(nil)

// Cluster is the cluster the client was configured for.
func (c *Client) Cluster() ClusterARN { return c.cluster }

// Region is the region the client signs for and, without Endpoint, calls.
func (c *Client) Region() string { return c.region }

// New builds the client: the settings are checked (see Problems), the aws
// config is loaded the way the aws provider loads it (see Settings), a role is
// assumed on top when AssumeRole is set, and the SageMaker client gets the
// endpoint override and this package's retry policy instead of the SDK's.
//
// New reads the shared configuration files but makes no network call:
// credentials are resolved (and a role assumed) at the first API call, so an
// unreachable AWS does not fail the provider's configuration.
func New(ctx context.Context, s Settings) (*Client, error) {
	var errs []error
	for _, p := range s.Problems() {
		errs = append(errs, p)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	cluster, err := ParseClusterARN(s.ClusterARN)
	if err != nil {
		return nil, err
	}
	region, regionSource := cluster.Region, "cluster_arn"
	if s.Region != "" {
		region, regionSource = s.Region, "region"
	}

	cfg, err := config.LoadDefaultConfig(ctx, loadOptions(s, region)...)
	if err != nil {
		return nil, fmt.Errorf("loading the AWS configuration (profile, shared_config_files, shared_credentials_files, AWS_* environment): %w", err)
	}
	if r := s.AssumeRole; r != nil {
		stsClient := sts.NewFromConfig(cfg, func(o *sts.Options) {
			if s.STSEndpoint != "" {
				o.BaseEndpoint = aws.String(s.STSEndpoint)
			}
		})
		cfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(stsClient, r.RoleARN, r.apply))
	}
	sm := sagemaker.NewFromConfig(cfg, func(o *sagemaker.Options) {
		// WithRetries retries; the SDK's own retryer would multiply attempts.
		o.Retryer = aws.NopRetryer{}
		o.HTTPClient = withOwnBody(o.HTTPClient)
		if s.Endpoint != "" {
			o.BaseEndpoint = aws.String(s.Endpoint)
		}
	})

	fields := s.logFields()
	fields["sagemaker_region"] = region
	fields["sagemaker_region_source"] = regionSource
	tflog.SubsystemDebug(tflog.NewSubsystem(ctx, LogSubsystem, tflog.WithRootFields()), LogSubsystem, "SageMaker client configured", fields)

	return &Client{API: WithRetries(sm, s.Retry), cluster: cluster, region: region, config: cfg}, nil
}

// loadOptions are the config.LoadDefaultConfig options for the settings.
func loadOptions(s Settings, region string) []func(*config.LoadOptions) error {
	opts := []func(*config.LoadOptions) error{
		config.WithRegion(region),
		config.WithAppID(AppID),
		config.WithLogger(sdkLogger{}),
	}
	if s.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(s.Profile))
	}
	if len(s.SharedConfigFiles) > 0 {
		opts = append(opts, config.WithSharedConfigFiles(expandHome(s.SharedConfigFiles)))
	}
	if len(s.SharedCredentialsFiles) > 0 {
		opts = append(opts, config.WithSharedCredentialsFiles(expandHome(s.SharedCredentialsFiles)))
	}
	if s.AccessKey != "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, s.Token)))
	}
	return opts
}

// apply copies the assume_role settings into the SDK's options.
func (r AssumeRoleSettings) apply(o *stscreds.AssumeRoleOptions) {
	o.RoleSessionName = r.SessionName
	o.Duration = r.Duration
	if r.ExternalID != "" {
		o.ExternalID = aws.String(r.ExternalID)
	}
	if r.Policy != "" {
		o.Policy = aws.String(r.Policy)
	}
	for _, arn := range r.PolicyARNs {
		o.PolicyARNs = append(o.PolicyARNs, ststypes.PolicyDescriptorType{Arn: aws.String(arn)})
	}
	keys := make([]string, 0, len(r.Tags))
	for k := range r.Tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		o.Tags = append(o.Tags, ststypes.Tag{Key: aws.String(k), Value: aws.String(r.Tags[k])})
	}
	o.TransitiveTagKeys = append([]string(nil), r.TransitiveTagKeys...)
	if r.SourceIdentity != "" {
		o.SourceIdentity = aws.String(r.SourceIdentity)
	}
}

// expandHome expands a leading ~ in each path, as the aws provider does.
func expandHome(paths []string) []string {
	home, err := os.UserHomeDir()
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = p
		if err == nil && (p == "~" || strings.HasPrefix(p, "~/")) {
			out[i] = filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	return out
}

// sdkLogger sends the SDK's own log lines (warnings such as clock skew or a
// missing checksum; request and response logging stays off) to
// terraform-plugin-log instead of the plugin's stderr.
type sdkLogger struct{ ctx context.Context }

func (l sdkLogger) WithContext(ctx context.Context) logging.Logger { return sdkLogger{ctx: ctx} }

func (l sdkLogger) Logf(classification logging.Classification, format string, v ...any) {
	ctx := l.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	ctx = tflog.NewSubsystem(ctx, LogSubsystem, tflog.WithRootFields())
	if classification == logging.Warn {
		tflog.SubsystemWarn(ctx, LogSubsystem, "AWS SDK: "+fmt.Sprintf(format, v...))
		return
	}
	tflog.SubsystemDebug(ctx, LogSubsystem, "AWS SDK: "+fmt.Sprintf(format, v...))
}
