package sagemakerbackend

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakerclient"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// onePerPage is an emulator whose List calls answer one object per page, and a client of it.
func onePerPage(t *testing.T) (*sagemakeremulator.Emulator, *sagemakerclient.Client, backend.Backend) {
	t.Helper()
	e, err := sagemakeremulator.Start(sagemakeremulator.Options{DefaultMaxResults: 1, Clusters: []sagemakeremulator.Cluster{{Name: "ml",
		InstanceGroups: []sagemakeremulator.InstanceGroup{{Name: "gpu", InstanceType: "ml.g5.12xlarge", Count: 4}}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	c, err := sagemakerclient.New(context.Background(), sagemakerclient.Settings{
		ClusterARN: e.ClusterARN("ml"), Endpoint: e.URL(), AccessKey: "test", SecretKey: "test",
	})
	if err != nil {
		t.Fatal(err)
	}
	return e, c, New(c, e.ClusterARN("ml"), catalog.Builtin(), sagemakerclient.Poll{Min: time.Millisecond, Max: 5 * time.Millisecond}, nil)
}

// createOther creates a second config on the cluster, as another tool would (the emulator,
// like the API's documentation, does not limit a cluster to one).
func createOther(t *testing.T, e *sagemakeremulator.Emulator, c *sagemakerclient.Client, name string) string {
	t.Helper()
	out, err := c.CreateClusterSchedulerConfig(context.Background(), &sagemaker.CreateClusterSchedulerConfigInput{
		ClusterArn: aws.String(e.ClusterARN("ml")), Name: aws.String(name),
		SchedulerConfig: &types.SchedulerConfig{FairShare: types.FairShareEnabled},
	})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.ClusterSchedulerConfigId)
}

// Get reads every page of ListClusterSchedulerConfigs: a second config on a later page is
// reported, not ignored.
func TestSchedulerConfigGetSeesEveryPage(t *testing.T) {
	e, c, b := onePerPage(t)
	ctx := context.Background()
	if _, err := configsOf(b).put(ctx, quota.SchedulerPolicy{FairShare: quota.ActivationEnabled}, nil); err != nil {
		t.Fatal(err)
	}
	other := createOther(t, e, c, "other-policy")
	_, err := configsOf(b).get(ctx)
	var p backend.Problem
	if !errors.As(err, &p) || !strings.Contains(p.Detail, other) {
		t.Fatalf("Get with two configs, one per page: %v, want the problem of several configs naming %s", err, other)
	}
}

// The live config is found on a page after one that is being deleted.
func TestSchedulerConfigGetFindsTheLiveOneOnALaterPage(t *testing.T) {
	e, c, b := onePerPage(t)
	ctx := context.Background()
	rec, err := configsOf(b).put(ctx, quota.SchedulerPolicy{FairShare: quota.ActivationDisabled}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Newer, so listed first (the API lists newest first by default).
	other := createOther(t, e, c, "leaving-policy")
	if _, err := c.DeleteClusterSchedulerConfig(ctx, &sagemaker.DeleteClusterSchedulerConfigInput{ClusterSchedulerConfigId: aws.String(other)}); err != nil {
		t.Fatal(err)
	}
	got, err := configsOf(b).get(ctx)
	if err != nil || got == nil || got.ID != rec.ID || got.Policy.FairShare != quota.ActivationDisabled {
		t.Fatalf("Get = %+v, %v; want config %s (FairShare Disabled), listed after one being deleted", got, err, rec.ID)
	}
	calls := e.CallCounts()["ListClusterSchedulerConfigs"]
	if calls != 2 {
		t.Errorf("%d ListClusterSchedulerConfigs calls, want 2 (one per page)", calls)
	}
}

// configsOf is the scheduler configs of a backend New returned.
func configsOf(b backend.Backend) *schedulerConfigs { return b.Scheduler.(*schedulerConfigs) }
