package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// memoryAPI is a fake API server that stores objects by URL path. It answers GET, server-side
// apply PATCH, DELETE, LIST (paginated, two items per page) and watches of one object. An object
// with finalizers is only marked deleted; release removes it and ends its watches.
type memoryAPI struct {
	*fakeAPI
	mu       sync.Mutex
	objects  map[string]map[string]any
	released chan string
	forbid   map[string]bool // "VERB" requests answered 403
	creates  int             // objects created by POST
}

func newMemoryAPI(t *testing.T) *memoryAPI {
	m := &memoryAPI{objects: map[string]map[string]any{}, released: make(chan string, 16), forbid: map[string]bool{}}
	m.fakeAPI = newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, _ int) { m.serve(w, r) })
	return m
}

func (m *memoryAPI) client() *Client { return NewClient(m.settings(fastRetry)) }

func (m *memoryAPI) put(path string, obj map[string]any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objects[path] = obj
}

// release finishes the deletion of an object held by finalizers: watchers get the deletion
// event; GETs only stop finding the object when forget is set.
func (m *memoryAPI) release(path string, forget bool) {
	if forget {
		m.mu.Lock()
		delete(m.objects, path)
		m.mu.Unlock()
	}
	m.released <- path
}

func (m *memoryAPI) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	verb := r.Method
	if r.URL.Query().Get("watch") == "true" {
		verb = "WATCH"
	} else if r.Method == http.MethodGet && r.URL.Query().Has("limit") {
		verb = "LIST"
	}
	if m.forbid[verb] {
		writeStatus(w, http.StatusForbidden, metav1.StatusReasonForbidden, "")
		return
	}
	m.mu.Lock()
	obj, ok := m.objects[path]
	m.mu.Unlock()
	switch verb {
	case "WATCH":
		name := strings.TrimPrefix(r.URL.Query().Get("fieldSelector"), "metadata.name=")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case p := <-m.released:
				if strings.HasSuffix(p, "/"+name) {
					_ = json.NewEncoder(w).Encode(map[string]any{"type": "DELETED", "object": namespaceJSON(name)})
					w.(http.Flusher).Flush()
					return
				}
			case <-r.Context().Done():
				return
			}
		}
	case "LIST":
		m.list(w, r)
	case http.MethodGet:
		if !ok {
			writeObjectNotFound(w, path)
			return
		}
		writeObject(w, http.StatusOK, obj)
	case http.MethodPost:
		body, _ := io.ReadAll(r.Body)
		var created map[string]any
		_ = json.Unmarshal(body, &created)
		meta := created["metadata"].(map[string]any)
		objPath := path + "/" + meta["name"].(string)
		m.mu.Lock()
		_, exists := m.objects[objPath]
		if !exists {
			meta["resourceVersion"] = "1"
			m.objects[objPath] = created
			m.creates++
		}
		m.mu.Unlock()
		if exists {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusConflict)
			_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
				Status: metav1.StatusFailure, Reason: metav1.StatusReasonAlreadyExists, Code: http.StatusConflict,
				Message: "already exists", Details: &metav1.StatusDetails{Name: meta["name"].(string)}})
			return
		}
		writeObject(w, http.StatusCreated, created)
	case http.MethodPatch:
		body, _ := io.ReadAll(r.Body)
		var applied map[string]any
		_ = json.Unmarshal(body, &applied)
		applied["metadata"].(map[string]any)["resourceVersion"] = "2"
		m.put(path, applied)
		writeObject(w, http.StatusOK, applied)
	case http.MethodDelete:
		if !ok {
			writeObjectNotFound(w, path)
			return
		}
		meta := obj["metadata"].(map[string]any)
		if meta["finalizers"] != nil {
			meta["deletionTimestamp"] = "2026-12-02T00:00:00Z"
		} else {
			m.mu.Lock()
			delete(m.objects, path)
			m.mu.Unlock()
		}
		writeObject(w, http.StatusOK, obj)
	}
}

