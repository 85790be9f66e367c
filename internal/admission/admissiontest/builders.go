// Package admissiontest builds Kueue objects for tests of the admission preview, with
// chainable builders in the manner of Kueue's pkg/util/testing:
//
//	admissiontest.MakeClusterQueue("a").Cohort("c").
//		ResourceGroup(admissiontest.MakeFlavorQuotas("ml.p5.48xlarge").Resource("nvidia.com/gpu", "8", "4").Obj()).Obj()
//	admissiontest.MakeWorkload("job-1", "ns-a").Queue("lq").Priority(100).Request("nvidia.com/gpu", "2").Obj()
//
// Quantities are Kubernetes quantity strings; an invalid one panics, as a test's typo should.
package admissiontest

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// Epoch is the creation time of a Workload built without Created: a fixed instant, so that
// tests do not depend on the clock.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// ClusterQueueWrapper builds a ClusterQueue.
type ClusterQueueWrapper struct{ cq kueue.ClusterQueue }

// MakeClusterQueue starts a ClusterQueue with the provider's preemption defaults:
// reclaimWithinCohort Any, borrowWithinCohort Never, withinClusterQueue LowerPriority, stopPolicy
// None, and a namespaceSelector that selects every namespace.
func MakeClusterQueue(name string) *ClusterQueueWrapper {
	none := kueue.StopPolicyNone
	return &ClusterQueueWrapper{cq: kueue.ClusterQueue{
		TypeMeta:   kueue.TypeMeta(kueue.KindClusterQueue),
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kueue.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{},
			Preemption: &kueue.ClusterQueuePreemption{
				ReclaimWithinCohort: kueue.PreemptionAny,
				BorrowWithinCohort:  &kueue.BorrowWithinCohort{Policy: kueue.PreemptionNever},
				WithinClusterQueue:  kueue.PreemptionLowerPriority,
			},
			StopPolicy: &none,
		},
	}}
}

// Obj returns the ClusterQueue.
func (w *ClusterQueueWrapper) Obj() kueue.ClusterQueue { return w.cq }

// Cohort sets spec.cohortName.
func (w *ClusterQueueWrapper) Cohort(name string) *ClusterQueueWrapper {
	w.cq.Spec.CohortName = name
	return w
}

// ResourceGroup appends a resource group with the given flavors; it covers every resource the
// flavors list, in order of first appearance.
func (w *ClusterQueueWrapper) ResourceGroup(flavors ...kueue.FlavorQuotas) *ClusterQueueWrapper {
	var covered []corev1.ResourceName
	for _, f := range flavors {
		for _, r := range f.Resources {
			if !slices.Contains(covered, r.Name) {
				covered = append(covered, r.Name)
			}
		}
	}
	w.cq.Spec.ResourceGroups = append(w.cq.Spec.ResourceGroups, kueue.ResourceGroup{CoveredResources: covered, Flavors: flavors})
	return w
}

// Preemption sets the three preemption policies.
func (w *ClusterQueueWrapper) Preemption(withinClusterQueue, reclaimWithinCohort, borrowWithinCohort string) *ClusterQueueWrapper {
	w.cq.Spec.Preemption = &kueue.ClusterQueuePreemption{
		ReclaimWithinCohort: reclaimWithinCohort,
		BorrowWithinCohort:  &kueue.BorrowWithinCohort{Policy: borrowWithinCohort},
		WithinClusterQueue:  withinClusterQueue,
	}
	return w
}

// StopPolicy sets spec.stopPolicy (None, Hold, HoldAndDrain).
func (w *ClusterQueueWrapper) StopPolicy(p string) *ClusterQueueWrapper {
	w.cq.Spec.StopPolicy = &p
	return w
}

// FairWeight sets spec.fairSharing.weight.
func (w *ClusterQueueWrapper) FairWeight(weight string) *ClusterQueueWrapper {
	q := resource.MustParse(weight)
	w.cq.Spec.FairSharing = &kueue.FairSharing{Weight: &q}
	return w
}

