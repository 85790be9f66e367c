// Package admission predicts what Kueue's scheduler does with a cohort's Workloads: which
// pending Workloads it admits, on which flavors, which admitted Workloads it preempts, by whom
// and under which rule, and which admitted Workloads are left over their ClusterQueue's nominal
// quota (still running, but preemptible). It reads no cluster and has no Kubernetes client:
// the caller passes the objects it listed, or the ClusterQueues it plans.
//
// It follows the scheduler of Kueue v0.19.2 (pkg/scheduler, pkg/scheduler/flavorassigner,
// pkg/scheduler/preemption, pkg/cache/scheduler) with its default feature gates, and models
// where v0.15.0 differs (see Version): a WorkloadPriorityClass's new value reaches the
// Workloads that use it only in v0.19 (from v0.16); fair-sharing preemption reclaims within
// nominal quota without comparing shares, and the fair-sharing order puts non-borrowing
// entries first, only in v0.19 (from v0.17). Kueue v0.16 to v0.18 are modelled as v0.19
// (ParseRelease), which is what v0.17 and v0.18 do as far as the preview knows; v0.16's fair
// sharing is reported (KueueRelease).
//
// Modelled:
//   - scheduling cycles: one head per active ClusterQueue (BestEffortFIFO: priority, then
//     creation time; a head that cannot be admitted waits until quota is released in its
//     cohort; a Workload that issued preemptions stays at the head);
//   - the cycle's order: entries that do not borrow first, then priority, then age; with fair
//     sharing, the entry whose queue would have the lowest weighted dominant resource share;
//   - the flavor assigner: resource groups, flavors in order, node selectors and required node
//     affinity against flavor labels, the default flavorFungibility (stop at the first flavor
//     that fits, borrowing or not; try the next flavor rather than preempt), and any
//     flavorFungibility without a preference in a ClusterQueue whose resource groups have one
//     flavor each (there is nothing to choose);
//   - quota in a flat cohort: nominalQuota, borrowingLimit, lendingLimit, as Kueue's cache
//     accounts them, including stopped ClusterQueues, whose quota and usage stay in the cohort;
//     a Cohort object without a parent, children or resourceGroups is such a cohort (a root
//     cohort's fair-sharing weight compares it with no other);
//   - classical preemption: withinClusterQueue, reclaimWithinCohort, borrowWithinCohort, the
//     candidate order (other queues first, lower priority, most recently admitted) and the
//     give-back of targets that are not needed;
//   - fair-sharing preemption with the default strategies (LessThanOrEqualToFinalShare, then
//     LessThanInitialShare) and fairSharing weights;
//   - stopPolicy Hold and HoldAndDrain on ClusterQueues and LocalQueues, ClusterQueues being
//     deleted and ClusterQueues naming a missing ResourceFlavor (inactive);
//   - namespaceSelector: a pending Workload whose namespace its ClusterQueue's selector does
//     not match stays pending (a nil selector matches no namespace, an empty one every
//     namespace), given the namespaces' labels (Cluster.NamespaceLabels);
//   - the manager's configuration (Cluster.Manager, ParseManagerConfig): fair sharing on or off,
//     and waitForPodsReady without blockAdmission, which changes no admission (Kueue v0.19
//     turns it on when the configuration does not mention it).
//
// Reported as Undetermined, for the pending Workloads of the ClusterQueues concerned (see
// UndeterminedReasons): StrictFIFO; another flavorFungibility where a resource group has a
// choice of flavors; Cohort objects in a tree or with quotas of their own; admission checks;
// a namespaceSelector other than nil or empty when the namespaces' labels are not known;
// fair-sharing preemption strategies other than the default; waitForPodsReady.blockAdmission,
// and Workloads requeued after their pods were not ready in time; admission fair sharing,
// excluded resource prefixes, resource transformations, a quota check strategy other than
// BlockUndeclared and feature gates set in the configuration; Kueue v0.16 with fair sharing.
//
// Assumed, and said so by the caller: when the manager's configuration is not known
// (Cluster.Manager.Known false), Kueue's default configuration with fair sharing as
// Cluster.FairSharing says (the caller detects it from the ClusterQueues' fair-sharing
// status), and admission fair sharing unknown (queues that opt in are reported); feature gates
// given on the manager's command line count only when the caller adds them
// (ManagerConfig.WithFeatureGates), so that otherwise no priority boost and Kueue's default
// gates are taken. Not modelled and not reported: LimitRanges and invalid requests, which make
// Kueue keep a Workload pending.
//
// Approximations: an eviction takes effect in the cycle that decides it (Kueue waits for the
// pods to stop, while the preemptor keeps its place at the head); each attempt scans flavors
// from the first (Kueue v0.19 may resume a scan where the previous attempt stopped);
// Workloads with equal priority and creation time are ordered by UID, as Kueue v0.19 orders
// them (v0.15's order of such ties is arbitrary), then by namespace and name.
//
// What it cannot predict it reports as Undetermined with one of UndeterminedReasons instead of
// guessing. A Workload reported Undetermined is taken to stay as it is (pending, or holding
// the quota it holds), and the rest of the prediction follows from that.
//
// Stopping and cost: SimulateContext, EffectContext and Planner.Effect check their context
// before every scheduling cycle, every head's flavor assignment and every ClusterQueue a
// fair-sharing preemption search reaches, and return a *Stopped error (SimulationStopped)
// instead of an outcome once it is done. A Planner is made once per state of the cluster (a
// plan's read) and makes each cohort's prediction without the change once, for every preview
// of that cohort; it converts the Workloads and ClusterQueues as read once, and a preview's
// simulation converts only the objects its change made anew. A cycle costs, per head, the flavor assigner and, when it needs preemption, a
// search of the candidates: classical preemption looks at every admitted Workload of the
// cohort's queues that borrow; fair-sharing preemption shares per cycle the cohort's queues
// ordered by share and each queue's candidates in order, and reaches only the queues whose
// Workloads can pass its strategies, so a search usually looks at a few queues. One preview of
// a cohort of 1000 teams and 4000 jobs, half of them pending (BenchmarkPreview1000Teams), took
// 1.7 s of CPU without fair sharing and 0.3 s with it, on a loaded 2-core machine.
package admission

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// Version is the Kueue release whose scheduler is modelled.
type Version int

