package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
)

// Objects of the generated teams, and the label the provider puts on what it writes.
const (
	benchObjectPrefix = "hyperpod-ns-bench-"
	managedByLabel    = "app.kubernetes.io/managed-by=terraform-provider-hyperpod"
	// cleanTimeout bounds one cleanup: on a busy 2-core machine the local control plane's
	// namespace controller took more than 5 minutes for the 1000 namespaces of the preview section.
	cleanTimeout = 20 * time.Minute
)

var (
	gvrNamespaces     = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	gvrClusterQueues  = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}
	gvrResourceFlavor = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "resourceflavors"}
)

// resolveAssets finds the control plane binaries: -assets, else $HYPERPOD_CONTROLPLANE_DIR,
// else what scripts/controlplane-assets.sh prints (it builds them once if they are missing).
func resolveAssets(ctx context.Context, repo, flagValue string) (string, error) {
	dir := flagValue
	if dir == "" {
		dir = os.Getenv(localcluster.EnvAssetsDir)
	}
	if dir == "" {
		cmd := exec.CommandContext(ctx, filepath.Join(repo, "scripts", "controlplane-assets.sh"))
		cmd.Dir, cmd.Stderr = repo, os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("scripts/controlplane-assets.sh: %w", err)
		}
		dir = strings.TrimSpace(string(out))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return abs, localcluster.CheckAssets(abs)
}

// cleaner removes what the generated teams leave in the cluster, talking to the API server
// directly (not through the counting proxy).
type cleaner struct {
	dyn dynamic.Interface
}

func newCleaner(cfg *rest.Config) (*cleaner, error) {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = -1, 0
	dyn, err := dynamic.NewForConfig(c)
	if err != nil {
		return nil, err
	}
	return &cleaner{dyn: dyn}, nil
}

// ensureClean deletes every Workload in a bench Namespace, every bench Namespace and
// ClusterQueue and every ResourceFlavor the provider wrote, waits until they are gone, and
// describes what it found (empty when the cluster was already clean).
func (c *cleaner) ensureClean(ctx context.Context) (string, error) {
	kinds := []benchObjects{
		{gvrClusterQueues, "", benchObjectPrefix},
		{gvrNamespaces, "", benchObjectPrefix}, // the namespace finalizer deletes the LocalQueues
		{gvrResourceFlavor, managedByLabel, ""},
	}
	var found []string
	deadline := time.Now().Add(cleanTimeout)
	// Workloads first, many at a time: Kueue holds a ClusterQueue that admitted some.
	if n, err := c.deleteWorkloads(ctx, deadline); err != nil {
		return "", err
	} else if n > 0 {
		found = append(found, fmt.Sprintf("%d workloads", n))
	}
	for _, k := range kinds {
		if n, err := c.deleteObjects(ctx, k, deadline); err != nil {
			return "", err
		} else if n > 0 {
			found = append(found, fmt.Sprintf("%d %s", n, k.gvr.Resource))
		}
	}
	return strings.Join(found, ", "), nil
}

// benchObjects selects the objects of one kind that a bench run wrote: those with the label
// selector, and of those the ones whose names start with prefix.
type benchObjects struct {
	gvr      schema.GroupVersionResource
	selector string
	prefix   string
}

// cleanPollInterval is how often the clean-up lists what is left.
const cleanPollInterval = 200 * time.Millisecond

// deleteObjects deletes the objects k selects and waits until they are gone. It says how many
// it found.
func (c *cleaner) deleteObjects(ctx context.Context, k benchObjects, deadline time.Time) (int, error) {
	ri := c.dyn.Resource(k.gvr)
	found := -1
	var left []string
	err := localcluster.WaitUntil(ctx, deadline, cleanPollInterval, func(ctx context.Context) (bool, error) {
		list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: k.selector})
		if err != nil {
			return false, fmt.Errorf("listing %s: %w", k.gvr.Resource, err)
		}
		left = nil
		for _, item := range list.Items {
			if !strings.HasPrefix(item.GetName(), k.prefix) {
				continue
			}
			left = append(left, item.GetName())
			if k.gvr == gvrClusterQueues && item.GetDeletionTimestamp() != nil && len(item.GetFinalizers()) > 0 {
				// The Workloads are gone, so only Kueue's bookkeeping holds the queue. With fair
				// sharing Kueue releases a queue of a large cohort only after recomputing every
				// other queue's share, a few a second at 1000 teams: on the bench's own cluster,
				// release them here.
				if err := releaseFinalizers(ctx, ri, "ClusterQueue", item); err != nil {
					return false, err
				}
			}
			if item.GetDeletionTimestamp() == nil {
				err := ri.Delete(ctx, item.GetName(), metav1.DeleteOptions{})
				if err != nil && !apierrors.IsNotFound(err) {
					return false, fmt.Errorf("deleting %s %s: %w", k.gvr.Resource, item.GetName(), err)
				}
			}
		}
		if found < 0 {
			found = len(left)
		}
		return len(left) == 0, nil
	}, func() error {
		return fmt.Errorf("%d %s still exist after %s: %s", len(left), k.gvr.Resource, cleanTimeout, strings.Join(left[:min(5, len(left))], ", "))
	})
	return found, err
}

// releaseFinalizers removes the finalizers of an object of kind being deleted.
func releaseFinalizers(ctx context.Context, ri dynamic.NamespaceableResourceInterface, kind string, obj unstructured.Unstructured) error {
	_, err := ri.Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing %s %s: %w", kind, path.Join(obj.GetNamespace(), obj.GetName()), err)
	}
	return nil
}

// deleteWorkloads deletes the Workloads in the bench's namespaces and waits until they are
// gone: Kueue keeps a ClusterQueue while it holds admitted Workloads. It says how many it found.
func (c *cleaner) deleteWorkloads(ctx context.Context, deadline time.Time) (int, error) {
	ri := c.dyn.Resource(kueue.Workloads)
	found, left := -1, 0
	err := localcluster.WaitUntil(ctx, deadline, cleanPollInterval, func(ctx context.Context) (bool, error) {
		list, err := ri.List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			found = 0 // no Kueue CRDs
			return true, nil
		}
		if err != nil {
			return false, fmt.Errorf("listing workloads: %w", err)
		}
		var live, held []unstructured.Unstructured
		left = 0
		for _, item := range list.Items {
			if !strings.HasPrefix(item.GetNamespace(), benchObjectPrefix) {
				continue
			}
			left++
			switch {
			case item.GetDeletionTimestamp() == nil:
				live = append(live, item)
			case len(item.GetFinalizers()) > 0:
				held = append(held, item)
			}
		}
		if found < 0 {
			found = left
		}
		if left == 0 {
			return true, nil
		}
		err = concurrently(ctx, len(live), func(ctx context.Context, i int) error {
			err := ri.Namespace(live[i].GetNamespace()).Delete(ctx, live[i].GetName(), metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting Workload %s/%s: %w", live[i].GetNamespace(), live[i].GetName(), err)
			}
			return nil
		})
		if err != nil {
			return false, err
		}
		// Kueue releases a deleted Workload only after it has recomputed the cohort, slowly at
		// 1000 teams with fair sharing (as for ClusterQueues, above): on the bench's own cluster,
		// release them here.
		return false, concurrently(ctx, len(held), func(ctx context.Context, i int) error {
			return releaseFinalizers(ctx, ri, "Workload", held[i])
		})
	}, func() error {
		return fmt.Errorf("%d workloads still exist after %s", left, cleanTimeout)
	})
	return found, err
}
