package admission

import (
	"cmp"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// stopPolicyHoldAndDrain stops admissions and evicts the admitted Workloads.
const stopPolicyHoldAndDrain = "HoldAndDrain"

// flavorResource is one resource of one flavor, the unit of quota.
type flavorResource struct {
	flavor   string
	resource corev1.ResourceName
}

// quantities are amounts by flavor-resource, in Kueue's int64 units.
type quantities map[flavorResource]int64

func (q quantities) clone() quantities {
	c := make(quantities, len(q))
	for k, v := range q {
		c[k] = v
	}
	return c
}

// quota is one flavor-resource of a ClusterQueue.
type quota struct {
	nominal        int64
	borrowingLimit *int64
	lendingLimit   *int64
}

type resourceGroup struct {
	covered []corev1.ResourceName
	flavors []string
}

func (g resourceGroup) covers(r corev1.ResourceName) bool { return slices.Contains(g.covered, r) }

// clusterQueue is a ClusterQueue as Kueue's cache holds it.
type clusterQueue struct {
	name   string
	cohort *cohort
	// active is false when the queue is stopped, being deleted or names a missing flavor: it
	// then admits nothing and its Workloads cannot be preempted, but its quota and usage still
	// count in the cohort, as in Kueue's cache.
	active bool
	drain  bool
	groups []resourceGroup
	quotas map[flavorResource]quota
	// frs are the quotas' flavor-resources, sorted.
	frs []flavorResource

	withinClusterQueue  string
	reclaimWithinCohort string
	borrowWithinCohort  string
	fairWeight          float64

	// admitted holds the Workloads that hold quota here.
	admitted []*workload
	// pending are the Workloads waiting in this queue; inadmissible ones wait for a change in
	// the cohort before they are tried again (BestEffortFIFO).
	pending      []*workload
	inadmissible []*workload
	// sticky is the Workload that issued preemptions and stays at the head (Kueue v0.19).
	sticky *workload
}

func (c *clusterQueue) group(r corev1.ResourceName) *resourceGroup {
	for i := range c.groups {
		if c.groups[i].covers(r) {
			return &c.groups[i]
		}
	}
	return nil
}

// localQuota is the part of the nominal quota that is not lent to the cohort.
func (c *clusterQueue) localQuota(fr flavorResource) int64 {
	q := c.quotas[fr]
	if q.lendingLimit == nil {
		return 0
	}
	return max(0, q.nominal-*q.lendingLimit)
}

func (c *clusterQueue) sortedAdmitted() []*workload {
	out := slices.Clone(c.admitted)
	slices.SortFunc(out, func(a, b *workload) int { return cmp.Compare(a.key, b.key) })
	return out
}

// cohort is a flat cohort: the ClusterQueues that name it.
type cohort struct {
	name string
	cqs  []*clusterQueue
	// subtreeQuota is what the members lend: nominal quota minus what lending limits keep.
	subtreeQuota quantities
	// lendable is subtreeQuota by resource, over all flavors: the denominator of every
	// member's dominant resource share (Kueue's calculateLendable of the cohort).
	lendable map[corev1.ResourceName]int64
}

// podSet is one pod set of a Workload.
type podSet struct {
	name  string
	count int32
	// total is the pod set's requests for all its pods, in Kueue's units.
	total        map[corev1.ResourceName]int64
	nodeSelector map[string]string
	affinity     []corev1.NodeSelectorTerm
	minCount     bool
	topology     bool
}

// workload is a Workload as the simulator tracks it.
type workload struct {
	ref      WorkloadRef
	key      string
	uid      string
	priority int32
	created  time.Time
	podSets  []podSet
	cq       *clusterQueue
	// resume is where the next flavor scan starts (Kueue v0.19 keeps the scan's progress when
	// a Workload that fit is skipped and tried again in the next cycle).
	resume map[scanKey]int
	// checks: the Workload carries admission check states; its admission is decided elsewhere.
	checks bool

	// Admission state.
	admitted bool
	flavors  []map[corev1.ResourceName]string
	// frs are the flavor-resources of flavors, for a quick look-up.
	frs        []flavorResource
	usage      quantities
	reservedAt time.Time
	// seq orders admissions: a higher seq was admitted later (by time, then UID, then name
	// reversed, so that Kueue's candidate order is by seq descending).
	seq int64

	// What happened, for the outcome.
	initiallyAdmitted bool
	// assigned are the flavors of the current admission, for the outcome.
	assigned []PodSetFlavors
	// partial: the Workload allows partial admission and did not fit whole.
	partial         bool
	borrowing       bool
	afterPreemption bool
	preempted       *preemption
	undetermined    *Undetermined
}

// preemption records the first eviction of an initially admitted Workload.
type preemption struct {
	by     *workload
	reason string
}

// state is the whole simulated cluster.
type state struct {
	version     Version
	fairSharing bool
	cqs         []*clusterQueue // sorted by name
	cqByName    map[string]*clusterQueue
	cohorts     []*cohort // sorted by name
	workloads   []*workload
	// flavorLabels are the node labels of each given ResourceFlavor.
	flavorLabels map[string]map[string]string
	// live is the quota in use; each scheduling cycle works on a copy.
	live *ledger
	// fairIndex is shared by the fair-sharing preemption searches of the cycle being nominated.
	fairIndex *fairIndex
	// searched is the last preemption search of the flavor assignment being made.
	searched searched
	// afterCycle, when set (by tests), is called after each cycle with the ledger it started from.
	afterCycle func(before *ledger)
	// nextSeq is the seq of the next admission.
	nextSeq int64
	// clock is the simulated time of evictions and admissions: after every given timestamp.
	clock time.Time
	// stop, when set, stops the simulation once its context is done.
	stop *stopper
}

func quantityPtr(name corev1.ResourceName, q *resource.Quantity) *int64 {
	if q == nil {
		return nil
	}
	v := amount(name, *q)
	return &v
}

// amount is a quantity in Kueue's int64 units: millicores for cpu, the value rounded up for
// everything else, as Kueue's resources package does.
func amount(name corev1.ResourceName, q resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

func conditionTrue(w *kueue.Workload, typ string) bool {
	return meta.IsStatusConditionTrue(w.Status.Conditions, typ)
}

func conditionTime(w *kueue.Workload, typ string) (time.Time, bool) {
	c := meta.FindStatusCondition(w.Status.Conditions, typ)
	if c == nil || c.Status != metav1.ConditionTrue {
		return time.Time{}, false
	}
	return c.LastTransitionTime.Time, true
}
