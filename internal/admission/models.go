package admission

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// models are the parts of a cluster's objects that a simulation only reads, converted once per
// Planner from the cluster as read and shared by every simulation it makes: a Workload's pod
// sets and the quota its admission holds, a ClusterQueue's resource groups and quotas. A plan's
// clusters after a change share all but the changed objects with the cluster as read (value
// copies share what their slices and pointers hold), so each simulation converts only what
// the change made anew; converting 4000 Workloads and 1000 ClusterQueues for every simulation
// was half of what one allocated.
//
// An object is found by what it points to: a Workload by its pod sets, admission and
// reclaimable pods, a ClusterQueue by its resource groups. That is the object's content only
// while nothing writes through those pointers, which the Planner's contract (the cluster as
// read must not change) guarantees for the cluster as read, whose memory the models keep
// alive, so no other object can come to have their addresses.
type models struct {
	workloads map[workloadKey]*workloadModel
	queues    map[queueKey]*queueModel
}

// workloadKey is what a Workload's model is made from.
type workloadKey struct {
	podSets     *kueue.PodSet
	nPodSets    int
	reclaimable *kueue.ReclaimablePod
	nReclaim    int
	admission   *kueue.Admission
}

// workloadModel is what newWorkload and addAdmitted make of a Workload's pod sets and
// admission. Nothing in it may be written: addPending copies the pod sets it adds pods to.
type workloadModel struct {
	podSets []podSet
	// Of the admission, when the Workload has one.
	flavors  []map[corev1.ResourceName]string
	usage    quantities
	assigned []PodSetFlavors
}

// queueKey is what a ClusterQueue's model is made from: Kueue ignores lending and borrowing
// limits outside a cohort.
type queueKey struct {
	groups   *kueue.ResourceGroup
	nGroups  int
	noCohort bool
}

// queueModel is what newClusterQueue makes of a ClusterQueue's resource groups. Nothing in it
// may be written.
type queueModel struct {
	groups []resourceGroup
	quotas map[flavorResource]quota
	frs    []flavorResource
}

// keyOfWorkload is the key of api's model; false when it has no pod sets to find it by.
func keyOfWorkload(api *kueue.Workload) (workloadKey, bool) {
	if len(api.Spec.PodSets) == 0 {
		return workloadKey{}, false
	}
	k := workloadKey{podSets: &api.Spec.PodSets[0], nPodSets: len(api.Spec.PodSets), admission: api.Status.Admission}
	if n := len(api.Status.ReclaimablePods); n > 0 {
		k.reclaimable, k.nReclaim = &api.Status.ReclaimablePods[0], n
	}
	return k, true
}

// keyOfQueue is the key of api's model; false when it has no resource groups to find it by.
func keyOfQueue(api *kueue.ClusterQueue) (queueKey, bool) {
	if len(api.Spec.ResourceGroups) == 0 {
		return queueKey{}, false
	}
	return queueKey{groups: &api.Spec.ResourceGroups[0], nGroups: len(api.Spec.ResourceGroups), noCohort: api.Spec.CohortName == ""}, true
}

// newModels converts the Workloads and ClusterQueues of c.
func newModels(c Cluster) *models {
	return &models{workloads: modelsOf(c.Workloads, keyOfWorkload, newWorkloadModel),
		queues: modelsOf(c.ClusterQueues, keyOfQueue, newQueueModel)}
}

// modelsOf converts each of objects once, by its key.
func modelsOf[A any, K comparable, M any](objects []A, keyOf func(*A) (K, bool), convert func(*A) *M) map[K]*M {
	out := make(map[K]*M, len(objects))
	for i := range objects {
		if k, ok := keyOf(&objects[i]); ok && out[k] == nil {
			out[k] = convert(&objects[i])
		}
	}
	return out
}

// sharedModel is api's model: the shared one when there is one, else one made for this
// simulation.
func sharedModel[A any, K comparable, M any](shared map[K]*M, api *A, keyOf func(*A) (K, bool), convert func(*A) *M) *M {
	if k, ok := keyOf(api); ok {
		if m := shared[k]; m != nil {
			return m
		}
	}
	return convert(api)
}

// workload is api's model, shared when m has it.
func (m *models) workload(api *kueue.Workload) *workloadModel {
	var shared map[workloadKey]*workloadModel
	if m != nil {
		shared = m.workloads
	}
	return sharedModel(shared, api, keyOfWorkload, newWorkloadModel)
}

// queue is api's model, shared when m has it.
func (m *models) queue(api *kueue.ClusterQueue) *queueModel {
	var shared map[queueKey]*queueModel
	if m != nil {
		shared = m.queues
	}
	return sharedModel(shared, api, keyOfQueue, newQueueModel)
}

func newWorkloadModel(api *kueue.Workload) *workloadModel {
	wm := &workloadModel{}
	for i := range api.Spec.PodSets {
		wm.podSets = append(wm.podSets, newPodSet(&api.Spec.PodSets[i], reclaimed(api, api.Spec.PodSets[i].Name)))
	}
	if api.Status.Admission == nil {
		return wm
	}
	wm.flavors, wm.usage = admittedUsage(api)
	for i, psa := range api.Status.Admission.PodSetAssignments {
		count := int32(0)
		if psa.Count != nil {
			count = *psa.Count
		} else if i < len(api.Spec.PodSets) {
			count = api.Spec.PodSets[i].Count
		}
		wm.assigned = append(wm.assigned, podSetFlavors(psa.Name, count, psa.Flavors))
	}
	// A simulation that appends to its Workload's assignment must not write here.
	wm.assigned = slices.Clip(wm.assigned)
	return wm
}

func newQueueModel(api *kueue.ClusterQueue) *queueModel {
	qm := &queueModel{quotas: map[flavorResource]quota{}}
	for _, g := range api.Spec.ResourceGroups {
		rg := resourceGroup{covered: slices.Clone(g.CoveredResources)}
		for _, f := range g.Flavors {
			rg.flavors = append(rg.flavors, f.Name)
			for _, r := range f.Resources {
				q := quota{nominal: amount(r.Name, r.NominalQuota)}
				if api.Spec.CohortName != "" {
					// Kueue ignores lending and borrowing limits outside a cohort.
					q.borrowingLimit, q.lendingLimit = quantityPtr(r.Name, r.BorrowingLimit), quantityPtr(r.Name, r.LendingLimit)
				}
				qm.quotas[flavorResource{f.Name, r.Name}] = q
			}
		}
		qm.groups = append(qm.groups, rg)
	}
	qm.frs = sortedFRs(qm.quotas)
	return qm
}
