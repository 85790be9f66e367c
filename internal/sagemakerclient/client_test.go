package sagemakerclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/smithy-go"
)

// describeOK is a DescribeComputeQuota answer.
const describeOK = `{"ComputeQuotaId":"q00000000001","Status":"Created","ComputeQuotaVersion":1}`

// newTestClient is a client for the fake server with static credentials.
func newTestClient(t *testing.T, ctx context.Context, srv *fakeSageMaker, change func(*Settings)) *Client {
	t.Helper()
	s := Settings{ClusterARN: testClusterARN, Endpoint: srv.URL, AccessKey: testAccessKey, SecretKey: testSecretKey, Retry: fastRetry}
	if change != nil {
		change(&s)
	}
	c, err := New(ctx, s)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func describeQuota(ctx context.Context, api API) error {
	_, err := api.DescribeComputeQuota(ctx, &sagemaker.DescribeComputeQuotaInput{ComputeQuotaId: aws.String("q00000000001")})
	return err
}

func TestNewRegion(t *testing.T) {
	isolateEnv(t)
	t.Setenv("AWS_REGION", "ap-south-1") // the cluster ARN's region beats the environment's
	srv := newFakeSageMaker(t, func(string, int) reply { return ok(describeOK) })
	ctx := context.Background()

	for _, tc := range []struct {
		name   string
		region string
		want   string
	}{
		{name: "from the cluster ARN", want: "us-west-2"},
		{name: "explicit, with an endpoint", region: "eu-west-1", want: "eu-west-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestClient(t, ctx, srv, func(s *Settings) { s.Region = tc.region })
			if c.Region() != tc.want {
				t.Errorf("Region() = %q, want %q", c.Region(), tc.want)
			}
			if err := describeQuota(ctx, c); err != nil {
				t.Fatal(err)
			}
			reqs := srv.received()
			if got := scopeOf(reqs[len(reqs)-1].authorization); !strings.Contains(got, "/"+tc.want+"/sagemaker/") {
				t.Errorf("request signed for scope %q, want region %s", got, tc.want)
			}
		})
	}

	if _, err := New(ctx, Settings{ClusterARN: testClusterARN, Region: "eu-west-1", AccessKey: testAccessKey, SecretKey: testSecretKey}); err == nil ||
		!strings.Contains(err.Error(), `differs from the cluster's region "us-west-2"`) {
		t.Errorf("a region other than the cluster's without an endpoint: err = %v", err)
	}
}

// recordingHTTPClient fails every request, keeping its URL: a way to see
// where the SDK would send a request without sending it.
type recordingHTTPClient struct{ urls []string }

func (r *recordingHTTPClient) Do(req *http.Request) (*http.Response, error) {
	r.urls = append(r.urls, req.URL.String())
	return nil, errors.New("recorded, not sent")
}

func TestNewEndpoint(t *testing.T) {
	isolateEnv(t)
	ctx := context.Background()

	srv := newFakeSageMaker(t, func(string, int) reply { return ok(describeOK) })
	c := newTestClient(t, ctx, srv, nil)
	if err := describeQuota(ctx, c); err != nil {
		t.Fatal(err)
	}
	if srv.count("DescribeComputeQuota") != 1 {
		t.Errorf("the endpoint override got %d DescribeComputeQuota requests, want 1", srv.count("DescribeComputeQuota"))
	}

	// Without an override the request goes to the cluster region's endpoint.
	c, err := New(ctx, Settings{ClusterARN: testClusterARN, AccessKey: testAccessKey, SecretKey: testSecretKey, Retry: retryOnce})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingHTTPClient{}
	_ = describeQuota(ctx, withOptions(c, func(o *sagemaker.Options) { o.HTTPClient = rec }))
	if len(rec.urls) != 1 || !strings.HasPrefix(rec.urls[0], "https://api.sagemaker.us-west-2.amazonaws.com") {
		t.Errorf("requests went to %v, want https://api.sagemaker.us-west-2.amazonaws.com", rec.urls)
	}
}

var retryOnce = fastRetry

func init() { retryOnce.MaxAttempts = 1 }