// The Kueue versions the provider's test suite runs. The zero Version models the newest.
const (
	V0_15 Version = iota + 1
	V0_19
)

// Latest is the newest modelled Kueue version.
const Latest = V0_19

// Release is a Kueue minor release and the Version that models it.
type Release struct {
	// Minor is the release's minor version: 17 for v0.17.1.
	Minor int
	// Version models it: v0.15 and v0.19 are modelled as themselves, v0.16 to v0.18 as v0.19.
	Version Version
}

// ParseRelease maps a Kueue release tag ("v0.15.0", "v0.17.1", with or without the "v") to its
// minor release and the Version that models it. v0.16 to v0.18 are modelled as v0.19, whose
// scheduler they share but for what Cluster.ManagerMinor reports; other minors are refused.
func ParseRelease(s string) (Release, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	major, rest, _ := strings.Cut(t, ".")
	minorText, _, _ := strings.Cut(rest, ".")
	minor, err := strconv.Atoi(minorText)
	if major == "0" && err == nil {
		switch {
		case minor == 15:
			return Release{Minor: minor, Version: V0_15}, nil
		case minor >= 16 && minor <= 19:
			return Release{Minor: minor, Version: V0_19}, nil
		}
	}
	return Release{}, fmt.Errorf("kueue version %q is not modelled; the admission preview models v0.15 and v0.19, and v0.16 to v0.18 as v0.19", s)
}

// ParseVersion is the Version that models a Kueue release tag (see ParseRelease).
func ParseVersion(s string) (Version, error) {
	r, err := ParseRelease(s)
	return r.Version, err
}

