package sagemakeremulator

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The shapes below carry the member names of the SageMaker API model, which are the JSON keys
// on the wire. Optional numbers are pointers: the API tells an absent member from a zero.

// ComputeQuotaTarget is the team a compute quota allocates to.
type ComputeQuotaTarget struct {
	TeamName        *string `json:"TeamName,omitempty"`
	FairShareWeight *int32  `json:"FairShareWeight,omitempty"`
}

// AcceleratorPartitionConfig is a count of GPU partitions of one MIG profile.
type AcceleratorPartitionConfig struct {
	Type  string `json:"Type,omitempty"`
	Count *int32 `json:"Count,omitempty"`
}

// ComputeQuotaResourceConfig is the allocation of one instance type.
type ComputeQuotaResourceConfig struct {
	InstanceType         string                      `json:"InstanceType,omitempty"`
	Count                *int32                      `json:"Count,omitempty"`
	Accelerators         *int32                      `json:"Accelerators,omitempty"`
	VCpu                 *Float32                    `json:"VCpu,omitempty"`
	MemoryInGiB          *Float32                    `json:"MemoryInGiB,omitempty"`
	AcceleratorPartition *AcceleratorPartitionConfig `json:"AcceleratorPartition,omitempty"`
}

// Float32 is a member the API model types as a 32-bit float (VCpu and MemoryInGiB of
// API_ComputeQuotaResourceConfig.html): the API holds the float32 nearest the number sent,
// whatever digits it had, and answers with that float32's value. The answer is the float32
// widened to a double (1.4500000476837158 for 1.45), as a server that holds a float and writes
// doubles answers (emulator's choice: AWS documents no format); the SDK reads a double and
// narrows it, so it gets the same float32 as from the shortest decimal it sends (1.45).
type Float32 float32

// MarshalJSON writes the float32 widened to a double.
func (f Float32) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(f), 'g', -1, 64), nil
}

// UnmarshalJSON holds the float32 nearest the number.
func (f *Float32) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseFloat(string(b), 32)
	if err != nil { // not a number, or beyond the float32 range
		return &json.UnmarshalTypeError{Value: string(b), Type: reflect.TypeFor[float32]()}
	}
	*f = Float32(v)
	return nil
}

// ResourceSharingConfig says how a team lends and borrows idle compute.
type ResourceSharingConfig struct {
	Strategy             string                       `json:"Strategy,omitempty"`
	BorrowLimit          *int32                       `json:"BorrowLimit,omitempty"`
	AbsoluteBorrowLimits []ComputeQuotaResourceConfig `json:"AbsoluteBorrowLimits,omitempty"`
}

// ComputeQuotaConfig is what a compute quota allocates and how it shares it.
type ComputeQuotaConfig struct {
	ComputeQuotaResources []ComputeQuotaResourceConfig `json:"ComputeQuotaResources,omitempty"`
	ResourceSharingConfig *ResourceSharingConfig       `json:"ResourceSharingConfig,omitempty"`
	PreemptTeamTasks      string                       `json:"PreemptTeamTasks,omitempty"`
}

// PriorityClass is one task priority of a cluster scheduler config.
type PriorityClass struct {
	Name   *string `json:"Name,omitempty"`
	Weight *int32  `json:"Weight,omitempty"`
}

// SchedulerConfig is the cluster policy: task priorities and how idle compute is shared.
type SchedulerConfig struct {
	PriorityClasses     []PriorityClass `json:"PriorityClasses,omitempty"`
	FairShare           string          `json:"FairShare,omitempty"`
	IdleResourceSharing string          `json:"IdleResourceSharing,omitempty"`
}

// Tag is a resource tag as sent with a create.
type Tag struct {
	Key   *string `json:"Key,omitempty"`
	Value *string `json:"Value,omitempty"`
}

// Record is what compute quotas and cluster scheduler configs both carry.
type Record struct {
	ID          string
	ARN         string
	Name        string
	ClusterARN  string
	Description string
	// Version starts at 1; every accepted update adds one.
	Version int32
	// Status is one of the Status* constants.
	Status           string
	FailureReason    string
	CreationTime     time.Time
	LastModifiedTime time.Time
	Tags             []Tag
}

func (r *Record) record() *Record { return r }

// ComputeQuota is a stored compute quota (a "compute allocation" in the console).
type ComputeQuota struct {
	Record
	ActivationState string
	Target          ComputeQuotaTarget
	Config          ComputeQuotaConfig
}

// ClusterSchedulerConfig is a stored cluster policy.
type ClusterSchedulerConfig struct {
	Record
	Config SchedulerConfig
}

