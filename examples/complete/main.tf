# A complete setup: the teams of var.teams, each with its namespace, LocalQueue and compute
# quota through the hyperpod-team module, the cluster policy's priority classes, and a check
# that the quotas' accelerators fit into the nodes (capacity.tf).
#
#   complete-research    8 H100s and 16 Trainium chips; lends idle ones, borrows up to 100 % more
#   complete-evaluation  the other 8 H100s (one ml.p5.48xlarge); lends them, never borrows
#   complete-inference   2 whole ml.g5.12xlarge instances, neither lent nor borrowing
#   complete-data-prep   24 vCPU of ml.c5.4xlarge (and the 48 GiB of memory that go with them)
#
# All teams share the provider's default cohort, hyperpod-cohort. `terraform plan` shows every
# amount the provider computes (vCPU, memory, accelerators, EFA) before anything is applied.

module "team" {
  source   = "../modules/hyperpod-team"
  for_each = var.teams

  team        = each.key
  allocations = each.value.allocations

  # null (unset in var.teams) reaches the module as null: its default, or the provider's.
  description           = each.value.description
  fair_share_weight     = each.value.fair_share_weight
  sharing               = each.value.sharing
  preempt_team_tasks    = each.value.preempt_team_tasks
  activation_state      = each.value.activation_state
  cohort                = each.value.cohort
  namespace_labels      = each.value.namespace_labels
  namespace_annotations = each.value.namespace_annotations
  force_destroy         = each.value.force_destroy
}

# The cluster policy: jobs pick a class with the label kueue.x-k8s.io/priority-class:
# <name>-priority. Within a team, higher classes are admitted first and, unless the team's
# preempt_team_tasks is Never, preempt lower ones. WorkloadPriorityClasses are cluster-scoped:
# one such resource per cluster.
resource "hyperpod_cluster_scheduler_config" "this" {
  priority_classes = [
    { name = "complete-high", weight = 100 },  # complete-high-priority: serving, urgent runs
    { name = "complete-normal", weight = 50 }, # complete-normal-priority: training
    { name = "complete-low", weight = 10 },    # complete-low-priority: experiments, preempted first
  ]
}
