# The same with for_each-based resources keyed by team: the import blocks iterate over the
# same map, so each.key is both the resource key and the import ID. Terraform 1.7 and later.

terraform {
  required_providers {
    hyperpod = {
      source  = "quotaworks/hyperpod"
      version = "~> 0.1"
    }
  }
}

locals {
  teams = {
    "guide-vision"   = { instance_type = "ml.g5.12xlarge", count = 1, borrow_limit = 100 }
    "guide-language" = { instance_type = "ml.p5.48xlarge", count = 1, borrow_limit = 50 }
  }
}

resource "hyperpod_team_namespace" "team" {
  for_each = local.teams
  team     = each.key
}

resource "hyperpod_compute_quota" "team" {
  for_each          = local.teams
  name              = each.key
  team              = hyperpod_team_namespace.team[each.key].team
  cohort            = "hyperpod-cohort"
  fair_share_weight = 0
  resource_sharing  = { strategy = "LendAndBorrow", borrow_limit = each.value.borrow_limit }
  resources         = [{ instance_type = each.value.instance_type, count = each.value.count }]
}
