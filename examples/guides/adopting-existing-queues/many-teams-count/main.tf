# Several existing teams, adopted with one import block per resource type (for_each over a
# list: each.key is the index, which is also the count index). Terraform 1.7 and later.

terraform {
  required_providers {
    hyperpod = {
      source  = "quotaworks/hyperpod"
      version = "~> 0.1"
    }
  }
}

locals {
  teams = ["guide-vision", "guide-language"]
}

resource "hyperpod_team_namespace" "team" {
  count = length(local.teams)
  team  = local.teams[count.index]
}

resource "hyperpod_compute_quota" "team" {
  count             = length(local.teams)
  name              = local.teams[count.index]
  team              = hyperpod_team_namespace.team[count.index].team
  cohort            = "hyperpod-cohort"
  fair_share_weight = 0
  resource_sharing  = { strategy = "LendAndBorrow", borrow_limit = 100 }
  resources         = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
}
