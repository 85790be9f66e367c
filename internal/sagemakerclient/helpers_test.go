package sagemakerclient

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/retrypolicy"
)

const (
	testClusterARN = "arn:aws:sagemaker:us-west-2:123456789012:cluster/abcd1234efgh"

	// Distinctive credentials, so a test can search the logs for them.
	testAccessKey = "AKIDSTATICKEY0000001"
	testSecretKey = "static-secret-key-must-never-be-logged"
	testToken     = "static-session-token-must-never-be-logged"
)

// fastRetry keeps retry tests quick.
var fastRetry = retrypolicy.Settings{MaxAttempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, MaxElapsed: time.Minute}

// isolateEnv keeps the developer's AWS environment and files out of a test
// (and instance metadata out of the credential chain).
func isolateEnv(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "no-config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "no-credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	for _, v := range []string{
		"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
		"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SAGEMAKER", "AWS_ENDPOINT_URL_STS",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_MAX_ATTEMPTS", "AWS_RETRY_MODE",
	} {
		t.Setenv(v, "")
	}
}

// reply is one answer of the fake SageMaker server.
type reply struct {
	status int
	body   string
	// drop closes the connection after reading the request, without answering.
	drop bool
}

func ok(body string) reply { return reply{status: http.StatusOK, body: body} }

// apiError is an error answer in the awsJson1_1 protocol's shape.
func apiError(status int, code, message string) reply {
	b, _ := json.Marshal(map[string]string{"__type": code, "message": message})
	return reply{status: status, body: string(b)}
}

// received is one request the fake server saw.
type received struct {
	operation     string // from X-Amz-Target, e.g. "CreateComputeQuota"
	authorization string
	securityToken string
	body          string
}

// fakeSageMaker answers SageMaker's awsJson1_1 protocol with replies chosen
// by operation and by how often that operation was called (1-based).
type fakeSageMaker struct {
	*httptest.Server
	respond func(operation string, n int) reply

	mu       sync.Mutex
	requests []received
	counts   map[string]int
}

func newFakeSageMaker(t *testing.T, respond func(operation string, n int) reply) *fakeSageMaker {
	t.Helper()
	f := &fakeSageMaker{respond: respond, counts: map[string]int{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeSageMaker) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "SageMaker.")
	f.mu.Lock()
	f.counts[op]++
	n := f.counts[op]
	f.requests = append(f.requests, received{
		operation: op, authorization: r.Header.Get("Authorization"),
		securityToken: r.Header.Get("X-Amz-Security-Token"), body: string(body),
	})
	f.mu.Unlock()

	rep := f.respond(op, n)
	if rep.drop {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-RequestId", fmt.Sprintf("req-%s-%d", op, n))
	w.WriteHeader(rep.status)
	_, _ = io.WriteString(w, rep.body)
}

func (f *fakeSageMaker) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[op]
}

func (f *fakeSageMaker) received() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.requests...)
}

// fakeSTS answers STS AssumeRole (awsQuery protocol) with fixed credentials
// and keeps the form of each request.
type fakeSTS struct {
	*httptest.Server
	accessKey, secretKey, sessionToken string

	mu    sync.Mutex
	forms []url.Values
	auths []string
}

func newFakeSTS(t *testing.T) *fakeSTS {
	t.Helper()
	f := &fakeSTS{accessKey: "ASIAASSUMEDKEY000001", secretKey: "assumed-secret-must-never-be-logged", sessionToken: "assumed-token-must-never-be-logged"}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		f.mu.Lock()
		f.forms = append(f.forms, form)
		f.auths = append(f.auths, r.Header.Get("Authorization"))
		f.mu.Unlock()
		if form.Get("Action") != "AssumeRole" {
			http.Error(w, "unexpected action "+form.Get("Action"), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/xml")
		fmt.Fprintf(w, `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <Credentials>
      <AccessKeyId>%s</AccessKeyId>
      <SecretAccessKey>%s</SecretAccessKey>
      <SessionToken>%s</SessionToken>
      <Expiration>%s</Expiration>
    </Credentials>
    <AssumedRoleUser>
      <Arn>arn:aws:sts::123456789012:assumed-role/quota-admin/%s</Arn>
      <AssumedRoleId>AROAEXAMPLE:%s</AssumedRoleId>
    </AssumedRoleUser>
  </AssumeRoleResult>
  <ResponseMetadata><RequestId>sts-req-1</RequestId></ResponseMetadata>
</AssumeRoleResponse>`, f.accessKey, f.secretKey, f.sessionToken, time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
			form.Get("RoleSessionName"), form.Get("RoleSessionName"))
	}))
	t.Cleanup(f.Close)
	return f
}

// credentialOf is the access key id in a SigV4 Authorization header.
func credentialOf(authorization string) string {
	_, after, found := strings.Cut(authorization, "Credential=")
	if !found {
		return ""
	}
	key, _, _ := strings.Cut(after, "/")
	return key
}

// scopeOf is the credential scope (date/region/service/aws4_request) in a
// SigV4 Authorization header.
func scopeOf(authorization string) string {
	_, after, _ := strings.Cut(authorization, "Credential=")
	scope, _, _ := strings.Cut(after, ",")
	_, scope, _ = strings.Cut(scope, "/")
	return scope
}
