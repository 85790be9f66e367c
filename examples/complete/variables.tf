variable "teams" {
  description = "The teams, keyed by team name, with the inputs of the hyperpod-team module (see ../modules/hyperpod-team/README.md). Unset attributes keep the module's defaults."
  type = map(object({
    allocations = map(object({
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
    description       = optional(string)
    fair_share_weight = optional(number) # null: the module's default, 1
    sharing = optional(object({
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
    }))
    preempt_team_tasks    = optional(string)
    activation_state      = optional(string)
    cohort                = optional(string)
    namespace_labels      = optional(map(string))
    namespace_annotations = optional(map(string))
    force_destroy         = optional(bool)
  }))

  # Sized for the local control plane's fake fleet: 4 x ml.g5.12xlarge (4 A10G each),
  # 2 x ml.p5.48xlarge (8 H100 each), 2 x ml.trn1.32xlarge (16 Trainium each) and
  # 4 x ml.c5.4xlarge (16 vCPU, 32 GiB each).
  default = {
    # Training: a whole H100 node's worth of GPUs and one Trainium node's chips. Lends what it
    # leaves idle and borrows up to as much again (borrowing is per instance type: the H100s of
    # complete-evaluation). The plan shows vcpu 192, memory_in_gib 2048, efa 32 for the H100s.
    "complete-research" = {
      description       = "Pre-training on H100s and Trainium; borrows idle H100s from the cohort."
      fair_share_weight = 10
      allocations = {
        "ml.p5.48xlarge"   = { accelerators = 8 }
        "ml.trn1.32xlarge" = { accelerators = 16 }
      }
      sharing = { strategy = "LendAndBorrow", borrow_limit = 100 }
    }

    # The other H100 node, lent to the cohort while idle and taken back by preemption when the
    # team needs it. Never borrows.
    "complete-evaluation" = {
      description = "Model evaluation: one H100 node, lent out while idle."
      allocations = {
        "ml.p5.48xlarge" = { count = 1 }
      }
      sharing = { strategy = "Lend" }
    }

    # Two whole A10G instances kept for itself; a new deployment never evicts a running one.
    "complete-inference" = {
      description        = "Model serving on two A10G instances."
      allocations        = { "ml.g5.12xlarge" = { count = 2 } }
      sharing            = { strategy = "DontLend" }
      preempt_team_tasks = "Never"
      namespace_labels   = { "example.com/cost-center" = "serving" }
      namespace_annotations = {
        "example.com/contact" = "inference-oncall@example.com"
      }
    }

    # CPU only, sized by vCPU: 24 of 16-vCPU instances is a ratio of 1.5, so 48 GiB of memory.
    # Everything else keeps the defaults: LendAndBorrow with a borrow limit of 50 %, and the
    # module's fair-share weight of 1.
    "complete-data-prep" = {
      allocations   = { "ml.c5.4xlarge" = { vcpu = 24 } }
      force_destroy = true # a scratch namespace: destroy it with whatever still runs in it
    }
  }
}
