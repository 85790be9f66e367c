# The module planned as its users plan it, with the real provider and no cluster:
#
#   terraform init
#   terraform test -filter=tests/offline.tftest.hcl
#
# Nothing listens at the provider's host, so this suite passes only while a plan of new resources
# needs no API request: the provider computes every amount below from its instance catalog, and
# every default by its own rules.

provider "hyperpod" {
  host  = "https://127.0.0.1:1"
  token = "offline"
  # The admission preview reads the cluster during plan to predict what a quota change does to
  # jobs; it only ever warns. Off, so the plan sends no request at all.
  admission_preview = false
}

variables {
  team = "offline-team"
  allocations = {
    # 2 of the instance's 4 L40S GPUs: half of its 96 vCPU and 768 GiB, and both of its EFA
    # interfaces (a part of an instance counts as a whole one for EFA).
    "ml.g6e.24xlarge" = { accelerators = 2 }
    # 24 of the instance's 64 GiB: 3/8 of its 16 vCPU; the type has no accelerators or EFA.
    "ml.m5.4xlarge" = { memory_in_gib = 24 }
    # One 1g.5gb slice of 8 A100s of 7 slices each, 1/56 of the instance: its 96 vCPU and
    # 1152 GiB divided by 56, rounded down to 0.001 vCPU and to whole MiB (21065/1024 GiB).
    "ml.p4d.24xlarge" = { accelerator_partition = { type = "mig-1g.5gb", count = 1 } }
  }
}

run "plan_time_amounts" {
  command = plan

  assert {
    condition = (
      output.amounts["ml.g6e.24xlarge"].accelerators == 2 &&
      output.amounts["ml.g6e.24xlarge"].vcpu == 48 &&
      output.amounts["ml.g6e.24xlarge"].memory_in_gib == 384 &&
      output.amounts["ml.g6e.24xlarge"].efa == 2 &&
      output.amounts["ml.g6e.24xlarge"].count == null
    )
    error_message = "ml.g6e.24xlarge plans ${jsonencode(output.amounts["ml.g6e.24xlarge"])}, want 2 accelerators, 48 vCPU, 384 GiB, 2 EFA and no count."
  }

  assert {
    condition = (
      output.amounts["ml.m5.4xlarge"].accelerators == 0 &&
      output.amounts["ml.m5.4xlarge"].vcpu == 6 &&
      output.amounts["ml.m5.4xlarge"].memory_in_gib == 24 &&
      output.amounts["ml.m5.4xlarge"].efa == 0
    )
    error_message = "ml.m5.4xlarge plans ${jsonencode(output.amounts["ml.m5.4xlarge"])}, want 0 accelerators, 6 vCPU, 24 GiB, 0 EFA."
  }

  assert {
    condition = (
      output.amounts["ml.p4d.24xlarge"].accelerators == 0 &&
      output.amounts["ml.p4d.24xlarge"].vcpu == 1.714 &&
      output.amounts["ml.p4d.24xlarge"].memory_in_gib == 21065 / 1024 &&
      output.amounts["ml.p4d.24xlarge"].efa == 4 &&
      output.amounts["ml.p4d.24xlarge"].accelerator_partition.count == 1
    )
    error_message = "ml.p4d.24xlarge plans ${jsonencode(output.amounts["ml.p4d.24xlarge"])}, want 1.714 vCPU, 20.5712890625 GiB and 4 EFA for one mig-1g.5gb."
  }

  # Inputs left unset reach the provider as null, so the provider's defaults apply (but for
  # fair_share_weight, which the module sets to 1).
  assert {
    condition = (
      hyperpod_compute_quota.this.cohort == "hyperpod-cohort" &&
      hyperpod_compute_quota.this.resource_sharing.strategy == "LendAndBorrow" &&
      hyperpod_compute_quota.this.resource_sharing.borrow_limit == 50 &&
      hyperpod_compute_quota.this.preempt_team_tasks == "LowerPriority" &&
      hyperpod_compute_quota.this.activation_state == "Enabled" &&
      hyperpod_compute_quota.this.fair_share_weight == 1 &&
      hyperpod_team_namespace.this.force_destroy == false
    )
    error_message = "The quota plans cohort ${hyperpod_compute_quota.this.cohort}, sharing ${jsonencode(hyperpod_compute_quota.this.resource_sharing)}, weight ${hyperpod_compute_quota.this.fair_share_weight}: not the defaults."
  }

  assert {
    condition = (
      output.namespace == "hyperpod-ns-offline-team" &&
      output.local_queue_name == "hyperpod-ns-offline-team-localqueue" &&
      output.cluster_queue_name == "hyperpod-ns-offline-team-clusterqueue"
    )
    error_message = "The team's names are ${output.namespace}, ${output.local_queue_name}, ${output.cluster_queue_name}."
  }
}

