terraform {
  required_version = ">= 1.11"
  required_providers {
    hyperpod = {
      source = "quotaworks/hyperpod"
    }
  }
}

provider "hyperpod" {
  # The default: a plan that changes a quota previews what it does to the jobs of its cohort.
  admission_preview = true
}

# Three teams share the 16 H100s of two ml.p5.48xlarge nodes in one cohort. research lends its
# idle GPUs and borrows up to as many again; evaluation lends only; serving keeps its own.
resource "hyperpod_compute_quota" "research" {
  name              = "research"
  team              = "research"
  cohort            = "h100"
  fair_share_weight = 10
  resource_sharing  = { strategy = "LendAndBorrow", borrow_limit = 100 }
  resources         = [{ instance_type = "ml.p5.48xlarge", accelerators = 8 }]
}

resource "hyperpod_compute_quota" "evaluation" {
  name              = "evaluation"
  team              = "evaluation"
  cohort            = "h100"
  fair_share_weight = 10
  resource_sharing  = { strategy = "Lend" }
  resources         = [{ instance_type = "ml.p5.48xlarge", accelerators = 4 }]
}

resource "hyperpod_compute_quota" "serving" {
  name              = "serving"
  team              = "serving"
  cohort            = "h100"
  fair_share_weight = 10
  resource_sharing  = { strategy = "DontLend" }
  resources         = [{ instance_type = "ml.p5.48xlarge", accelerators = 4 }]
}

# Two priorities: Kueue preempts a team's lower-priority jobs first (a job selects its class with
# the label kueue.x-k8s.io/priority-class: <name>-priority).
resource "hyperpod_cluster_scheduler_config" "priorities" {
  priority_classes = [
    { name = "training", weight = 100 },
    { name = "experimentation", weight = 25 },
  ]
}

# Each team's namespace, with the queue its jobs name (label kueue.x-k8s.io/queue-name:
# hyperpod-ns-<team>-localqueue).
resource "hyperpod_team_namespace" "teams" {
  for_each = toset(["research", "evaluation", "serving"])
  team     = each.key
}