// String is the release and, when another release models it, which: "v0.17 (modelled as v0.19)".
func (r Release) String() string {
	if r.Minor == r.Version.minor() {
		return r.Version.String()
	}
	return fmt.Sprintf("v0.%d (modelled as %s)", r.Minor, r.Version)
}

// WithRelease is c modelled by r's Version, with ManagerMinor set when r is another release.
func (c Cluster) WithRelease(r Release) Cluster {
	c.Version, c.ManagerMinor = r.Version, 0
	if r.Minor != r.Version.minor() {
		c.ManagerMinor = r.Minor
	}
	return c
}

// String is the minor release, e.g. "v0.19".
func (v Version) String() string {
	return fmt.Sprintf("v0.%d", v.minor())
}

func (v Version) minor() int {
	if v.orLatest() == V0_15 {
		return 15
	}
	return 19
}

func (v Version) orLatest() Version {
	if v == 0 {
		return Latest
	}
	return v
}

// Cluster is the state the prediction starts from: the Kueue objects of one or more cohorts as
// listed from the cluster (or as the provider renders them), and the manager's settings.
type Cluster struct {
	// Version is the Kueue version of the manager; zero models Latest.
	Version Version
	// ManagerMinor is the manager's minor release (Release.Minor) when another release's
	// Version models it, as v0.19 models v0.16 to v0.18; zero when it is Version's own or
	// unknown.
	ManagerMinor int
	// FairSharing is the manager configuration's fairSharing.enable: Manager.FairSharing when
	// the configuration is known (WithManager), else detected (a ClusterQueue reports a
	// fair-sharing status only when it is on).
	FairSharing bool
	// Manager is the manager's configuration; the zero value was not read.
	Manager ManagerConfig

	ClusterQueues           []kueue.ClusterQueue
	LocalQueues             []kueue.LocalQueue
	ResourceFlavors         []kueue.ResourceFlavor
	WorkloadPriorityClasses []kueue.WorkloadPriorityClass
	// Cohorts are the Cohort objects; a cohort no object names is the set of ClusterQueues
	// naming it.
	Cohorts []kueue.Cohort
	// NamespaceLabels are the labels of the cluster's namespaces by name, for the
	// ClusterQueues' namespaceSelectors; nil when they were not read.
	NamespaceLabels map[string]map[string]string
	// Workloads: admitted ones carry status.admission and a QuotaReserved condition that is
	// true; pending ones carry neither. Finished Workloads are ignored.
	Workloads []kueue.Workload
}

// Simulate runs Kueue's scheduling cycles from the state c until nothing changes, and reports
// per ClusterQueue what changed and what is left over nominal quota. It cannot be stopped:
// SimulateContext can.
func Simulate(c Cluster) Outcome {
	return simulate(c)
}

// Preview is Simulate with the planned ClusterQueues in place of the live ones of the same
// name; a planned ClusterQueue with no live one is added. A planned ClusterQueue with a
// deletionTimestamp is being deleted: as in Kueue, it admits nothing more and its admitted
// Workloads keep running until they finish. Other planned changes are made on the Cluster
// itself: planned WorkloadPriorityClasses (whose values Kueue v0.19 gives the Workloads that
// use them) or FairSharing.
func Preview(now Cluster, planned []kueue.ClusterQueue) Outcome {
	next := now
	next.ClusterQueues = make([]kueue.ClusterQueue, 0, len(now.ClusterQueues)+len(planned))
	replaced := map[string]bool{}
	for _, p := range planned {
		replaced[p.Name] = true
	}
	for _, cq := range now.ClusterQueues {
		if !replaced[cq.Name] {
			next.ClusterQueues = append(next.ClusterQueues, cq)
		}
	}
	next.ClusterQueues = append(next.ClusterQueues, planned...)
	return simulate(next)
}

