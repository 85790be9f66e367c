// Package kueue holds the subset of the Kueue v1beta2 API that the provider reads and writes.
//
// The provider talks to one API version only: where Kueue's conversion webhook is not
// registered (ResourceFlavors never have one), the API server converts by rewriting apiVersion,
// so a field renamed between v1beta1 and v1beta2 would be silently dropped by a mixed reader.
// The types are declared here rather than imported from sigs.k8s.io/kueue so the provider does
// not inherit Kueue's controller dependencies; field names and JSON tags follow Kueue v0.19.2
// and are the same in v0.15.0 and v0.17.0.
package kueue

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group and Version of the Kueue API the provider uses.
const (
	Group   = "kueue.x-k8s.io"
	Version = "v1beta2"
)

// Where Kueue's installations (its manifests, its Helm chart, HyperPod's task-governance add-on)
// run the manager: a Deployment, whose image tag is the manager's release.
const (
	ManagerNamespace  = "kueue-system"
	ManagerDeployment = "kueue-controller-manager"
	// ManagerConfigMap holds the manager's Configuration document under ManagerConfigKey
	// (Kueue's config/components/manager, named with the install's "kueue-" prefix).
	ManagerConfigMap = "kueue-manager-config"
	ManagerConfigKey = "controller_manager_config.yaml"
)

// GroupVersion is kueue.x-k8s.io/v1beta2.
var GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// Resources (plural names) of the Kueue kinds the provider touches.
var (
	ClusterQueues   = GroupVersion.WithResource("clusterqueues")
	LocalQueues     = GroupVersion.WithResource("localqueues")
	ResourceFlavors = GroupVersion.WithResource("resourceflavors")
	Workloads       = GroupVersion.WithResource("workloads")
	// WorkloadPriorityClasses are cluster-scoped; jobs name one with the label PriorityClassLabel.
	WorkloadPriorityClasses = GroupVersion.WithResource("workloadpriorityclasses")
	// Cohorts are cluster-scoped and read only (by the admission preview).
	Cohorts = GroupVersion.WithResource("cohorts")
)

// PriorityClassLabel is the job label that names a WorkloadPriorityClass.
const PriorityClassLabel = "kueue.x-k8s.io/priority-class"

// Kinds.
const (
	KindClusterQueue   = "ClusterQueue"
	KindLocalQueue     = "LocalQueue"
	KindResourceFlavor = "ResourceFlavor"
	KindCohort         = "Cohort"

	KindWorkloadPriorityClass = "WorkloadPriorityClass"
)

// TypeMeta is the apiVersion and kind of a Kueue object of kind.
func TypeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: kind}
}

// ClusterQueue is kueue.x-k8s.io/v1beta2 ClusterQueue.
type ClusterQueue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ClusterQueueSpec `json:"spec,omitempty"`
	// Status is what Kueue reports; read only (a pointer, so writes never carry it).
	Status *ClusterQueueStatus `json:"status,omitempty"`
}

