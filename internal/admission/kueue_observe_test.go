package admission_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// The observation side of the differential tests: a scenario's objects are created on the
// test cluster, the real Kueue manager decides, and what it decided is read back once it has
// settled.

func TestMain(m *testing.M) { os.Exit(acctest.Main(m, nil)) }

// jobs are the kinds a scenario submits.
var (
	batchJobs   = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	namespaces  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	pytorchJobs = acctest.PyTorchJobs
)

// observeTimeout bounds every wait on Kueue: far above what any step takes on a loaded machine,
// so that reaching it means Kueue did not do what the wait expects.
const observeTimeout = 2 * time.Minute

// kueueCluster is the test cluster, with the clients a scenario uses.
type kueueCluster struct {
	cs  kubernetes.Interface
	dyn dynamic.Interface
}

// observedWorkload is what Kueue recorded for one Workload.
type observedWorkload struct {
	Name, Namespace string
	UID             types.UID
	// Owner is the job: "<Kind>/<name>".
	Owner      string
	LocalQueue string
	Priority   int32
	Created    time.Time

	QuotaReserved, Admitted bool
	// Flavors are the admission's flavors, sorted, each once.
	Flavors []string

	// The Evicted and Preempted conditions' status and reason, and the messages Kueue gives.
	Evicted                               bool
	EvictedReason, PreemptedReason        string
	PreemptedMessage, QuotaReservedReason string
	QuotaReservedMessage                  string
	// Preemptions counts the evictions by preemption (status.schedulingStats).
	Preemptions int64

	// transitions are the conditions' last transition times, to tell a workload that went
	// back and forth from one that did not move.
	transitions string

	// Workload is the object as the simulator reads it.
	Workload kueue.Workload
}

// schedulingStats is the part of a Workload's status that internal/kueue does not declare:
// how often it was evicted, by reason.
type schedulingStats struct {
	Status struct {
		SchedulingStats *struct {
			Evictions []struct {
				Reason string `json:"reason"`
				Count  int64  `json:"count"`
			} `json:"evictions"`
		} `json:"schedulingStats"`
	} `json:"status"`
}

// observe reads a Workload's decision.
func observe(u *unstructured.Unstructured) (observedWorkload, error) {
	var w kueue.Workload
	var stats schedulingStats
	for _, into := range []any{&w, &stats} {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
			return observedWorkload{}, fmt.Errorf("reading Workload %s/%s: %w", u.GetNamespace(), u.GetName(), err)
		}
	}
	o := observedWorkload{Name: w.Name, Namespace: w.Namespace, UID: w.UID, LocalQueue: w.Spec.QueueName,
		Created: w.CreationTimestamp.Time, Workload: w}
	for _, ref := range w.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			o.Owner = ref.Kind + "/" + ref.Name
		}
	}
	if w.Spec.Priority != nil {
		o.Priority = *w.Spec.Priority
	}
	var ltt []string
	for _, c := range w.Status.Conditions {
		on := c.Status == metav1.ConditionTrue
		switch c.Type {
		case kueue.WorkloadQuotaReserved:
			o.QuotaReserved, o.QuotaReservedReason, o.QuotaReservedMessage = on, c.Reason, c.Message
		case kueue.WorkloadAdmitted:
			o.Admitted = on
		case kueue.WorkloadEvicted:
			o.Evicted, o.EvictedReason = on, c.Reason
		case kueue.WorkloadPreempted:
			o.PreemptedReason, o.PreemptedMessage = c.Reason, c.Message
		default:
			continue
		}
		ltt = append(ltt, fmt.Sprintf("%s=%s@%s", c.Type, c.Status, c.LastTransitionTime.UTC().Format(time.RFC3339)))
	}
	sort.Strings(ltt)
	o.transitions = strings.Join(ltt, ",")
	if a := w.Status.Admission; a != nil && o.QuotaReserved {
		for _, ps := range a.PodSetAssignments {
			for _, f := range ps.Flavors {
				o.Flavors = append(o.Flavors, f)
			}
		}
		slices.Sort(o.Flavors)
		o.Flavors = slices.Compact(o.Flavors)
	}
	if st := stats.Status.SchedulingStats; st != nil {
		for _, e := range st.Evictions {
			if e.Reason == kueue.WorkloadEvictedByPreemption {
				o.Preemptions += e.Count
			}
		}
	}
	return o, nil
}

