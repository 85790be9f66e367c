package kube

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// Credentials that cannot be had fail the preview's first read, and the other reads are not sent:
// each would run the failing credential plugin again (the AWS CLI takes a second or more), and a
// plan would wait for all of them.
func TestListKueueStopsAtAFailingCredentialPlugin(t *testing.T) {
	api := newMemoryAPI(t)
	runs := filepath.Join(t.TempDir(), "runs")
	plugin := filepath.Join(t.TempDir(), "get-token")
	script := "#!/bin/sh\necho run >> " + runs + "\necho 'Unable to locate credentials' >&2\nexit 255\n"
	if err := os.WriteFile(plugin, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	s := api.settings(fastRetry)
	s.Token = ""
	s.Exec = &ExecSettings{APIVersion: "client.authentication.k8s.io/v1beta1", Command: plugin}
	_, err := ListKueue(context.Background(), NewClient(s))
	if err == nil || !strings.Contains(err.Error(), "get-token") {
		t.Fatalf("ListKueue with a failing credential plugin: %v, want the plugin's error", err)
	}
	out, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), "run"); n != 1 {
		t.Errorf("the credential plugin ran %d times, want once", n)
	}
	if n := api.count(); n != 0 {
		t.Errorf("%d requests reached the API server, want none", n)
	}
}

// A run whose refresh primed the read cache with a LIST of its ClusterQueues (label-selected)
// does not list them again for the preview: it lists only the queues without the label and takes
// the rest from the cache, newest first, in a LIST's order.
func TestListKueueTakesPrimedQueuesFromTheCache(t *testing.T) {
	api := newMemoryAPI(t)
	const queues = "/apis/kueue.x-k8s.io/v1beta2/clusterqueues"
	queue := func(name string, labels map[string]any) map[string]any {
		return map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
			"metadata": map[string]any{"name": name, "labels": labels,
				"managedFields": []any{map[string]any{"manager": "kueue", "operation": "Update"}}}}
	}
	for i := range primeAfter + 4 {
		api.put(fmt.Sprintf("%s/team-%02d", queues, i), queue(fmt.Sprintf("team-%02d", i), map[string]any{primeLabel: "us"}))
	}
	api.put(queues+"/adopted", queue("adopted", nil))
	c := NewClient(api.settings(fastRetry), WithListPriming(primeLabel+"=us"))
	for i := range primeAfter + 4 {
		var cq kueue.ClusterQueue
		if found, err := c.Get(context.Background(), kueue.ClusterQueues, "", fmt.Sprintf("team-%02d", i), &cq); err != nil || !found {
			t.Fatalf("reading team-%02d: found %v, %v", i, found, err)
		}
	}
	// Written by someone else since the priming LIST: the LIST of the others finds it now.
	api.put(queues+"/team-03", queue("team-03", nil))
	before := len(api.seen())
	o, err := ListKueue(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, q := range o.ClusterQueues {
		names = append(names, q.Name)
		if len(q.ManagedFields) > 0 {
			t.Errorf("%s kept its managed fields", q.Name)
		}
	}
	want := []string{"adopted"}
	for i := range primeAfter + 4 {
		want = append(want, fmt.Sprintf("team-%02d", i))
	}
	if !slices.Equal(names, want) {
		t.Errorf("ClusterQueues %v, want %v", names, want)
	}
	for _, r := range api.seen()[before:] {
		if r.Path == queues && !strings.Contains(r.Query, url.QueryEscape(primeLabel+"!=us")) {
			t.Errorf("the preview listed ClusterQueues with %q, want only those without the label", r.Query)
		}
	}
}