// WorkloadRef names a Workload.
type WorkloadRef struct {
	Namespace string
	Name      string
}

// String is namespace/name.
func (w WorkloadRef) String() string { return w.Namespace + "/" + w.Name }

// Outcome is the predicted effect, one entry per ClusterQueue that has anything to report,
// sorted by ClusterQueue name.
type Outcome struct {
	// Version is the modelled Kueue version.
	Version Version
	Teams   []TeamOutcome
}

// Team returns the outcome of the named ClusterQueue (empty when it has nothing to report).
func (o Outcome) Team(clusterQueue string) TeamOutcome {
	for _, t := range o.Teams {
		if t.ClusterQueue == clusterQueue {
			return t
		}
	}
	return TeamOutcome{ClusterQueue: clusterQueue}
}

// Empty reports whether the outcome has nothing to report.
func (o Outcome) Empty() bool { return len(o.Teams) == 0 }

// TeamOutcome is what happens in one ClusterQueue. Every list is sorted by Workload
// (namespace, then name), OverNominal by flavor then resource and each one's Workloads in the
// order Kueue would preempt them. A Workload appears in at most one of Admitted, Preempted and
// Undetermined.
type TeamOutcome struct {
	ClusterQueue string
	// Admitted are pending Workloads that get admitted.
	Admitted []Admitted
	// Preempted are admitted Workloads that get evicted to make room for another.
	Preempted []Preempted
	// OverNominal are the flavor-resources of which the ClusterQueue uses more than its nominal
	// quota once scheduling settles: the Workloads on them keep running but can be reclaimed.
	OverNominal []OverNominal
	// Undetermined are Workloads whose fate the simulator cannot predict.
	Undetermined []Undetermined
}

// Empty reports whether the team has nothing to report.
func (t TeamOutcome) Empty() bool {
	return len(t.Admitted) == 0 && len(t.Preempted) == 0 && len(t.OverNominal) == 0 && len(t.Undetermined) == 0
}

// Admitted is a Workload that gets admitted and its flavors.
type Admitted struct {
	Workload WorkloadRef
	Priority int32
	PodSets  []PodSetFlavors
	// Borrowing is true when the ClusterQueue borrows from its cohort to admit it.
	Borrowing bool
	// Preempting is true when it is admitted only after preempting others (see Preempted.By).
	Preempting bool
}

// PodSetFlavors is the flavor chosen for each resource of one pod set.
type PodSetFlavors struct {
	Name  string
	Count int32
	// Flavors by resource, sorted by resource name.
	Flavors []ResourceFlavor
}

// ResourceFlavor is the flavor of one resource.
type ResourceFlavor struct {
	Resource string
	Flavor   string
}

// Preempted is an admitted Workload that is evicted.
type Preempted struct {
	Workload WorkloadRef
	Priority int32
	// By is the Workload whose admission needs the quota, and ByClusterQueue its ClusterQueue;
	// both are empty for an eviction by a stop policy.
	By             WorkloadRef
	ByClusterQueue string
	// Reason is the rule: one of the kueue.In*Reason values (the Preempted condition's
	// reason), or for a stop policy the Evicted condition's reason
	// (kueue.WorkloadEvictedByClusterQueueStopped, kueue.WorkloadEvictedByLocalQueueStopped).
	Reason string
	// Readmitted is set when the Workload is admitted again later in the same prediction.
	Readmitted []PodSetFlavors
}

// OverNominal is one flavor-resource of which a ClusterQueue uses more than its nominal quota.
type OverNominal struct {
	Flavor   string
	Resource string
	// Used and Nominal are in Kueue's units: millicores for cpu, bytes for memory, counts otherwise.
	Used    int64
	Nominal int64
	// Workloads are the admitted Workloads that use this flavor-resource, in the order Kueue
	// takes them when it preempts in this ClusterQueue (its candidate order): the lowest
	// priority first, then the most recently admitted.
	Workloads []WorkloadRef
}