// transitional says why a workload is between two of Kueue's decisions ("" when it is not):
// an eviction Kueue has issued but whose quota the job has not released yet, or a quota
// reservation without the admission that follows it.
func (o observedWorkload) transitional() string {
	switch {
	case o.Evicted && o.QuotaReserved:
		return "evicted (" + o.EvictedReason + ") but still holds its quota"
	case o.QuotaReserved && !o.Admitted:
		return "holds quota but is not admitted yet"
	}
	return ""
}

// decision is the part of an observation the settle criterion compares between two reads:
// what Kueue decided and when each condition last changed.
func (o observedWorkload) decision() string {
	return fmt.Sprintf("reserved=%t admitted=%t flavors=%v preemptions=%d %s",
		o.QuotaReserved, o.Admitted, o.Flavors, o.Preemptions, o.transitions)
}

// String is a workload's state in a test log, with what orders it in its queue: priority,
// creation time and UID.
func (o observedWorkload) String() string {
	id := fmt.Sprintf("%s (%s, priority %d, created %s, UID %s)", o.Name, o.Owner, o.Priority,
		o.Created.UTC().Format(time.TimeOnly), o.UID)
	switch {
	case o.Admitted:
		return fmt.Sprintf("%s admitted on %s", id, strings.Join(o.Flavors, ","))
	case o.Evicted:
		return fmt.Sprintf("%s evicted (%s/%s), pending", id, o.EvictedReason, o.PreemptedReason)
	default:
		return fmt.Sprintf("%s pending: %s", id, o.QuotaReservedMessage)
	}
}

// preemptorUID is the UID of the workload a preemption message names: Kueue writes
// "Preempted to accommodate a workload (UID: <uid>, JobUID: <uid>) due to ...".
var preemptorUID = regexp.MustCompile(`\(UID: ([^,)]+)`)

// PreemptedBy returns the UID of the workload that preempted o, "" when the message names none.
func (o observedWorkload) PreemptedBy() types.UID {
	if m := preemptorUID.FindStringSubmatch(o.PreemptedMessage); m != nil {
		return types.UID(m[1])
	}
	return ""
}

// scenarioQueues is what a settle reads: the scenario's teams (namespace, LocalQueue and
// ClusterQueue) and the probe of each.
type scenarioQueues struct {
	// teams are the scenario's team names; the team's namespace, LocalQueue and
	// ClusterQueue follow the provider's names.
	teams []string
	// probeClass is the WorkloadPriorityClass of the probes, below every scenario priority.
	probeClass string
	// jobs is how many jobs the scenario submitted: Kueue makes their Workloads in its own
	// time, and a settle first waits until each has one.
	jobs int
}

// probeNamespace is the namespace of a team's probe: it feeds the team's ClusterQueue through
// a LocalQueue of its own, and matches the queue's namespace selector only while a probe
// round labels it.
func probeNamespace(team string) string { return quota.NamespaceName(team) + "-probe" }

// outsideNamespace is a team's namespace that feeds the team's ClusterQueue through a
// LocalQueue of its own and never matches the queue's namespace selector: Kueue keeps its
// Workloads pending.
func outsideNamespace(team string) string { return quota.NamespaceName(team) + "-outside" }

const probeJob = "settle-probe"

// readWorkloads lists the Workloads of the scenario's team and outside namespaces (probes
// apart) and the probes, by namespace/name.
func (k kueueCluster) readWorkloads(ctx context.Context, sq scenarioQueues) (work, probes map[string]observedWorkload, err error) {
	work, probes = map[string]observedWorkload{}, map[string]observedWorkload{}
	for _, team := range sq.teams {
		for ns, into := range map[string]map[string]observedWorkload{quota.NamespaceName(team): work, outsideNamespace(team): work, probeNamespace(team): probes} {
			list, err := k.dyn.Resource(kueue.Workloads).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, nil, fmt.Errorf("listing Workloads in %s: %w", ns, err)
			}
			for i := range list.Items {
				if list.Items[i].GetDeletionTimestamp() != nil {
					continue
				}
				o, err := observe(&list.Items[i])
				if err != nil {
					return nil, nil, err
				}
				into[ns+"/"+o.Name] = o
			}
		}
	}
	return work, probes, nil
}