// withOptions passes optFn to every DescribeComputeQuota call of api.
func withOptions(api API, optFn func(*sagemaker.Options)) API {
	return optionsAPI{API: api, optFn: optFn}
}

type optionsAPI struct {
	API
	optFn func(*sagemaker.Options)
}

func (o optionsAPI) DescribeComputeQuota(ctx context.Context, in *sagemaker.DescribeComputeQuotaInput, optFns ...func(*sagemaker.Options)) (*sagemaker.DescribeComputeQuotaOutput, error) {
	return o.API.DescribeComputeQuota(ctx, in, append(optFns, o.optFn)...)
}

func TestNewProfile(t *testing.T) {
	isolateEnv(t)
	// Like the aws provider, a profile named in the settings beats keys in the environment.
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDFROMENVIRONMENT1")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "environment-secret")
	dir := t.TempDir()
	configFile, credentialsFile := filepath.Join(dir, "config"), filepath.Join(dir, "credentials")
	writeFile(t, configFile, "[profile quota-admin]\nregion = ap-south-1\n")
	writeFile(t, credentialsFile, "[quota-admin]\naws_access_key_id = AKIDFROMPROFILE00001\naws_secret_access_key = profile-secret\n")

	srv := newFakeSageMaker(t, func(string, int) reply { return ok(describeOK) })
	ctx := context.Background()
	c, err := New(ctx, Settings{ClusterARN: testClusterARN, Endpoint: srv.URL, Profile: "quota-admin",
		SharedConfigFiles: []string{configFile}, SharedCredentialsFiles: []string{credentialsFile}, Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	if err := describeQuota(ctx, c); err != nil {
		t.Fatal(err)
	}
	auth := srv.received()[0].authorization
	if got := credentialOf(auth); got != "AKIDFROMPROFILE00001" {
		t.Errorf("signed with %q, want the profile's key", got)
	}
	if !strings.Contains(scopeOf(auth), "/us-west-2/") {
		t.Errorf("scope %q: the cluster ARN's region must beat the profile's", scopeOf(auth))
	}

	if _, err := New(ctx, Settings{ClusterARN: testClusterARN, Profile: "missing", SharedConfigFiles: []string{configFile}}); err == nil ||
		!strings.Contains(err.Error(), "loading the AWS configuration") {
		t.Errorf("a missing profile: err = %v", err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestNewStaticCredentials(t *testing.T) {
	isolateEnv(t)
	srv := newFakeSageMaker(t, func(string, int) reply { return ok(describeOK) })
	ctx := context.Background()
	c := newTestClient(t, ctx, srv, func(s *Settings) { s.Token = testToken })
	if err := describeQuota(ctx, c); err != nil {
		t.Fatal(err)
	}
	got := srv.received()[0]
	if credentialOf(got.authorization) != testAccessKey || got.securityToken != testToken {
		t.Errorf("signed with %q and token %q, want the static credentials", credentialOf(got.authorization), got.securityToken)
	}
}

func TestNewAssumeRole(t *testing.T) {
	isolateEnv(t)
	sts := newFakeSTS(t)
	srv := newFakeSageMaker(t, func(string, int) reply { return ok(describeOK) })
	ctx := context.Background()
	role := &AssumeRoleSettings{
		RoleARN: "arn:aws:iam::123456789012:role/quota-admin", SessionName: "terraform", ExternalID: "tenant-42",
		Duration: 30 * time.Minute, Policy: `{"Version":"2012-10-17"}`, PolicyARNs: []string{"arn:aws:iam::aws:policy/ReadOnlyAccess"},
		Tags: map[string]string{"team": "ml", "env": "prod"}, TransitiveTagKeys: []string{"team"}, SourceIdentity: "alice",
	}
	c := newTestClient(t, ctx, srv, func(s *Settings) { s.STSEndpoint, s.AssumeRole = sts.URL, role })

	if !aws.IsCredentialsProvider(c.config.Credentials, (*stscreds.AssumeRoleProvider)(nil)) {
		t.Fatalf("credentials provider is %T, want a cached *stscreds.AssumeRoleProvider", c.config.Credentials)
	}
	if len(sts.forms) != 0 {
		t.Fatal("New called STS; credentials must be resolved at the first API call")
	}
	if err := describeQuota(ctx, c); err != nil {
		t.Fatal(err)
	}

	if len(sts.forms) != 1 {
		t.Fatalf("STS got %d requests, want 1", len(sts.forms))
	}
	form := sts.forms[0]
	for key, want := range map[string]string{
		"RoleArn": role.RoleARN, "RoleSessionName": "terraform", "ExternalId": "tenant-42", "DurationSeconds": "1800",
		"Policy": role.Policy, "PolicyArns.member.1.arn": role.PolicyARNs[0], "SourceIdentity": "alice",
		"Tags.member.1.Key": "env", "Tags.member.1.Value": "prod", "Tags.member.2.Key": "team", "Tags.member.2.Value": "ml",
		"TransitiveTagKeys.member.1": "team",
	} {
		if got := form.Get(key); got != want {
			t.Errorf("AssumeRole %s = %q, want %q", key, got, want)
		}
	}
	if got := credentialOf(sts.auths[0]); got != testAccessKey {
		t.Errorf("AssumeRole signed with %q, want the base credentials", got)
	}
	if !strings.Contains(scopeOf(sts.auths[0]), "/us-west-2/sts/") {
		t.Errorf("AssumeRole scope %q, want the cluster's region", scopeOf(sts.auths[0]))
	}
	got := srv.received()[0]
	if credentialOf(got.authorization) != sts.accessKey || got.securityToken != sts.sessionToken {
		t.Errorf("SageMaker request signed with %q and token %q, want the assumed role's", credentialOf(got.authorization), got.securityToken)
	}
}

func TestActionsMatchExamplePolicy(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "iam", "task-governance-policy.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Statement []struct {
			Effect string
			Action json.RawMessage
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the policy is not valid JSON: %v", err)
	}
	var inPolicy []string
	for _, st := range doc.Statement {
		if st.Effect != "Allow" {
			continue
		}
		var actions []string
		if err := json.Unmarshal(st.Action, &actions); err != nil {
			var one string
			if err := json.Unmarshal(st.Action, &one); err != nil {
				t.Fatalf("Action %s is neither a string nor a list", st.Action)
			}
			actions = []string{one}
		}
		inPolicy = append(inPolicy, actions...)
	}
	used := Actions()
	if len(used) != reflect.TypeFor[API]().NumMethod() {
		t.Fatalf("Actions() = %v", used)
	}
	for _, a := range used {
		if !slices.Contains(inPolicy, a) {
			t.Errorf("the provider calls %s but the example policy does not allow it", a)
		}
	}
	for _, a := range inPolicy {
		if strings.Contains(a, "*") {
			t.Errorf("the example policy allows %s: least privilege lists actions, not wildcards", a)
		}
		if !slices.Contains(used, a) {
			t.Errorf("the example policy allows %s, which the provider never calls", a)
		}
	}
}

// TestRetryingCoversEveryOperation calls every API method of the retrying
// client with an empty input: the SDK rejects each before sending, and the
// error must name the method, both in our wrapping and in the SDK's.
func TestRetryingCoversEveryOperation(t *testing.T) {
	isolateEnv(t)
	srv := newFakeSageMaker(t, func(op string, _ int) reply { return apiError(400, "ValidationException", op) })
	ctx := context.Background()
	c := newTestClient(t, ctx, srv, nil)

	api := reflect.ValueOf(c.API)
	apiType := reflect.TypeFor[API]()
	for i := range apiType.NumMethod() {
		name := apiType.Method(i).Name
		m := api.MethodByName(name)
		in := reflect.New(m.Type().In(1).Elem())
		res := m.Call([]reflect.Value{reflect.ValueOf(ctx), in})
		err, _ := res[1].Interface().(error)
		var opErr *OperationError
		if !errors.As(err, &opErr) || opErr.Operation != name {
			t.Errorf("%s: error %v does not name the operation", name, err)
			continue
		}
		var sdkErr *smithy.OperationError
		if !errors.As(err, &sdkErr) || sdkErr.OperationName != name {
			t.Errorf("%s: the wrapper called another SDK operation: %v", name, err)
		}
	}
}
