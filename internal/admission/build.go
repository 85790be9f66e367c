package admission

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// newState builds the simulated cluster from the listed objects.
func newState(c Cluster) *state { return newStateOf(c, nil) }

// newStateOf builds the simulated cluster from the listed objects, with the models of m where
// it has them (m may be nil).
func newStateOf(c Cluster, m *models) *state {
	s := &state{version: c.Version.orLatest(), fairSharing: c.FairSharing, cqByName: map[string]*clusterQueue{}}
	var flavors map[string]bool
	s.flavorLabels = map[string]map[string]string{}
	if c.ResourceFlavors != nil {
		flavors = map[string]bool{}
		for _, rf := range c.ResourceFlavors {
			flavors[rf.Name] = true
			s.flavorLabels[rf.Name] = rf.Spec.NodeLabels
		}
	}
	cohorts := map[string]*cohort{}
	for i := range c.ClusterQueues {
		cq := newClusterQueue(&c.ClusterQueues[i], m.queue(&c.ClusterQueues[i]), flavors)
		if _, dup := s.cqByName[cq.name]; dup {
			continue
		}
		s.cqByName[cq.name] = cq
		s.cqs = append(s.cqs, cq)
		if name := c.ClusterQueues[i].Spec.CohortName; name != "" {
			co := cohorts[name]
			if co == nil {
				co = &cohort{name: name, subtreeQuota: quantities{}}
				cohorts[name] = co
				s.cohorts = append(s.cohorts, co)
			}
			cq.cohort = co
			co.cqs = append(co.cqs, cq)
		}
	}
	slices.SortFunc(s.cqs, func(a, b *clusterQueue) int { return cmp.Compare(a.name, b.name) })
	slices.SortFunc(s.cohorts, func(a, b *cohort) int { return cmp.Compare(a.name, b.name) })
	for _, co := range s.cohorts {
		slices.SortFunc(co.cqs, func(a, b *clusterQueue) int { return cmp.Compare(a.name, b.name) })
		for _, cq := range co.cqs {
			for fr, q := range cq.quotas {
				co.subtreeQuota[fr] += q.nominal - cq.localQuota(fr)
			}
		}
		co.lendable = map[corev1.ResourceName]int64{}
		for fr, v := range co.subtreeQuota {
			co.lendable[fr.resource] += v
		}
	}
	s.live = newLedger(s)
	s.addWorkloads(c, m)
	s.applyAssumptions(c)
	return s
}

func newClusterQueue(api *kueue.ClusterQueue, model *queueModel, flavors map[string]bool) *clusterQueue {
	cq := &clusterQueue{
		name:                api.Name,
		active:              api.DeletionTimestamp == nil,
		groups:              model.groups,
		quotas:              model.quotas,
		frs:                 model.frs,
		withinClusterQueue:  kueue.PreemptionNever,
		reclaimWithinCohort: kueue.PreemptionNever,
		borrowWithinCohort:  kueue.PreemptionNever,
		fairWeight:          1,
	}
	if p := api.Spec.StopPolicy; p != nil && *p != kueue.StopPolicyNone && *p != "" {
		cq.active = false
		cq.drain = *p == stopPolicyHoldAndDrain
	}
	if p := api.Spec.Preemption; p != nil {
		cq.withinClusterQueue = cmp.Or(p.WithinClusterQueue, kueue.PreemptionNever)
		cq.reclaimWithinCohort = cmp.Or(p.ReclaimWithinCohort, kueue.PreemptionNever)
		if p.BorrowWithinCohort != nil {
			cq.borrowWithinCohort = cmp.Or(p.BorrowWithinCohort.Policy, kueue.PreemptionNever)
		}
	}
	if fs := api.Spec.FairSharing; fs != nil && fs.Weight != nil {
		cq.fairWeight = fs.Weight.AsApproximateFloat64()
	}
	for _, g := range cq.groups {
		for _, f := range g.flavors {
			if flavors != nil && !flavors[f] {
				cq.active = false // Kueue: FlavorNotFound
			}
		}
	}
	return cq
}