// NamespaceSelector sets spec.namespaceSelector to match the labels (key, value, ...); no
// labels leave it nil, which selects no namespace.
func (w *ClusterQueueWrapper) NamespaceSelector(labels ...string) *ClusterQueueWrapper {
	w.cq.Spec.NamespaceSelector = nil
	for i := 0; i+1 < len(labels); i += 2 {
		if w.cq.Spec.NamespaceSelector == nil {
			w.cq.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{}}
		}
		w.cq.Spec.NamespaceSelector.MatchLabels[labels[i]] = labels[i+1]
	}
	return w
}

// QueueingStrategy sets spec.queueingStrategy.
func (w *ClusterQueueWrapper) QueueingStrategy(s string) *ClusterQueueWrapper {
	w.cq.Spec.QueueingStrategy = s
	return w
}

// FlavorFungibility sets spec.flavorFungibility's whenCanBorrow and whenCanPreempt.
func (w *ClusterQueueWrapper) FlavorFungibility(whenCanBorrow, whenCanPreempt string) *ClusterQueueWrapper {
	w.cq.Spec.FlavorFungibility = &kueue.FlavorFungibility{WhenCanBorrow: whenCanBorrow, WhenCanPreempt: whenCanPreempt}
	return w
}

// AdmissionCheck adds an admission check that runs for every flavor.
func (w *ClusterQueueWrapper) AdmissionCheck(name string) *ClusterQueueWrapper {
	if w.cq.Spec.AdmissionChecksStrategy == nil {
		w.cq.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{}
	}
	w.cq.Spec.AdmissionChecksStrategy.AdmissionChecks = append(w.cq.Spec.AdmissionChecksStrategy.AdmissionChecks,
		kueue.AdmissionCheckStrategyRule{Name: name})
	return w
}

// AdmissionScope sets spec.admissionScope.admissionMode.
func (w *ClusterQueueWrapper) AdmissionScope(mode string) *ClusterQueueWrapper {
	w.cq.Spec.AdmissionScope = &kueue.AdmissionScope{AdmissionMode: mode}
	return w
}

// MakeCohort returns a Cohort object with the given parent ("" for none).
func MakeCohort(name, parent string) kueue.Cohort {
	return kueue.Cohort{TypeMeta: kueue.TypeMeta(kueue.KindCohort), ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kueue.CohortSpec{ParentName: parent}}
}

// Deleting marks the ClusterQueue as being deleted.
func (w *ClusterQueueWrapper) Deleting() *ClusterQueueWrapper {
	t := metav1.NewTime(Epoch)
	w.cq.DeletionTimestamp = &t
	return w
}

// FlavorQuotasWrapper builds one flavor's quotas.
type FlavorQuotasWrapper struct{ fq kueue.FlavorQuotas }

// MakeFlavorQuotas starts the quotas of the named flavor.
func MakeFlavorQuotas(flavor string) *FlavorQuotasWrapper {
	return &FlavorQuotasWrapper{fq: kueue.FlavorQuotas{Name: flavor}}
}

// Resource adds a resource with its nominal quota, then optionally its borrowingLimit and
// lendingLimit ("" leaves a limit unset).
func (w *FlavorQuotasWrapper) Resource(name string, nominal string, limits ...string) *FlavorQuotasWrapper {
	rq := kueue.ResourceQuota{Name: corev1.ResourceName(name), NominalQuota: resource.MustParse(nominal)}
	if len(limits) > 0 && limits[0] != "" {
		q := resource.MustParse(limits[0])
		rq.BorrowingLimit = &q
	}
	if len(limits) > 1 && limits[1] != "" {
		q := resource.MustParse(limits[1])
		rq.LendingLimit = &q
	}
	w.fq.Resources = append(w.fq.Resources, rq)
	return w
}

// Obj returns the flavor's quotas.
func (w *FlavorQuotasWrapper) Obj() kueue.FlavorQuotas { return w.fq }