// list serves a collection two items at a time; the continue token is the next index.
func (m *memoryAPI) list(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	var paths []string
	for p := range m.objects {
		if strings.HasPrefix(p, r.URL.Path+"/") {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var items []any
	for _, p := range paths {
		o := m.objects[p]
		if sel := r.URL.Query().Get("labelSelector"); sel != "" {
			k, v, _ := strings.Cut(sel, "=")
			k, negated := strings.CutSuffix(k, "!")
			labels, _ := o["metadata"].(map[string]any)["labels"].(map[string]any)
			if (labels[k] == v) == negated {
				continue
			}
		}
		items = append(items, o)
	}
	m.mu.Unlock()
	start := 0
	_, _ = fmt.Sscan(r.URL.Query().Get("continue"), &start)
	end := min(start+2, len(items))
	cont := ""
	if end < len(items) {
		cont = fmt.Sprint(end)
	}
	writeObject(w, http.StatusOK, map[string]any{"metadata": map[string]any{"continue": cont}, "items": items[start:end]})
}

func (m *memoryAPI) countRequests(method, path string) int {
	n := 0
	for _, r := range m.seen() {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}

const nsPath = "/api/v1/namespaces/team-a"

// Concurrent readers of one object share a single GET, later reads cost nothing, and a miss
// is remembered too.
func TestGetReadsEachObjectOnce(t *testing.T) {
	api := newMemoryAPI(t)
	api.put(nsPath, namespaceJSON("team-a"))
	c, ctx := api.client(), context.Background()
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ns corev1.Namespace
			found, err := c.Get(ctx, Namespaces, "", "team-a", &ns)
			if err != nil || !found || ns.Name != "team-a" {
				t.Errorf("found %v, name %q, err %v", found, ns.Name, err)
			}
		}()
	}
	wg.Wait()
	for range 2 {
		var ns corev1.Namespace
		if found, err := c.Get(ctx, Namespaces, "", "missing", &ns); found || err != nil {
			t.Fatalf("missing: found %v, err %v", found, err)
		}
	}
	if got := api.count(); got != 2 {
		t.Errorf("%d requests, want one GET of each object: %+v", got, api.seen())
	}
	// A new Client (the next Terraform command) reads again.
	var ns corev1.Namespace
	if _, err := api.client().Get(ctx, Namespaces, "", "team-a", &ns); err != nil || api.count() != 3 {
		t.Errorf("a new client did not read again: %v, %d requests", err, api.count())
	}
}

// Errors are not remembered: the next read asks the server again.
func TestGetDoesNotCacheErrors(t *testing.T) {
	fails := true
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if fails {
			writeStatus(w, http.StatusForbidden, metav1.StatusReasonForbidden, "")
			return
		}
		writeObject(w, http.StatusOK, namespaceJSON("team-a"))
	})
	c, ctx := NewClient(api.settings(fastRetry)), context.Background()
	var ns corev1.Namespace
	if _, err := c.Get(ctx, Namespaces, "", "team-a", &ns); err == nil {
		t.Fatal("want the 403")
	}
	fails = false
	if found, err := c.Get(ctx, Namespaces, "", "team-a", &ns); !found || err != nil {
		t.Fatalf("after the error: found %v, err %v", found, err)
	}
}

// A reader whose shared read was abandoned by another caller's cancelled context reads itself.
func TestReadCacheRetriesAfterAnotherCallersCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c readCache
		key := objectKey{Namespaces, "", "x"}
		started, cancelled := make(chan struct{}), make(chan struct{})
		go func() {
			_, _, _ = c.get(context.Background(), key, func(context.Context) ([]byte, bool, error) {
				close(started)
				<-cancelled
				return nil, false, context.Canceled
			})
		}()
		<-started
		type result struct {
			raw   []byte
			found bool
			err   error
		}
		second := make(chan result, 1)
		go func() {
			raw, found, err := c.get(context.Background(), key, func(context.Context) ([]byte, bool, error) {
				return []byte(`{}`), true, nil
			})
			second <- result{raw, found, err}
		}()
		synctest.Wait() // the second reader waits for the first one's read
		select {
		case r := <-second:
			t.Fatalf("the second reader did not wait for the shared read: %q %v %v", r.raw, r.found, r.err)
		default:
		}
		close(cancelled)
		if r := <-second; r.err != nil || !r.found || string(r.raw) != "{}" {
			t.Fatalf("got %q %v %v", r.raw, r.found, r.err)
		}
	})
}