// Over is how much more than its nominal quota the ClusterQueue uses, in Kueue's units.
func (n OverNominal) Over() int64 { return n.Used - n.Nominal }

// Undetermined is a Workload whose admission or preemption cannot be predicted.
type Undetermined struct {
	Workload WorkloadRef
	Reason   UndeterminedReason
	// Detail says which pod set, class or check, for a person to read.
	Detail string
}

// UndeterminedReason is why a prediction cannot be made.
type UndeterminedReason string

// The reasons a Workload is reported Undetermined.
const (
	// TopologyAwareScheduling: a pending Workload's pod set has a topology request; its
	// admission depends on node placement. It is taken to stay pending.
	TopologyAwareScheduling UndeterminedReason = "TopologyAwareScheduling"
	// PartialAdmission: a pod set has minCount and the whole Workload does not fit; Kueue may
	// admit it with fewer pods. It is taken to stay pending.
	PartialAdmission UndeterminedReason = "PartialAdmission"
	// AdmissionChecks: the Workload carries admission check states and would get its quota,
	// or is pending in a ClusterQueue with admission checks; whether it is admitted is decided
	// by the checks' controllers.
	AdmissionChecks UndeterminedReason = "AdmissionChecks"
	// UnknownPriorityClass: the Workload names a WorkloadPriorityClass that is not given and
	// has no priority of its own.
	UnknownPriorityClass UndeterminedReason = "UnknownPriorityClass"
	// NodeAffinity: a pending Workload's pod set has a required node affinity the simulator does
	// not evaluate (an operator other than In, NotIn, Exists, DoesNotExist, or a field selector).
	NodeAffinity UndeterminedReason = "NodeAffinity"
	// NoFixpoint: scheduling did not settle within the simulator's cycle budget (Workloads
	// preempting each other in turn); the Workloads still waiting in that cohort are undetermined.
	NoFixpoint UndeterminedReason = "NoFixpoint"
	// SimulationStopped: the prediction's context was done (its deadline passed, or it was
	// cancelled) before scheduling settled. It marks no single Workload: the whole prediction
	// is refused with a *Stopped error (SimulateContext, EffectContext, Planner.Effect).
	SimulationStopped UndeterminedReason = "SimulationStopped"

	// The reasons below mark every pending Workload of the ClusterQueues concerned (taken to
	// stay pending); the Workloads those queues hold keep their quota.

	// QueueingStrategy: the ClusterQueue is StrictFIFO, whose head blocks the Workloads behind
	// it; the preview models BestEffortFIFO.
	QueueingStrategy UndeterminedReason = "QueueingStrategy"
	// FlavorFungibility: the ClusterQueue's flavorFungibility is not the default (whenCanBorrow
	// MayStopSearch, whenCanPreempt TryNextFlavor, no preference), and a resource group has more
	// than one flavor to choose from.
	FlavorFungibility UndeterminedReason = "FlavorFungibility"
	// HierarchicalCohort: the ClusterQueue's cohort is part of a tree of Cohort objects (it has
	// a parent or children), whose quotas the preview does not account.
	HierarchicalCohort UndeterminedReason = "HierarchicalCohort"
	// CohortQuota: the ClusterQueue's cohort is a Cohort object with resourceGroups, quotas of
	// its own that the preview does not account.
	CohortQuota UndeterminedReason = "CohortQuota"
	// NamespaceSelector: whether the Workload's namespace matches its ClusterQueue's
	// namespaceSelector is not known (the namespaces' labels were not read, the namespace is
	// not among them, or the selector is invalid). Kueue keeps a Workload whose namespace does
	// not match pending, which the preview models when it knows the labels.
	NamespaceSelector UndeterminedReason = "NamespaceSelector"
	// PreemptionStrategies: fair sharing is on with preemption strategies other than Kueue's
	// default, for the ClusterQueues in a cohort.
	PreemptionStrategies UndeterminedReason = "PreemptionStrategies"
	// WaitForPodsReady: the manager's waitForPodsReady.blockAdmission holds every admission
	// until the admitted Workloads' pods are ready, or the Workload was evicted because its
	// pods were not ready in time and is requeued after a backoff, ordered by its eviction.
	WaitForPodsReady UndeterminedReason = "WaitForPodsReady"
	// ManagerConfiguration: the manager's configuration changes decisions the preview does not
	// follow (admission fair sharing, resource exclusions or transformations, the quota check
	// strategy, feature gates), or the queue uses admission fair sharing and the configuration
	// was not read.
	ManagerConfiguration UndeterminedReason = "ManagerConfiguration"
	// KueueRelease: the manager runs a release modelled by another's scheduler where they are
	// known to differ: Kueue v0.16 preempts and orders under fair sharing as v0.15 does, not as
	// v0.19 (the behaviours came in v0.17), for the ClusterQueues in a cohort.
	KueueRelease UndeterminedReason = "KueueRelease"
)

