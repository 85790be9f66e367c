package main

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// cleanupObject is an object of the clean-up's kinds; deleting marks it as being deleted and
// held by a finalizer, which the fake client never removes on its own.
func cleanupObject(gvr schema.GroupVersionResource, kind, namespace, name string, labels map[string]string, deleting bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(gvr.GroupVersion().String())
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetLabels(labels)
	if deleting {
		now := metav1.Now()
		u.SetDeletionTimestamp(&now)
		u.SetFinalizers([]string{"kueue.x-k8s.io/resource-in-use"})
	}
	return u
}

func fakeCleanupCluster(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		kueue.Workloads:   "WorkloadList",
		gvrClusterQueues:  "ClusterQueueList",
		gvrNamespaces:     "NamespaceList",
		gvrResourceFlavor: "ResourceFlavorList",
	}, objs...)
}

// The clean-up deletes what the bench wrote, and only that, and says what it found.
func TestEnsureCleanDeletesTheBenchObjects(t *testing.T) {
	managed := map[string]string{"app.kubernetes.io/managed-by": "terraform-provider-hyperpod"}
	bench := benchObjectPrefix + "team-1"
	dyn := fakeCleanupCluster(
		cleanupObject(kueue.Workloads, "Workload", bench, "job-a", nil, false),
		cleanupObject(kueue.Workloads, "Workload", bench, "job-b", nil, false),
		cleanupObject(kueue.Workloads, "Workload", "research", "job-c", nil, false),
		cleanupObject(gvrClusterQueues, "ClusterQueue", "", bench, nil, false),
		cleanupObject(gvrClusterQueues, "ClusterQueue", "", "research", nil, false),
		cleanupObject(gvrNamespaces, "Namespace", "", bench, nil, false),
		cleanupObject(gvrNamespaces, "Namespace", "", "research", nil, false),
		cleanupObject(gvrResourceFlavor, "ResourceFlavor", "", "ml.g5.12xlarge", managed, false),
		cleanupObject(gvrResourceFlavor, "ResourceFlavor", "", "on-demand", nil, false),
	)
	c := &cleaner{dyn: dyn}
	ctx := context.Background()
	found, err := c.ensureClean(ctx)
	if want := "2 workloads, 1 clusterqueues, 1 namespaces, 1 resourceflavors"; err != nil || found != want {
		t.Fatalf("ensureClean: %q, %v; want %q", found, err, want)
	}
	for _, kept := range []struct {
		gvr             schema.GroupVersionResource
		namespace, name string
	}{
		{kueue.Workloads, "research", "job-c"},
		{gvrClusterQueues, "", "research"},
		{gvrNamespaces, "", "research"},
		{gvrResourceFlavor, "", "on-demand"},
	} {
		if _, err := dyn.Resource(kept.gvr).Namespace(kept.namespace).Get(ctx, kept.name, metav1.GetOptions{}); err != nil {
			t.Errorf("%s %s/%s, not the bench's, was deleted: %v", kept.gvr.Resource, kept.namespace, kept.name, err)
		}
	}
	if found, err := c.ensureClean(ctx); found != "" || err != nil {
		t.Errorf("ensureClean on a clean cluster: %q, %v; want nothing found", found, err)
	}
}

// What Kueue's bookkeeping holds is released; what stays past the deadline is named.
func TestCleanUpReleasesHeldObjectsAndNamesWhatStays(t *testing.T) {
	bench := benchObjectPrefix + "team-1"
	dyn := fakeCleanupCluster(
		cleanupObject(kueue.Workloads, "Workload", bench, "job-a", nil, true),
		cleanupObject(gvrClusterQueues, "ClusterQueue", "", bench, nil, true),
		cleanupObject(gvrNamespaces, "Namespace", "", bench, nil, true),
	)
	c := &cleaner{dyn: dyn}
	ctx := context.Background()
	past := time.Now().Add(-time.Second)

	n, err := c.deleteWorkloads(ctx, past)
	if want := "1 workloads still exist after " + cleanTimeout.String(); n != 1 || err == nil || err.Error() != want {
		t.Errorf("deleteWorkloads: %d, %v; want 1 found and %q", n, err, want)
	}
	n, err = c.deleteObjects(ctx, benchObjects{gvrClusterQueues, "", benchObjectPrefix}, past)
	if want := "1 clusterqueues still exist after " + cleanTimeout.String() + ": " + bench; n != 1 || err == nil || err.Error() != want {
		t.Errorf("deleteObjects(ClusterQueues): %d, %v; want 1 found and %q", n, err, want)
	}
	if _, err := c.deleteObjects(ctx, benchObjects{gvrNamespaces, "", benchObjectPrefix}, past); err == nil {
		t.Errorf("deleteObjects(Namespaces): no error for a namespace still being deleted")
	}
	// Only Workloads and ClusterQueues are released: a Namespace's finalizer is the API server's.
	for _, o := range []struct {
		gvr             schema.GroupVersionResource
		namespace, name string
		held            bool
	}{
		{kueue.Workloads, bench, "job-a", false},
		{gvrClusterQueues, "", bench, false},
		{gvrNamespaces, "", bench, true},
	} {
		u, err := dyn.Resource(o.gvr).Namespace(o.namespace).Get(ctx, o.name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s %s: %v", o.gvr.Resource, o.name, err)
		}
		if held := len(u.GetFinalizers()) > 0; held != o.held {
			t.Errorf("%s %s: finalizers %v, want held %v", o.gvr.Resource, o.name, strings.Join(u.GetFinalizers(), ","), o.held)
		}
	}
}