// What this process applied is what it reads back, without another GET.
func TestApplyUpdatesTheCache(t *testing.T) {
	api := newMemoryAPI(t)
	c, ctx := api.client(), context.Background()
	var ns corev1.Namespace
	if found, _ := c.Get(ctx, Namespaces, "", "team-a", &ns); found {
		t.Fatal("found before apply")
	}
	want := corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"a": "b"}}}
	var out corev1.Namespace
	if err := c.Apply(ctx, Namespaces, "test", &want, &out); err != nil {
		t.Fatal(err)
	}
	if out.ResourceVersion != "2" {
		t.Errorf("apply result not decoded: %+v", out.ObjectMeta)
	}
	if found, err := c.Get(ctx, Namespaces, "", "team-a", &ns); !found || err != nil || ns.Labels["a"] != "b" {
		t.Fatalf("after apply: found %v, labels %v, err %v", found, ns.Labels, err)
	}
	if n := api.countRequests(http.MethodGet, nsPath); n != 1 {
		t.Errorf("%d GETs, want 1 (before the apply only)", n)
	}
	r := api.seen()[1]
	if r.Method != http.MethodPatch || r.ContentType != "application/apply-patch+yaml" {
		t.Errorf("apply sent %s %s", r.Method, r.ContentType)
	}
}

// An object without finalizers is gone when DELETE returns: one GET confirms it, no sleeping.
func TestDeleteAndWaitWithoutFinalizers(t *testing.T) {
	api := newMemoryAPI(t)
	api.put(nsPath, namespaceJSON("team-a"))
	c := api.client()
	// A poll every hour: any wait before the GET would run into the context's minute.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.DeleteAndWait(ctx, Namespaces, "", "team-a", time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := len(api.seen()); got != 2 {
		t.Errorf("requests %+v, want DELETE and one GET", api.seen())
	}
	var ns corev1.Namespace
	if found, _ := c.Get(ctx, Namespaces, "", "team-a", &ns); found || len(api.seen()) != 2 {
		t.Errorf("the deleted object is read again or still found: %v", found)
	}
}

// A terminating object is watched: the wait ends when its deletion event arrives (here the
// fake's GETs would go on finding it); without watch permission it polls. The deletion finishes
// only once the client waits for it: it watches, or its poll found the object still there.
func TestDeleteAndWaitTracksTheServer(t *testing.T) {
	for _, forbidWatch := range []bool{false, true} {
		t.Run(fmt.Sprintf("forbid watch %v", forbidWatch), func(t *testing.T) {
			api := newMemoryAPI(t)
			api.forbid["WATCH"] = forbidWatch
			obj := namespaceJSON("team-a")
			obj["metadata"].(map[string]any)["finalizers"] = []any{"kubernetes"}
			api.put(nsPath, obj)
			c := api.client()
			// Bounds the waits only: a client that never sees the deletion fails instead of hanging.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()

			var released atomic.Bool
			returned := make(chan error, 1)
			go func() {
				err := c.DeleteAndWait(ctx, Namespaces, "", "team-a", 100*time.Millisecond)
				if err == nil && !released.Load() {
					err = errors.New("DeleteAndWait returned before the deletion finished")
				}
				returned <- err
			}()
			waitingPath := "/api/v1/namespaces" // the watch
			if forbidWatch {
				waitingPath = nsPath // a poll
			}
			for !deletedThenRead(api.seen(), waitingPath) {
				select {
				case err := <-returned:
					t.Fatalf("DeleteAndWait returned %v before it waited for the deletion: requests %+v", err, api.seen())
				case <-ctx.Done():
					t.Fatalf("the client did not wait for the deletion: requests %+v", api.seen())
				case <-time.After(time.Millisecond):
				}
			}
			released.Store(true)
			api.release(nsPath, forbidWatch)
			select {
			case err := <-returned:
				if err != nil {
					t.Fatal(err)
				}
			case <-ctx.Done():
				t.Fatal("DeleteAndWait did not return after the deletion finished")
			}
		})
	}
}