// clusterQueueState is what a settle needs of a live ClusterQueue.
type clusterQueueState struct {
	exists, active, terminating bool
	generation, observed        int64
	reserving, admitted         int32
	pending                     int32
	activeReason                string
}

func (k kueueCluster) clusterQueueState(ctx context.Context, name string) (clusterQueueState, error) {
	u, err := k.dyn.Resource(kueue.ClusterQueues).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return clusterQueueState{}, nil
	}
	if err != nil {
		return clusterQueueState{}, fmt.Errorf("reading ClusterQueue %s: %w", name, err)
	}
	var cq kueue.ClusterQueue
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cq); err != nil {
		return clusterQueueState{}, fmt.Errorf("reading ClusterQueue %s: %w", name, err)
	}
	s := clusterQueueState{exists: true, terminating: cq.DeletionTimestamp != nil, generation: cq.Generation}
	if st := cq.Status; st != nil {
		s.reserving, s.admitted, s.pending = st.ReservingWorkloads, st.AdmittedWorkloads, st.PendingWorkloads
		for _, c := range st.Conditions {
			if c.Type == "Active" {
				s.active, s.observed, s.activeReason = c.Status == metav1.ConditionTrue, c.ObservedGeneration, c.Reason
			}
		}
	}
	return s, nil
}

// waitClusterQueuesObserved waits until Kueue has taken in the current spec of each team's
// ClusterQueue: the Active condition's observedGeneration is the queue's generation (Kueue
// writes it after the update event reached its cache and queues), or the queue is gone. A
// queue being deleted (Kueue's finalizer keeps it while workloads hold quota in it) is
// taken in once Kueue refuses a probe as inactive there (waitTerminationTakenIn).
func (k kueueCluster) waitClusterQueuesObserved(ctx context.Context, teams []string) error {
	var terminating []string
	err := acctest.Eventually(ctx, observeTimeout, "Kueue takes in the ClusterQueues' new specs", func(context.Context) (bool, string, error) {
		var behind []string
		terminating = nil
		for _, team := range teams {
			name := quota.ClusterQueueName(team)
			s, err := k.clusterQueueState(ctx, name)
			if err != nil {
				return false, "", err
			}
			switch {
			case !s.exists:
			case s.terminating:
				terminating = append(terminating, team)
			case s.observed != s.generation:
				behind = append(behind, fmt.Sprintf("%s (generation %d, Active condition of generation %d, reason %q)",
					name, s.generation, s.observed, s.activeReason))
			}
		}
		return len(behind) == 0, strings.Join(behind, "; "), nil
	})
	if err != nil {
		return err
	}
	for _, team := range terminating {
		if err := k.waitTerminationTakenIn(ctx, team); err != nil {
			return err
		}
	}
	return nil
}

// waitTerminationTakenIn waits until Kueue treats the team's ClusterQueue, which is being
// deleted, as inactive: Kueue v0.19 says so in the Active condition, v0.15 writes nothing, so
// a probe is sent into the queue until Kueue refuses it as inactive (one admitted instead
// was tried before Kueue took the deletion in, and is deleted for the next try).
func (k kueueCluster) waitTerminationTakenIn(ctx context.Context, team string) error {
	if err := k.labelProbeNamespace(ctx, team, true); err != nil {
		return err
	}
	ns := probeNamespace(team)
	sq := scenarioQueues{teams: []string{team}}
	refused := false
	for !refused {
		if err := k.createProbe(ctx, team, probeClassName); err != nil {
			return err
		}
		err := acctest.Eventually(ctx, observeTimeout, "Kueue decides a probe in the ClusterQueue being deleted", func(context.Context) (bool, string, error) {
			_, probes, err := k.readWorkloads(ctx, sq)
			if err != nil {
				return false, "", err
			}
			s, err := k.clusterQueueState(ctx, quota.ClusterQueueName(team))
			if err != nil {
				return false, "", err
			}
			p, ok := probeOf(probes, team)
			// Kueue names the queue inactive, or once it is gone, missing.
			refused = !s.exists || (ok && !p.QuotaReserved && (strings.Contains(p.QuotaReservedMessage, "is inactive") ||
				strings.Contains(p.QuotaReservedMessage, "doesn't exist")))
			return refused || (ok && p.Admitted), p.QuotaReservedMessage, nil
		})
		if err != nil {
			return err
		}
		if err := k.deleteJobsAndWorkloads(ctx, ns); err != nil {
			return err
		}
	}
	return k.labelProbeNamespace(ctx, team, false)
}