func (s *state) addWorkloads(c Cluster, m *models) {
	localQueues := map[string]*kueue.LocalQueue{}
	for i := range c.LocalQueues {
		lq := &c.LocalQueues[i]
		localQueues[lq.Namespace+"/"+lq.Name] = lq
	}
	var classes map[string]int32
	if c.WorkloadPriorityClasses != nil {
		classes = map[string]int32{}
		for _, pc := range c.WorkloadPriorityClasses {
			classes[pc.Name] = pc.Value
		}
	}
	latest := time.Time{}
	for i := range c.Workloads {
		api := &c.Workloads[i]
		if conditionTrue(api, kueue.WorkloadFinished) || (api.Spec.Active != nil && !*api.Spec.Active) {
			continue
		}
		model := m.workload(api)
		w := s.newWorkload(api, model, classes)
		latest = maxTime(latest, w.created)
		lqStop := ""
		lq := localQueues[api.Namespace+"/"+api.Spec.QueueName]
		if lq != nil && lq.Spec.StopPolicy != nil && *lq.Spec.StopPolicy != kueue.StopPolicyNone {
			lqStop = *lq.Spec.StopPolicy
		}
		if a := api.Status.Admission; a != nil && conditionTrue(api, kueue.WorkloadQuotaReserved) && !conditionTrue(api, kueue.WorkloadEvicted) {
			if s.addAdmitted(w, api, model, lqStop) {
				latest = maxTime(latest, w.reservedAt)
			}
			continue
		}
		if lq != nil {
			s.addPending(w, lq.Spec.ClusterQueue, lqStop)
		}
	}
	s.clock = latest.Add(time.Second)
	s.numberAdmissions()
	for _, cq := range s.cqs {
		if cq.drain {
			for _, w := range cq.sortedAdmitted() {
				w.drain(kueue.WorkloadEvictedByClusterQueueStopped)
			}
		}
	}
	for _, w := range s.workloads {
		if w.preempted != nil && w.preempted.by == nil {
			s.release(w)
		}
	}
}

// numberAdmissions gives the initially admitted Workloads their seq.
func (s *state) numberAdmissions() {
	var admitted []*workload
	for _, w := range s.workloads {
		if w.admitted {
			admitted = append(admitted, w)
		}
	}
	slices.SortFunc(admitted, func(a, b *workload) int {
		return cmp.Or(a.reservedAt.Compare(b.reservedAt), cmp.Compare(b.uid, a.uid), cmp.Compare(b.key, a.key))
	})
	for i, w := range admitted {
		w.seq = int64(i + 1)
	}
	s.nextSeq = int64(len(admitted) + 1)
}

// addAdmitted adds a Workload that holds quota, unless its ClusterQueue is not given.
func (s *state) addAdmitted(w *workload, api *kueue.Workload, model *workloadModel, lqStop string) bool {
	cq := s.cqByName[api.Status.Admission.ClusterQueue]
	if cq == nil {
		return false
	}
	w.cq = cq
	if w.undetermined != nil && w.undetermined.Reason != UnknownPriorityClass {
		// Topology and node affinity only matter for a new admission.
		w.undetermined = nil
	}
	w.initiallyAdmitted = true
	w.setFlavors(model.flavors)
	w.usage = model.usage
	w.assigned = model.assigned
	w.reservedAt, _ = conditionTime(api, kueue.WorkloadQuotaReserved)
	s.workloads = append(s.workloads, w)
	s.reserve(w)
	if lqStop == stopPolicyHoldAndDrain {
		w.drain(kueue.WorkloadEvictedByLocalQueueStopped)
	}
	return true
}

// addPending queues a pending Workload in its LocalQueue's ClusterQueue; one with no
// ClusterQueue given is left out (Kueue keeps it pending), one that cannot be predicted or
// whose LocalQueue is stopped is not queued.
func (s *state) addPending(w *workload, clusterQueue, lqStop string) {
	cq := s.cqByName[clusterQueue]
	if cq == nil {
		return
	}
	w.cq = cq
	if cq.group(corev1.ResourcePods) != nil {
		// The pod sets are shared (models): these are copies.
		podSets := slices.Clone(w.podSets)
		for i := range podSets {
			podSets[i].total = maps.Clone(podSets[i].total)
			podSets[i].total[corev1.ResourcePods] = int64(podSets[i].count)
		}
		w.podSets = podSets
	}
	s.workloads = append(s.workloads, w)
	if w.undetermined == nil && lqStop == "" {
		cq.pending = append(cq.pending, w)
	}
}

