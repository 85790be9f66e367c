// Package quota turns a hyperpod_compute_quota configuration into Kueue objects and back.
//
// It is the pure heart of the provider: the plan-time pipeline (Plan: Validate, then Defaults
// with exact rational arithmetic, then CheckRanges), rendering of the ClusterQueue and
// ResourceFlavors (RenderClusterQueue, RenderResourceFlavor), and the reverse mapping used by
// read, drift detection and import (FromClusterQueue, SpecDrift, MetadataDrift). It imports
// neither Terraform nor client-go; the Terraform resource is a thin layer that converts its
// attribute values to Config and calls these functions.
package quota

import (
	"fmt"
	"regexp"
	"strings"
)

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
	// AnnotationPrefix is owned by the provider: a team namespace refuses user labels and
	// annotations with this prefix.
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

var (
	// NamePattern is the AWS compute quota Name pattern.
	NamePattern = regexp.MustCompile(`^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$`)
	// TeamPattern is the AWS TeamName pattern; teams are also at most MaxTeamLength characters.
	TeamPattern   = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	cohortPattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// NameRule explains the quota name rule in diagnostics.
const NameRule = "must be 1-63 letters, digits and hyphens, starting and ending with a letter or digit " +
	"(the AWS compute quota Name pattern)"

// TeamRule explains the team rule in diagnostics.
var TeamRule = fmt.Sprintf("must be 1-%d lower-case letters, digits and hyphens, starting and ending "+
	"with a letter or digit (the AWS TeamName pattern), e.g. \"ml-research\"; it names the namespace hyperpod-ns-<team>",
	MaxTeamLength)

// ValidTeam reports whether team follows TeamRule.
func ValidTeam(team string) bool {
	return len(team) <= MaxTeamLength && TeamPattern.MatchString(team)
}

var (
	nonNameChars = regexp.MustCompile(`[^a-zA-Z0-9-]+`)
	nonTeamChars = regexp.MustCompile(`[^a-z0-9-]+`)
)

func suggestName(s string) string {
	s = strings.Trim(nonNameChars.ReplaceAllString(s, "-"), "-")
	if len(s) > MaxNameLength {
		s = strings.TrimRight(s[:MaxNameLength], "-")
	}
	if s == "" {
		return "my-quota"
	}
	return s
}

func suggestTeam(s string) string {
	s = strings.Trim(nonTeamChars.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > MaxTeamLength {
		s = strings.TrimRight(s[:MaxTeamLength], "-")
	}
	if s == "" {
		return "my-team"
	}
	return s
}

// PriorityClassRule explains the name rule in diagnostics.
var PriorityClassRule = fmt.Sprintf("must be 1-%d lower-case letters, digits and hyphens, starting and ending with a "+
	"letter or digit (the AWS priority class name pattern), e.g. \"training\"; it names the Kueue "+
	"WorkloadPriorityClass <name>-priority", MaxPriorityClassNameLength)

// validPriorityClassName reports whether name follows PriorityClassRule.
func validPriorityClassName(name string) bool {
	return len(name) <= MaxPriorityClassNameLength && TeamPattern.MatchString(name)
}

// Limits of the AWS cluster scheduler config (SchedulerConfig.PriorityClasses).
const (
	MaxPriorityClasses = 10
	MaxPriorityWeight  = 100
	// MaxPriorityClassNameLength bounds a class name; the AWS pattern is the TeamName one.
	MaxPriorityClassNameLength = MaxTeamLength
	priorityClassSuffix        = "-priority"
)