// UndeterminedReasons lists every reason, for documentation and for tests that accept
// "cannot determine" only for a listed reason.
var UndeterminedReasons = []UndeterminedReason{
	TopologyAwareScheduling, PartialAdmission, AdmissionChecks, UnknownPriorityClass, NodeAffinity, NoFixpoint,
	SimulationStopped, QueueingStrategy, FlavorFungibility, HierarchicalCohort, CohortQuota, NamespaceSelector, PreemptionStrategies,
	WaitForPodsReady, ManagerConfiguration, KueueRelease,
}

// String formats the outcome for a person: one block per ClusterQueue, Workloads named
// namespace/name. The text depends only on the outcome.
func (o Outcome) String() string {
	var b strings.Builder
	for i, t := range o.Teams {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(t.String())
	}
	return b.String()
}

// String formats one ClusterQueue's outcome.
func (t TeamOutcome) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ClusterQueue %s:\n", t.ClusterQueue)
	for _, a := range t.Admitted {
		fmt.Fprintf(&b, "  admitted %s on %s", a.Workload, formatPodSets(a.PodSets))
		if a.Borrowing {
			b.WriteString(", borrowing")
		}
		if a.Preempting {
			b.WriteString(", after preemption")
		}
		b.WriteString("\n")
	}
	for _, p := range t.Preempted {
		if p.ByClusterQueue == "" {
			fmt.Fprintf(&b, "  evicted %s: %s", p.Workload, p.Reason)
		} else {
			fmt.Fprintf(&b, "  preempted %s by %s (ClusterQueue %s): %s", p.Workload, p.By, p.ByClusterQueue, p.Reason)
		}
		if p.Readmitted != nil {
			fmt.Fprintf(&b, ", then readmitted on %s", formatPodSets(p.Readmitted))
		}
		b.WriteString("\n")
	}
	for _, n := range t.OverNominal {
		refs := make([]string, len(n.Workloads))
		for i, w := range n.Workloads {
			refs[i] = w.String()
		}
		fmt.Fprintf(&b, "  over nominal quota by %s: %s %s uses %s of %s; preemptible first to last: %s\n",
			formatAmount(n.Resource, n.Over()), n.Flavor, n.Resource, formatAmount(n.Resource, n.Used),
			formatAmount(n.Resource, n.Nominal), strings.Join(refs, ", "))
	}
	for _, u := range t.Undetermined {
		fmt.Fprintf(&b, "  cannot determine %s: %s", u.Workload, u.Reason)
		if u.Detail != "" {
			fmt.Fprintf(&b, " (%s)", u.Detail)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func formatPodSets(ps []PodSetFlavors) string {
	flavors := map[string]bool{}
	var names []string
	for _, p := range ps {
		for _, f := range p.Flavors {
			if !flavors[f.Flavor] {
				flavors[f.Flavor] = true
				names = append(names, f.Flavor)
			}
		}
	}
	if len(names) == 0 {
		return "no flavor"
	}
	return strings.Join(names, ", ")
}