// MakeResourceFlavor returns a ResourceFlavor selecting nodes with the given labels (key, value, ...).
func MakeResourceFlavor(name string, labels ...string) kueue.ResourceFlavor {
	rf := kueue.ResourceFlavor{TypeMeta: kueue.TypeMeta(kueue.KindResourceFlavor), ObjectMeta: metav1.ObjectMeta{Name: name}}
	for i := 0; i+1 < len(labels); i += 2 {
		if rf.Spec.NodeLabels == nil {
			rf.Spec.NodeLabels = map[string]string{}
		}
		rf.Spec.NodeLabels[labels[i]] = labels[i+1]
	}
	return rf
}

// MakeLocalQueue returns the LocalQueue namespace/name pointing at clusterQueue.
func MakeLocalQueue(name, namespace, clusterQueue string) kueue.LocalQueue {
	return kueue.LocalQueue{
		TypeMeta:   kueue.TypeMeta(kueue.KindLocalQueue),
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       kueue.LocalQueueSpec{ClusterQueue: clusterQueue},
	}
}

// MakePriorityClass returns a WorkloadPriorityClass.
func MakePriorityClass(name string, value int32) kueue.WorkloadPriorityClass {
	return kueue.WorkloadPriorityClass{
		TypeMeta:   kueue.TypeMeta(kueue.KindWorkloadPriorityClass),
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Value:      value,
	}
}

// WorkloadWrapper builds a Workload.
type WorkloadWrapper struct{ wl kueue.Workload }

// MakeWorkload starts a Workload created at Epoch with one pod set "main" of one pod and no requests.
func MakeWorkload(name, namespace string) *WorkloadWrapper {
	return &WorkloadWrapper{wl: kueue.Workload{
		TypeMeta:   kueue.TypeMeta(kueue.KindWorkload),
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, CreationTimestamp: metav1.NewTime(Epoch)},
		Spec:       kueue.WorkloadSpec{PodSets: []kueue.PodSet{MakePodSet("main", 1).Obj()}},
	}}
}

// Obj returns the Workload.
func (w *WorkloadWrapper) Obj() kueue.Workload { return w.wl }

// Queue sets spec.queueName, the LocalQueue in the Workload's namespace.
func (w *WorkloadWrapper) Queue(localQueue string) *WorkloadWrapper {
	w.wl.Spec.QueueName = localQueue
	return w
}

// Priority sets spec.priority.
func (w *WorkloadWrapper) Priority(p int32) *WorkloadWrapper {
	w.wl.Spec.Priority = &p
	return w
}

// PriorityClass references a WorkloadPriorityClass and sets spec.priority to value, as Kueue
// does when it creates the Workload.
func (w *WorkloadWrapper) PriorityClass(name string, value int32) *WorkloadWrapper {
	w.wl.Spec.PriorityClassRef = &kueue.PriorityClassRef{Group: kueue.WorkloadPriorityClassGroup, Kind: kueue.KindWorkloadPriorityClass, Name: name}
	return w.Priority(value)
}

// Created sets the creation time to Epoch plus offset.
func (w *WorkloadWrapper) Created(offset time.Duration) *WorkloadWrapper {
	w.wl.CreationTimestamp = metav1.NewTime(Epoch.Add(offset))
	return w
}

// Inactive sets spec.active to false.
func (w *WorkloadWrapper) Inactive() *WorkloadWrapper {
	f := false
	w.wl.Spec.Active = &f
	return w
}

// PodSets replaces the pod sets.
func (w *WorkloadWrapper) PodSets(ps ...kueue.PodSet) *WorkloadWrapper {
	w.wl.Spec.PodSets = ps
	return w
}

// Count sets the pod count of the first pod set.
func (w *WorkloadWrapper) Count(n int32) *WorkloadWrapper {
	w.wl.Spec.PodSets[0].Count = n
	return w
}

// Request sets a per-pod request of the first pod set's first container.
func (w *WorkloadWrapper) Request(name, qty string) *WorkloadWrapper {
	setRequest(&w.wl.Spec.PodSets[0], name, qty)
	return w
}

