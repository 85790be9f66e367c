package sagemakerclient

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go/logging"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"
)

// TestNoSecretInLogs runs a client with static keys, a session token and an
// assumed role through retries, give-ups and failures, and checks that the
// logs say what happened but contain no credential and no header.
func TestNoSecretInLogs(t *testing.T) {
	isolateEnv(t)
	var logs bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &logs)

	sts := newFakeSTS(t)
	srv := newFakeSageMaker(t, func(op string, n int) reply {
		switch op {
		case "DescribeComputeQuota":
			if n <= 2 {
				return throttled
			}
			return ok(describeOK)
		case "CreateComputeQuota":
			return internalError
		default:
			return throttled
		}
	})
	c := newTestClient(t, ctx, srv, func(s *Settings) {
		s.Token, s.STSEndpoint = testToken, sts.URL
		s.AssumeRole = &AssumeRoleSettings{RoleARN: "arn:aws:iam::123456789012:role/quota-admin", ExternalID: "tenant-42"}
	})
	for _, op := range []string{"DescribeComputeQuota", "CreateComputeQuota", "DeleteComputeQuota"} {
		_ = operations[op](ctx, c)
	}
	sdkLogger{}.WithContext(ctx).Logf(logging.Warn, "clock skew of %s", time.Minute)

	out := logs.String()
	if out == "" {
		t.Fatal("nothing was logged: the test cannot tell whether secrets leak")
	}
	for _, want := range []string{
		"SageMaker client configured",
		`"sagemaker_static_keys":true`,
		`"sagemaker_assume_role_arn":"arn:aws:iam::123456789012:role/quota-admin"`,
		`"sagemaker_region_source":"cluster_arn"`,
		"retrying SageMaker API request",
		`"sagemaker_operation":"DescribeComputeQuota"`,
		`"sagemaker_attempt":2`,
		`"sagemaker_error_code":"ThrottlingException"`,
		`"sagemaker_wait":"`,
		`"sagemaker_request_id":"req-DescribeComputeQuota-1"`,
		"not retrying SageMaker create: its outcome is unknown",
		"giving up on SageMaker API request",
		`"@module":"provider.sagemaker"`,
		"AWS SDK: clock skew of 1m0s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %s", want)
		}
	}
	secrets := []string{testAccessKey, testSecretKey, testToken, sts.accessKey, sts.secretKey, sts.sessionToken, "Authorization", "X-Amz-Security-Token"}
	for _, r := range srv.received() {
		secrets = append(secrets, r.authorization)
	}
	secrets = append(secrets, sts.auths...)
	for _, secret := range secrets {
		if secret != "" && strings.Contains(out, secret) {
			t.Errorf("logs contain %q", secret)
		}
	}
}
