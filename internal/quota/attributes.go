package quota

// A compute quota's configuration under its Terraform attribute names, with counts of type I
// and decimals of type D: the configuration annotation records it with exact decimal strings
// (configAnnotation), and `terraform show -json` writes it with JSON numbers (read by
// internal/review). An absent member is nil; the member order is the annotation's.

// AttributeConfig is what a configuration sets of the quota's Kueue side: activation, preemption,
// cohort, sharing and resources.
type AttributeConfig[I, D any] struct {
	ActivationState  *string                 `json:"activation_state,omitempty"`
	PreemptTeamTasks *string                 `json:"preempt_team_tasks,omitempty"`
	Cohort           *string                 `json:"cohort,omitempty"`
	Sharing          *AttributeSharing[I, D] `json:"resource_sharing,omitempty"`
	Resources        []AttributeEntry[I, D]  `json:"resources"`
}

// AttributeSharing is resource_sharing.
type AttributeSharing[I, D any] struct {
	Strategy             *string                 `json:"strategy,omitempty"`
	BorrowLimit          *I                      `json:"borrow_limit,omitempty"`
	AbsoluteBorrowLimits *[]AttributeLimit[I, D] `json:"absolute_borrow_limits,omitempty"` // nil: not set; empty: set as []
}

// AttributeAmounts is what a resources entry and an absolute_borrow_limits element hold alike.
type AttributeAmounts[I, D any] struct {
	InstanceType string `json:"instance_type"`
	Count        *I     `json:"count,omitempty"`
	Accelerators *I     `json:"accelerators,omitempty"`
	VCPU         *D     `json:"vcpu,omitempty"`
	MemoryInGiB  *D     `json:"memory_in_gib,omitempty"`
}

// AttributeLimit and AttributeEntry keep their members' order: the amounts, then efa (an
// entry's only), then the partition.
type AttributeLimit[I, D any] struct {
	AttributeAmounts[I, D]
	Partition *AttributePartition[I] `json:"accelerator_partition,omitempty"`
}

// AttributeEntry is a resources entry.
type AttributeEntry[I, D any] struct {
	AttributeAmounts[I, D]
	EFA       *I                     `json:"efa,omitempty"`
	Partition *AttributePartition[I] `json:"accelerator_partition,omitempty"`
}

// AttributePartition is an accelerator_partition.
type AttributePartition[I any] struct {
	Type  string `json:"type"`
	Count I      `json:"count"`
}