// Condition sets a condition (status True or False).
func (w *WorkloadWrapper) Condition(typ string, status metav1.ConditionStatus, reason string) *WorkloadWrapper {
	conds := w.wl.Status.Conditions
	conds = slices.DeleteFunc(conds, func(c metav1.Condition) bool { return c.Type == typ })
	w.wl.Status.Conditions = append(conds, metav1.Condition{Type: typ, Status: status, Reason: reason, LastTransitionTime: metav1.NewTime(Epoch)})
	return w
}

// Finished marks the Workload finished.
func (w *WorkloadWrapper) Finished() *WorkloadWrapper {
	return w.Condition(kueue.WorkloadFinished, metav1.ConditionTrue, "Succeeded")
}

// Admit sets status.admission and the QuotaReserved and Admitted conditions.
func (w *WorkloadWrapper) Admit(a kueue.Admission) *WorkloadWrapper {
	w.wl.Status.Admission = &a
	w.Condition(kueue.WorkloadQuotaReserved, metav1.ConditionTrue, "QuotaReserved")
	return w.Condition(kueue.WorkloadAdmitted, metav1.ConditionTrue, "Admitted")
}

// AdmitOn admits the Workload in clusterQueue with every requested resource of every pod set
// on flavor, each pod set's usage being its requests times its count.
func (w *WorkloadWrapper) AdmitOn(clusterQueue, flavor string) *WorkloadWrapper {
	a := kueue.Admission{ClusterQueue: clusterQueue}
	for _, ps := range w.wl.Spec.PodSets {
		psa := kueue.PodSetAssignment{Name: ps.Name, Flavors: map[corev1.ResourceName]string{}, ResourceUsage: corev1.ResourceList{}}
		count := ps.Count
		psa.Count = &count
		for _, c := range ps.Template.Spec.Containers {
			for name, q := range c.Resources.Requests {
				psa.Flavors[name] = flavor
				total := psa.ResourceUsage[name]
				per := q.DeepCopy()
				for range count {
					total.Add(per)
				}
				psa.ResourceUsage[name] = total
			}
		}
		a.PodSetAssignments = append(a.PodSetAssignments, psa)
	}
	return w.Admit(a)
}

// PodSetWrapper builds a pod set.
type PodSetWrapper struct{ ps kueue.PodSet }

// MakePodSet starts a pod set of count pods with one container and no requests.
func MakePodSet(name string, count int32) *PodSetWrapper {
	return &PodSetWrapper{ps: kueue.PodSet{
		Name:     name,
		Count:    count,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}},
	}}
}

// Obj returns the pod set.
func (w *PodSetWrapper) Obj() kueue.PodSet { return w.ps }

// Request sets a per-pod request of the first container.
func (w *PodSetWrapper) Request(name, qty string) *PodSetWrapper {
	setRequest(&w.ps, name, qty)
	return w
}

// MinCount allows partial admission down to n pods.
func (w *PodSetWrapper) MinCount(n int32) *PodSetWrapper {
	w.ps.MinCount = &n
	return w
}

// RequiredTopology asks for topology-aware scheduling at level.
func (w *PodSetWrapper) RequiredTopology(level string) *PodSetWrapper {
	w.ps.TopologyRequest = &kueue.PodSetTopologyRequest{Required: &level}
	return w
}

// NodeSelector adds a node selector label.
func (w *PodSetWrapper) NodeSelector(key, value string) *PodSetWrapper {
	if w.ps.Template.Spec.NodeSelector == nil {
		w.ps.Template.Spec.NodeSelector = map[string]string{}
	}
	w.ps.Template.Spec.NodeSelector[key] = value
	return w
}

func setRequest(ps *kueue.PodSet, name, qty string) {
	c := &ps.Template.Spec.Containers[0]
	if c.Resources.Requests == nil {
		c.Resources.Requests = corev1.ResourceList{}
	}
	c.Resources.Requests[corev1.ResourceName(name)] = resource.MustParse(qty)
}
