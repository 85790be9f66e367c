// Package sagemakerclient is the cluster-access layer for the SageMaker API,
// used on HyperPod clusters with the task-governance add-on: settings in the
// shape of the aws provider's, an aws.Config built from them, the SageMaker
// operations the provider uses behind the API interface, a time-bounded
// retry policy that never repeats a create whose outcome is unknown, and
// waiters for the asynchronous statuses.
//
// It has no Terraform framework imports; it logs through terraform-plugin-log
// using the context of each request, and never logs credentials or headers.
package sagemakerclient

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/retrypolicy"
)

// Settings is the SageMaker part of the provider block. Credentials come from
// the standard chain the aws provider uses (environment, shared config and
// credentials files with their profile, SSO, web identity, container and pod
// identity, instance metadata), unless AccessKey and SecretKey are set, and
// AssumeRole, when set, assumes a role with whatever that chain gives.
type Settings struct {
	// ClusterARN is the HyperPod cluster's ARN (see ParseClusterARN).
	ClusterARN string

	// Region defaults to the cluster ARN's region, which is where SageMaker
	// serves the cluster. A different Region is only accepted together with
	// Endpoint (an emulator or a proxy that signs for another region).
	Region string

	// Endpoint overrides the SageMaker endpoint URL (VPC interface endpoints,
	// tests); STSEndpoint does the same for AssumeRole's STS call. Roles
	// assumed by a profile use the SDK's own STS endpoint resolution
	// (AWS_ENDPOINT_URL_STS).
	Endpoint    string
	STSEndpoint string

	// Profile, SharedConfigFiles and SharedCredentialsFiles select the shared
	// configuration as the aws provider's profile, shared_config_files and
	// shared_credentials_files do; empty means the SDK's defaults
	// (AWS_PROFILE, ~/.aws/config, ~/.aws/credentials).
	Profile                string
	SharedConfigFiles      []string
	SharedCredentialsFiles []string

	// AccessKey, SecretKey and Token are static credentials, as the aws
	// provider's access_key, secret_key and token. They are secrets: they are
	// never logged, and String shows only whether they are set.
	AccessKey string
	SecretKey string
	Token     string

	// AssumeRole is the aws provider's assume_role block.
	AssumeRole *AssumeRoleSettings

	// Retry is the provider's retry block (see WithRetries).
	Retry retrypolicy.Settings
}

// AssumeRoleSettings is the common part of the aws provider's assume_role
// block, passed to STS AssumeRole.
type AssumeRoleSettings struct {
	RoleARN string
	// SessionName defaults to one the SDK generates.
	SessionName string
	ExternalID  string
	// Duration is the session's lifetime, 15 minutes to 12 hours; zero means
	// the SDK's 15 minutes (the session is renewed as it expires).
	Duration time.Duration
	// Policy (JSON) and PolicyARNs further restrict the session.
	Policy            string
	PolicyARNs        []string
	Tags              map[string]string
	TransitiveTagKeys []string
	SourceIdentity    string
}

// Problem is one invalid setting: the attribute it concerns, relative to the
// provider's SageMaker settings ("cluster_arn", "assume_role.role_arn"), and
// what is wrong. Messages never contain credentials.
type Problem struct {
	Attribute string
	Message   string
}

func (p Problem) Error() string { return p.Message }

