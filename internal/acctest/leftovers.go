package acctest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// The kinds of objects the acceptance tests create, with the provider or out of band. On a
// control plane that test runs share (attached), whatever one run leaves of them is seen by
// the next: a team's name taken, a quota counted as allocated, a priority class in the way.
var trackedKinds = []schema.GroupVersionResource{
	{Version: "v1", Resource: "namespaces"},
	{Version: "v1", Resource: "pods"},
	{Group: "batch", Version: "v1", Resource: "jobs"},
	PyTorchJobs,
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	kueue.ClusterQueues, kueue.LocalQueues, kueue.ResourceFlavors, kueue.WorkloadPriorityClasses, kueue.Workloads,
}

// leftoverWait bounds the wait for what the tests deleted to go (a namespace being emptied).
const leftoverWait = 60 * time.Second

// objectKeys lists the objects of the tracked kinds as "resource namespace/name".
func objectKeys(ctx context.Context, dyn dynamic.Interface) (map[string]bool, error) {
	keys := map[string]bool{}
	for _, gvr := range trackedKinds {
		list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvr.Resource, err)
		}
		for _, o := range list.Items {
			name := o.GetName()
			if ns := o.GetNamespace(); ns != "" {
				name = ns + "/" + name
			}
			keys[gvr.Resource+" "+name] = true
		}
	}
	return keys, nil
}

// leftovers waits up to wait for the objects that are not in before to go, and returns those
// that stay, sorted.
func leftovers(ctx context.Context, dyn dynamic.Interface, before map[string]bool, wait time.Duration) ([]string, error) {
	var left []string
	var readErr error
	_ = Eventually(ctx, wait, "the objects the tests made gone", func(ctx context.Context) (bool, string, error) {
		now, err := objectKeys(ctx, dyn)
		if err != nil {
			readErr = err
			return false, "", err
		}
		left = left[:0]
		for k := range now {
			if !before[k] {
				left = append(left, k)
			}
		}
		return len(left) == 0, "", nil
	})
	// What stays once the wait is over is the answer, not a failure of the wait.
	switch {
	case readErr != nil:
		return nil, readErr
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	slices.Sort(left)
	return left, nil
}

// checkNoLeftovers runs tests and fails them (exit code 1) when they passed but left objects
// behind on the shared control plane, naming the objects.
func checkNoLeftovers(dyn dynamic.Interface, tests func() int) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*leftoverWait)
	defer cancel()
	before, err := objectKeys(ctx, dyn)
	if err != nil {
		fmt.Fprintf(os.Stderr, "acceptance tests: reading the shared control plane before the tests: %v\n", err)
		return 1
	}
	code := tests()
	if code != 0 {
		return code // a failed test may leave anything behind; its failure says enough
	}
	ctx, cancel = context.WithTimeout(context.Background(), 2*leftoverWait)
	defer cancel()
	left, err := leftovers(ctx, dyn, before, leftoverWait)
	if err != nil {
		fmt.Fprintf(os.Stderr, "acceptance tests: reading the shared control plane after the tests: %v\n", err)
		return 1
	}
	if len(left) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the tests passed but left these objects on the shared control plane, where the next "+
			"test run would find them (a test must delete what it creates):\n  %s\n", strings.Join(left, "\n  "))
		return 1
	}
	return 0
}