// The statuses of SchedulerResourceStatus
// (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeComputeQuota.html).
// The emulator never reports the RollbackFailed variants or Deleted: a deleted object is gone.
const (
	StatusCreating     = "Creating"
	StatusCreated      = "Created"
	StatusCreateFailed = "CreateFailed"
	StatusUpdating     = "Updating"
	StatusUpdated      = "Updated"
	StatusUpdateFailed = "UpdateFailed"
	StatusDeleting     = "Deleting"
	StatusDeleteFailed = "DeleteFailed"
)

// Enumerations of the API model (https://docs.aws.amazon.com/sagemaker/latest/APIReference/,
// pages API_ComputeQuotaConfig, API_ResourceSharingConfig, API_AcceleratorPartitionConfig,
// API_SchedulerConfig, API_ListComputeQuotas and API_ListClusterSchedulerConfigs).
var (
	activationStates        = []string{"Enabled", "Disabled"}
	preemptTeamTasks        = []string{"Never", "LowerPriority"}
	sharingStrategies       = []string{"Lend", "DontLend", "LendAndBorrow"}
	enabledDisabled         = []string{"Enabled", "Disabled"}
	sortOrders              = []string{"Ascending", "Descending"}
	quotaSortKeys           = []string{"Name", "CreationTime", "Status", "ClusterArn"}
	schedulerConfigSortKeys = []string{"Name", "CreationTime", "Status"}
	schedulerStatuses       = []string{
		"Creating", "CreateFailed", "CreateRollbackFailed", "Created",
		"Updating", "UpdateFailed", "UpdateRollbackFailed", "Updated",
		"Deleting", "DeleteFailed", "DeleteRollbackFailed", "Deleted",
	}
	migProfiles = []string{
		"mig-1g.5gb", "mig-1g.10gb", "mig-1g.18gb", "mig-1g.20gb", "mig-1g.23gb", "mig-1g.35gb",
		"mig-1g.45gb", "mig-1g.47gb", "mig-2g.10gb", "mig-2g.20gb", "mig-2g.35gb", "mig-2g.45gb",
		"mig-2g.47gb", "mig-3g.20gb", "mig-3g.40gb", "mig-3g.71gb", "mig-3g.90gb", "mig-3g.93gb",
		"mig-4g.20gb", "mig-4g.40gb", "mig-4g.71gb", "mig-4g.90gb", "mig-4g.93gb", "mig-7g.40gb",
		"mig-7g.80gb", "mig-7g.141gb", "mig-7g.180gb", "mig-7g.186gb",
	}
)

// pattern is a constraint's regular expression, anchored as the API reference pages print it.
type pattern struct {
	shown string
	re    *regexp.Regexp
}

func newPattern(shown string) pattern { return pattern{shown, regexp.MustCompile(shown)} }

// Patterns and lengths of the API model, as the API reference pages list them (e.g.
// https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateComputeQuota.html).
var (
	entityNamePattern  = newPattern(`^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$`)
	descriptionPattern = newPattern(`^[\p{L}\p{M}\p{Z}\p{S}\p{N}\p{P}]*$`)
	clusterARNPattern  = newPattern(`^arn:aws[a-z\-]*:sagemaker:[a-z0-9\-]*:[0-9]{12}:cluster/[a-z0-9]{12}$`)
	// TeamName and PriorityClass.Name share this pattern; it bounds the shape, not the length.
	teamNamePattern         = newPattern(`^[a-z0-9]([-a-z0-9]*[a-z0-9]){0,39}?$`)
	objectIDPattern         = newPattern(`^[a-z0-9]{12}$`)
	tagPattern              = newPattern(`^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$`)
	clusterNameOrARNPattern = newPattern(`^(arn:aws[a-z\-]*:sagemaker:[a-z0-9\-]*:[0-9]{12}:cluster/[a-z0-9]{12}|[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62})$`)
)

const (
	maxEntityName      = 63
	maxDescription     = 1024
	maxClusterARN      = 256
	maxQuotaResources  = 15 // ComputeQuotaResources and AbsoluteBorrowLimits alike
	maxAmount          = 10_000_000
	maxBorrowLimit     = 10_000 // the model's range; the member's text still says 1-500
	maxWeight          = 100    // FairShareWeight and PriorityClass.Weight
	maxPriorityClasses = 10
	maxTags            = 50
	maxTagKey          = 128
	maxTagValue        = 256
	maxNextToken       = 8192
	maxListResults     = 100
	maxFailureReason   = 1024
)