var (
	awsRegionPattern   = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)
	roleARNPattern     = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:role/.+$`)
	policyARNPattern   = regexp.MustCompile(`^arn:aws[a-z-]*:iam::([0-9]{12}|aws):policy/.+$`)
	sessionNamePattern = regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)
	externalIDPattern  = regexp.MustCompile(`^[\w+=,.@:/-]+$`)
)

// STS's bounds on a role session's duration.
const (
	minSessionDuration = 15 * time.Minute
	maxSessionDuration = 12 * time.Hour
)

// Problems checks the settings without any network access, so the provider
// can report them when it is configured. The Attribute of each problem lets a
// caller drop those that concern a value not known yet. The retry block is
// checked by the provider with the Kubernetes settings that share it.
func (s Settings) Problems() []Problem {
	var out []Problem
	add := func(attr, format string, args ...any) {
		out = append(out, Problem{Attribute: attr, Message: fmt.Sprintf(format, args...)})
	}

	cluster, err := ParseClusterARN(s.ClusterARN)
	if err != nil {
		add("cluster_arn", "cluster_arn: %s", err)
	}
	switch {
	case s.Region != "" && !awsRegionPattern.MatchString(s.Region):
		add("region", "region %q is not an AWS region name such as us-west-2", s.Region)
	case err == nil && s.Region != "" && s.Region != cluster.Region && s.Endpoint == "":
		add("region", "region %q differs from the cluster's region %q (from cluster_arn), where SageMaker serves the cluster: remove region or set it to %q", s.Region, cluster.Region, cluster.Region)
	}
	checkURL := func(attr, raw string) {
		if raw == "" {
			return
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			add(attr, "%s %q is not an absolute http or https URL such as https://api.sagemaker.us-west-2.amazonaws.com", attr, raw)
		}
	}
	checkURL("endpoint", s.Endpoint)
	checkURL("sts_endpoint", s.STSEndpoint)

	switch {
	case s.AccessKey != "" && s.SecretKey == "":
		add("secret_key", "access_key is set without secret_key: set both, or neither to use the standard credential chain")
	case s.SecretKey != "" && s.AccessKey == "":
		add("access_key", "secret_key is set without access_key: set both, or neither to use the standard credential chain")
	}
	if s.Token != "" && (s.AccessKey == "" || s.SecretKey == "") {
		add("token", "token is a session token for access_key and secret_key: set those too, or remove token")
	}
	if r := s.AssumeRole; r != nil {
		out = append(out, r.problems()...)
	}
	return out
}

func (r AssumeRoleSettings) problems() []Problem {
	var out []Problem
	add := func(attr, format string, args ...any) {
		out = append(out, Problem{Attribute: "assume_role." + attr, Message: fmt.Sprintf("assume_role.%s %s", attr, fmt.Sprintf(format, args...))})
	}
	switch {
	case r.RoleARN == "":
		add("role_arn", "must be set, e.g. arn:aws:iam::123456789012:role/hyperpod-quota-admin")
	case !roleARNPattern.MatchString(r.RoleARN):
		add("role_arn", "%q is not an IAM role ARN such as arn:aws:iam::123456789012:role/hyperpod-quota-admin", r.RoleARN)
	}
	if r.SessionName != "" && !sessionNamePattern.MatchString(r.SessionName) {
		add("session_name", "%q must be 2 to 64 letters, digits or +=,.@_- characters", r.SessionName)
	}
	if r.ExternalID != "" && (len(r.ExternalID) < 2 || len(r.ExternalID) > 1224 || !externalIDPattern.MatchString(r.ExternalID)) {
		add("external_id", "must be 2 to 1224 letters, digits or +=,.@:/_- characters")
	}
	if r.Duration != 0 && (r.Duration < minSessionDuration || r.Duration > maxSessionDuration) {
		add("duration", "%s is outside STS's range of %s to %s", r.Duration, minSessionDuration, maxSessionDuration)
	}
	if r.Policy != "" && !json.Valid([]byte(r.Policy)) {
		add("policy", "is not valid JSON: give an IAM policy document (jsonencode or data.aws_iam_policy_document)")
	}
	for _, p := range r.PolicyARNs {
		if !policyARNPattern.MatchString(p) {
			add("policy_arns", "%q is not an IAM policy ARN such as arn:aws:iam::aws:policy/ReadOnlyAccess", p)
		}
	}
	for _, k := range r.TransitiveTagKeys {
		if _, ok := r.Tags[k]; !ok {
			add("transitive_tag_keys", "%q is not a key of assume_role.tags: STS passes on only session tags", k)
		}
	}
	return out
}

// sensitive is what String and the logs show instead of a secret that is set.
const sensitive = "(sensitive)"

// logFields are the settings as log fields: everything but the secrets, which
// only say whether they are set.
func (s Settings) logFields() map[string]any {
	f := map[string]any{
		"sagemaker_cluster_arn":  s.ClusterARN,
		"sagemaker_region":       s.Region,
		"sagemaker_endpoint":     s.Endpoint,
		"sagemaker_sts_endpoint": s.STSEndpoint,
		"sagemaker_profile":      s.Profile,
		"sagemaker_static_keys":  s.AccessKey != "",
	}
	if s.AssumeRole != nil {
		f["sagemaker_assume_role_arn"] = s.AssumeRole.RoleARN
		f["sagemaker_assume_role_session_name"] = s.AssumeRole.SessionName
	}
	return f
}

// String shows the settings with the secrets masked, so that printing them
// with %v or %+v cannot leak credentials.
func (s Settings) String() string {
	mask := func(v string) string {
		if v == "" {
			return ""
		}
		return sensitive
	}
	var b strings.Builder
	fmt.Fprintf(&b, "{ClusterARN:%s Region:%s Endpoint:%s STSEndpoint:%s Profile:%s SharedConfigFiles:%v SharedCredentialsFiles:%v AccessKey:%s SecretKey:%s Token:%s",
		s.ClusterARN, s.Region, s.Endpoint, s.STSEndpoint, s.Profile, s.SharedConfigFiles, s.SharedCredentialsFiles,
		mask(s.AccessKey), mask(s.SecretKey), mask(s.Token))
	if r := s.AssumeRole; r != nil {
		fmt.Fprintf(&b, " AssumeRole:%+v", *r)
	}
	fmt.Fprintf(&b, " Retry:%+v}", s.Retry)
	return b.String()
}

// GoString is String, for %#v.
func (s Settings) GoString() string { return s.String() }
