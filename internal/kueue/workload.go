package kueue

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KindWorkload is the kind of a Workload.
const KindWorkload = "Workload"

// Workload condition types, and the reasons of the Evicted and Preempted conditions that the
// admission preview reads or predicts. Values as in Kueue v0.19.2 (the same in v0.15.0).
const (
	WorkloadQuotaReserved = "QuotaReserved"
	WorkloadAdmitted      = "Admitted"
	WorkloadEvicted       = "Evicted"
	WorkloadPreempted     = "Preempted"
	WorkloadFinished      = "Finished"

	// WorkloadEvictedByPreemption is the Evicted reason of a preempted workload.
	WorkloadEvictedByPreemption = "Preempted"
	// WorkloadEvictedByClusterQueueStopped is the Evicted reason under stopPolicy HoldAndDrain.
	WorkloadEvictedByClusterQueueStopped = "ClusterQueueStopped"
	// WorkloadEvictedByLocalQueueStopped is the Evicted reason when the LocalQueue's stopPolicy is HoldAndDrain.
	WorkloadEvictedByLocalQueueStopped = "LocalQueueStopped"

	// Reasons of the Preempted condition: the preemption rule that chose the workload.
	InClusterQueueReason                = "InClusterQueue"
	InCohortReclamationReason           = "InCohortReclamation"
	InCohortFairSharingReason           = "InCohortFairSharing"
	InCohortReclaimWhileBorrowingReason = "InCohortReclaimWhileBorrowing"
)

// Priority class references of a Workload: group and kind of a WorkloadPriorityClass and of a
// pod PriorityClass.
const (
	WorkloadPriorityClassGroup = Group
	PodPriorityClassGroup      = "scheduling.k8s.io"
	PodPriorityClassKind       = "PriorityClass"
)

// Workload is kueue.x-k8s.io/v1beta2 Workload: the unit of admission Kueue makes for a job.
type Workload struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WorkloadSpec   `json:"spec"`
	Status            WorkloadStatus `json:"status,omitempty"`
}

// WorkloadList is a list of Workloads.
type WorkloadList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Workload `json:"items"`
}

// WorkloadSpec is the part of a Workload's spec that decides its admission.
type WorkloadSpec struct {
	PodSets   []PodSet `json:"podSets"`
	QueueName string   `json:"queueName,omitempty"`
	// PriorityClassRef names the WorkloadPriorityClass (or pod PriorityClass) Priority was taken from.
	PriorityClassRef *PriorityClassRef `json:"priorityClassRef,omitempty"`
	// Priority is set by Kueue from the priority class when the Workload is created; nil is 0.
	Priority *int32 `json:"priority,omitempty"`
	// Active false keeps the Workload from being admitted; nil is true.
	Active *bool `json:"active,omitempty"`
	// PreemptionGates (Kueue v0.19) keep a Workload from preempting while any is closed.
	PreemptionGates []PreemptionGate `json:"preemptionGates,omitempty"`
}

// PriorityClassRef references a priority class by group, kind and name.
type PriorityClassRef struct {
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind,omitempty"`
	Name  string `json:"name,omitempty"`
}

// PreemptionGate names a gate on a Workload's preemptions.
type PreemptionGate struct {
	Name string `json:"name"`
}

// PodSet is a set of identical pods: Count pods of Template.
type PodSet struct {
	Name     string                 `json:"name,omitempty"`
	Template corev1.PodTemplateSpec `json:"template,omitempty"`
	Count    int32                  `json:"count"`
	// MinCount set allows partial admission with fewer pods.
	MinCount *int32 `json:"minCount,omitempty"`
	// TopologyRequest set asks for topology-aware scheduling.
	TopologyRequest *PodSetTopologyRequest `json:"topologyRequest,omitempty"`
}

// PodSetTopologyRequest is a pod set's topology request; the preview only needs to know it is there.
type PodSetTopologyRequest struct {
	Required      *string `json:"required,omitempty"`
	Preferred     *string `json:"preferred,omitempty"`
	Unconstrained *bool   `json:"unconstrained,omitempty"`
}

// Requested reports whether r asks for a topology: Kueue's job integrations write an empty
// request (naming only the pod index label) on every pod set, which asks for none.
func (r *PodSetTopologyRequest) Requested() bool {
	return r != nil && (r.Required != nil || r.Preferred != nil || (r.Unconstrained != nil && *r.Unconstrained))
}

// WorkloadStatus is the part of a Workload's status the preview reads.
type WorkloadStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Admission is set while the Workload holds quota in a ClusterQueue.
	Admission *Admission `json:"admission,omitempty"`
	// AdmissionChecks are the states of the ClusterQueue's admission checks.
	AdmissionChecks []AdmissionCheckState `json:"admissionChecks,omitempty"`
	// ReclaimablePods are pods of an admitted Workload that finished and give back their quota.
	ReclaimablePods []ReclaimablePod `json:"reclaimablePods,omitempty"`
}

// Admission is the ClusterQueue and flavors a Workload was admitted with.
type Admission struct {
	ClusterQueue      string             `json:"clusterQueue"`
	PodSetAssignments []PodSetAssignment `json:"podSetAssignments"`
}

// PodSetAssignment is the flavor of each resource of one pod set, and the quota it uses.
type PodSetAssignment struct {
	Name          string                         `json:"name"`
	Flavors       map[corev1.ResourceName]string `json:"flavors,omitempty"`
	ResourceUsage corev1.ResourceList            `json:"resourceUsage,omitempty"`
	// Count is the number of pods admitted; nil means the pod set's count.
	Count *int32 `json:"count,omitempty"`
}

// AdmissionCheckState is the state of one admission check of a Workload.
type AdmissionCheckState struct {
	Name  string `json:"name,omitempty"`
	State string `json:"state,omitempty"`
}

// ReclaimablePod is a count of a pod set's pods that no longer need quota.
type ReclaimablePod struct {
	Name  string `json:"name"`
	Count int32  `json:"count"`
}