// ClusterQueueStatus is the part of Kueue's ClusterQueue status the provider reads.
type ClusterQueueStatus struct {
	// FlavorsReservation is the quota reserved by workloads (admitted or with quota reserved).
	FlavorsReservation []FlavorUsage `json:"flavorsReservation,omitempty"`
	// FlavorsUsage is the quota used by admitted workloads.
	FlavorsUsage       []FlavorUsage      `json:"flavorsUsage,omitempty"`
	PendingWorkloads   int32              `json:"pendingWorkloads,omitempty"`
	ReservingWorkloads int32              `json:"reservingWorkloads,omitempty"`
	AdmittedWorkloads  int32              `json:"admittedWorkloads,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	// FairSharing is reported only by a manager that runs with fair sharing enabled.
	FairSharing *FairSharingStatus `json:"fairSharing,omitempty"`
}

// FairSharingStatus is a ClusterQueue's share of its cohort under fair sharing.
type FairSharingStatus struct {
	WeightedShare int64 `json:"weightedShare"`
}

// Flavor is one flavor's entries, one per resource: its quotas in a ClusterQueue's spec
// (FlavorQuotas) and its usage in the status (FlavorUsage), which Kueue declares alike.
type Flavor[R ResourceQuota | ResourceUsage] struct {
	Name      string `json:"name"`
	Resources []R    `json:"resources,omitempty"`
}

// FlavorUsage is one flavor's usage in a ClusterQueue status.
type FlavorUsage = Flavor[ResourceUsage]

// ResourceUsage is one resource's usage: the total, and how much of it is borrowed.
type ResourceUsage struct {
	Name     corev1.ResourceName `json:"name"`
	Total    resource.Quantity   `json:"total,omitempty"`
	Borrowed resource.Quantity   `json:"borrowed,omitempty"`
}

// ClusterQueueSpec holds the fields the provider manages, and fields it only reads for the
// admission preview (QueueingStrategy, FlavorFungibility, AdmissionChecksStrategy,
// AdmissionScope): the renderer leaves those zero, and omitempty keeps them out of what a
// server-side apply sends, so the provider never claims them.
type ClusterQueueSpec struct {
	ResourceGroups []ResourceGroup `json:"resourceGroups,omitempty"`
	CohortName     string          `json:"cohortName,omitempty"`
	// NamespaceSelector: nil selects no namespace at all, an empty selector every namespace.
	NamespaceSelector *metav1.LabelSelector   `json:"namespaceSelector,omitempty"`
	Preemption        *ClusterQueuePreemption `json:"preemption,omitempty"`
	StopPolicy        *string                 `json:"stopPolicy,omitempty"`
	FairSharing       *FairSharing            `json:"fairSharing,omitempty"`

	// QueueingStrategy is BestEffortFIFO (the API server's default) or StrictFIFO. Read only.
	QueueingStrategy string `json:"queueingStrategy,omitempty"`
	// FlavorFungibility is how the flavor search goes on past a flavor that needs borrowing or
	// preemption. Read only.
	FlavorFungibility *FlavorFungibility `json:"flavorFungibility,omitempty"`
	// AdmissionChecksStrategy names the admission checks a Workload must pass. Read only.
	AdmissionChecksStrategy *AdmissionChecksStrategy `json:"admissionChecksStrategy,omitempty"`
	// AdmissionScope opts the queue into admission fair sharing. Read only.
	AdmissionScope *AdmissionScope `json:"admissionScope,omitempty"`
}

// The queueing strategies (ClusterQueueSpec.QueueingStrategy).
const (
	QueueingStrategyBestEffortFIFO = "BestEffortFIFO"
	QueueingStrategyStrictFIFO     = "StrictFIFO"
)

// FlavorFungibility is a ClusterQueue's spec.flavorFungibility.
type FlavorFungibility struct {
	WhenCanBorrow  string `json:"whenCanBorrow,omitempty"`
	WhenCanPreempt string `json:"whenCanPreempt,omitempty"`
	// Preference (BorrowingOverPreemption, PreemptionOverBorrowing) may be set only when both
	// policies are TryNextFlavor.
	Preference *string `json:"preference,omitempty"`
}

// The flavorFungibility policies. v1beta2 names MayStopSearch what v1beta1 calls Borrow (in
// whenCanBorrow) and Preempt (in whenCanPreempt); a v1beta1 object read as v1beta2 without
// Kueue's conversion webhook keeps the old names. The API server's defaults are whenCanBorrow
// MayStopSearch and whenCanPreempt TryNextFlavor.
const (
	FungibilityMayStopSearch = "MayStopSearch"
	FungibilityTryNextFlavor = "TryNextFlavor"
	FungibilityBorrow        = "Borrow"
	FungibilityPreempt       = "Preempt"
)

// AdmissionChecksStrategy lists the admission checks of a ClusterQueue.
type AdmissionChecksStrategy struct {
	AdmissionChecks []AdmissionCheckStrategyRule `json:"admissionChecks,omitempty"`
}

// AdmissionCheckStrategyRule is one admission check and the flavors it runs for (all when empty).
type AdmissionCheckStrategyRule struct {
	Name      string   `json:"name"`
	OnFlavors []string `json:"onFlavors,omitempty"`
}

// AdmissionScope is a ClusterQueue's spec.admissionScope.
type AdmissionScope struct {
	// AdmissionMode is UsageBasedAdmissionFairSharing or NoAdmissionFairSharing.
	AdmissionMode string `json:"admissionMode,omitempty"`
}

// AdmissionModeUsageBased orders a queue's Workloads by their LocalQueues' past usage, when the
// manager runs with admission fair sharing.
const AdmissionModeUsageBased = "UsageBasedAdmissionFairSharing"

// Object is a Kueue object that the provider reads no status of: its metadata and its spec.
type Object[Spec CohortSpec | LocalQueueSpec | ResourceFlavorSpec] struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec `json:"spec,omitempty"`
}

// Cohort is kueue.x-k8s.io/v1beta2 Cohort: a cohort given as an object, which may have a parent
// cohort (a hierarchy) and quotas of its own. Kueue v0.15 to v0.19 serve it as v1beta2.
type Cohort = Object[CohortSpec]

// CohortSpec is a Cohort's parent, quotas and fair-sharing weight.
type CohortSpec struct {
	ParentName     string          `json:"parentName,omitempty"`
	ResourceGroups []ResourceGroup `json:"resourceGroups,omitempty"`
	FairSharing    *FairSharing    `json:"fairSharing,omitempty"`
}

// ResourceGroup is a set of resources covered by the same flavors.
type ResourceGroup struct {
	CoveredResources []corev1.ResourceName `json:"coveredResources,omitempty"`
	Flavors          []FlavorQuotas        `json:"flavors,omitempty"`
}

// FlavorQuotas holds the quotas of one flavor for every covered resource.
type FlavorQuotas = Flavor[ResourceQuota]

// ResourceQuota is the quota of one resource in one flavor.
type ResourceQuota struct {
	Name           corev1.ResourceName `json:"name,omitempty"`
	NominalQuota   resource.Quantity   `json:"nominalQuota"`
	BorrowingLimit *resource.Quantity  `json:"borrowingLimit,omitempty"`
	LendingLimit   *resource.Quantity  `json:"lendingLimit,omitempty"`
}

// ClusterQueuePreemption configures preemption.
type ClusterQueuePreemption struct {
	ReclaimWithinCohort string              `json:"reclaimWithinCohort,omitempty"`
	BorrowWithinCohort  *BorrowWithinCohort `json:"borrowWithinCohort,omitempty"`
	WithinClusterQueue  string              `json:"withinClusterQueue,omitempty"`
}

// BorrowWithinCohort configures preemption while borrowing.
type BorrowWithinCohort struct {
	Policy string `json:"policy,omitempty"`
}

// The preemption policies (ClusterQueuePreemption, BorrowWithinCohort) and stop policies
// (ClusterQueueSpec.StopPolicy) the provider writes.
const (
	PreemptionNever         = "Never"
	PreemptionLowerPriority = "LowerPriority"
	PreemptionAny           = "Any"

	StopPolicyNone = "None"
	StopPolicyHold = "Hold"
)

// FairSharing holds the fair-sharing weight.
type FairSharing struct {
	Weight *resource.Quantity `json:"weight,omitempty"`
}

// LocalQueue is kueue.x-k8s.io/v1beta2 LocalQueue.
type LocalQueue = Object[LocalQueueSpec]

// LocalQueueSpec points a namespace's queue at a ClusterQueue. clusterQueue is immutable.
type LocalQueueSpec struct {
	ClusterQueue string  `json:"clusterQueue,omitempty"`
	StopPolicy   *string `json:"stopPolicy,omitempty"`
}

// ResourceFlavor is kueue.x-k8s.io/v1beta2 ResourceFlavor.
type ResourceFlavor = Object[ResourceFlavorSpec]

// ResourceFlavorSpec selects the nodes of a flavor.
type ResourceFlavorSpec struct {
	NodeLabels map[string]string `json:"nodeLabels,omitempty"`
}

// WorkloadPriorityClass is kueue.x-k8s.io/v1beta2 WorkloadPriorityClass: a priority value that
// workloads take from the label PriorityClassLabel when they are created. It has no spec.
type WorkloadPriorityClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Value is required by the CRD, so a zero value is written too.
	Value int32 `json:"value"`
	// Description is left to other tools: the provider never sets it.
	Description string `json:"description,omitempty"`
}
