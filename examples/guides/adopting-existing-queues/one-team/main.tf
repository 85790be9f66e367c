# The configuration for a team whose objects already exist in the cluster: written by hand,
# by a script or by another tool, in HyperPod's shapes (hyperpod-ns-<team>,
# hyperpod-ns-<team>-localqueue, hyperpod-ns-<team>-clusterqueue). Here the queue holds one
# whole ml.g5.12xlarge with LendAndBorrow and a borrow limit of 100 %.

terraform {
  required_providers {
    hyperpod = {
      source  = "quotaworks/hyperpod"
      version = "~> 0.1"
    }
  }
}

resource "hyperpod_team_namespace" "research" {
  team = "guide-research"
}

resource "hyperpod_compute_quota" "research" {
  # A queue this provider did not write has no name annotation: import names the quota after
  # its team. Another name is fine too; the first apply writes it, in place.
  name = "guide-research"
  team = hyperpod_team_namespace.research.team

  # Spell out what the queue has, or the first apply changes it: its cohort, its fairSharing
  # weight (0 when it has none), its sharing and its amounts.
  cohort            = "hyperpod-cohort"
  fair_share_weight = 0

  resource_sharing = {
    strategy     = "LendAndBorrow"
    borrow_limit = 100
  }

  resources = [
    { instance_type = "ml.g5.12xlarge", count = 1 },
  ]
}
