# Every quota here works on both paths (a task_governance block or your own Kueue) except
# evaluation's cohort and efa, which only a cluster that runs its own Kueue can hold. Teams that
# borrow (LendAndBorrow, the default strategy) get a fair_share_weight of at least 1: at the
# default, 0, a borrower is preempted first when Kueue's fair sharing is on.

# Training team: accelerators only. 8 of 8 H100s is a ratio of 1, so the plan shows
# vcpu = 192, memory_in_gib = 2048 and efa = 32 for this entry (on the SageMaker path efa is not
# planned: the add-on decides it). It lends idle GPUs to the cohort and may borrow up to as much
# again (borrow_limit = 100 percent); its weight wins idle capacity over the other borrowers.
resource "hyperpod_compute_quota" "ml_research" {
  name              = "ml-research"
  team              = "ml-research"
  description       = "Pre-training on H100s."
  fair_share_weight = 100

  resource_sharing = {
    strategy     = "LendAndBorrow"
    borrow_limit = 100
  }

  resources = [
    { instance_type = "ml.p5.48xlarge", accelerators = 8 },
  ]
}

# Inference team: two whole instances (8 A10Gs, 96 vCPU, 384 GiB, 2 EFA), never lent out and
# never preempted by the team's own lower-priority jobs.
resource "hyperpod_compute_quota" "inference" {
  name               = "inference"
  team               = "inference"
  preempt_team_tasks = "Never"

  resource_sharing = {
    strategy = "DontLend"
  }

  resources = [
    { instance_type = "ml.g5.12xlarge", count = 2 },
  ]
}

# Notebooks: GPU slices instead of whole GPUs. 14 x mig-1g.5gb on ml.p4d.24xlarge is
# 14 sevenths of one A100 = a quarter of the instance: vcpu 24, memory_in_gib 288, efa 4.
# It borrows (the default strategy), so it gets a weight.
resource "hyperpod_compute_quota" "notebooks" {
  name              = "notebooks"
  team              = "notebooks"
  fair_share_weight = 1

  resources = [
    {
      instance_type = "ml.p4d.24xlarge"
      accelerator_partition = {
        type  = "mig-1g.5gb"
        count = 14
      }
    },
  ]
}

# Data preparation on CPU instances, sized by memory: 80 GiB of ml.c5.4xlarge (32 GiB each) is
# a ratio of 2.5, so 40 vCPU. Disabled for now: the queue holds new jobs (stopPolicy Hold).
resource "hyperpod_compute_quota" "data_prep" {
  name             = "data-prep"
  team             = "data-prep"
  activation_state = "Disabled"

  resource_sharing = {
    strategy = "Lend"
  }

  resources = [
    { instance_type = "ml.c5.4xlarge", memory_in_gib = 80 },
  ]
}

# Evaluation team with two instance types, its own cohort, and absolute caps on borrowing that
# replace the percentage for the resources they name (here: at most 4 extra GPUs and 64 extra
# vCPU on ml.g5.12xlarge; everything else may borrow 200%). Kubernetes path only: cohort and
# efa are errors at plan time with a task_governance block (the SageMaker API has no field for
# them).
resource "hyperpod_compute_quota" "evaluation" {
  name              = "evaluation"
  team              = "evaluation"
  cohort            = "evaluation-pool"
  fair_share_weight = 1

  resource_sharing = {
    strategy     = "LendAndBorrow"
    borrow_limit = 200
    absolute_borrow_limits = [
      { instance_type = "ml.g5.12xlarge", accelerators = 4, vcpu = 64 },
    ]
  }

  resources = [
    { instance_type = "ml.g5.12xlarge", accelerators = 2 },
    { instance_type = "ml.trn1.32xlarge", count = 1, efa = 4 }, # efa: Kubernetes path only
  ]

  timeouts {
    delete = "20m" # waits until Kueue's finalizer lets go of the queue
  }
}
