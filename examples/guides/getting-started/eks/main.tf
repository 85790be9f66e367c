# What the platform team manages on the HyperPod cluster: the priority classes of the cluster
# policy and, per team, a namespace with its LocalQueue and a compute quota.

resource "hyperpod_cluster_scheduler_config" "policy" {
  priority_classes = [
    { name = "inference", weight = 100 },
    { name = "training", weight = 75 },
    { name = "experimentation", weight = 25 },
  ]
}

resource "hyperpod_team_namespace" "research" {
  team = "guide-research"
}

# One whole ml.p5.48xlarge's worth of H100s, lent to the cohort while idle; borrows up to as
# much again from idle teams.
resource "hyperpod_compute_quota" "research" {
  name              = "guide-research"
  team              = hyperpod_team_namespace.research.team
  fair_share_weight = 10

  resource_sharing = {
    strategy     = "LendAndBorrow"
    borrow_limit = 100
  }

  resources = [
    { instance_type = "ml.p5.48xlarge", accelerators = 8 },
  ]
}

resource "hyperpod_team_namespace" "inference" {
  team = "guide-inference"
}

# Two whole ml.g5.12xlarge instances, never lent and never borrowing.
resource "hyperpod_compute_quota" "inference" {
  name               = "guide-inference"
  team               = hyperpod_team_namespace.inference.team
  preempt_team_tasks = "Never"

  resource_sharing = {
    strategy = "DontLend"
  }

  resources = [
    { instance_type = "ml.g5.12xlarge", count = 2 },
  ]
}
