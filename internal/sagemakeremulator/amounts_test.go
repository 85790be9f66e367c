package sagemakeremulator_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// post sends one request as the SDK would and returns the answer's status and body.
func post(t *testing.T, e *sagemakeremulator.Emulator, op, body string) (int, string) {
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
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// VCpu and MemoryInGiB are float32s, as the API model types them: the emulator holds the
// float32 nearest the number sent and answers with that float32's value, written as a double;
// the SDK reads back the float32 it sent.
func TestAmountsAreFloat32(t *testing.T) {
	ctx := context.Background()
	e := start(t, sagemakeremulator.Options{})
	c := client(e)
	in := quotaInput(e, "amounts", "ml")
	in.ComputeQuotaConfig.ComputeQuotaResources = []types.ComputeQuotaResourceConfig{
		{InstanceType: "ml.c5.2xlarge", Accelerators: aws.Int32(0), VCpu: aws.Float32(1.45), MemoryInGiB: aws.Float32(2.9)},
	}
	in.ComputeQuotaConfig.ResourceSharingConfig.AbsoluteBorrowLimits = []types.ComputeQuotaResourceConfig{
		{InstanceType: "ml.c5.2xlarge", VCpu: aws.Float32(20000.001), MemoryInGiB: aws.Float32(16384.5)},
	}
	created, err := c.CreateComputeQuota(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(created.ComputeQuotaId)

	got := describeQuota(t, c, id).ComputeQuotaConfig
	r, l := got.ComputeQuotaResources[0], got.ResourceSharingConfig.AbsoluteBorrowLimits[0]
	for _, a := range []struct {
		what      string
		got, sent *float32
	}{
		{"VCpu", r.VCpu, aws.Float32(1.45)}, {"MemoryInGiB", r.MemoryInGiB, aws.Float32(2.9)},
		{"AbsoluteBorrowLimits VCpu", l.VCpu, aws.Float32(20000.001)}, {"AbsoluteBorrowLimits MemoryInGiB", l.MemoryInGiB, aws.Float32(16384.5)},
	} {
		if a.got == nil || *a.got != *a.sent {
			t.Errorf("%s reads back as %v, want the float32 sent, %v", a.what, a.got, *a.sent)
		}
	}

	// On the wire: the float32 widened to a double.
	status, body := post(t, e, "DescribeComputeQuota", `{"ComputeQuotaId":"`+id+`"}`)
	if status != http.StatusOK || !strings.Contains(body, `"VCpu":1.4500000476837158`) || !strings.Contains(body, `"MemoryInGiB":2.9000000953674316`) ||
		!strings.Contains(body, `"VCpu":20000.001953125`) {
		t.Errorf("DescribeComputeQuota answered %d %s, want the float32 amounts widened to doubles", status, body)
	}

	// A number with more digits than a float32 holds is held as the nearest float32.
	raw := `{"Name":"digits","ClusterArn":"` + e.ClusterARN(testCluster.Name) + `","ComputeQuotaTarget":{"TeamName":"digits"},` +
		`"ComputeQuotaConfig":{"ComputeQuotaResources":[{"InstanceType":"ml.c5.2xlarge","VCpu":1.4500000000001,"MemoryInGiB":16384.001}]}}`
	if status, body := post(t, e, "CreateComputeQuota", raw); status != http.StatusOK {
		t.Fatalf("CreateComputeQuota answered %d %s", status, body)
	}
	held := map[string]sagemakeremulator.ComputeQuotaResourceConfig{}
	for _, q := range e.Quotas() {
		held[q.Name] = q.Config.ComputeQuotaResources[0]
	}
	if held, ok := held["digits"]; !ok {
		t.Error("the emulator does not hold the quota created")
	} else {
		if *held.VCpu != sagemakeremulator.Float32(float32(1.45)) || *held.MemoryInGiB != sagemakeremulator.Float32(float32(16384.001)) {
			t.Errorf("holds VCpu %v and MemoryInGiB %v, want float32(1.45) and float32(16384.001)", *held.VCpu, *held.MemoryInGiB)
		}
	}

	// Beyond the float32 range is not a float32.
	tooBig := strings.Replace(raw, `"digits"`, `"too-big"`, 2)
	tooBig = strings.Replace(tooBig, "1.4500000000001", "1e39", 1)
	if status, body := post(t, e, "CreateComputeQuota", tooBig); status != http.StatusBadRequest ||
		!strings.Contains(body, "ValidationException") || !strings.Contains(body, "float32") {
		t.Errorf("a VCpu of 1e39 answered %d %s, want a ValidationException about a float32", status, body)
	}
}
