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
// deletes, so destroying N quotas costs one LIST, plus about one GET per quota (a queue read
// again to confirm it still uses the flavors), rather than N LISTs of up to N queues. Kueue
// itself also keeps a flavor that a queue still references (its resource-in-use finalizer) on
// clusters that run it.
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

// FlavorsInUse reports, for each flavor, whether any ClusterQueue that is not being deleted
// lists it, as the cluster is now. The index may be stale about queues other Terraform runs wrote
// or deleted, so an answer never rests on it alone: a "yes" is a queue the index names, read
// again (GET; one queue usually answers for all of a quota's flavors); a "no", which leads to
// deleting the flavor, is a fresh LIST. Two runs that each delete one of the last two queues of a
// flavor therefore cannot both keep it: each checks after its own queue is gone, and the later
// check finds the other gone too.
func (c *Client) FlavorsInUse(ctx context.Context, flavors []string) (_ map[string]bool, err error) {
	if err := c.init(ctx); err != nil {
		return nil, err
	}
	ctx, tl := withTally(ctx, c.retryClock())
	defer func() { err = tl.explain(err) }()
	u := &c.flavors
	u.mu.Lock()
	defer u.mu.Unlock()
	used := make(map[string]bool, len(flavors))
	if !u.primed {
		if err := c.relistFlavors(ctx); err != nil {
			return nil, err
		}
		for _, f := range flavors {
			used[f] = u.uses(f)
		}
		return used, nil
	}
	unsettled, err := c.confirmFlavors(ctx, flavors, used)
	if err != nil || len(unsettled) == 0 {
		return used, err
	}
	if err := c.relistFlavors(ctx); err != nil {
		return nil, err
	}
	for _, f := range unsettled {
		used[f] = u.uses(f)
	}
	return used, nil
}

// FlavorInUse is FlavorsInUse of one flavor.
func (c *Client) FlavorInUse(ctx context.Context, flavor string) (bool, error) {
	used, err := c.FlavorsInUse(ctx, []string{flavor})
	return used[flavor], err
}

// maxFlavorConfirmations bounds the GETs one FlavorsInUse spends on queues the index names before
// it lists them all instead: past a few stale entries, one LIST is cheaper.
const maxFlavorConfirmations = 3

// confirmFlavors reads again queues the index says use the flavors, marking in used each flavor a
// queue read now lists, and returns the flavors that stay unsettled. The caller holds u.mu.
func (c *Client) confirmFlavors(ctx context.Context, flavors []string, used map[string]bool) (unsettled []string, _ error) {
	u := &c.flavors
	read := map[string]bool{}
	for _, f := range flavors {
		for !used[f] && len(read) < maxFlavorConfirmations {
			name, ok := u.queueUsing(f, read)
			if !ok {
				break
			}
			read[name] = true
			raw, found, err := c.fetch(ctx, kueue.ClusterQueues, "", name)
			if err != nil {
				return nil, err
			}
			delete(u.byQueue, name)
			if !found {
				continue
			}
			var q clusterQueueFlavors
			if err := json.Unmarshal(raw, &q); err != nil {
				return nil, fmt.Errorf("decoding ClusterQueue %q: %w", name, err)
			}
			u.byQueue[name] = q.flavors()
			for _, listed := range u.byQueue[name] {
				used[listed] = used[listed] || slices.Contains(flavors, listed)
			}
		}
		if !used[f] {
			unsettled = append(unsettled, f)
		}
	}
	return unsettled, nil
}

// queueUsing is the first queue, by name, that the index says uses the flavor, leaving out skip.
func (u *flavorUsage) queueUsing(flavor string, skip map[string]bool) (string, bool) {
	first := ""
	for name, fs := range u.byQueue {
		if !skip[name] && slices.Contains(fs, flavor) && (first == "" || name < first) {
			first = name
		}
	}
	return first, first != ""
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