// settle waits until Kueue has made every decision it will make for the scenario's
// workloads, and returns them by namespace/name.
//
// Why this criterion. Kueue decides in scheduling cycles, each taking the head of every
// active ClusterQueue's queue (highest priority, then oldest; a preemptor whose victims are
// still being evicted stays at the head). A workload that does not fit is parked as
// inadmissible and is only tried again when something moves it back into the queue: an
// update of a ClusterQueue of the cohort, a workload releasing quota, a namespace starting to
// match a queue's selector. In v0.19 those moves happen in batches, a second after the event
// (v0.15 moves synchronously), and a pending workload that is tried again and still does not
// fit may leave no trace in the API (its condition is rewritten only when its message
// changes). So "nothing changed for a while" proves nothing, and the test does not wait for
// time to pass. Instead each round sends a probe through the same path:
//
//  1. Wait until every submitted job has its Workload (Kueue's job controllers make them in
//     their own time) and no workload is between two decisions (evicted but still holding
//     quota, holding quota but not admitted), and snapshot the decisions.
//  2. In each active ClusterQueue, create a probe Job that requests nothing, at a priority
//     below every scenario workload, in a namespace that does not match the queue's
//     selector. Kueue tries it and parks it as inadmissible (its QuotaReserved=False
//     condition says the namespace does not match). Kueue's controllers put a Workload
//     event into its queues and cache in the event's handler, and receive the events in
//     order; the probe's Workload is created after the snapshot was read, so when the probe
//     is parked, every state the snapshot saw is in Kueue's queues and cache.
//  3. Label the probe namespaces so they match. Kueue moves every inadmissible workload of
//     the cohort back into the queues in one batch, the probes with them, after every
//     requeue already requested (the change, a released quota). The probe is last in its
//     queue, and a workload that needs nothing is admitted when tried, so its admission
//     proves that every workload of its queue was tried since.
//  4. Wait until every probe is admitted and each ClusterQueue's status counts the same
//     reserving, admitted and pending workloads as their conditions (the status is written
//     from Kueue's cache, after the probe's admission, so an admission Kueue has decided but
//     not written yet shows as a difference), and again no workload is between two
//     decisions. Snapshot the decisions again.
//  5. Delete the probes. When the two snapshots agree, every pending workload was tried
//     against the state Kueue holds and stayed pending, and every admitted one stays: Kueue
//     has settled. Otherwise Kueue moved during the round, and the next round checks the
//     result.
//
// The probes take no quota and are never preemption candidates (Kueue preempts only
// workloads using the contested resources), so they change no decision; deleting them
// requeues the cohort's inadmissible workloads, which then fail as before.
func (k kueueCluster) settle(ctx context.Context, sq scenarioQueues) (map[string]observedWorkload, int, error) {
	for round := 1; ; round++ {
		if round > 20 {
			return nil, round, fmt.Errorf("kueue did not settle in %d probe rounds", round-1)
		}
		// Read before the probes are created: Kueue handles Workload events in order, so by
		// the time it has parked a probe it has taken in every workload state read here.
		before, err := k.steadyDecisions(ctx, sq)
		if err != nil {
			return nil, round, err
		}
		probed, err := k.startProbes(ctx, sq)
		if err != nil {
			return nil, round, err
		}
		if err := k.releaseProbes(ctx, sq, probed); err != nil {
			return nil, round, err
		}
		after, err := k.steadyDecisions(ctx, sq)
		if err != nil {
			return nil, round, err
		}
		if err := k.stopProbes(ctx, probed); err != nil {
			return nil, round, err
		}
		if sameDecisions(before, after) {
			return after, round, nil
		}
	}
}

