package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// flavorUsage knows which ResourceFlavors the cluster's ClusterQueues use, for the cleanup of
// flavors after a quota is updated or deleted. It reads every ClusterQueue once per provider
// process (one paginated LIST, on first use) and then follows this process's own writes and
// deletes, so destroying N quotas costs one LIST, plus one GET per check, rather than N LISTs of
// up to N queues. Kueue itself also keeps a flavor that a queue still references (its
// resource-in-use finalizer) on clusters that run it.
type flavorUsage struct {
	mu      sync.Mutex
	primed  bool
	byQueue map[string][]string // ClusterQueue name -> flavors; queues being deleted are left out
}

// clusterQueueFlavors is the part of a ClusterQueue the index needs, decoded without the rest.
type clusterQueueFlavors struct {
	Metadata struct {
		Name              string       `json:"name"`
		DeletionTimestamp *metav1.Time `json:"deletionTimestamp,omitempty"`
	} `json:"metadata"`
	Spec struct {
		ResourceGroups []struct {
			Flavors []struct {
				Name string `json:"name"`
			} `json:"flavors"`
		} `json:"resourceGroups"`
	} `json:"spec"`
}

func (q *clusterQueueFlavors) flavors() []string {
	if q.Metadata.DeletionTimestamp != nil {
		return nil
	}
	var out []string
	for _, rg := range q.Spec.ResourceGroups {
		for _, f := range rg.Flavors {
			out = append(out, f.Name)
		}
	}
	return out
}

// listPageSize bounds each page of the ClusterQueue LIST.
const listPageSize = 500

// FlavorInUse reports whether any ClusterQueue that is not being deleted lists the flavor, as
// the cluster is now. The index may be stale about queues other Terraform runs wrote or deleted,
// so an answer never rests on it alone: a "yes" is one queue the index names, read again (GET);
// a "no", which leads to deleting the flavor, is a fresh LIST. Two runs that each delete one of
// the last two queues of a flavor therefore cannot both keep it: each checks after its own queue
// is gone, and the later check finds the other gone too.
func (c *Client) FlavorInUse(ctx context.Context, flavor string) (_ bool, err error) {
	if err := c.init(ctx); err != nil {
		return false, err
	}
	ctx, tl := withTally(ctx)
	defer func() { err = tl.explain(err) }()
	u := &c.flavors
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.primed {
		if err := c.relistFlavors(ctx); err != nil {
			return false, err
		}
		return u.uses(flavor), nil
	}
	for _, name := range u.queuesUsing(flavor, maxFlavorConfirmations) {
		raw, found, err := c.fetch(ctx, kueue.ClusterQueues, "", name)
		if err != nil {
			return false, err
		}
		if !found {
			delete(u.byQueue, name)
			continue
		}
		var q clusterQueueFlavors
		if err := json.Unmarshal(raw, &q); err != nil {
			return false, fmt.Errorf("decoding ClusterQueue %q: %w", name, err)
		}
		if u.byQueue[name] = q.flavors(); slices.Contains(u.byQueue[name], flavor) {
			return true, nil
		}
	}
	if err := c.relistFlavors(ctx); err != nil {
		return false, err
	}
	return u.uses(flavor), nil
}

// maxFlavorConfirmations bounds the GETs FlavorInUse spends on queues the index names before it
// lists them all instead: past a few stale entries, one LIST is cheaper.
const maxFlavorConfirmations = 3

// queuesUsing returns up to n queues that the index says use the flavor, in name order.
func (u *flavorUsage) queuesUsing(flavor string, n int) []string {
	var names []string
	for name, fs := range u.byQueue {
		if slices.Contains(fs, flavor) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names[:min(n, len(names))]
}

// relistFlavors replaces the index with a LIST; the caller holds u.mu.
func (c *Client) relistFlavors(ctx context.Context) error {
	byQueue, err := c.listClusterQueueFlavors(ctx)
	if err != nil {
		return err
	}
	c.flavors.byQueue, c.flavors.primed = byQueue, true
	return nil
}

func (u *flavorUsage) uses(flavor string) bool {
	for _, fs := range u.byQueue {
		if slices.Contains(fs, flavor) {
			return true
		}
	}
	return false
}

func (c *Client) listClusterQueueFlavors(ctx context.Context) (map[string][]string, error) {
	byQueue := map[string][]string{}
	err := c.listPages(ctx, kueue.ClusterQueues, "", func(items []json.RawMessage) error {
		for _, item := range items {
			var q clusterQueueFlavors
			if err := json.Unmarshal(item, &q); err != nil {
				return fmt.Errorf("decoding the ClusterQueue list: %w", err)
			}
			byQueue[q.Metadata.Name] = q.flavors()
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing ClusterQueues: %w", err)
	}
	return byQueue, nil
}

// observeWrite records a ClusterQueue this process just applied (raw is the server's answer).
func (u *flavorUsage) observeWrite(gvr schema.GroupVersionResource, name string, raw []byte) {
	if gvr != kueue.ClusterQueues {
		return
	}
	var q clusterQueueFlavors
	if err := json.Unmarshal(raw, &q); err != nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.primed {
		u.byQueue[name] = q.flavors()
	}
}

// observeDelete records a ClusterQueue this process deleted.
func (u *flavorUsage) observeDelete(gvr schema.GroupVersionResource, name string) {
	if gvr != kueue.ClusterQueues {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.primed {
		delete(u.byQueue, name)
	}
}
