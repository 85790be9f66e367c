# The same configuration on both paths: the provider block alone decides whether the quotas and
# the cluster policy go to the SageMaker API (a task_governance block) or become Kueue objects
# the provider writes itself. It uses nothing only one path has: no cohort or efa (Kubernetes
# path only), no fair_share or idle_resource_sharing (SageMaker path only).

terraform {
  required_providers {
    hyperpod = {
      source  = "quotaworks/hyperpod"
      version = "~> 0.1"
    }
  }
}

variable "teams" {
  description = "Per team: one instance type, sized by accelerators or by whole instances (count)."
  type = map(object({
    instance_type     = string
    accelerators      = optional(number)
    count             = optional(number)
    fair_share_weight = optional(number)
  }))
  default = {
    "guide-research"  = { instance_type = "ml.p5.48xlarge", accelerators = 8, fair_share_weight = 10 }
    "guide-inference" = { instance_type = "ml.g5.12xlarge", count = 2, fair_share_weight = 1 }
  }
}

resource "hyperpod_team_namespace" "team" {
  for_each = var.teams
  team     = each.key

  # Destroying a team's namespace deletes everything in it, jobs included: refuse any plan
  # that would, whichever path the cluster is on.
  lifecycle {
    prevent_destroy = true
  }
}

resource "hyperpod_compute_quota" "team" {
  for_each = var.teams

  name              = each.key
  team              = hyperpod_team_namespace.team[each.key].team
  fair_share_weight = each.value.fair_share_weight

  resources = [{
    instance_type = each.value.instance_type
    accelerators  = each.value.accelerators
    count         = each.value.count
  }]
}

resource "hyperpod_cluster_scheduler_config" "policy" {
  priority_classes = [
    { name = "inference", weight = 100 },
    { name = "training", weight = 75 },
  ]

  # SageMaker path only: fair_share ("Enabled", the default there, or "Disabled") and
  # idle_resource_sharing. On the Kubernetes path fair sharing is Kueue's manager
  # configuration, and setting them here is an error.
}
