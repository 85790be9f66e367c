package admission

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// What the preview does not follow of Kueue, decided before the first cycle: Workloads whose
// namespace a ClusterQueue's namespaceSelector excludes stay pending, as in Kueue, and the
// pending Workloads of a queue whose scheduling depends on something the model does not follow
// are Undetermined with the reason (and stay pending too).

// The Evicted reasons after which Kueue orders a requeued Workload by its eviction rather than
// by its creation.
const (
	evictedByPodsReadyTimeout = "PodsReadyTimeout"
	evictedByAdmissionCheck   = "AdmissionCheck"
)

// applyAssumptions takes out of the active ClusterQueues' queues the pending Workloads that
// Kueue keeps pending for their namespace, and those it cannot predict, marked Undetermined.
func (s *state) applyAssumptions(c Cluster) {
	a := newAssumptions(c)
	for _, cq := range s.cqs {
		if !cq.active {
			continue
		}
		cq.pending = slices.DeleteFunc(cq.pending, func(w *workload) bool {
			u, held := a.pending(w.ref, cq.name)
			if u != nil {
				w.undetermined = u
			}
			return u != nil || held
		})
	}
}

// assumptions holds, per ClusterQueue, what makes its pending Workloads unpredictable or keeps
// them pending.
type assumptions struct {
	queues          map[string]queueAssumptions
	namespaceLabels map[string]map[string]string
	// requeued are pending Workloads that Kueue orders by their eviction, with the reason.
	requeued map[WorkloadRef]Undetermined
}

type queueAssumptions struct {
	// selector is the namespaceSelector; nil selects nothing, a selector that matches
	// everything needs no labels.
	selector    labels.Selector
	selectorErr error
	// unpredictable, when set, is why no pending Workload of the queue can be predicted.
	unpredictable *Undetermined
}

func newAssumptions(c Cluster) assumptions {
	a := assumptions{queues: map[string]queueAssumptions{}, namespaceLabels: c.NamespaceLabels, requeued: map[WorkloadRef]Undetermined{}}
	cohorts := cohortAssumptions(c.Cohorts)
	for i := range c.ClusterQueues {
		cq := &c.ClusterQueues[i]
		if _, dup := a.queues[cq.Name]; dup {
			continue // the state keeps the first of a name
		}
		q := queueAssumptions{}
		if sel := cq.Spec.NamespaceSelector; sel != nil {
			q.selector, q.selectorErr = metav1.LabelSelectorAsSelector(sel)
		}
		if reason, detail := queueUnpredictable(c, cq, cohorts); reason != "" {
			q.unpredictable = &Undetermined{Reason: reason, Detail: detail}
		}
		a.queues[cq.Name] = q
	}
	for i := range c.Workloads {
		w := &c.Workloads[i]
		ref := WorkloadRef{Namespace: w.Namespace, Name: w.Name}
		switch evictedReason(w) {
		case evictedByPodsReadyTimeout:
			a.requeued[ref] = Undetermined{Workload: ref, Reason: WaitForPodsReady,
				Detail: "evicted because its pods were not ready in time; Kueue requeues it after a backoff, ordered by the eviction"}
		case evictedByAdmissionCheck:
			a.requeued[ref] = Undetermined{Workload: ref, Reason: AdmissionChecks,
				Detail: "evicted by an admission check; Kueue requeues it ordered by the eviction"}
		}
	}
	return a
}

// evictedReason is the reason of a pending Workload's Evicted condition when it is true.
func evictedReason(w *kueue.Workload) string {
	if w.Status.Admission != nil && conditionTrue(w, kueue.WorkloadQuotaReserved) {
		return ""
	}
	for _, cond := range w.Status.Conditions {
		if cond.Type == kueue.WorkloadEvicted && cond.Status == metav1.ConditionTrue {
			return cond.Reason
		}
	}
	return ""
}

// pending says what becomes of a pending Workload of the named ClusterQueue: Undetermined, held
// (Kueue keeps it pending: its namespace does not match), or neither (it is predicted).
func (a assumptions) pending(ref WorkloadRef, clusterQueue string) (*Undetermined, bool) {
	q := a.queues[clusterQueue]
	switch {
	case q.selectorErr != nil:
		return &Undetermined{Workload: ref, Reason: NamespaceSelector,
			Detail: fmt.Sprintf("ClusterQueue %s's namespaceSelector is invalid: %v", clusterQueue, q.selectorErr)}, false
	case q.selector == nil:
		// A ClusterQueue without a namespaceSelector admits from no namespace.
		return nil, true
	case !q.selector.Empty():
		nsLabels, known := a.namespaceLabels[ref.Namespace]
		if !known {
			detail := "the namespaces' labels were not read"
			if a.namespaceLabels != nil {
				detail = "namespace " + ref.Namespace + " is not among the namespaces read"
			}
			return &Undetermined{Workload: ref, Reason: NamespaceSelector,
				Detail: fmt.Sprintf("ClusterQueue %s admits from namespaces matching %s, and %s", clusterQueue, q.selector, detail)}, false
		}
		if !q.selector.Matches(labels.Set(nsLabels)) {
			return nil, true
		}
	}
	if u, ok := a.requeued[ref]; ok {
		return &u, false
	}
	if u := q.unpredictable; u != nil {
		out := *u
		out.Workload = ref
		return &out, false
	}
	return nil, false
}