// drain marks an admitted Workload evicted by a stop policy; addWorkloads releases its quota.
func (w *workload) drain(reason string) {
	if w.preempted == nil {
		w.preempted = &preemption{reason: reason}
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func (s *state) newWorkload(api *kueue.Workload, model *workloadModel, classes map[string]int32) *workload {
	w := &workload{
		ref:     WorkloadRef{Namespace: api.Namespace, Name: api.Name},
		uid:     string(api.UID),
		created: api.CreationTimestamp.Time,
		checks:  len(api.Status.AdmissionChecks) > 0,
	}
	w.key = w.ref.String()
	if api.Spec.Priority != nil {
		w.priority = *api.Spec.Priority
	}
	if ref := api.Spec.PriorityClassRef; ref != nil && isWorkloadPriorityClass(ref) {
		value, known := classes[ref.Name]
		switch {
		case known && s.version >= V0_19:
			// Kueue v0.19 propagates a class's value to the Workloads that reference it.
			w.priority = value
		case known:
		case api.Spec.Priority == nil:
			w.undetermined = &Undetermined{Workload: w.ref, Reason: UnknownPriorityClass,
				Detail: fmt.Sprintf("WorkloadPriorityClass %s is not given and the Workload has no priority", ref.Name)}
		}
	}
	w.podSets = model.podSets
	for _, ps := range w.podSets {
		if w.undetermined != nil {
			continue
		}
		switch {
		case ps.topology:
			w.undetermined = &Undetermined{Workload: w.ref, Reason: TopologyAwareScheduling, Detail: "pod set " + ps.name + " has a topology request"}
		case !affinitySupported(ps.affinity):
			w.undetermined = &Undetermined{Workload: w.ref, Reason: NodeAffinity, Detail: "pod set " + ps.name + " has a required node affinity the simulator does not evaluate"}
		}
	}
	return w
}

func isWorkloadPriorityClass(ref *kueue.PriorityClassRef) bool {
	return (ref.Group == "" || ref.Group == kueue.WorkloadPriorityClassGroup) &&
		(ref.Kind == "" || ref.Kind == kueue.KindWorkloadPriorityClass)
}

func reclaimed(api *kueue.Workload, name string) int32 {
	for _, r := range api.Status.ReclaimablePods {
		if r.Name == name {
			return r.Count
		}
	}
	return 0
}

func newPodSet(ps *kueue.PodSet, reclaimable int32) podSet {
	count := max(0, ps.Count-reclaimable)
	out := podSet{
		name:         ps.Name,
		count:        count,
		total:        map[corev1.ResourceName]int64{},
		nodeSelector: ps.Template.Spec.NodeSelector,
		minCount:     ps.MinCount != nil,
		topology:     ps.TopologyRequest.Requested(),
	}
	if a := ps.Template.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		out.affinity = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	}
	for name, q := range podRequests(&ps.Template.Spec) {
		v := max(0, amount(name, q))
		out.total[name] = v * int64(count)
	}
	return out
}

// podRequests is what one pod requests, as Kubernetes computes it for scheduling: the sum of
// the containers and restartable init containers (sidecars), or the largest init container
// with the sidecars started before it when that is more, plus the pod overhead. A container
// limit stands for a missing request, as Kueue's defaulting of the Workload does.
func podRequests(spec *corev1.PodSpec) corev1.ResourceList {
	total := corev1.ResourceList{}
	addTo := func(dst corev1.ResourceList, c *corev1.Container) {
		for name, q := range containerRequests(c) {
			v := dst[name]
			v.Add(q)
			dst[name] = v
		}
	}
	for i := range spec.Containers {
		addTo(total, &spec.Containers[i])
	}
	sidecars := corev1.ResourceList{}
	initMax := corev1.ResourceList{}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addTo(sidecars, c)
			continue
		}
		step := corev1.ResourceList{}
		for k, v := range sidecars {
			step[k] = v.DeepCopy()
		}
		addTo(step, c)
		for name, q := range step {
			if cur, ok := initMax[name]; !ok || q.Cmp(cur) > 0 {
				initMax[name] = q
			}
		}
	}
	for name, q := range sidecars {
		v := total[name]
		v.Add(q)
		total[name] = v
	}
	for name, q := range initMax {
		if cur, ok := total[name]; !ok || q.Cmp(cur) > 0 {
			total[name] = q
		}
	}
	for name, q := range spec.Overhead {
		v := total[name]
		v.Add(q)
		total[name] = v
	}
	return total
}

func containerRequests(c *corev1.Container) map[corev1.ResourceName]resource.Quantity {
	out := map[corev1.ResourceName]resource.Quantity{}
	for name, q := range c.Resources.Limits {
		out[name] = q
	}
	for name, q := range c.Resources.Requests {
		out[name] = q
	}
	return out
}

// admittedUsage is the quota an admitted Workload holds, from its admission: each pod set's
// resource usage on its flavors, scaled down by the pods that already finished.
func admittedUsage(api *kueue.Workload) ([]map[corev1.ResourceName]string, quantities) {
	usage := quantities{}
	var flavors []map[corev1.ResourceName]string
	counts := map[string]int32{}
	for _, ps := range api.Spec.PodSets {
		counts[ps.Name] = ps.Count
	}
	for _, psa := range api.Status.Admission.PodSetAssignments {
		flavors = append(flavors, psa.Flavors)
		count := counts[psa.Name]
		if psa.Count != nil {
			count = *psa.Count
		}
		after := max(0, counts[psa.Name]-reclaimed(api, psa.Name))
		for name, q := range psa.ResourceUsage {
			f, ok := psa.Flavors[name]
			if !ok {
				continue
			}
			v := amount(name, q)
			if after < count && count > 0 {
				v = v / int64(count) * int64(after)
			}
			usage[flavorResource{f, name}] += v
		}
	}
	return flavors, usage
}
