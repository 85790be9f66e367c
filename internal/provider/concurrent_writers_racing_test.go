package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// --- 4. An update racing other writers ---

// cwRacer keeps changing one label of a ClusterQueue and a Namespace with read-modify-update
// calls that carry the resourceVersion they read, under its own field manager, retrying on
// 409 Conflict, until stopped. For each object it records the sequence of values of a field
// the provider's update changes, as each of its successful writes saw it. Its pace is the
// cluster's, not a clock's: each write waits for the watch event of the one before (cwEvents),
// so every write has been published to the object's watchers (Kueue's among them) before the
// next one is sent.
type cwRacer struct {
	team     string
	stopping atomic.Bool // checked between requests, so none is cut off midway
	cancel   context.CancelFunc
	done     chan struct{}

	mu        sync.Mutex
	last      map[string]string   // object -> the last label value written successfully
	seen      map[string][]string // object -> the provider's value at each write, repeats collapsed
	writes    int
	conflicts int
	err       error
	started   time.Time
}

const cwRacerLabel = "racer.example.com/seq"

func cwStartRacer(team string) *cwRacer {
	// A client of its own, without client-go's default 5 requests per second.
	cfg := rest.CopyConfig(acc.config)
	cfg.QPS, cfg.Burst = 1000, 1000
	ctx, cancel := context.WithCancel(context.Background())
	r := &cwRacer{team: team, cancel: cancel, done: make(chan struct{}), last: map[string]string{}, seen: map[string][]string{}, started: time.Now()}
	go r.run(ctx, dynamic.NewForConfigOrDie(cfg), kubernetes.NewForConfigOrDie(cfg))
	return r
}

// cwEvents follows the watch events of one object, so a writer can wait until the API server
// has published its write.
type cwEvents struct {
	open func(ctx context.Context, resourceVersion string) (watch.Interface, error)
	w    watch.Interface
	last string // the resourceVersion of the last event seen
}

func cwWatch(ctx context.Context, open func(ctx context.Context, resourceVersion string) (watch.Interface, error)) (*cwEvents, error) {
	w, err := open(ctx, "")
	return &cwEvents{open: open, w: w}, err
}

// published waits for the event of the object's write that answered with resourceVersion rv.
// The watch starts before the first write, and a watch the server closes is opened again after
// the last event seen, so no event of the object is missed.
func (e *cwEvents) published(ctx context.Context, rv string) error {
	for e.last != rv {
		var ev watch.Event
		var ok bool
		select {
		case <-ctx.Done():
			return nil // stopped
		case ev, ok = <-e.w.ResultChan():
		}
		if ctx.Err() != nil {
			// Stopped while an event arrived: the watch ending with the context (as a closed
			// channel or an error event of its own) is not a failure of the write.
			return nil
		}
		if !ok {
			w, err := e.open(ctx, e.last)
			if err != nil {
				return err
			}
			e.w = w
			continue
		}
		if ev.Type == watch.Error {
			return apierrors.FromObject(ev.Object)
		}
		m, err := apimeta.Accessor(ev.Object)
		if err != nil {
			return err
		}
		e.last = m.GetResourceVersion()
	}
	return nil
}

