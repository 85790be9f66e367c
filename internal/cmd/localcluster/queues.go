package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

const queuesTimeout = 30 * time.Second

// queuesOptions are the flags of `localcluster queues`.
type queuesOptions struct {
	kubeconfig string // --kubeconfig, else $KUBE_CONFIG_PATH, else <dir>/kubeconfig
	context    string // --context, else $KUBE_CTX, else the kubeconfig's current context
	all        bool   // also print resources whose quota and limits are all zero
}

// teamQueues is what the cluster holds for one team.
type teamQueues struct {
	team         string
	clusterQueue *clusterQueueView
	localQueues  []kueue.LocalQueue
}

// clusterQueueView is a ClusterQueue with its quotas spelled as the API server stores them.
type clusterQueueView struct {
	kueue.ClusterQueue
	rows []quotaRow
}

// quotaRow is one resource of one flavor. Quantities are the stored strings ("" when unset).
type quotaRow struct {
	flavor, resource                      string
	nominal, borrowingLimit, lendingLimit string
}

// queues lists the ClusterQueues and LocalQueues this provider manages and prints them per team.
// It makes exactly two LIST calls through the dynamic client and no discovery requests.
func queues(dir string, opts queuesOptions, out io.Writer) error {
	cfg, dc, err := clusterClient(dir, opts.kubeconfig, opts.context, queuesTimeout)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), queuesTimeout)
	defer cancel()
	return printQueues(ctx, dc, cfg.Host, opts.all, out)
}

// printQueues makes the two LIST calls and prints their result per team.
func printQueues(ctx context.Context, dc dynamic.Interface, host string, all bool, out io.Writer) error {
	selector := labels.SelectorFromSet(labels.Set{quota.LabelManagedBy: quota.ManagedByValue}).String()
	teams := map[string]*teamQueues{}
	get := func(team string) *teamQueues {
		if teams[team] == nil {
			teams[team] = &teamQueues{team: team}
		}
		return teams[team]
	}

	cqs, err := dc.Resource(kueue.ClusterQueues).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("listing %s ClusterQueues (%s): %w", kueue.GroupVersion, selector, err)
	}
	for i := range cqs.Items {
		view, err := clusterQueueFrom(&cqs.Items[i])
		if err != nil {
			return err
		}
		get(teamOfClusterQueue(&view.ClusterQueue)).clusterQueue = view
	}

	lqs, err := dc.Resource(kueue.LocalQueues).Namespace(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("listing %s LocalQueues (%s): %w", kueue.GroupVersion, selector, err)
	}
	for _, item := range lqs.Items {
		var lq kueue.LocalQueue
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &lq); err != nil {
			return fmt.Errorf("LocalQueue %s/%s: %w", item.GetNamespace(), item.GetName(), err)
		}
		team, ok := strings.CutPrefix(lq.Namespace, quota.NamespaceName(""))
		if !ok || team == "" {
			team = lq.Namespace
		}
		t := get(team)
		t.localQueues = append(t.localQueues, lq)
	}

	fmt.Fprintf(out, "Kueue queues managed by %s on %s\n", quota.ManagedByValue, host)
	if len(teams) == 0 {
		fmt.Fprintln(out, "\n(none)")
		return nil
	}
	names := make([]string, 0, len(teams))
	for name := range teams {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		printTeam(out, teams[name], all)
	}
	return nil
}

// teamOfClusterQueue is the quota-allocation-id label, or the team in the queue's name.
func teamOfClusterQueue(cq *kueue.ClusterQueue) string {
	if t := cq.Labels[quota.LabelQuotaAllocationID]; t != "" {
		return t
	}
	if t, ok := quota.TeamFromClusterQueueName(cq.Name); ok {
		return t
	}
	return cq.Name
}