run "whole_instances_without_lending" {
  command = plan

  variables {
    allocations = {
      "ml.p5.48xlarge" = { count = 2 }
    }
    sharing = { strategy = "DontLend" }
  }

  assert {
    condition = (
      output.amounts["ml.p5.48xlarge"].count == 2 &&
      output.amounts["ml.p5.48xlarge"].accelerators == 16 &&
      output.amounts["ml.p5.48xlarge"].vcpu == 384 &&
      output.amounts["ml.p5.48xlarge"].memory_in_gib == 4096 &&
      output.amounts["ml.p5.48xlarge"].efa == 64
    )
    error_message = "Two ml.p5.48xlarge plan ${jsonencode(output.amounts["ml.p5.48xlarge"])}, want 16 accelerators, 384 vCPU, 4096 GiB, 64 EFA."
  }

  # A team that does not lend does not borrow either: no borrow limit.
  assert {
    condition     = hyperpod_compute_quota.this.resource_sharing.borrow_limit == null
    error_message = "DontLend plans borrow_limit ${jsonencode(hyperpod_compute_quota.this.resource_sharing.borrow_limit)}, want null."
  }
}

# The module's own validations. The provider's checks (an instance type it does not know, a MIG
# profile the type lacks, an amount out of range) are errors of the plan rather than custom
# conditions: expect_failures cannot name them, and a run that hits one fails.

run "team_name_rule" {
  command = plan

  variables {
    team = "ML_Research"
  }

  expect_failures = [var.team]
}

run "no_instance_type" {
  command = plan

  variables {
    allocations = {}
  }

  expect_failures = [var.allocations]
}

run "allocation_sized_by_nothing" {
  command = plan

  variables {
    allocations = {
      "ml.c5.4xlarge"  = { count = 1 }
      "ml.g5.12xlarge" = { efa = 1 }
    }
  }

  expect_failures = [var.allocations]
}

# A mock provider answers from the provider's schema without running the provider, so it cannot
# know what the provider computes during plan: the amounts left unset, the defaults of cohort,
# sharing and preemption, the queue names. A mocked plan leaves them unknown (or null), and a mocked apply
# makes them up (0 for numbers, random strings). A run with a mock checks what the module hands
# the provider; what the provider makes of it is checked only with the provider, as above.
mock_provider "hyperpod" {
  alias = "mock"
}

run "wiring_with_a_mock" {
  # A mock applies without a cluster.
  command   = apply
  providers = { hyperpod = hyperpod.mock }

  assert {
    condition     = hyperpod_compute_quota.this.name == var.team && hyperpod_compute_quota.this.team == var.team
    error_message = "The quota is named ${hyperpod_compute_quota.this.name} for team ${hyperpod_compute_quota.this.team}, want both ${var.team}."
  }

  assert {
    condition     = [for r in hyperpod_compute_quota.this.resources : r.instance_type] == ["ml.g6e.24xlarge", "ml.m5.4xlarge", "ml.p4d.24xlarge"]
    error_message = "The quota's entries are ${jsonencode([for r in hyperpod_compute_quota.this.resources : r.instance_type])}, want one per key of allocations, in lexical order."
  }

  assert {
    condition     = hyperpod_compute_quota.this.resources[0].accelerators == 2 && hyperpod_compute_quota.this.fair_share_weight == 1
    error_message = "The configured accelerators (2) and the module's weight (1) did not reach the provider."
  }

  # Whatever the mock makes up (0 with Terraform, null with OpenTofu), it is not the 48 vCPU the
  # provider plans for this entry in plan_time_amounts.
  assert {
    condition     = output.amounts["ml.g6e.24xlarge"].vcpu != 48
    error_message = "The mock planned ${jsonencode(output.amounts["ml.g6e.24xlarge"].vcpu)} vCPU."
  }
}
