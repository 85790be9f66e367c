# Lending, borrowing and preemption. Queues of one cohort (hyperpod-cohort unless cohort is set)
# lend idle quota to each other, per instance type and per resource: a team borrows H100s only
# from teams whose quota has H100s.

terraform {
  required_providers {
    hyperpod = {
      source  = "quotaworks/hyperpod"
      version = "~> 0.1"
    }
  }
}

# Lends its idle H100s and never borrows: borrowingLimit 0, no lendingLimit (all idle quota can
# be lent). Lent quota is taken back by preemption when its own jobs need it.
resource "hyperpod_compute_quota" "evaluation" {
  name = "guide-evaluation"
  team = "guide-evaluation"

  resource_sharing = {
    strategy = "Lend"
  }

  resources = [
    { instance_type = "ml.p5.48xlarge", count = 1 },
  ]
}

# Lends and borrows (the default strategy). borrowingLimit = nominalQuota x borrow_limit / 100
# per resource (here 100 %: 192 vCPU, 2048 GiB, 32 EFA), except where absolute_borrow_limits
# sets a number: at most 4 extra H100s.
# With Kueue's fair sharing on, a weight of 10 wins idle compute over borrowers with lower
# weights; within the team, higher priority classes preempt lower ones (preempt_team_tasks).
resource "hyperpod_compute_quota" "research" {
  name               = "guide-research"
  team               = "guide-research"
  fair_share_weight  = 10
  preempt_team_tasks = "LowerPriority"

  resource_sharing = {
    strategy     = "LendAndBorrow"
    borrow_limit = 100
    absolute_borrow_limits = [
      { instance_type = "ml.p5.48xlarge", accelerators = 4 },
    ]
  }

  resources = [
    { instance_type = "ml.p5.48xlarge", accelerators = 8 },
  ]
}

# Keeps its quota to itself: borrowingLimit 0 and lendingLimit 0. A new job never preempts a
# running one of the same team.
resource "hyperpod_compute_quota" "inference" {
  name               = "guide-inference"
  team               = "guide-inference"
  preempt_team_tasks = "Never"

  resource_sharing = {
    strategy = "DontLend"
  }

  resources = [
    { instance_type = "ml.g5.12xlarge", count = 2 },
  ]
}

# Its own cohort: shares only with queues of cohort guide-sandbox-pool (cohort exists on the
# Kubernetes path only). Disabled: the queue holds new jobs (stopPolicy Hold) while running ones
# finish. It borrows (the default strategy), so it has a weight of at least 1.
resource "hyperpod_compute_quota" "sandbox" {
  name              = "guide-sandbox"
  team              = "guide-sandbox"
  cohort            = "guide-sandbox-pool"
  activation_state  = "Disabled"
  fair_share_weight = 1

  resources = [
    { instance_type = "ml.g5.12xlarge", accelerators = 1 },
  ]
}

# The cluster policy's priority classes: WorkloadPriorityClasses inference-priority (100),
# training-priority (75) and experimentation-priority (25).
resource "hyperpod_cluster_scheduler_config" "policy" {
  priority_classes = [
    { name = "inference", weight = 100 },
    { name = "training", weight = 75 },
    { name = "experimentation", weight = 25 },
  ]
}
