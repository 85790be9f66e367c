package kueuebackend

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// The queue names a team's namespace records: its LocalQueue's while it is there and not being
// deleted; beside the add-on, which creates the team's queues with its quota, the names the
// add-on gives them, whether or not they exist yet.
func TestNamespaceQueueNames(t *testing.T) {
	now := metav1.Now()
	ns := corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: quota.NamespaceName("ml")}}
	lq := quota.RenderLocalQueue("ml", "a")
	other := lq
	other.Spec.ClusterQueue = "other"
	gone := lq
	gone.DeletionTimestamp = &now
	names := [2]string{quota.LocalQueueName("ml"), quota.ClusterQueueName("ml")}
	for _, c := range []struct {
		name        string
		addonQueues bool
		lq          *kueue.LocalQueue
		want        [2]string
	}{
		{"without a LocalQueue", false, nil, [2]string{}},
		{"with its LocalQueue", false, &lq, names},
		{"with a LocalQueue feeding another queue", false, &other, [2]string{lq.Name, "other"}},
		{"with its LocalQueue being deleted", false, &gone, [2]string{}},
		{"beside the add-on, before it created the queue", true, nil, names},
		{"beside the add-on, with the queue being deleted", true, &gone, names},
	} {
		s := &teamNamespaces{addonQueues: c.addonQueues}
		got := s.namespaceOf("ml", ns, c.lq)
		if [2]string{got.LocalQueueName, got.ClusterQueueName} != c.want {
			t.Errorf("%s: LocalQueueName, ClusterQueueName = %q, %q, want %q", c.name, got.LocalQueueName, got.ClusterQueueName, c.want)
		}
	}
}