// run writes until stopped; ctx ends the watches when stopped, and never a write: a write cut
// off could land without the racer knowing it did.
func (r *cwRacer) run(ctx context.Context, dyn dynamic.Interface, cs kubernetes.Interface) {
	defer close(r.done)
	writes := context.WithoutCancel(ctx)
	cqs := dyn.Resource(kueue.ClusterQueues)
	nss := cs.CoreV1().Namespaces()
	cqName, nsName := quota.ClusterQueueName(r.team), quota.NamespaceName(r.team)
	cqEvents, err := cwWatch(ctx, func(ctx context.Context, rv string) (watch.Interface, error) {
		return cqs.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + cqName, ResourceVersion: rv})
	})
	var nsEvents *cwEvents
	if err == nil {
		nsEvents, err = cwWatch(ctx, func(ctx context.Context, rv string) (watch.Interface, error) {
			return nss.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + nsName, ResourceVersion: rv})
		})
	}
	if err != nil {
		r.fail(err)
		return
	}
	defer func() { cqEvents.w.Stop(); nsEvents.w.Stop() }() // the watches open at the end
	for i := 1; !r.stopping.Load(); i++ {
		value := fmt.Sprint(i)
		// Alternate the objects, so each sees writes all along.
		var err error
		if i%2 == 1 {
			err = r.write(ctx, "ClusterQueue", value, cqEvents, func() (string, string, error) {
				u, err := cqs.Get(writes, cqName, metav1.GetOptions{})
				if err != nil {
					return "", "", err
				}
				labels := u.GetLabels()
				labels[cwRacerLabel] = value
				u.SetLabels(labels)
				if u, err = cqs.Update(writes, u, metav1.UpdateOptions{FieldManager: "racer"}); err != nil {
					return "", "", err
				}
				return u.GetAnnotations()[quota.AnnotationDescription], u.GetResourceVersion(), nil
			})
		} else {
			err = r.write(ctx, "Namespace", value, nsEvents, func() (string, string, error) {
				ns, err := nss.Get(writes, nsName, metav1.GetOptions{})
				if err != nil {
					return "", "", err
				}
				ns.Labels[cwRacerLabel] = value
				if ns, err = nss.Update(writes, ns, metav1.UpdateOptions{FieldManager: "racer"}); err != nil {
					return "", "", err
				}
				return ns.Labels["example.com/version"], ns.ResourceVersion, nil
			})
		}
		if err != nil {
			r.fail(err)
			return
		}
	}
}

func (r *cwRacer) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.err = err
}

// write runs one read-modify-update until it does not conflict, and waits until events has
// published it. update returns the provider's value in the object it wrote and the
// resourceVersion the write answered with.
func (r *cwRacer) write(ctx context.Context, object, value string, events *cwEvents, update func() (providers, rv string, err error)) error {
	for !r.stopping.Load() {
		providers, rv, err := update()
		r.mu.Lock()
		switch {
		case err == nil:
			r.last[object] = value
			r.writes++
			if s := r.seen[object]; len(s) == 0 || s[len(s)-1] != providers {
				r.seen[object] = append(s, providers)
			}
		case apierrors.IsConflict(err):
			r.conflicts++
		}
		r.mu.Unlock()
		switch {
		case err == nil:
			return events.published(ctx, rv)
		case !apierrors.IsConflict(err):
			return err
		}
	}
	return nil
}

// waitSeen waits until the racer's writes of every object have seen the provider's value.
func (r *cwRacer) waitSeen(value string, timeout time.Duration, objects ...string) error {
	return acctest.Eventually(context.Background(), timeout,
		fmt.Sprintf("the other writer's writes of %s seeing the provider's %s", strings.Join(objects, " and "), value),
		func(context.Context) (bool, string, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			all := true
			for _, o := range objects {
				s := r.seen[o]
				all = all && len(s) > 0 && s[len(s)-1] == value
			}
			return all, fmt.Sprintf("the provider's values it saw: %v", r.seen), nil
		})
}

// stop ends the racer and waits for its last write to finish (a wait for an event ends there).
func (r *cwRacer) stop() {
	r.stopping.Store(true)
	r.cancel()
	<-r.done
}

