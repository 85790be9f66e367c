package provider

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"k8s.io/client-go/rest"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// countingProxy forwards requests to the test cluster with the admin credentials and records
// each one as "METHOD path?query".
type countingProxy struct {
	mu       sync.Mutex
	requests []string
}

func (p *countingProxy) reset() { p.mu.Lock(); p.requests = nil; p.mu.Unlock() }

func (p *countingProxy) snapshot() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

func startCountingProxy(t *testing.T) (*countingProxy, string) {
	t.Helper()
	rt, err := rest.TransportFor(acc.config)
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.requests = append(p.requests, r.Method+" "+r.URL.RequestURI())
		p.mu.Unlock()
		out, err := http.NewRequestWithContext(r.Context(), r.Method, strings.TrimSuffix(acc.config.Host, "/")+r.URL.RequestURI(), r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = r.Header.Clone()
		resp, err := rt.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	return p, srv.URL
}

// expectRequests is a plan check on the requests the provider made while Terraform refreshed
// and planned: exactly one GET of each expected object and nothing else (no second read of a
// shared object, no LIST, discovery or OpenAPI).
type expectRequests struct {
	proxy *countingProxy
	want  []string
}

func (e expectRequests) CheckPlan(_ context.Context, _ plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	got := e.proxy.snapshot()
	counts := map[string]int{}
	for _, r := range got {
		counts[r]++
	}
	var problems []string
	for _, w := range e.want {
		if n := counts["GET "+w]; n != 1 {
			problems = append(problems, fmt.Sprintf("GET %s: %d times, want once", w, n))
		}
		delete(counts, "GET "+w)
	}
	var extra []string
	for k, n := range counts {
		extra = append(extra, fmt.Sprintf("%s (%d times)", k, n))
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		problems = append(problems, "unexpected requests:\n    "+strings.Join(extra, "\n    "))
	}
	if len(problems) > 0 {
		resp.Error = fmt.Errorf("refresh made %d requests, want %d (one GET per object):\n  %s",
			len(got), len(e.want), strings.Join(problems, "\n  "))
	}
}

// Refreshing a quota costs one GET per object it manages: the ClusterQueue and its flavors.
func TestAccComputeQuota_refreshCost(t *testing.T) {
	const team = "qacc-cost"
	cleanupQueue(t, team)
	proxy, url := &countingProxy{}, "http://127.0.0.1:1" // placeholder when acceptance tests are off
	if acc.config != nil {
		proxy, url = startCountingProxy(t)
	}
	cfg := fmt.Sprintf(`
provider "hyperpod" {
  host = %q
}
`, url) + quotaConfig(team, `  resources = [{ instance_type = "ml.g5.12xlarge", count = 1 }, { instance_type = "ml.c5.4xlarge", vcpu = 2 }]`)
	const apis = "/apis/kueue.x-k8s.io/v1beta2/"
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkQueueGone(t, team),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: proxy.reset,
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
					expectRequests{proxy: proxy, want: []string{
						apis + "clusterqueues/" + quota.ClusterQueueName(team),
						apis + "resourceflavors/ml.g5.12xlarge",
						apis + "resourceflavors/ml.c5.4xlarge",
					}},
				}},
			},
		},
	})
}

// Refreshing a team namespace costs one GET of the Namespace and one of the LocalQueue.
func TestAccTeamNamespace_refreshCost(t *testing.T) {
	const team = "nsacc-cost"
	proxy, url := &countingProxy{}, "http://127.0.0.1:1" // placeholder when acceptance tests are off
	if acc.config != nil {
		proxy, url = startCountingProxy(t)
	}
	cfg := fmt.Sprintf(`
provider "hyperpod" {
  host = %q
}

resource "hyperpod_team_namespace" "test" {
  team   = %q
  labels = { "example.com/owner" = "platform" }
}
`, url, team)
	ns := quota.NamespaceName(team)
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: proxy.reset,
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
					expectRequests{proxy: proxy, want: []string{
						"/api/v1/namespaces/" + ns,
						"/apis/kueue.x-k8s.io/v1beta2/namespaces/" + ns + "/localqueues/" + quota.LocalQueueName(team),
					}},
				}},
			},
		},
	})
}

// A refresh of many teams reads every object once, and each shared ResourceFlavor once for all
// quotas: 100 teams with the same two instance types cost 100 Namespaces + 100 LocalQueues +
// 100 ClusterQueues + 2 flavors = 302 GETs, where reading the flavors per quota would cost 500.
func TestAccRefreshCost_sharedFlavors(t *testing.T) {
	const teams = 100
	proxy, url := &countingProxy{}, "http://127.0.0.1:1" // placeholder when acceptance tests are off
	if acc.config != nil {
		proxy, url = startCountingProxy(t)
	}
	cfg := fmt.Sprintf(`
provider "hyperpod" {
  host = %q
}

resource "hyperpod_team_namespace" "t" {
  count = %d
  team  = format("cost100-%%03d", count.index)
}

resource "hyperpod_compute_quota" "q" {
  count     = length(hyperpod_team_namespace.t)
  name      = "${hyperpod_team_namespace.t[count.index].team}-quota"
  team      = hyperpod_team_namespace.t[count.index].team
  resources = [{ instance_type = "ml.g5.12xlarge", accelerators = 1 }, { instance_type = "ml.c5.4xlarge", vcpu = 1 }]
}
`, url, teams)
	const apis = "/apis/kueue.x-k8s.io/v1beta2/"
	want := []string{apis + "resourceflavors/ml.g5.12xlarge", apis + "resourceflavors/ml.c5.4xlarge"}
	for i := range teams {
		team := fmt.Sprintf("cost100-%03d", i)
		ns := quota.NamespaceName(team)
		want = append(want,
			"/api/v1/namespaces/"+ns,
			apis+"namespaces/"+ns+"/localqueues/"+quota.LocalQueueName(team),
			apis+"clusterqueues/"+quota.ClusterQueueName(team))
	}
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: proxy.reset,
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
					expectRequests{proxy: proxy, want: want},
				}},
			},
		},
	})
}