// violations collects input that breaks the API model's constraints, worded as SageMaker's
// ValidationException words them, e.g. "Value '...' at 'modelName' failed to satisfy
// constraint: Member must have length less than or equal to 63" (a real answer quoted in
// https://github.com/aws-samples/sagemaker-ml-workflow-with-apache-airflow/issues/3).
// Member paths are lowerCamelCase; a list element is "<list>.<n>.member" counting from 1.
type violations []string

func (v *violations) add(value any, path, constraint string) {
	shown := "null"
	if value != nil {
		shown = fmt.Sprintf("'%v'", value)
	}
	*v = append(*v, fmt.Sprintf("Value %s at '%s' failed to satisfy constraint: Member must %s", shown, path, constraint))
}

// err is the ValidationException for the collected violations, nil when there are none.
func (v violations) err() *apiError {
	switch len(v) {
	case 0:
		return nil
	case 1:
		return validationError("1 validation error detected: " + v[0])
	}
	return validationError(fmt.Sprintf("%d validation errors detected: %s", len(v), strings.Join(v, "; ")))
}

func (v *violations) required(present bool, path string) bool {
	if !present {
		v.add(nil, path, "not be null")
	}
	return present
}

func (v *violations) str(s, path string, minLen, maxLen int, p *pattern) {
	n := utf8.RuneCountInString(s)
	if n < minLen {
		v.add(s, path, fmt.Sprintf("have length greater than or equal to %d", minLen))
	}
	if maxLen > 0 && n > maxLen {
		v.add(s, path, fmt.Sprintf("have length less than or equal to %d", maxLen))
	}
	if p != nil && !p.re.MatchString(s) {
		v.add(s, path, "satisfy regular expression pattern: "+p.shown)
	}
}

func (v *violations) optionalStr(s *string, path string, minLen, maxLen int, p *pattern) {
	if s != nil {
		v.str(*s, path, minLen, maxLen, p)
	}
}

func (v *violations) enum(s, path string, allowed []string) {
	if s == "" {
		return
	}
	for _, a := range allowed {
		if s == a {
			return
		}
	}
	v.add(s, path, "satisfy enum value set: ["+strings.Join(allowed, ", ")+"]")
}

func inRange[N int32 | Float32](v *violations, n *N, path string, lo, hi N) {
	if n == nil {
		return
	}
	if *n < lo {
		v.add(*n, path, fmt.Sprintf("have value greater than or equal to %v", lo))
	}
	if *n > hi {
		v.add(*n, path, fmt.Sprintf("have value less than or equal to %v", hi))
	}
}

func (v *violations) listLen(n int, path string, maxLen int) {
	if n > maxLen {
		v.add(fmt.Sprintf("[%d items]", n), path, fmt.Sprintf("have length less than or equal to %d", maxLen))
	}
}

func member(list string, i int) string { return fmt.Sprintf("%s.%d.member", list, i+1) }

// checkTarget: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ComputeQuotaTarget.html
func (v *violations) checkTarget(t *ComputeQuotaTarget, path string) {
	if v.required(t.TeamName != nil, path+".teamName") {
		v.str(*t.TeamName, path+".teamName", 0, 0, &teamNamePattern)
	}
	inRange(v, t.FairShareWeight, path+".fairShareWeight", 0, maxWeight)
}

// checkQuotaConfig: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ComputeQuotaConfig.html
// and API_ResourceSharingConfig.html on the same site.
func (v *violations) checkQuotaConfig(c *ComputeQuotaConfig, path string) {
	v.checkResources(c.ComputeQuotaResources, path+".computeQuotaResources")
	v.enum(c.PreemptTeamTasks, path+".preemptTeamTasks", preemptTeamTasks)
	if s := c.ResourceSharingConfig; s != nil {
		sp := path + ".resourceSharingConfig"
		if v.required(s.Strategy != "", sp+".strategy") {
			v.enum(s.Strategy, sp+".strategy", sharingStrategies)
		}
		inRange(v, s.BorrowLimit, sp+".borrowLimit", 0, maxBorrowLimit)
		v.checkResources(s.AbsoluteBorrowLimits, sp+".absoluteBorrowLimits")
	}
}