// deletedThenRead reports whether requests hold a DELETE followed by a GET of path.
func deletedThenRead(requests []seenRequest, path string) bool {
	i := slices.IndexFunc(requests, func(r seenRequest) bool { return r.Method == http.MethodDelete })
	return i >= 0 && slices.ContainsFunc(requests[i+1:], func(r seenRequest) bool { return r.Method == http.MethodGet && r.Path == path })
}

// On timeout the error names the finalizers.
func TestDeleteAndWaitTimeoutNamesFinalizers(t *testing.T) {
	api := newMemoryAPI(t)
	obj := namespaceJSON("team-a")
	obj["metadata"].(map[string]any)["finalizers"] = []any{"kueue.x-k8s.io/resource-in-use"}
	api.put(nsPath, obj)
	// The context ends, as at a timeout, once the client waits: it watches the terminating
	// object. The minute bounds a hang only.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		for !deletedThenRead(api.seen(), "/api/v1/namespaces") {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Millisecond):
			}
		}
		cancel()
	}()
	err := api.client().DeleteAndWait(ctx, Namespaces, "", "team-a", 50*time.Millisecond)
	if !errors.Is(err, ErrStillExists) || !strings.Contains(err.Error(), "resource-in-use") {
		t.Fatalf("got %v", err)
	}
}

func clusterQueueJSON(name string, flavors ...string) map[string]any {
	var fs []any
	for _, f := range flavors {
		fs = append(fs, map[string]any{"name": f})
	}
	return map[string]any{
		"apiVersion": kueue.GroupVersion.String(), "kind": kueue.KindClusterQueue,
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"resourceGroups": []any{map[string]any{"flavors": fs}}},
	}
}