// queueUnpredictable is why the pending Workloads of a ClusterQueue cannot be predicted, "" when
// they can: the first, in this order, of its cohort's Cohort objects, its queueing strategy, its
// flavor fungibility, its admission checks, the manager's configuration and the manager's release.
func queueUnpredictable(c Cluster, cq *kueue.ClusterQueue, cohorts map[string]Undetermined) (UndeterminedReason, string) {
	cohort := cq.Spec.CohortName
	if u, ok := cohorts[cohort]; ok && cohort != "" {
		return u.Reason, u.Detail
	}
	if cq.Spec.QueueingStrategy == kueue.QueueingStrategyStrictFIFO {
		return QueueingStrategy, "ClusterQueue " + cq.Name + " is StrictFIFO; the preview models BestEffortFIFO"
	}
	if detail := fungibilityUnmodelled(cq); detail != "" {
		return FlavorFungibility, detail
	}
	if s := cq.Spec.AdmissionChecksStrategy; s != nil && len(s.AdmissionChecks) > 0 {
		names := make([]string, len(s.AdmissionChecks))
		for i, r := range s.AdmissionChecks {
			names[i] = r.Name
		}
		return AdmissionChecks, "ClusterQueue " + cq.Name + " has admission checks " + strings.Join(names, ", ")
	}
	usageBased := cq.Spec.AdmissionScope != nil && cq.Spec.AdmissionScope.AdmissionMode == kueue.AdmissionModeUsageBased
	if reason, detail := c.Manager.unmodelled(cohort != "", usageBased); reason != "" {
		return reason, detail
	}
	if c.ManagerMinor == 16 && c.FairSharing && cohort != "" {
		return KueueRelease, "the manager runs Kueue v0.16, which preempts and orders under fair sharing as v0.15 does; the preview models it as v0.19"
	}
	return "", ""
}

// fungibilityUnmodelled says how a ClusterQueue's flavorFungibility differs from the default
// the preview models, "" when it does not or when it cannot matter: with no preference and at
// most one flavor per resource group, every policy picks the one flavor.
func fungibilityUnmodelled(cq *kueue.ClusterQueue) string {
	f := cq.Spec.FlavorFungibility
	if f == nil {
		return ""
	}
	borrowDefault := f.WhenCanBorrow == "" || f.WhenCanBorrow == kueue.FungibilityMayStopSearch || f.WhenCanBorrow == kueue.FungibilityBorrow
	preemptDefault := f.WhenCanPreempt == "" || f.WhenCanPreempt == kueue.FungibilityTryNextFlavor
	if borrowDefault && preemptDefault && f.Preference == nil {
		return ""
	}
	if f.Preference == nil && !slices.ContainsFunc(cq.Spec.ResourceGroups, func(g kueue.ResourceGroup) bool { return len(g.Flavors) > 1 }) {
		return ""
	}
	detail := fmt.Sprintf("ClusterQueue %s's flavorFungibility is whenCanBorrow %s, whenCanPreempt %s", cq.Name, f.WhenCanBorrow, f.WhenCanPreempt)
	if f.Preference != nil {
		detail += ", preference " + *f.Preference
	}
	return detail + fmt.Sprintf("; the preview models whenCanBorrow %s, whenCanPreempt %s",
		kueue.FungibilityMayStopSearch, kueue.FungibilityTryNextFlavor)
}

// cohortAssumptions is, by cohort name, why the ClusterQueues of a cohort given by Cohort
// objects cannot be predicted: the cohort is in a tree (it has a parent or children), or it has
// quotas of its own. A Cohort object with neither is the flat cohort the preview models (a root
// cohort's fair-sharing weight compares it with no other).
func cohortAssumptions(cohorts []kueue.Cohort) map[string]Undetermined {
	out := map[string]Undetermined{}
	children := map[string][]string{}
	for _, co := range cohorts {
		if p := co.Spec.ParentName; p != "" {
			children[p] = append(children[p], co.Name)
		}
	}
	for _, co := range cohorts {
		if p := co.Spec.ParentName; p != "" {
			out[co.Name] = Undetermined{Reason: HierarchicalCohort, Detail: fmt.Sprintf("cohort %s has the parent cohort %s", co.Name, p)}
		} else if len(co.Spec.ResourceGroups) > 0 {
			out[co.Name] = Undetermined{Reason: CohortQuota, Detail: fmt.Sprintf("cohort %s has quotas of its own (resourceGroups)", co.Name)}
		}
	}
	for parent, kids := range children {
		if _, ok := out[parent]; ok && out[parent].Reason == HierarchicalCohort {
			continue
		}
		slices.Sort(kids)
		out[parent] = Undetermined{Reason: HierarchicalCohort, Detail: fmt.Sprintf("cohort %s has the child cohorts %s", parent, strings.Join(kids, ", "))}
	}
	return out
}