// checkResources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ComputeQuotaResourceConfig.html
// and API_AcceleratorPartitionConfig.html on the same site.
func (v *violations) checkResources(rs []ComputeQuotaResourceConfig, path string) {
	v.listLen(len(rs), path, maxQuotaResources)
	for i := range rs {
		r, p := &rs[i], member(path, i)
		v.required(r.InstanceType != "", p+".instanceType")
		inRange(v, r.Count, p+".count", 0, maxAmount)
		inRange(v, r.Accelerators, p+".accelerators", 0, maxAmount)
		inRange(v, r.VCpu, p+".vCpu", 0, maxAmount)
		inRange(v, r.MemoryInGiB, p+".memoryInGiB", 0, maxAmount)
		if a := r.AcceleratorPartition; a != nil {
			if v.required(a.Type != "", p+".acceleratorPartition.type") {
				v.enum(a.Type, p+".acceleratorPartition.type", migProfiles)
			}
			if v.required(a.Count != nil, p+".acceleratorPartition.count") {
				inRange(v, a.Count, p+".acceleratorPartition.count", 0, maxAmount)
			}
		}
	}
}

// checkSchedulerConfig: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_SchedulerConfig.html
// and API_PriorityClass.html on the same site.
func (v *violations) checkSchedulerConfig(c *SchedulerConfig, path string) {
	v.listLen(len(c.PriorityClasses), path+".priorityClasses", maxPriorityClasses)
	for i := range c.PriorityClasses {
		pc, p := &c.PriorityClasses[i], member(path+".priorityClasses", i)
		if v.required(pc.Name != nil, p+".name") {
			v.str(*pc.Name, p+".name", 0, 0, &teamNamePattern)
		}
		if v.required(pc.Weight != nil, p+".weight") {
			inRange(v, pc.Weight, p+".weight", 0, maxWeight)
		}
	}
	v.enum(c.FairShare, path+".fairShare", enabledDisabled)
	v.enum(c.IdleResourceSharing, path+".idleResourceSharing", enabledDisabled)
}

// checkTags: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_Tag.html; AddTags
// requires the member, the creates do not.
func (v *violations) checkTags(tags []Tag, required bool) {
	if tags == nil {
		if required {
			v.required(false, "tags")
		}
		return
	}
	v.listLen(len(tags), "tags", maxTags)
	for i, t := range tags {
		p := member("tags", i)
		if v.required(t.Key != nil, p+".key") {
			v.str(*t.Key, p+".key", 1, maxTagKey, &tagPattern)
			if reservedTagKey(*t.Key) {
				v.add(*t.Key, p+".key", "not begin with the reserved prefix aws:")
			}
		}
		if v.required(t.Value != nil, p+".value") {
			v.str(*t.Value, p+".value", 0, maxTagValue, &tagPattern)
		}
	}
}

// checkName, checkDescription and checkClusterARN: the members Name, Description and
// ClusterArn of API_CreateComputeQuota.html and API_CreateClusterSchedulerConfig.html.
func (v *violations) checkName(name *string) {
	if v.required(name != nil, "name") {
		v.str(*name, "name", 1, maxEntityName, &entityNamePattern)
	}
}

func (v *violations) checkDescription(d *string) {
	v.optionalStr(d, "description", 0, maxDescription, &descriptionPattern)
}

func (v *violations) checkClusterARN(arn *string, required bool) {
	if arn == nil {
		if required {
			v.required(false, "clusterArn")
		}
		return
	}
	v.str(*arn, "clusterArn", 0, maxClusterARN, &clusterARNPattern)
}

// checkID: ComputeQuotaId (API_DescribeComputeQuota.html) and ClusterSchedulerConfigId
// (API_DescribeClusterSchedulerConfig.html) match ^[a-z0-9]{12}$.
func (v *violations) checkID(id *string, path string) {
	if v.required(id != nil, path) {
		v.str(*id, path, 0, 12, &objectIDPattern)
	}
}

// checkUpdated checks what names the object an update changes: its id (checkID) and the version
// it replaces, TargetVersion, required by UpdateComputeQuota and UpdateClusterSchedulerConfig.
func (v *violations) checkUpdated(id *string, path string, targetVersion *int32) {
	v.checkID(id, path)
	v.required(targetVersion != nil, "targetVersion")
}

// epochSeconds is a timestamp as awsJson1_1 carries it: seconds since the epoch, a JSON number
// with a fraction (the SDK reads it with smithytime.ParseEpochSeconds).
type epochSeconds time.Time

func (t epochSeconds) MarshalJSON() ([]byte, error) {
	ms := time.Time(t).UnixMilli()
	return []byte(strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64)), nil
}

func (t *epochSeconds) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*t = epochSeconds(time.UnixMilli(int64(math.Round(f * 1000))))
	return nil
}

func epoch(t time.Time) *epochSeconds {
	if t.IsZero() {
		return nil
	}
	e := epochSeconds(t)
	return &e
}
