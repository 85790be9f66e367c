# Step 1 of a move between the paths: the configuration of teams/main.tf with the quotas and
# the cluster policy taken out (removed.tf forgets them). The team namespaces stay as they are.

terraform {
  required_providers {
    hyperpod = {
      source  = "quotaworks/hyperpod"
      version = "~> 0.1"
    }
  }
}

variable "teams" {
  description = "The same teams as before the move."
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

  lifecycle {
    prevent_destroy = true
  }
}
