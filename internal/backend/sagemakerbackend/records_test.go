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
