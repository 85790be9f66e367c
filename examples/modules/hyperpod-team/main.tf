# A HyperPod team: its namespace hyperpod-ns-<team> with the LocalQueue its jobs submit to, and
# its compute quota, the ClusterQueue hyperpod-ns-<team>-clusterqueue that the LocalQueue feeds.
#
# Every optional input is passed as given: null stays null, so the provider applies its defaults
# (and computes the unset amounts of each allocation during plan).

resource "hyperpod_team_namespace" "this" {
  team          = var.team
  labels        = var.namespace_labels
  annotations   = var.namespace_annotations
  force_destroy = var.force_destroy
}

resource "hyperpod_compute_quota" "this" {
  name = var.team
  # From the namespace, so Terraform creates the namespace first and destroys it last.
  team = hyperpod_team_namespace.this.team

  description        = var.description
  fair_share_weight  = var.fair_share_weight
  preempt_team_tasks = var.preempt_team_tasks
  activation_state   = var.activation_state
  cohort             = var.cohort
  resource_sharing   = var.sharing

  # One entry per instance type, in the lexical order of the map's keys.
  resources = [
    for instance_type, a in var.allocations : {
      instance_type         = instance_type
      count                 = a.count
      accelerators          = a.accelerators
      vcpu                  = a.vcpu
      memory_in_gib         = a.memory_in_gib
      efa                   = a.efa
      accelerator_partition = a.accelerator_partition
    }
  ]
}
