package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Models of every schema in the provider, kept together so the shapes are easy to compare. The
// tfsdk tags are the only place attribute names are written: schemas list model fields
// (attributesOf), and attribute types come from the fields (attrTypesOf).

type providerModel struct {
	ConfigPath            types.String  `tfsdk:"config_path"`
	ConfigPaths           types.List    `tfsdk:"config_paths" elem:"string"`
	ConfigContext         types.String  `tfsdk:"config_context"`
	ConfigContextAuthInfo types.String  `tfsdk:"config_context_auth_info"`
	ConfigContextCluster  types.String  `tfsdk:"config_context_cluster"`
	Host                  types.String  `tfsdk:"host"`
	Token                 types.String  `tfsdk:"token"`
	ClusterCACertificate  types.String  `tfsdk:"cluster_ca_certificate"`
	ClientCertificate     types.String  `tfsdk:"client_certificate"`
	ClientKey             types.String  `tfsdk:"client_key"`
	Insecure              types.Bool    `tfsdk:"insecure"`
	TLSServerName         types.String  `tfsdk:"tls_server_name"`
	ProxyURL              types.String  `tfsdk:"proxy_url"`
	QPS                   types.Float64 `tfsdk:"qps"`
	Burst                 types.Int64   `tfsdk:"burst"`
	InstanceTypes         types.Map     `tfsdk:"instance_types" model:"instanceTypeOverrideModel"`
	Exec                  types.Object  `tfsdk:"exec" model:"execModel"`
	Retry                 types.Object  `tfsdk:"retry" model:"retryModel"`
	TaskGovernance        types.Object  `tfsdk:"task_governance" model:"taskGovernanceModel"`
	AdmissionPreview      types.Bool    `tfsdk:"admission_preview"`
}

type taskGovernanceModel struct {
	ClusterARN             types.String `tfsdk:"cluster_arn"`
	Region                 types.String `tfsdk:"region"`
	Endpoint               types.String `tfsdk:"endpoint"`
	STSEndpoint            types.String `tfsdk:"sts_endpoint"`
	Profile                types.String `tfsdk:"profile"`
	SharedConfigFiles      types.List   `tfsdk:"shared_config_files" elem:"string"`
	SharedCredentialsFiles types.List   `tfsdk:"shared_credentials_files" elem:"string"`
	AccessKey              types.String `tfsdk:"access_key"`
	SecretKey              types.String `tfsdk:"secret_key"`
	Token                  types.String `tfsdk:"token"`
	AssumeRole             types.Object `tfsdk:"assume_role" model:"assumeRoleModel"`
	DefaultTags            types.Object `tfsdk:"default_tags" model:"defaultTagsModel"`
}

// defaultTagsModel is the tags every tagged resource of the provider carries unless it sets the
// key itself, as the aws provider's default_tags.
type defaultTagsModel struct {
	Tags types.Map `tfsdk:"tags" elem:"string"`
}

type assumeRoleModel struct {
	RoleARN           types.String `tfsdk:"role_arn"`
	SessionName       types.String `tfsdk:"session_name"`
	ExternalID        types.String `tfsdk:"external_id"`
	Duration          types.String `tfsdk:"duration"`
	Policy            types.String `tfsdk:"policy"`
	PolicyARNs        types.List   `tfsdk:"policy_arns" elem:"string"`
	Tags              types.Map    `tfsdk:"tags" elem:"string"`
	TransitiveTagKeys types.List   `tfsdk:"transitive_tag_keys" elem:"string"`
	SourceIdentity    types.String `tfsdk:"source_identity"`
}

type instanceTypeCapacityModel struct {
	InstanceType types.String `tfsdk:"instance_type"`
	instanceTypeFiguresModel
	Source types.String `tfsdk:"source"`

	NodeCount            types.Int64 `tfsdk:"node_count"`
	SchedulableNodeCount types.Int64 `tfsdk:"schedulable_node_count"`
	NotReadyNodeCount    types.Int64 `tfsdk:"not_ready_node_count"`
	UnhealthyNodeCounts  types.Map   `tfsdk:"unhealthy_node_counts" elem:"int64"`

	TotalAccelerators types.Int64   `tfsdk:"total_accelerators"`
	TotalVCPU         types.Float64 `tfsdk:"total_vcpu"`
	TotalMemoryInGiB  types.Float64 `tfsdk:"total_memory_in_gib"`

	AllocatedAccelerators types.Int64   `tfsdk:"allocated_accelerators"`
	AllocatedVCPU         types.Float64 `tfsdk:"allocated_vcpu"`
	AllocatedMemoryInGiB  types.Float64 `tfsdk:"allocated_memory_in_gib"`

	UnallocatedAccelerators types.Int64   `tfsdk:"unallocated_accelerators"`
	UnallocatedVCPU         types.Float64 `tfsdk:"unallocated_vcpu"`
	UnallocatedMemoryInGiB  types.Float64 `tfsdk:"unallocated_memory_in_gib"`

	SchedulableAccelerators types.Int64   `tfsdk:"schedulable_accelerators"`
	SchedulableVCPU         types.Float64 `tfsdk:"schedulable_vcpu"`
	SchedulableMemoryInGiB  types.Float64 `tfsdk:"schedulable_memory_in_gib"`

	UnallocatedSchedulableAccelerators types.Int64   `tfsdk:"unallocated_schedulable_accelerators"`
	UnallocatedSchedulableVCPU         types.Float64 `tfsdk:"unallocated_schedulable_vcpu"`
	UnallocatedSchedulableMemoryInGiB  types.Float64 `tfsdk:"unallocated_schedulable_memory_in_gib"`
}