func sameDecisions(a, b map[string]observedWorkload) bool {
	if len(a) != len(b) {
		return false
	}
	for k, o := range a {
		p, ok := b[k]
		if !ok || p.UID != o.UID || p.decision() != o.decision() {
			return false
		}
	}
	return true
}

// steadyDecisions waits until every job has its Workload and no workload is between two
// decisions, and returns them.
func (k kueueCluster) steadyDecisions(ctx context.Context, sq scenarioQueues) (map[string]observedWorkload, error) {
	var out map[string]observedWorkload
	err := acctest.Eventually(ctx, observeTimeout, "every job has a Workload, none between two decisions", func(context.Context) (bool, string, error) {
		work, _, err := k.readWorkloads(ctx, sq)
		if err != nil {
			return false, "", err
		}
		if len(work) < sq.jobs {
			return false, fmt.Sprintf("%d Workloads for %d jobs", len(work), sq.jobs), nil
		}
		var moving []string
		for key, o := range work {
			if why := o.transitional(); why != "" {
				moving = append(moving, key+": "+why)
			}
		}
		out = work
		return len(moving) == 0, strings.Join(moving, "; "), nil
	})
	return out, err
}

// startProbes creates a probe in each active ClusterQueue of the scenario and waits until
// Kueue has parked each as inadmissible. It returns the teams probed.
func (k kueueCluster) startProbes(ctx context.Context, sq scenarioQueues) ([]string, error) {
	var probed []string
	for _, team := range sq.teams {
		s, err := k.clusterQueueState(ctx, quota.ClusterQueueName(team))
		if err != nil {
			return nil, err
		}
		if !s.exists || s.terminating || !s.active {
			continue // Kueue admits nothing there: nothing to wait for
		}
		probed = append(probed, team)
		if err := k.createProbe(ctx, team, sq.probeClass); err != nil {
			return nil, err
		}
	}
	err := acctest.Eventually(ctx, observeTimeout, "Kueue parks the probes as inadmissible (namespace mismatch)", func(context.Context) (bool, string, error) {
		_, probes, err := k.readWorkloads(ctx, sq)
		if err != nil {
			return false, "", err
		}
		var waiting []string
		for _, team := range probed {
			p, ok := probeOf(probes, team)
			if !ok || p.QuotaReserved || !strings.Contains(strings.ToLower(p.QuotaReservedMessage), "namespace doesn't match") {
				waiting = append(waiting, fmt.Sprintf("%s: %+v", team, p.QuotaReservedMessage))
			}
		}
		return len(waiting) == 0, strings.Join(waiting, "; "), nil
	})
	return probed, err
}

// createProbe creates the probe Job of a team: one pod that requests nothing, in the team's
// probe namespace, at the given priority class.
func (k kueueCluster) createProbe(ctx context.Context, team, class string) error {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: probeJob, Namespace: probeNamespace(team), Labels: map[string]string{
			"kueue.x-k8s.io/queue-name": quota.LocalQueueName(team), kueue.PriorityClassLabel: class}},
		Spec: batchv1.JobSpec{
			Suspend: ptr.To(true),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "probe", Image: "busybox"}},
			}},
		},
	}
	if _, err := k.cs.BatchV1().Jobs(job.Namespace).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating probe Job in %s: %w", job.Namespace, err)
	}
	return nil
}

func probeOf(probes map[string]observedWorkload, team string) (observedWorkload, bool) {
	for _, p := range probes {
		if p.Namespace == probeNamespace(team) && p.Owner == "Job/"+probeJob {
			return p, true
		}
	}
	return observedWorkload{}, false
}

