package provider

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Another run writes a ClusterQueue that uses a flavor while this run deletes the flavor as
// unused: after the LIST that found no queue using it, before the DELETE. Kueue then keeps the
// flavor, terminating, for as long as a queue uses it. The destroy does not wait for it to go,
// and a later create of that instance type uses it as it is instead of waiting for a deletion
// that does not come until the last queue using it goes.
func TestAccConcurrentWriters_flavorDeletedWhileAnotherRunUsesIt(t *testing.T) {
	acctest.RequireKueue(t)
	const teamA, teamB, flavor, otherQueue = "cw-flavor-a", "cw-flavor-b", "ml.g6.8xlarge", "cw-flavor-other-run"
	cwCleanupFlavor(t, flavor)
	t.Cleanup(func() {
		err := acc.dynamic.Resource(kueue.ClusterQueues).Delete(context.Background(), otherQueue, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting ClusterQueue %s: %v", otherQueue, err)
		}
	})

	// The destroy's DELETE of the flavor waits at the gate until the other run's queue exists.
	deleteHeld := newGate(t)
	proxy := acctest.HoldingProxy(t, func(r *http.Request) {
		if r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, "/resourceflavors/"+flavor) {
			deleteHeld.Hold()
		}
	})
	otherRunWrote := make(chan error, 1)
	go func() {
		select {
		case <-deleteHeld.Arrived():
		case <-t.Context().Done():
			return
		}
		cq := acctest.MakeClusterQueue(otherQueue).Flavor(flavor, acctest.Nominal{CPU: "1", Memory: "1Gi", Accelerators: "1"})
		_, err := acc.dynamic.Resource(kueue.ClusterQueues).Create(context.Background(), cq.Unstructured(), metav1.CreateOptions{})
		if err == nil {
			// Kueue keeps the flavor only for queues it has seen: the queue is Active once it has.
			err = waitCondition(func(ctx context.Context) (*unstructured.Unstructured, error) {
				return acc.dynamic.Resource(kueue.ClusterQueues).Get(ctx, otherQueue, metav1.GetOptions{})
			}, "the other run's ClusterQueue", "Active", "True", "")
		}
		otherRunWrote <- err
		deleteHeld.Open()
	}()

	provider := fmt.Sprintf("provider \"hyperpod\" {\n  host = %q\n}\n", proxy)
	// Short timeouts: a wait for the flavor to go would outlast them.
	quotaOf := func(team string) string {
		return acctest.Quota(team).Body(fmt.Sprintf(`
  resources = [{ instance_type = %q, count = 1 }]
  timeouts {
    create = "1m"
    delete = "1m"
  }`, flavor)).HCL()
	}
	flavorHeld := func(*terraform.State) error {
		if err := <-otherRunWrote; err != nil {
			return fmt.Errorf("writing the other run's ClusterQueue: %w", err)
		}
		rf, err := cwGet(kueue.ResourceFlavors, "", flavor)
		if err != nil {
			return fmt.Errorf("ResourceFlavor %s after the destroy: %w, want it kept for the other run's queue", flavor, err)
		}
		if rf.GetDeletionTimestamp() == nil {
			return fmt.Errorf("ResourceFlavor %s is not being deleted: the destroy's DELETE did not reach it", flavor)
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: provider + quotaOf(teamA)},
			{
				// The destroy of the flavor's only quota deletes the flavor, at the gate.
				Config: provider,
				Check:  flavorHeld,
			},
			{
				// A create that finds the flavor terminating, held for a queue, uses it: Kueue
				// counts it as any other flavor, so the queue is active.
				Config: provider + quotaOf(teamB),
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr("hyperpod_compute_quota.test", "cluster_queue_name", quota.ClusterQueueName(teamB)),
					checkQueueActive(t, teamB),
				),
			},
		},
	})
}

// Another run deletes a flavor as unused, and it is gone, after this run found it and before
// this run writes the ClusterQueue that uses it: nothing then holds the flavor for the queue,
// and the other run's look after its delete came too early to see the queue. The create reads
// the flavor once more after writing the queue, gives it back, and the queue is active.
func TestAccConcurrentWriters_flavorGoneBeforeTheQueueIsWritten(t *testing.T) {
	acctest.RequireKueue(t)
	const team, flavor = "cw-flavor-gone", "ml.g6e.2xlarge"
	cwCleanupFlavor(t, flavor)

	// The create's write of the ClusterQueue waits at the gate while the other run deletes the
	// flavor and it goes.
	applyHeld := newGate(t)
	proxy := acctest.HoldingProxy(t, func(r *http.Request) {
		if r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/clusterqueues/"+quota.ClusterQueueName(team)) {
			applyHeld.Hold()
		}
	})
	otherRunDeleted := make(chan error, 1)
	go func() {
		select {
		case <-applyHeld.Arrived():
		case <-t.Context().Done():
			return
		}
		err := acc.dynamic.Resource(kueue.ResourceFlavors).Delete(context.Background(), flavor, metav1.DeleteOptions{})
		if err == nil {
			err = acctest.Eventually(context.Background(), time.Minute, "ResourceFlavor "+flavor+" gone",
				func(ctx context.Context) (bool, string, error) {
					_, err := acc.dynamic.Resource(kueue.ResourceFlavors).Get(ctx, flavor, metav1.GetOptions{})
					if apierrors.IsNotFound(err) {
						return true, "", nil
					}
					return false, fmt.Sprintf("still there (%v)", err), nil
				})
		}
		otherRunDeleted <- err
		applyHeld.Open()
	}()

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf("provider \"hyperpod\" {\n  host = %q\n}\n", proxy) +
				acctest.Quota(team).Resource(flavor).Count(1).HCL(),
			Check: resource.ComposeTestCheckFunc(
				func(*terraform.State) error {
					if err := <-otherRunDeleted; err != nil {
						return fmt.Errorf("the other run's delete of the flavor: %w", err)
					}
					rf, err := cwGet(kueue.ResourceFlavors, "", flavor)
					if err != nil {
						return fmt.Errorf("ResourceFlavor %s after the create: %w, want it given back", flavor, err)
					}
					if rf.GetDeletionTimestamp() != nil {
						return fmt.Errorf("ResourceFlavor %s is being deleted", flavor)
					}
					return nil
				},
				checkQueueActive(t, team),
			),
		}},
	})
}