type computeQuotaModel struct {
	ID               types.String `tfsdk:"id"`
	Name             types.String `tfsdk:"name"`
	Description      types.String `tfsdk:"description"`
	Team             types.String `tfsdk:"team"`
	ActivationState  types.String `tfsdk:"activation_state"`
	PreemptTeamTasks types.String `tfsdk:"preempt_team_tasks"`
	FairShareWeight  types.Int64  `tfsdk:"fair_share_weight"`
	Cohort           types.String `tfsdk:"cohort"`
	ResourceSharing  types.Object `tfsdk:"resource_sharing" model:"sharingModel"`
	Resources        types.List   `tfsdk:"resources" model:"resourceEntryModel"`
	ClusterQueueName types.String `tfsdk:"cluster_queue_name"`
	QuotaID          types.String `tfsdk:"quota_id"`
	tagsModel
	storeRecordModel
	OwnerID  types.String   `tfsdk:"owner_id"`
	Drift    types.List     `tfsdk:"drift" elem:"string"`
	Timeouts timeouts.Value `tfsdk:"timeouts" model:"timeoutsModel"`
}

// tagsModel is a tagged resource's tags: its own, and all it carries (tags_all: its own merged
// over the provider's default tags).
type tagsModel struct {
	Tags    types.Map `tfsdk:"tags" elem:"string"`
	TagsAll types.Map `tfsdk:"tags_all" elem:"string"`
}

// storeRecordModel is what a store that assigns ids (the SageMaker API) records of an object besides
// its content; null on a store that records none of it.
type storeRecordModel struct {
	ARN     types.String `tfsdk:"arn"`
	Version types.Int64  `tfsdk:"version"`
	Status  types.String `tfsdk:"status"`
}

type teamNamespaceModel struct {
	ID               types.String   `tfsdk:"id"`
	Team             types.String   `tfsdk:"team"`
	Labels           types.Map      `tfsdk:"labels" elem:"string"`
	Annotations      types.Map      `tfsdk:"annotations" elem:"string"`
	ForceDestroy     types.Bool     `tfsdk:"force_destroy"`
	Namespace        types.String   `tfsdk:"namespace"`
	LocalQueueName   types.String   `tfsdk:"local_queue_name"`
	ClusterQueueName types.String   `tfsdk:"cluster_queue_name"`
	OwnerID          types.String   `tfsdk:"owner_id"`
	Drift            types.List     `tfsdk:"drift" elem:"string"`
	Timeouts         timeouts.Value `tfsdk:"timeouts" model:"timeoutsModel"`
}

type teamUsageModel struct {
	Team               types.String `tfsdk:"team"`
	ClusterQueueName   types.String `tfsdk:"cluster_queue_name"`
	Active             types.Bool   `tfsdk:"active"`
	ActiveReason       types.String `tfsdk:"active_reason"`
	ActiveMessage      types.String `tfsdk:"active_message"`
	AdmittedWorkloads  types.Int64  `tfsdk:"admitted_workloads"`
	PendingWorkloads   types.Int64  `tfsdk:"pending_workloads"`
	ReservingWorkloads types.Int64  `tfsdk:"reserving_workloads"`
	Resources          types.List   `tfsdk:"resources" model:"teamUsageResourceModel"`
}

type clusterSchedulerConfigModel struct {
	ID                  types.String `tfsdk:"id"`
	PriorityClasses     types.List   `tfsdk:"priority_classes" model:"priorityClassModel"`
	FairShare           types.String `tfsdk:"fair_share"`
	IdleResourceSharing types.String `tfsdk:"idle_resource_sharing"`
	ConfigID            types.String `tfsdk:"config_id"`
	tagsModel
	storeRecordModel
	OwnerID  types.String   `tfsdk:"owner_id"`
	Drift    types.List     `tfsdk:"drift" elem:"string"`
	Timeouts timeouts.Value `tfsdk:"timeouts" model:"timeoutsModel"`
}

