# Quickstart: four teams share the local cluster's fake HyperPod nodes, under one cluster policy of
# priority classes. `make demo` applies this against the local control plane (or the cluster
# KUBE_CONFIG_PATH points at) and submits jobs to show what Kueue admits.
#
#   ml-research  8 H100s and 16 Trainium chips; lends idle ones, borrows up to 100% more
#   evaluation   the other 8 H100s; lends them when idle (to ml-research), never borrows
#   inference    2 whole ml.g5.12xlarge instances, never lent out, never borrowing
#   data-prep    CPU nodes sized by memory: 80 GiB of ml.c5.4xlarge (and the vCPU that goes with it)
#
# The provider fills in the amounts each entry leaves unset (vCPU, memory, accelerators, EFA) from
# the ratio of the one that is set, during plan: `terraform plan` already shows the real numbers.
terraform {
  required_version = ">= 1.11"
  required_providers {
    hyperpod = {
      source  = "quotaworks/hyperpod"
      version = "~> 0.1"
    }
  }
}

# Connection settings come from KUBE_CONFIG_PATH (set by `make demo`).
provider "hyperpod" {}

# The cluster policy: jobs pick a class with the label kueue.x-k8s.io/priority-class: <name>-priority.
# Within a team, higher classes are admitted first and preempt lower ones (preempt_team_tasks).
resource "hyperpod_cluster_scheduler_config" "priorities" {
  priority_classes = [
    { name = "inference", weight = 100 },
    { name = "training", weight = 75 },
    { name = "experimentation", weight = 25 },
  ]
}

# Each team gets a namespace (hyperpod-ns-<team>) with a LocalQueue that feeds its ClusterQueue,
# and a compute quota (the ClusterQueue hyperpod-ns-<team>-clusterqueue). The quotas take their
# team from the namespace, so Terraform creates the namespace first and destroys it last.

resource "hyperpod_team_namespace" "ml_research" {
  team = "ml-research"
}

resource "hyperpod_compute_quota" "ml_research" {
  name              = "ml-research"
  team              = hyperpod_team_namespace.ml_research.team
  description       = "Training: H100s and Trainium chips, borrows idle accelerators from the cohort."
  fair_share_weight = 100

  resource_sharing = {
    strategy     = "LendAndBorrow"
    borrow_limit = 100 # may use up to twice its quota when others are idle
  }

  # Accelerators only: vCPU, memory and EFA follow (8 of 8 H100s = a whole node's worth).
  resources = [
    { instance_type = "ml.p5.48xlarge", accelerators = 8 },
    { instance_type = "ml.trn1.32xlarge", accelerators = 16 },
  ]
}

resource "hyperpod_team_namespace" "evaluation" {
  team = "evaluation"
}

resource "hyperpod_compute_quota" "evaluation" {
  name        = "evaluation"
  team        = hyperpod_team_namespace.evaluation.team
  description = "Model evaluation: one H100 node, lent to the cohort while idle."

  # Lends idle H100s (ml-research borrows them: borrowing happens per instance type, so a lender
  # must hold the same type), never borrows, and takes them back by preemption when it needs them.
  resource_sharing = {
    strategy = "Lend"
  }

  resources = [
    { instance_type = "ml.p5.48xlarge", count = 1 },
  ]
}

resource "hyperpod_team_namespace" "inference" {
  team = "inference"
}

resource "hyperpod_compute_quota" "inference" {
  name               = "inference"
  team               = hyperpod_team_namespace.inference.team
  description        = "Model serving: two whole A10G instances, kept for itself."
  preempt_team_tasks = "Never" # a new deployment never evicts a running one

  resource_sharing = {
    strategy = "DontLend"
  }

  resources = [
    { instance_type = "ml.g5.12xlarge", count = 2 },
  ]
}

resource "hyperpod_team_namespace" "data_prep" {
  team = "data-prep"
  labels = {
    "example.com/cost-center" = "analytics"
  }
}

resource "hyperpod_compute_quota" "data_prep" {
  name        = "data-prep"
  team        = hyperpod_team_namespace.data_prep.team
  description = "Feature pipelines on CPU nodes, sized by memory."

  # Strategy and borrow_limit keep their defaults (LendAndBorrow, 50%). A team that borrows gets a
  # fair-share weight of at least 1: Kueue counts 0 (the default) as an infinite share.
  fair_share_weight = 10

  # 80 GiB of 32-GiB instances is a ratio of 2.5: 40 vCPU.
  resources = [
    { instance_type = "ml.c5.4xlarge", memory_in_gib = 80 },
  ]
}
