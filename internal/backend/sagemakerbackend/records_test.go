package sagemakerbackend

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend/kueuebackend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// A quota the Kubernetes backend read (a ClusterQueue, with no SageMaker id) is refused with an
// error naming it, before any request: a request would name no compute quota.
func TestRecordOfAnotherStore(t *testing.T) {
	e := startEmulator(t)
	b := newBackend(t, e)
	ctx := context.Background()
	cq := kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "hyperpod-ns-ml-clusterqueue", UID: "u1"}}
	q := &backend.Quota{Record: kueuebackend.RecordOf("ClusterQueue", cq.ObjectMeta), Native: cq}
	refused := func(what string, err error) {
		t.Helper()
		var p backend.Problem
		if !errors.As(err, &p) || p.Summary != "Record of another store" || !strings.Contains(p.Detail, `"hyperpod-ns-ml-clusterqueue"`) {
			t.Errorf("%s of another store's record = %v, want it refused", what, err)
		}
	}
	e.ResetCalls()
	_, err := b.QuotaDetails.Tags(ctx, q)
	refused("Tags", err)
	_, err = b.QuotaDetails.Drift(ctx, q, quota.ResolvedConfig{}, "owner", true)
	refused("Drift", err)
	refused("Delete", b.Quotas.Delete(ctx, q))
	for op, n := range e.CallCounts() {
		if n > 0 {
			t.Errorf("%s sent %d times for another store's record", op, n)
		}
	}
}

// On the SageMaker path a team's usage needs the Kubernetes connection, and an instance type's
// capacity reads the API (and the Nodes where there is a connection), said in those terms.
func TestReadiness(t *testing.T) {
	without := readiness{}
	var p backend.Problem
	if err := without.UsageReady("ml", nil); !errors.As(err, &p) || p.Summary != "Kubernetes connection needed" {
		t.Errorf("UsageReady without Kubernetes = %v, want the connection asked for", err)
	}
	if err := without.CapacityReady("ml.g5.12xlarge", nil); err != nil {
		t.Errorf("CapacityReady with the configuration known = %v", err)
	}
	with := readiness{kueue: kueuebackend.New(nil, nil).Ready}
	for name, c := range map[string]struct {
		err  error
		what string
	}{
		"usage":                       {with.UsageReady("ml", []string{"host"}), "read ClusterQueue hyperpod-ns-ml-clusterqueue"},
		"capacity":                    {with.CapacityReady("ml.g5.12xlarge", []string{"host"}), "read the cluster's instance groups and compute quotas through the SageMaker API, and its Nodes"},
		"capacity without Kubernetes": {without.CapacityReady("ml.g5.12xlarge", []string{"host"}), "read the cluster's instance groups and compute quotas through the SageMaker API"},
	} {
		if !errors.As(c.err, &p) || p.Summary != "Provider configuration not known yet" ||
			!strings.HasPrefix(p.Detail, "Planning needs to "+c.what+", but the hyperpod provider's host depend on values") {
			t.Errorf("%s readiness with host unknown = %v, want it to need to %s", name, c.err, c.what)
		}
	}
}