// releaseProbes labels the probe namespaces to match their queues and waits until every probe
// is admitted and the ClusterQueues' status agrees with the workloads' conditions.
func (k kueueCluster) releaseProbes(ctx context.Context, sq scenarioQueues, probed []string) error {
	for _, team := range probed {
		if err := k.labelProbeNamespace(ctx, team, true); err != nil {
			return err
		}
	}
	return acctest.Eventually(ctx, observeTimeout, "Kueue admits the probes and its ClusterQueue status agrees with the workloads", func(context.Context) (bool, string, error) {
		work, probes, err := k.readWorkloads(ctx, sq)
		if err != nil {
			return false, "", err
		}
		var waiting []string
		for _, team := range probed {
			if p, ok := probeOf(probes, team); !ok || !p.Admitted {
				waiting = append(waiting, "probe of "+team+" not admitted")
			}
		}
		for _, o := range work {
			if why := o.transitional(); why != "" {
				waiting = append(waiting, o.Namespace+"/"+o.Name+": "+why)
			}
		}
		counts := map[string]*clusterQueueState{}
		for _, team := range sq.teams {
			counts[quota.LocalQueueName(team)] = &clusterQueueState{}
		}
		for _, o := range slices.Concat(slices.Collect(maps.Values(work)), slices.Collect(maps.Values(probes))) {
			c := counts[o.LocalQueue]
			if c == nil {
				continue
			}
			switch {
			case o.Admitted:
				c.reserving++
				c.admitted++
			case o.QuotaReserved:
				c.reserving++
			default:
				c.pending++
			}
		}
		for _, team := range probed {
			s, err := k.clusterQueueState(ctx, quota.ClusterQueueName(team))
			if err != nil {
				return false, "", err
			}
			want := counts[quota.LocalQueueName(team)]
			if s.reserving != want.reserving || s.admitted != want.admitted || s.pending != want.pending {
				waiting = append(waiting, fmt.Sprintf("ClusterQueue of %s reports %d reserving, %d admitted, %d pending; the workloads say %d, %d, %d",
					team, s.reserving, s.admitted, s.pending, want.reserving, want.admitted, want.pending))
			}
		}
		return len(waiting) == 0, strings.Join(waiting, "; "), nil
	})
}

// stopProbes deletes the probes and their Workloads, waits until they are gone, and takes the
// label off the probe namespaces again.
func (k kueueCluster) stopProbes(ctx context.Context, probed []string) error {
	for _, team := range probed {
		ns := probeNamespace(team)
		if err := k.deleteJobsAndWorkloads(ctx, ns); err != nil {
			return err
		}
		if err := k.labelProbeNamespace(ctx, team, false); err != nil {
			return err
		}
	}
	return nil
}

// labelProbeNamespace sets or removes the team label that the team's ClusterQueue selects.
func (k kueueCluster) labelProbeNamespace(ctx context.Context, team string, match bool) error {
	value := any(nil)
	if match {
		value = team
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{quota.LabelQuotaAllocationID: value}}})
	if _, err := k.cs.CoreV1().Namespaces().Patch(ctx, probeNamespace(team), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("labelling namespace %s: %w", probeNamespace(team), err)
	}
	return nil
}

// deleteJobsAndWorkloads deletes the Jobs and PyTorchJobs of a namespace, then their Workloads
// (there is no garbage collector), and waits until the Workloads are gone, so that Kueue has
// released their quota.
func (k kueueCluster) deleteJobsAndWorkloads(ctx context.Context, ns string) error {
	background := metav1.DeletePropagationBackground
	for _, gvr := range []schema.GroupVersionResource{batchJobs, pytorchJobs} {
		if err := k.dyn.Resource(gvr).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &background},
			metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s in %s: %w", gvr.Resource, ns, err)
		}
	}
	if err := k.dyn.Resource(kueue.Workloads).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil &&
		!apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Workloads in %s: %w", ns, err)
	}
	return acctest.Eventually(ctx, observeTimeout, "the Workloads of "+ns+" are gone", func(context.Context) (bool, string, error) {
		list, err := k.dyn.Resource(kueue.Workloads).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		var left []string
		for _, w := range list.Items {
			left = append(left, w.GetName())
		}
		return len(left) == 0, strings.Join(left, ", "), nil
	})
}
