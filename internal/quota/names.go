// Package quota turns a hyperpod_compute_quota configuration into Kueue objects and back.
//
// It is the pure heart of the provider: plan-time defaults computed
// with exact rational arithmetic (Resolve, Defaults), plan-time validation (Validate), rendering
// of the ClusterQueue and ResourceFlavors (RenderClusterQueue, RenderResourceFlavor), and the
// reverse mapping used by read, drift detection and import (FromClusterQueue, SpecEqual,
// ManagedMetadataEqual). It imports neither Terraform nor client-go; the Terraform resource is a
// thin layer that converts its attribute values to Config and calls these functions.
package quota

import "strings"

// Identity of the provider on the objects it writes.
const (
	// FieldManager is the server-side apply field manager.
	FieldManager = "terraform-provider-hyperpod"
	// ManagedByValue is the value of LabelManagedBy on every object the provider writes.
	ManagedByValue = "terraform-provider-hyperpod"
)

// Label keys.
const (
	LabelManagedBy             = "app.kubernetes.io/managed-by"
	LabelQuotaAllocationID     = "sagemaker.amazonaws.com/quota-allocation-id"
	LabelSageMakerManagedQueue = "sagemaker.amazonaws.com/sagemaker-managed-queue"
	LabelInstanceType          = "node.kubernetes.io/instance-type"
)

// Annotations the provider writes on a ClusterQueue to keep what the spec cannot express, so
// that read and import reproduce the exact Terraform state (see RenderClusterQueue).
const (
	// AnnotationPrefix is owned by the provider: ManagedMetadataEqual treats every annotation
	// with this prefix as managed.
	AnnotationPrefix = "hyperpod.quotaworks.io/"
	// AnnotationName holds the quota's name attribute.
	AnnotationName = AnnotationPrefix + "name"
	// AnnotationDescription holds the description attribute (empty when there is none).
	AnnotationDescription = AnnotationPrefix + "description"
	// AnnotationConfiguration holds, as JSON, which attributes the user configured and their
	// values (format version 1, see configAnnotation).
	AnnotationConfiguration = AnnotationPrefix + "configuration"
)

// DefaultCohort is the cohort of every quota that does not name one.
const DefaultCohort = "hyperpod-cohort"

// Kubernetes resource names that ClusterQueues cover besides the accelerator resources.
const (
	ResourceCPU    = "cpu"
	ResourceMemory = "memory"
	ResourceEFA    = "vpc.amazonaws.com/efa"
	// MIGResourcePrefix + profile ("mig-1g.5gb") is the extended resource of a MIG partition.
	MIGResourcePrefix = "nvidia.com/"
)

// Allowed values of the enumerated attributes, and defaults.
const (
	ActivationEnabled  = "Enabled"
	ActivationDisabled = "Disabled"

	PreemptLowerPriority = "LowerPriority"
	PreemptNever         = "Never"

	StrategyLendAndBorrow = "LendAndBorrow"
	StrategyLend          = "Lend"
	StrategyDontLend      = "DontLend"

	DefaultActivationState  = ActivationEnabled
	DefaultPreemptTeamTasks = PreemptLowerPriority
	DefaultStrategy         = StrategyLendAndBorrow
	// DefaultBorrowLimit is the borrow_limit (percent) of a strategy that borrows.
	DefaultBorrowLimit int64 = 50
)

// Limits of the AWS CreateComputeQuota API model (SageMaker HyperPod task governance).
const (
	MaxResources       = 15
	MaxBorrowLimit     = 10000
	MaxFairShareWeight = 100
	// MaxAmount bounds count, accelerators, vcpu, memory_in_gib, efa and partition counts.
	MaxAmount = 10_000_000
	// MaxTeamLength is the longest team name (the AWS TeamName pattern allows 40).
	MaxTeamLength = 40
	// MaxNameLength and MaxDescriptionLength follow the AWS Name and Description fields.
	MaxNameLength        = 63
	MaxDescriptionLength = 1024
)

const nsPrefix = "hyperpod-ns-"

// NamespaceName is the team's namespace, "hyperpod-ns-<team>".
func NamespaceName(team string) string { return nsPrefix + team }

// LocalQueueName is the team's LocalQueue, "hyperpod-ns-<team>-localqueue".
func LocalQueueName(team string) string { return nsPrefix + team + "-localqueue" }

// ClusterQueueName is the team's ClusterQueue, "hyperpod-ns-<team>-clusterqueue".
func ClusterQueueName(team string) string { return nsPrefix + team + "-clusterqueue" }

// TeamFromClusterQueueName returns the team of a ClusterQueue named by ClusterQueueName.
func TeamFromClusterQueueName(name string) (string, bool) {
	t, ok := strings.CutPrefix(name, nsPrefix)
	if !ok {
		return "", false
	}
	t, ok = strings.CutSuffix(t, "-clusterqueue")
	return t, ok && t != ""
}

// MIGResourceName is the extended resource of a MIG profile: "mig-1g.5gb" -> "nvidia.com/mig-1g.5gb".
func MIGResourceName(profile string) string { return MIGResourcePrefix + profile }

// migProfileOf is the inverse of MIGResourceName.
func migProfileOf(resource string) (string, bool) {
	p, ok := strings.CutPrefix(resource, MIGResourcePrefix)
	if !ok || !strings.HasPrefix(p, "mig-") {
		return "", false
	}
	return p, true
}