// Flavor usage is one paginated LIST per process, then follows the process's own writes and
// deletes: a destroy of N quotas is not N LISTs. A "used" answer is confirmed by one GET of a
// queue that uses the flavor; only an "unused" answer lists again.
func TestFlavorInUseListsOnceAndConfirmsWithOneGet(t *testing.T) {
	api := newMemoryAPI(t)
	const cqs = "/apis/kueue.x-k8s.io/v1beta2/clusterqueues"
	api.put(cqs+"/a", clusterQueueJSON("a", "ml.g5.12xlarge"))
	api.put(cqs+"/b", clusterQueueJSON("b", "ml.g5.12xlarge", "ml.p5.48xlarge"))
	deleting := clusterQueueJSON("c", "ml.trn1.32xlarge")
	deleting["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-02T00:00:00Z"
	api.put(cqs+"/c", deleting)
	c := api.client()
	inUse := flavorInUseOf(t, c)
	lists := func() int { return api.countRequests(http.MethodGet, cqs) / 2 } // three queues, two per page
	gets := func(q string) int { return api.countRequests(http.MethodGet, cqs+"/"+q) }

	if !inUse("ml.p5.48xlarge") || lists() != 1 || gets("b") != 0 {
		t.Fatalf("wrong usage, or %d LISTs and %d GETs of b after the first LIST", lists(), gets("b"))
	}
	if !inUse("ml.g5.12xlarge") || lists() != 1 || gets("a") != 1 {
		t.Fatalf("a used flavor was listed again (%d LISTs) or not confirmed by one GET (%d)", lists(), gets("a"))
	}
	if inUse("ml.trn1.32xlarge") || lists() != 2 {
		t.Fatalf("a queue being deleted counts, or unused was not confirmed (%d LISTs)", lists())
	}
	if err := c.DeleteAndWait(context.Background(), kueue.ClusterQueues, "", "b", time.Second); err != nil {
		t.Fatal(err)
	}
	if !inUse("ml.g5.12xlarge") || lists() != 2 {
		t.Errorf("queue a not counted, or a used flavor listed again (%d LISTs)", lists())
	}
	if inUse("ml.p5.48xlarge") {
		t.Error("the deleted queue b still counts")
	}
	cq := kueue.ClusterQueue{
		TypeMeta:   metav1.TypeMeta{APIVersion: kueue.GroupVersion.String(), Kind: kueue.KindClusterQueue},
		ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec:       kueue.ClusterQueueSpec{ResourceGroups: []kueue.ResourceGroup{{Flavors: []kueue.FlavorQuotas{{Name: "ml.c5.4xlarge"}}}}},
	}
	if err := c.Apply(context.Background(), kueue.ClusterQueues, "test", &cq, nil); err != nil {
		t.Fatal(err)
	}
	if !inUse("ml.c5.4xlarge") {
		t.Error("the applied queue d does not count")
	}
	api.mu.Lock()
	delete(api.objects, cqs+"/d") // deleted by someone else: only the cluster knows
	api.mu.Unlock()
	if inUse("ml.c5.4xlarge") {
		t.Error("queue d, which the process wrote and another deleted, still counts")
	}
}

// A destroyed quota's flavors are checked together: one queue read again answers for every
// flavor it lists, so a destroy of N quotas costs about one GET each, not one per flavor.
func TestFlavorsInUseOneGetForAQuotasFlavors(t *testing.T) {
	api := newMemoryAPI(t)
	const cqs = "/apis/kueue.x-k8s.io/v1beta2/clusterqueues"
	types := []string{"ml.g5.12xlarge", "ml.p5.48xlarge", "ml.trn1.32xlarge"}
	for _, q := range []string{"a", "b", "c"} {
		api.put(cqs+"/"+q, clusterQueueJSON(q, types...))
	}
	c := api.client()
	if _, err := c.FlavorsInUse(context.Background(), types); err != nil { // primes the index
		t.Fatal(err)
	}
	if err := c.DeleteAndWait(context.Background(), kueue.ClusterQueues, "", "c", time.Second); err != nil {
		t.Fatal(err)
	}
	before := len(api.seen())
	used, err := c.FlavorsInUse(context.Background(), types)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range types {
		if !used[f] {
			t.Errorf("%s, listed by queues a and b, is not in use", f)
		}
	}
	if got := api.seen()[before:]; len(got) != 1 || got[0].Method != http.MethodGet || got[0].Path != cqs+"/a" {
		t.Errorf("requests %v, want one GET of queue a", got)
	}
}

// Two Terraform runs each delete one of the last two queues of a flavor, each after reading
// every queue: whichever checks last must find the flavor unused, or both keep it and nothing
// ever deletes it.
func TestFlavorInUseSeesAnotherRunsDelete(t *testing.T) {
	api := newMemoryAPI(t)
	const cqs = "/apis/kueue.x-k8s.io/v1beta2/clusterqueues"
	api.put(cqs+"/a", clusterQueueJSON("a", "ml.g5.12xlarge"))
	api.put(cqs+"/b", clusterQueueJSON("b", "ml.g5.12xlarge"))
	first, second := api.client(), api.client()
	for _, c := range []*Client{first, second} {
		if !flavorInUseOf(t, c)("ml.g5.12xlarge") {
			t.Fatal("the flavor of two queues is not in use")
		}
	}
	for c, q := range map[*Client]string{first: "a", second: "b"} {
		if err := c.DeleteAndWait(context.Background(), kueue.ClusterQueues, "", q, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range []*Client{first, second} {
		if flavorInUseOf(t, c)("ml.g5.12xlarge") {
			t.Errorf("run %d keeps the flavor for a queue the other run deleted", i+1)
		}
	}
}

func flavorInUseOf(t *testing.T, c *Client) func(flavor string) bool {
	return func(flavor string) bool {
		t.Helper()
		used, err := c.FlavorInUse(context.Background(), flavor)
		if err != nil {
			t.Fatal(err)
		}
		return used
	}
}