// An update applied while another writer keeps updating the same ClusterQueue and Namespace:
// the other writer's read-modify-update calls conflict and retry, but the provider's
// server-side apply with force needs no resourceVersion and never conflicts. Afterwards both
// the provider's values and the other writer's last label are there, and the plan is empty.
func TestAccConcurrentWriters_racingUpdates(t *testing.T) {
	acctest.RequireCluster(t)
	const team, flavor = "cw-race", "ml.g6.48xlarge"
	cleanupQueue(t, team)
	tnsCleanupNamespace(t, quota.NamespaceName(team))
	cwCleanupFlavor(t, flavor)
	config := func(version string, accelerators int) string {
		return fmt.Sprintf(`
resource "hyperpod_team_namespace" "test" {
  team        = %[1]q
  labels      = { "example.com/version" = %[2]q }
}

resource "hyperpod_compute_quota" "test" {
  name        = "%[1]s-quota"
  team        = hyperpod_team_namespace.test.team
  description = %[2]q
  resources   = [{ instance_type = %[3]q, accelerators = %[4]d }]
}
`, team, version, flavor, accelerators)
	}
	var racer *cwRacer
	t.Cleanup(func() {
		if racer != nil {
			racer.stop()
		}
	})
	check := func(*terraform.State) error {
		// The provider's write of the queue comes last in the apply: let the other writer go on
		// until it has written both objects after the apply too.
		if err := racer.waitSeen("v2", 10*time.Second, "ClusterQueue", "Namespace"); err != nil {
			return err
		}
		racer.stop()
		racer.mu.Lock()
		defer racer.mu.Unlock()
		lastCQ, lastNS := racer.last["ClusterQueue"], racer.last["Namespace"]
		t.Logf("the other writer made %d updates in %s and retried %d conflicts; the provider's values it saw: %v",
			racer.writes, time.Since(racer.started).Round(time.Millisecond), racer.conflicts, racer.seen)
		if racer.err != nil {
			return fmt.Errorf("the other writer failed: %w", racer.err)
		}
		// It wrote before and after the provider's write, and never put the old value back.
		for _, object := range []string{"ClusterQueue", "Namespace"} {
			if got := racer.seen[object]; !slices.Equal(got, []string{"v1", "v2"}) {
				return fmt.Errorf("the other writer's updates of the %s saw the provider's values %v, want [v1 v2]: "+
					"writes before and after the apply, and none that undid it", object, got)
			}
		}
		cq, err := cwGet(kueue.ClusterQueues, "", quota.ClusterQueueName(team))
		if err != nil {
			return err
		}
		if got := cq.GetLabels()[cwRacerLabel]; got != lastCQ {
			return fmt.Errorf("ClusterQueue label %s = %q, want the other writer's last %q", cwRacerLabel, got, lastCQ)
		}
		if got := cq.GetAnnotations()[quota.AnnotationDescription]; got != "v2" {
			return fmt.Errorf("ClusterQueue description %q, want v2", got)
		}
		ns, err := tnsGetNamespace(quota.NamespaceName(team))
		if err != nil || ns == nil {
			return fmt.Errorf("namespace: %v", err)
		}
		if got := ns.Labels[cwRacerLabel]; got != lastNS {
			return fmt.Errorf("namespace label %s = %q, want the other writer's last %q", cwRacerLabel, got, lastNS)
		}
		return nil
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             resource.ComposeTestCheckFunc(checkQueueGone(t, team), tnsCheckGone(team)),
		Steps: []resource.TestStep{
			{Config: config("v1", 4)},
			{
				Config: config("v2", 6),
				ConfigPlanChecks: preApply(
					plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction(tnsAddr, plancheck.ResourceActionUpdate),
					cwPlanHook(func() error {
						// The apply starts once the other writer has written both objects.
						racer = cwStartRacer(team)
						return racer.waitSeen("v1", 10*time.Second, "ClusterQueue", "Namespace")
					}),
				),
				Check: resource.ComposeAggregateTestCheckFunc(
					check,
					checkQuantity(t, team, flavor, "nvidia.com/gpu", "nominal", "6"),
					checkQuantity(t, team, flavor, "nvidia.com/gpu", "borrowing", "3"),
					tnsCheckCluster(team, map[string]string{"example.com/version": "v2"}, nil),
				),
			},
		},
	})
}
