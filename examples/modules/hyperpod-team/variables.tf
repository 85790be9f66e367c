# Every optional input defaults to null, and null reaches the provider as null, so the
# provider's own default applies (the one exception is fair_share_weight, see there). Setting an
# input to null, as a wrapper with for_each over optional attributes does, is the same as not
# setting it.

variable "team" {
  description = "Team name: 1-40 lower-case letters, digits and hyphens, starting and ending with a letter or digit (the AWS TeamName rule). Names the namespace hyperpod-ns-<team>, its LocalQueue and the ClusterQueue hyperpod-ns-<team>-clusterqueue; also the compute quota's name. Changing it replaces everything."
  type        = string
  nullable    = false

  validation {
    condition     = length(var.team) <= 40 && can(regex("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", var.team))
    error_message = "team must be 1-40 lower-case letters, digits and hyphens, starting and ending with a letter or digit (the AWS TeamName rule), e.g. \"ml-research\"."
  }
}

variable "allocations" {
  description = <<-EOT
    The team's quota per instance type (1-15 types), keyed by instance type (e.g. "ml.p5.48xlarge").
    Size each by one of count (whole instances), accelerators, accelerator_partition ({ type =
    "mig-1g.10gb", count = 14 }), vcpu or memory_in_gib; the amounts left unset are computed by the
    provider during plan from the ratio of the first one set (see the hyperpod_compute_quota
    documentation), so the plan, and the module's `amounts` output, show the real numbers. efa
    may be set on top. The ClusterQueue lists the flavors in the lexical order of the types.
  EOT
  type = map(object({
    count         = optional(number)
    accelerators  = optional(number)
    vcpu          = optional(number)
    memory_in_gib = optional(number)
    efa           = optional(number)
    accelerator_partition = optional(object({
      type  = string
      count = number
    }))
  }))
  nullable = false

  validation {
    condition     = length(var.allocations) >= 1 && length(var.allocations) <= 15
    error_message = "allocations needs 1-15 instance types."
  }

  validation {
    condition     = alltrue([for a in values(var.allocations) : a != null])
    error_message = "Every entry of allocations needs an object, e.g. { count = 1 }; remove the instance type instead of setting it to null."
  }

  # The provider checks everything else during plan (it names entries by their index in the
  # lexical order of the types); this one names the type. try(): a null entry is reported above.
  validation {
    condition = alltrue([
      for a in values(var.allocations) :
      try(a.count != null || a.accelerators != null || a.accelerator_partition != null || a.vcpu != null || a.memory_in_gib != null, true)
    ])
    error_message = "Size every allocation by count, accelerators, accelerator_partition, vcpu or memory_in_gib; these set none: ${join(", ", [
      for type, a in var.allocations : type
      if !try(a.count != null || a.accelerators != null || a.accelerator_partition != null || a.vcpu != null || a.memory_in_gib != null, true)
    ])}."
  }
}

variable "description" {
  description = "Free text about the quota, up to 1024 characters (an annotation on the ClusterQueue). Default: none."
  type        = string
  default     = null
}

variable "fair_share_weight" {
  description = <<-EOT
    The quota's fair_share_weight, 0-100: how strongly the team competes for idle capacity when
    Kueue runs with fair sharing on (HyperPod's FairShare = Enabled). Default 1 here, where the
    provider keeps the AWS API's 0: a team that borrows (the module's teams do unless sharing says
    otherwise) needs at least 1, as docs/guides/quotas-and-kueue.md ("Fair sharing and
    fair_share_weight") explains. Give higher weights to the teams that should win idle
    capacity; set 0 explicitly for the API's default. null counts as unset (1).
  EOT
  type        = number
  default     = 1
  nullable    = false
}

variable "sharing" {
  description = <<-EOT
    How the team lends idle quota and borrows from the cohort, the quota's resource_sharing:
    strategy ("LendAndBorrow", "Lend" or "DontLend"), borrow_limit (percent of the nominal
    quota, only with LendAndBorrow) and absolute_borrow_limits (per instance type caps by
    count, accelerators, accelerator_partition, vcpu and memory_in_gib). Unset (null)
    attributes keep the provider's defaults: LendAndBorrow with a borrow_limit of 50.
  EOT
  type = object({
    strategy     = optional(string)
    borrow_limit = optional(number)
    absolute_borrow_limits = optional(list(object({
      instance_type = string
      count         = optional(number)
      accelerators  = optional(number)
      accelerator_partition = optional(object({
        type  = string
        count = number
      }))
      vcpu          = optional(number)
      memory_in_gib = optional(number)
    })))
  })
  default = null
}

variable "preempt_team_tasks" {
  description = "\"LowerPriority\" lets the team's higher-priority jobs preempt its lower-priority ones; \"Never\" does not. Default (null): the provider's, LowerPriority."
  type        = string
  default     = null
}

variable "activation_state" {
  description = "\"Enabled\" admits new jobs; \"Disabled\" holds them (ClusterQueue stopPolicy Hold). Default (null): the provider's, Enabled."
  type        = string
  default     = null
}

variable "cohort" {
  description = "Kueue cohort of the teams that lend to and borrow from each other. Default (null): the provider's, hyperpod-cohort."
  type        = string
  default     = null
}

variable "namespace_labels" {
  description = "Labels added to the namespace hyperpod-ns-<team>. The keys the provider sets itself are rejected. Default: none."
  type        = map(string)
  default     = null
}

variable "namespace_annotations" {
  description = "Annotations added to the namespace. Default: none."
  type        = map(string)
  default     = null
}

variable "force_destroy" {
  description = "Destroy the namespace even while it still holds Pods or Kueue Workloads, deleting them with it. Default (null): the provider's, false, so destroy fails while work remains. Set true and apply before destroying."
  type        = bool
  default     = null
}