// clusterQueueFrom decodes a ClusterQueue into the kueue types and collects its quotas from the
// unstructured object as well, so they print as stored ("192Gi" stays "192Gi", "196608Mi" stays
// "196608Mi") rather than in the canonical form a resource.Quantity would give.
func clusterQueueFrom(u *unstructured.Unstructured) (*clusterQueueView, error) {
	view := &clusterQueueView{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &view.ClusterQueue); err != nil {
		return nil, fmt.Errorf("ClusterQueue %s: %w", u.GetName(), err)
	}
	groups, _, _ := unstructured.NestedSlice(u.Object, "spec", "resourceGroups")
	for _, g := range groups {
		flavors, _, _ := unstructured.NestedSlice(asMap(g), "flavors")
		for _, f := range flavors {
			flavor, _, _ := unstructured.NestedString(asMap(f), "name")
			resources, _, _ := unstructured.NestedSlice(asMap(f), "resources")
			for _, r := range resources {
				rm := asMap(r)
				name, _, _ := unstructured.NestedString(rm, "name")
				view.rows = append(view.rows, quotaRow{
					flavor: flavor, resource: name,
					nominal: stored(rm["nominalQuota"]), borrowingLimit: stored(rm["borrowingLimit"]), lendingLimit: stored(rm["lendingLimit"]),
				})
			}
		}
	}
	return view, nil
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// stored spells a quantity as the API server returned it: a string, or a JSON number.
func stored(v any) string {
	switch q := v.(type) {
	case nil:
		return ""
	case string:
		return q
	default:
		return fmt.Sprint(q)
	}
}

func isZero(q string) bool {
	if q == "" {
		return true
	}
	q = strings.TrimLeft(q, "+-0.")
	return q == "" || strings.IndexFunc(q, func(r rune) bool { return r >= '1' && r <= '9' }) < 0
}

func printTeam(out io.Writer, t *teamQueues, all bool) {
	fmt.Fprintf(out, "\nTeam %s\n", t.team)
	if cq := t.clusterQueue; cq == nil {
		fmt.Fprintln(out, "  ClusterQueue:  (none managed by this provider)")
	} else {
		stop := kueue.StopPolicyNone + " (default)"
		if cq.Spec.StopPolicy != nil {
			stop = *cq.Spec.StopPolicy
		}
		weight := "-"
		if fs := cq.Spec.FairSharing; fs != nil && fs.Weight != nil {
			weight = fs.Weight.String()
		}
		cohort := cq.Spec.CohortName
		if cohort == "" {
			cohort = "(none)"
		}
		fmt.Fprintf(out, "  ClusterQueue:  %s\n", cq.Name)
		fmt.Fprintf(out, "  cohort:        %s    stopPolicy: %s    fairSharing weight: %s\n", cohort, stop, weight)
		if cq.DeletionTimestamp != nil {
			fmt.Fprintf(out, "  being deleted since %s (finalizers %v)\n", cq.DeletionTimestamp.Format(time.RFC3339), cq.Finalizers)
		}
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  FLAVOR\tRESOURCE\tNOMINAL\tBORROWING LIMIT\tLENDING LIMIT")
		hidden := 0
		for _, r := range cq.rows {
			if !all && isZero(r.nominal) && isZero(r.borrowingLimit) && isZero(r.lendingLimit) {
				hidden++
				continue
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", r.flavor, r.resource, r.nominal, dash(r.borrowingLimit), dash(r.lendingLimit))
		}
		_ = tw.Flush()
		if hidden > 0 {
			noun := "resources"
			if hidden == 1 {
				noun = "resource"
			}
			fmt.Fprintf(out, "  (%d %s with zero quota and limits not shown; --all shows them)\n", hidden, noun)
		}
	}
	if len(t.localQueues) == 0 {
		fmt.Fprintln(out, "  LocalQueue:    (none managed by this provider)")
	}
	sort.Slice(t.localQueues, func(i, j int) bool { return t.localQueues[i].Name < t.localQueues[j].Name })
	for _, lq := range t.localQueues {
		fmt.Fprintf(out, "  LocalQueue:    %s/%s -> %s\n", lq.Namespace, lq.Name, lq.Spec.ClusterQueue)
	}
}

// dash marks an unset limit (no limit).
func dash(q string) string {
	if q == "" {
		return "-"
	}
	return q
}

// kubeconfigPath is the kubeconfig the queues and jobs subcommands read: --kubeconfig, else
// $KUBE_CONFIG_PATH, else the one the local control plane writes in dir; "~/" is expanded.
func kubeconfigPath(dir, flagValue string) string {
	path := flagValue
	if path == "" {
		path = os.Getenv("KUBE_CONFIG_PATH")
	}
	if path == "" {
		path = filepath.Join(dir, localcluster.KubeconfigFile)
	}
	return expandHome(path)
}

// clusterClient loads the client configuration of the cluster the queues and jobs subcommands
// read: the kubeconfig of kubeconfigPath, its context flagContext, else $KUBE_CTX, else its
// current context, with requestTimeout bounding each request. It returns it with a dynamic
// client for it.
func clusterClient(dir, flagKubeconfig, flagContext string, requestTimeout time.Duration) (*rest.Config, dynamic.Interface, error) {
	path := kubeconfigPath(dir, flagKubeconfig)
	kctx := flagContext
	if kctx == "" {
		kctx = os.Getenv("KUBE_CTX")
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path},
		&clientcmd.ConfigOverrides{CurrentContext: kctx},
	).ClientConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cfg.Timeout = requestTimeout
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return cfg, dc, nil
}

func expandHome(path string) string {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return path
}
