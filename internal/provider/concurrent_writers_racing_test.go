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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
// the provider's update changes, as each of its successful writes saw it.
type cwRacer struct {
	team     string
	stopping atomic.Bool // checked between requests, so none is cut off midway
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
	r := &cwRacer{team: team, done: make(chan struct{}), last: map[string]string{}, seen: map[string][]string{}, started: time.Now()}
	go r.run(context.Background(), dynamic.NewForConfigOrDie(cfg), kubernetes.NewForConfigOrDie(cfg))
	return r
}

func (r *cwRacer) run(ctx context.Context, dyn dynamic.Interface, cs kubernetes.Interface) {
	defer close(r.done)
	cqs := dyn.Resource(kueue.ClusterQueues)
	nss := cs.CoreV1().Namespaces()
	for i := 1; !r.stopping.Load(); i++ {
		value := fmt.Sprint(i)
		// Alternate the objects, so each sees writes all along.
		var err error
		if i%2 == 1 {
			err = r.write("ClusterQueue", value, func() (string, error) {
				u, err := cqs.Get(ctx, quota.ClusterQueueName(r.team), metav1.GetOptions{})
				if err != nil {
					return "", err
				}
				labels := u.GetLabels()
				labels[cwRacerLabel] = value
				u.SetLabels(labels)
				if u, err = cqs.Update(ctx, u, metav1.UpdateOptions{FieldManager: "racer"}); err != nil {
					return "", err
				}
				return u.GetAnnotations()[quota.AnnotationDescription], nil
			})
		} else {
			err = r.write("Namespace", value, func() (string, error) {
				ns, err := nss.Get(ctx, quota.NamespaceName(r.team), metav1.GetOptions{})
				if err != nil {
					return "", err
				}
				ns.Labels[cwRacerLabel] = value
				if ns, err = nss.Update(ctx, ns, metav1.UpdateOptions{FieldManager: "racer"}); err != nil {
					return "", err
				}
				return ns.Labels["example.com/version"], nil
			})
		}
		if err != nil {
			r.mu.Lock()
			r.err = err
			r.mu.Unlock()
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// write runs one read-modify-update until it does not conflict. update returns the
// provider's value in the object it wrote.
func (r *cwRacer) write(object, value string, update func() (string, error)) error {
	for !r.stopping.Load() {
		providers, err := update()
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
		if !apierrors.IsConflict(err) {
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

// stop ends the racer and waits for its last write to finish.
func (r *cwRacer) stop() {
	r.stopping.Store(true)
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
