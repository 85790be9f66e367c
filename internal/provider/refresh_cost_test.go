package provider

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/faultproxy"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// requestLines are the requests the proxy recorded since its last reset, each as
// "METHOD path?query".
func requestLines(p *faultproxy.Proxy) []string {
	var lines []string
	for _, r := range p.Recorded() {
		lines = append(lines, r.Method+" "+r.URI)
	}
	return lines
}

// expectRequests is a plan check on the requests the provider made while Terraform refreshed
// and planned: exactly one GET of each expected object and nothing else (no second read of a
// shared object, no LIST, discovery or OpenAPI).
type expectRequests struct {
	proxy *faultproxy.Proxy
	want  []string
}

func (e expectRequests) CheckPlan(_ context.Context, _ plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	got := requestLines(e.proxy)
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
	proxy, url := acctest.CountingProxy(t)
	cfg := acctest.ProviderHost(url) + acctest.Quota(team).Resource("ml.g5.12xlarge").Count(1).Resource("ml.c5.4xlarge").VCPU(2).HCL()
	const apis = "/apis/kueue.x-k8s.io/v1beta2/"
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkQueueGone(t, team),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: proxy.ResetRecorded,
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
	proxy, url := acctest.CountingProxy(t)
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
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: proxy.ResetRecorded,
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

// expectPrimedRefresh is a plan check for a refresh of many teams: each flavor is read once
// with a GET; each other kind is read with at most primeAfter-1 GETs and then one LIST of
// the objects carrying this provider's label, which answers the rest; no object is read twice
// and nothing else is requested.
type expectPrimedRefresh struct {
	proxy   *faultproxy.Proxy
	objects []string // paths of every object, one GET each without priming
	lists   []string // collection paths, one LIST each
}

func (e expectPrimedRefresh) CheckPlan(_ context.Context, _ plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	got := requestLines(e.proxy)
	const maxGetsBeforeList = 15 // kube.primeAfter - 1
	object := map[string]bool{}
	for _, o := range e.objects {
		object[o] = true
	}
	selector := "labelSelector=" + url.QueryEscape(quota.LabelManagedBy+"="+quota.ManagedByValue)
	gets, lists, getsOfKind := map[string]int{}, map[string]int{}, map[string]int{}
	var problems []string
	for _, r := range got {
		method, uri, _ := strings.Cut(r, " ")
		p, query, _ := strings.Cut(uri, "?")
		switch {
		case method == "GET" && object[p] && query == "":
			gets[p]++
			getsOfKind[p[:strings.LastIndex(p, "/")]]++
		case method == "GET" && slices.Contains(e.lists, p) && strings.Contains(query, selector) && !strings.Contains(query, "continue="):
			lists[p]++
		default:
			problems = append(problems, "unexpected "+r)
		}
	}
	for p, n := range gets {
		if n > 1 {
			problems = append(problems, fmt.Sprintf("GET %s: %d times", p, n))
		}
	}
	for _, l := range e.lists {
		if lists[l] != 1 {
			problems = append(problems, fmt.Sprintf("LIST %s: %d times, want once", l, lists[l]))
		}
	}
	for k, n := range getsOfKind {
		if n > maxGetsBeforeList && !strings.Contains(k, "resourceflavors") {
			problems = append(problems, fmt.Sprintf("%d GETs under %s, want at most %d before the LIST", n, k, maxGetsBeforeList))
		}
	}
	if len(problems) > 0 {
		resp.Error = fmt.Errorf("refresh made %d requests:\n  %s", len(got), strings.Join(problems, "\n  "))
	}
}

// A refresh of many teams reads each shared ResourceFlavor once for all quotas and, past a few
// GETs per kind, reads the team objects with one LIST per kind: 40 teams with the same two
// instance types cost at most 3 x 15 GETs + 3 LISTs + 2 flavor GETs, where one GET per object
// would be 122 and reading the flavors per quota 200. Twice the GETs a kind may take before its
// LIST is enough teams to show it; the bench measures 100 and 1000.
func TestAccRefreshCost_sharedFlavors(t *testing.T) {
	const teams = 40
	proxy, url := acctest.CountingProxy(t)
	cfg := fmt.Sprintf(`
provider "hyperpod" {
  host = %q
}

resource "hyperpod_team_namespace" "t" {
  count = %d
  team  = format("costrefresh-%%03d", count.index)
}

resource "hyperpod_compute_quota" "q" {
  count     = length(hyperpod_team_namespace.t)
  name      = "${hyperpod_team_namespace.t[count.index].team}-quota"
  team      = hyperpod_team_namespace.t[count.index].team
  resources = [{ instance_type = "ml.g5.12xlarge", accelerators = 1 }, { instance_type = "ml.c5.4xlarge", vcpu = 1 }]
}
`, url, teams)
	const apis = "/apis/kueue.x-k8s.io/v1beta2/"
	objects := []string{apis + "resourceflavors/ml.g5.12xlarge", apis + "resourceflavors/ml.c5.4xlarge"}
	for i := range teams {
		team := fmt.Sprintf("costrefresh-%03d", i)
		ns := quota.NamespaceName(team)
		objects = append(objects,
			"/api/v1/namespaces/"+ns,
			apis+"namespaces/"+ns+"/localqueues/"+quota.LocalQueueName(team),
			apis+"clusterqueues/"+quota.ClusterQueueName(team))
	}
	lists := []string{"/api/v1/namespaces", apis + "localqueues", apis + "clusterqueues"}
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: proxy.ResetRecorded,
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
					expectPrimedRefresh{proxy: proxy, objects: objects, lists: lists},
				}},
			},
			{
				// Drift is still seen when the LIST answers: a changed cohort, and a queue that
				// lost this provider's label (so the LIST leaves it out and a GET reads it).
				PreConfig: func() {
					patchQueue(t, "costrefresh-020", `{"spec":{"cohortName":"elsewhere"}}`)
					patchQueue(t, "costrefresh-030", `{"metadata":{"labels":{"`+quota.LabelManagedBy+`":null}}}`)
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("hyperpod_compute_quota.q[20]", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("hyperpod_compute_quota.q[30]", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("hyperpod_compute_quota.q[25]", plancheck.ResourceActionNoop),
				}},
			},
		},
	})
}
