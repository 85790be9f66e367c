package acctest

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// fakeObject is an object of kind, whose resource the fake client guesses from the kind.
func fakeObject(gvr schema.GroupVersionResource, kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(gvr.GroupVersion().String())
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// What a run created and did not delete is reported once the wait is over; what it deleted
// while the check waited, and what was there before it, is not.
func TestLeftovers(t *testing.T) {
	namespaces := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	listKinds := map[schema.GroupVersionResource]string{}
	for _, gvr := range trackedKinds {
		listKinds[gvr] = gvr.Resource + "List"
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds,
		fakeObject(namespaces, "Namespace", "", "kube-system"), fakeObject(kueue.ResourceFlavors, "ResourceFlavor", "", "ml.g5.12xlarge"))
	ctx := context.Background()
	before, err := objectKeys(ctx, dyn)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"namespaces kube-system", "resourceflavors ml.g5.12xlarge"}; !slices.Equal(sortedKeys(before), want) {
		t.Fatalf("before: %v, want %v", sortedKeys(before), want)
	}

	for _, o := range []struct {
		gvr                   schema.GroupVersionResource
		kind, namespace, name string
	}{
		{namespaces, "Namespace", "", "hyperpod-ns-left"},
		{kueue.LocalQueues, "LocalQueue", "hyperpod-ns-left", "q"},
		{namespaces, "Namespace", "", "hyperpod-ns-going"},
	} {
		obj := fakeObject(o.gvr, o.kind, o.namespace, o.name)
		if _, err := dyn.Resource(o.gvr).Namespace(o.namespace).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The run deletes hyperpod-ns-going while the check waits: after the check's first look, which
	// finds it, and before its second. Each look lists namespaces once.
	var looks atomic.Int32
	deleted := false // reactors run one at a time
	dyn.PrependReactor("list", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
		if looks.Add(1) == 2 && !deleted {
			deleted = true
			if err := dyn.Tracker().Delete(namespaces, "", "hyperpod-ns-going"); err != nil {
				t.Error(err)
			}
		}
		return false, nil, nil
	})
	left, err := leftovers(ctx, dyn, before, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"localqueues hyperpod-ns-left/q", "namespaces hyperpod-ns-left"}; !slices.Equal(left, want) {
		t.Errorf("leftovers %v, want %v", left, want)
	}

	// Nothing left: one look, no wait.
	looks.Store(0)
	if left, err := leftovers(ctx, dyn, map[string]bool{"localqueues hyperpod-ns-left/q": true, "namespaces hyperpod-ns-left": true,
		"namespaces kube-system": true, "resourceflavors ml.g5.12xlarge": true}, time.Minute); err != nil || len(left) > 0 {
		t.Errorf("leftovers %v, %v; want none", left, err)
	}
	if n := looks.Load(); n != 1 {
		t.Errorf("the check looked %d times with nothing left; want once, without waiting", n)
	}
}

func sortedKeys(m map[string]bool) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
