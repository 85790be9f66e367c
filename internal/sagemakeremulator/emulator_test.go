package sagemakeremulator_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"
	"github.com/aws/smithy-go"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakerclient"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// testCluster is the cluster most tests allocate on.
var testCluster = sagemakeremulator.Cluster{
	Name: "ml-cluster",
	ID:   "abcdef012345",
	InstanceGroups: []sagemakeremulator.InstanceGroup{
		{Name: "gpu", InstanceType: "ml.g5.12xlarge", Count: 2},
		{Name: "a100", InstanceType: "ml.p4d.24xlarge", Count: 1},
		{Name: "cpu", InstanceType: "ml.c5.2xlarge", Count: 4},
	},
}

var otherCluster = sagemakeremulator.Cluster{
	Name:           "other-cluster",
	InstanceGroups: []sagemakeremulator.InstanceGroup{{Name: "gpu", InstanceType: "ml.g5.12xlarge", Count: 1}},
}

func start(t *testing.T, opts sagemakeremulator.Options) *sagemakeremulator.Emulator {
	t.Helper()
	if opts.Clusters == nil {
		opts.Clusters = []sagemakeremulator.Cluster{testCluster, otherCluster}
	}
	e, err := sagemakeremulator.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// client is the real SDK client pointed at e, retries off so that every error is visible,
// unless optFns say otherwise.
func client(e *sagemakeremulator.Emulator, optFns ...func(*sagemaker.Options)) *sagemaker.Client {
	opts := sagemaker.Options{
		BaseEndpoint: aws.String(e.URL()),
		Region:       e.Region(),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		Retryer:      aws.NopRetryer{},
		HTTPClient:   sagemakerclient.HTTPClient(),
	}
	for _, fn := range optFns {
		fn(&opts)
	}
	return sagemaker.New(opts)
}

// errorCode is the API error code the SDK surfaced, "" when err is no API error.
func errorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

func httpStatus(err error) int {
	var respErr *awshttp.ResponseError
	if errors.As(err, &respErr) {
		return respErr.HTTPStatusCode()
	}
	return 0
}

// quotaInput is a valid CreateComputeQuota input on testCluster.
func quotaInput(e *sagemakeremulator.Emulator, name, team string) *sagemaker.CreateComputeQuotaInput {
	return &sagemaker.CreateComputeQuotaInput{
		Name:       aws.String(name),
		ClusterArn: aws.String(e.ClusterARN(testCluster.Name)),
		ComputeQuotaConfig: &types.ComputeQuotaConfig{
			ComputeQuotaResources: []types.ComputeQuotaResourceConfig{
				{InstanceType: "ml.g5.12xlarge", Count: aws.Int32(1)},
			},
			ResourceSharingConfig: &types.ResourceSharingConfig{Strategy: types.ResourceSharingStrategyLendandborrow, BorrowLimit: aws.Int32(50)},
			PreemptTeamTasks:      types.PreemptTeamTasksLowerpriority,
		},
		ComputeQuotaTarget: &types.ComputeQuotaTarget{TeamName: aws.String(team), FairShareWeight: aws.Int32(0)},
		ActivationState:    types.ActivationStateEnabled,
	}
}

// recordingTransport keeps the requests the SDK sends.
type recordingTransport struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (rt *recordingTransport) Do(r *http.Request) (*http.Response, error) {
	rt.mu.Lock()
	rt.reqs = append(rt.reqs, r.Clone(context.Background()))
	rt.mu.Unlock()
	return http.DefaultClient.Do(r)
}

// TestSDKRequestShape proves what the SDK puts on the wire for this API, which is what the
// emulator insists on.
func TestSDKRequestShape(t *testing.T) {
	e := start(t, sagemakeremulator.Options{})
	rt := &recordingTransport{}
	c := client(e, func(o *sagemaker.Options) { o.HTTPClient = rt })
	if _, err := c.DescribeCluster(context.Background(), &sagemaker.DescribeClusterInput{ClusterName: aws.String(testCluster.Name)}); err != nil {
		t.Fatal(err)
	}
	if len(rt.reqs) != 1 {
		t.Fatalf("the SDK sent %d requests, want 1", len(rt.reqs))
	}
	r := rt.reqs[0]
	checks := []struct{ what, got, want string }{
		{"method", r.Method, http.MethodPost},
		{"path", r.URL.Path, "/"},
		{"X-Amz-Target", r.Header.Get("X-Amz-Target"), "SageMaker.DescribeCluster"},
		{"Content-Type", r.Header.Get("Content-Type"), "application/x-amz-json-1.1"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	if auth := r.Header.Get("Authorization"); !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") ||
		!strings.Contains(auth, "/"+e.Region()+"/sagemaker/aws4_request") {
		t.Errorf("Authorization = %q, want a SigV4 signature for sagemaker in %s", auth, e.Region())
	}
}

// TestProtocolErrors sends requests the SDK would not, to see the emulator refuse them the way
// the SDK decodes errors.
func TestProtocolErrors(t *testing.T) {
	e := start(t, sagemakeremulator.Options{})
	const sigV4 = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-west-2/sagemaker/aws4_request, SignedHeaders=host, Signature=00"
	tests := []struct {
		name       string
		method     string
		path       string
		header     map[string]string
		body       string
		wantStatus int
		wantCode   string
		wantMsg    string
	}{
		{
			name:       "no authorization",
			header:     map[string]string{"Authorization": ""},
			wantStatus: http.StatusForbidden, wantCode: "MissingAuthenticationToken",
		},
		{
			name:       "not SigV4",
			header:     map[string]string{"Authorization": "Bearer token"},
			wantStatus: http.StatusBadRequest, wantCode: "IncompleteSignature",
		},
		{
			name:       "unknown operation",
			header:     map[string]string{"X-Amz-Target": "SageMaker.CreateTrainingJob"},
			wantStatus: http.StatusBadRequest, wantCode: "InvalidAction", wantMsg: "SageMaker.CreateTrainingJob",
		},
		{
			name:       "another service",
			header:     map[string]string{"X-Amz-Target": "AmazonSageMaker.DescribeCluster"},
			wantStatus: http.StatusBadRequest, wantCode: "InvalidAction",
		},
		{
			name:       "JSON 1.0",
			header:     map[string]string{"Content-Type": "application/x-amz-json-1.0"},
			wantStatus: http.StatusBadRequest, wantCode: "InvalidAction", wantMsg: "Content-Type",
		},
		{
			name: "GET", method: http.MethodGet,
			wantStatus: http.StatusBadRequest, wantCode: "InvalidAction",
		},
		{
			name: "other path", path: "/clusters",
			wantStatus: http.StatusBadRequest, wantCode: "InvalidAction",
		},
		{
			name: "body not JSON", body: "{",
			wantStatus: http.StatusBadRequest, wantCode: "ValidationException",
		},
		{
			name: "member of the wrong type", body: `{"ClusterName": 7}`,
			wantStatus: http.StatusBadRequest, wantCode: "ValidationException", wantMsg: "ClusterName",
		},
		{
			name: "required member missing", body: `{}`,
			wantStatus: http.StatusBadRequest, wantCode: "ValidationException",
			wantMsg: "1 validation error detected: Value null at 'clusterName' failed to satisfy constraint: Member must not be null",
		},
		{
			name: "valid", body: `{"ClusterName": "ml-cluster"}`,
			wantStatus: http.StatusOK,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method, path := cmpOr(tt.method, http.MethodPost), cmpOr(tt.path, "/")
			req, err := http.NewRequest(method, e.URL()+path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Amz-Target", "SageMaker.DescribeCluster")
			req.Header.Set("Content-Type", "application/x-amz-json-1.1")
			req.Header.Set("Authorization", sigV4)
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d (%s)", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.wantCode == "" {
				return
			}
			var got map[string]string
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("error body %s: %v", body, err)
			}
			if got["__type"] != tt.wantCode || !strings.Contains(got["message"], tt.wantMsg) {
				t.Errorf("error body %s, want __type %s and a message containing %q", body, tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// TestErrorsAsTheSDKDecodesThem checks that each error code arrives as the SDK type or code a
// caller would test for.
func TestErrorsAsTheSDKDecodesThem(t *testing.T) {
	ctx := context.Background()
	e := start(t, sagemakeremulator.Options{})
	c := client(e)
	id := createQuota(t, c, quotaInput(e, "ml-quota", "ml"))
	tests := []struct {
		name  string
		call  func() error
		typed func(error) bool
		code  string
		msg   string
	}{
		{
			name: "ResourceNotFound",
			call: func() error {
				_, err := c.DescribeComputeQuota(ctx, &sagemaker.DescribeComputeQuotaInput{ComputeQuotaId: aws.String("000000000000")})
				return err
			},
			typed: func(err error) bool { var v *types.ResourceNotFound; return errors.As(err, &v) },
			code:  "ResourceNotFound", msg: "000000000000",
		},
		{
			name: "ConflictException",
			call: func() error {
				_, err := c.CreateComputeQuota(ctx, quotaInput(e, "ml-quota", "other"))
				return err
			},
			typed: func(err error) bool { var v *types.ConflictException; return errors.As(err, &v) },
			code:  "ConflictException", msg: "ml-quota",
		},
		{
			name: "ConflictException of a stale version",
			call: func() error {
				_, err := c.UpdateComputeQuota(ctx, &sagemaker.UpdateComputeQuotaInput{ComputeQuotaId: &id, TargetVersion: aws.Int32(7)})
				return err
			},
			typed: func(err error) bool { var v *types.ConflictException; return errors.As(err, &v) },
			code:  "ConflictException", msg: "TargetVersion 7",
		},
		{
			name: "ValidationException",
			call: func() error {
				_, err := c.CreateComputeQuota(ctx, quotaInput(e, "bad_name", "ml"))
				return err
			},
			typed: func(err error) bool { var v *smithy.GenericAPIError; return errors.As(err, &v) },
			code:  "ValidationException", msg: "at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if err == nil {
				t.Fatal("no error")
			}
			if !tt.typed(err) {
				t.Errorf("error %v (%T) is not of the expected type", err, err)
			}
			var apiErr smithy.APIError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode() != tt.code || !strings.Contains(apiErr.ErrorMessage(), tt.msg) {
				t.Errorf("error %v, want code %s and a message containing %q", err, tt.code, tt.msg)
			}
			if got := httpStatus(err); got != http.StatusBadRequest {
				t.Errorf("HTTP status %d, want 400", got)
			}
		})
	}
}

func TestDescribeCluster(t *testing.T) {
	ctx := context.Background()
	e := start(t, sagemakeremulator.Options{})
	c := client(e)
	arn := e.ClusterARN(testCluster.Name)
	if want := "arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdef012345"; arn != want {
		t.Fatalf("ClusterARN = %s, want %s", arn, want)
	}
	for _, name := range []string{testCluster.Name, arn} {
		out, err := c.DescribeCluster(ctx, &sagemaker.DescribeClusterInput{ClusterName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		if aws.ToString(out.ClusterArn) != arn || aws.ToString(out.ClusterName) != testCluster.Name || out.ClusterStatus != types.ClusterStatusInservice {
			t.Errorf("DescribeCluster(%s) = %s %s %s", name, aws.ToString(out.ClusterArn), aws.ToString(out.ClusterName), out.ClusterStatus)
		}
		if out.Orchestrator == nil || out.Orchestrator.Eks == nil || aws.ToString(out.Orchestrator.Eks.ClusterArn) != "arn:aws:eks:us-west-2:123456789012:cluster/ml-cluster" {
			t.Errorf("Orchestrator = %+v, want the EKS cluster", out.Orchestrator)
		}
		var got []string
		for _, g := range out.InstanceGroups {
			got = append(got, fmt.Sprintf("%s=%sx%d", aws.ToString(g.InstanceGroupName), g.InstanceType, aws.ToInt32(g.CurrentCount)))
		}
		if want := "gpu=ml.g5.12xlargex2 a100=ml.p4d.24xlargex1 cpu=ml.c5.2xlargex4"; strings.Join(got, " ") != want {
			t.Errorf("instance groups %v, want %s", got, want)
		}
	}
	for _, name := range []string{"missing", "arn:aws:sagemaker:us-west-2:123456789012:cluster/000000000000"} {
		_, err := c.DescribeCluster(ctx, &sagemaker.DescribeClusterInput{ClusterName: aws.String(name)})
		var nf *types.ResourceNotFound
		if !errors.As(err, &nf) {
			t.Errorf("DescribeCluster(%s): %v, want ResourceNotFound", name, err)
		}
	}
	_, err := c.DescribeCluster(ctx, &sagemaker.DescribeClusterInput{ClusterName: aws.String("arn:aws:sagemaker:eu-west-1:123456789012:cluster/abcdef012345")})
	if errorCode(err) != "ValidationException" || !strings.Contains(err.Error(), "ARN should be scoped to correct region: us-west-2") {
		t.Errorf("DescribeCluster in another region: %v, want the region ValidationException", err)
	}
}

func TestStartRefusesBadClusters(t *testing.T) {
	tests := map[string][]sagemakeremulator.Cluster{
		"name twice": {{Name: "a"}, {Name: "a"}},
		"bad name":   {{Name: "a_b"}},
		"bad ID":     {{Name: "a", ID: "ABC"}},
	}
	for name, clusters := range tests {
		t.Run(name, func(t *testing.T) {
			if e, err := sagemakeremulator.Start(sagemakeremulator.Options{Clusters: clusters}); err == nil {
				_ = e.Close()
				t.Fatal("Start accepted the clusters")
			}
		})
	}
}

// rawCall sends one signed-looking request the way the SDK would, with a body it would not.
func rawCall(t *testing.T, e *sagemakeremulator.Emulator, op, body string) (status int, code, message string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.URL()+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Amz-Target", "SageMaker."+op)
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-west-2/sagemaker/aws4_request, SignedHeaders=host, Signature=00")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var answer map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		t.Fatal(err)
	}
	code, _ = answer["__type"].(string)
	message, _ = answer["message"].(string)
	return resp.StatusCode, code, message
}

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