// quotaListModel is the configuration of a list block of hyperpod_compute_quota or
// hyperpod_team_namespace (`terraform query`): what the list selects.
type quotaListModel struct {
	TeamPrefix   types.String `tfsdk:"team_prefix"`
	Cohort       types.String `tfsdk:"cohort"`
	InstanceType types.String `tfsdk:"instance_type"`
	ClusterARN   types.String `tfsdk:"cluster_arn"`
}

// schedulerConfigListModel is the configuration of a list block of
// hyperpod_cluster_scheduler_config.
type schedulerConfigListModel struct {
	ClusterARN types.String `tfsdk:"cluster_arn"`
}

// Nested objects. Each attribute is named once, in its tag; attrTypesOf derives the types.

// resourceEntryModel lists the sizing attributes in the order of the ratio rule (an
// absolute_borrow_limits element's), then efa.
type resourceEntryModel struct {
	limitModel
	EFA types.Int64 `tfsdk:"efa"`
}

type partitionModel struct {
	Type  types.String `tfsdk:"type"`
	Count types.Int64  `tfsdk:"count"`
}

type sharingModel struct {
	Strategy             types.String `tfsdk:"strategy"`
	BorrowLimit          types.Int64  `tfsdk:"borrow_limit"`
	AbsoluteBorrowLimits types.List   `tfsdk:"absolute_borrow_limits" model:"limitModel"`
}

// limitModel is an absolute_borrow_limits element: a resources entry without efa.
type limitModel struct {
	InstanceType types.String  `tfsdk:"instance_type"`
	Count        types.Int64   `tfsdk:"count"`
	Accelerators types.Int64   `tfsdk:"accelerators"`
	Partition    types.Object  `tfsdk:"accelerator_partition" model:"partitionModel"`
	VCPU         types.Float64 `tfsdk:"vcpu"`
	MemoryInGiB  types.Float64 `tfsdk:"memory_in_gib"`
}

type timeoutsModel struct {
	Create types.String `tfsdk:"create"`
	Update types.String `tfsdk:"update"`
	Delete types.String `tfsdk:"delete"`
}

type priorityClassModel struct {
	Name              types.String `tfsdk:"name"`
	Weight            types.Int64  `tfsdk:"weight"`
	PriorityClassName types.String `tfsdk:"priority_class_name"`
}

// quotaDefaultsModel is the result of the quota_defaults function. vcpu and memory_in_gib are
// numbers rather than float64s so a configured decimal comes back exactly as Terraform sent it,
// as the resource's plan keeps it: 2.9 stays the 2.9 of the configuration (held at 512 bits),
// not the float64 nearest to it.
type quotaDefaultsModel struct {
	Accelerators types.Int64  `tfsdk:"accelerators"`
	VCPU         types.Number `tfsdk:"vcpu"`
	MemoryInGiB  types.Number `tfsdk:"memory_in_gib"`
	EFA          types.Int64  `tfsdk:"efa"`
	Partition    types.Object `tfsdk:"accelerator_partition" model:"partitionModel"`
}

type execModel struct {
	APIVersion types.String `tfsdk:"api_version"`
	Command    types.String `tfsdk:"command"`
	Args       types.List   `tfsdk:"args" elem:"string"`
	Env        types.Map    `tfsdk:"env" elem:"string"`
}

type retryModel struct {
	MaxElapsed  types.String `tfsdk:"max_elapsed"`
	MaxAttempts types.Int64  `tfsdk:"max_attempts"`
	MinBackoff  types.String `tfsdk:"min_backoff"`
	MaxBackoff  types.String `tfsdk:"max_backoff"`
}

type instanceTypeOverrideModel struct {
	Accelerators        types.Int64   `tfsdk:"accelerators"`
	AcceleratorResource types.String  `tfsdk:"accelerator_resource"`
	VCPU                types.Float64 `tfsdk:"vcpu"`
	MemoryInGiB         types.Float64 `tfsdk:"memory_in_gib"`
	EFA                 types.Int64   `tfsdk:"efa"`
	MIGProfiles         types.List    `tfsdk:"mig_profiles" elem:"string"`
}

// instanceTypeFiguresModel is the result of the instance_type function: the per-instance
// attributes of hyperpod_instance_type_capacity, with the same names and types; an
// instance_types override sets all of them but accelerator_type.
type instanceTypeFiguresModel struct {
	AcceleratorType types.String `tfsdk:"accelerator_type"`
	instanceTypeOverrideModel
}

type teamUsageResourceModel struct {
	InstanceType types.String  `tfsdk:"instance_type"`
	Resource     types.String  `tfsdk:"resource"`
	Nominal      types.Float64 `tfsdk:"nominal"`
	Reserved     types.Float64 `tfsdk:"reserved"`
	InUse        types.Float64 `tfsdk:"in_use"`
	Borrowed     types.Float64 `tfsdk:"borrowed"`
}
