# The module applied to a cluster whose contents do not matter, running Kueue's manager, and a job
# admitted to the team's queue:
#
#   export KUBE_CONFIG_PATH=/path/to/kubeconfig   # and KUBE_CTX to pick a context
#   terraform init
#   terraform test -filter=tests/cluster.tftest.hcl
#
# The provider reaches the cluster through KUBE_CONFIG_PATH, and the job is submitted with kubectl
# to the same cluster. At the end terraform test destroys what the runs created, the job first.

provider "hyperpod" {
  # The admission preview's warnings are for people reviewing a plan; a test does not read them.
  admission_preview = false
}

variables {
  team = "module-tests"
  # A cohort of its own: the suite's quota neither lends to nor borrows from other teams.
  cohort = "module-tests"
  # On a cluster with a garbage collector the job's Pods can outlive the job for a moment; the
  # namespace goes with whatever is left.
  force_destroy = true
  allocations = {
    # 8 of the instance's 16 vCPU: half of its 64 GiB.
    "ml.m5.4xlarge" = { vcpu = 8 }
  }
}

run "team" {
  assert {
    condition = (
      output.namespace == "hyperpod-ns-module-tests" &&
      output.local_queue_name == "hyperpod-ns-module-tests-localqueue" &&
      output.cluster_queue_name == "hyperpod-ns-module-tests-clusterqueue"
    )
    error_message = "The team's names are ${output.namespace}, ${output.local_queue_name}, ${output.cluster_queue_name}."
  }

  assert {
    condition = (
      output.amounts["ml.m5.4xlarge"].vcpu == 8 &&
      output.amounts["ml.m5.4xlarge"].memory_in_gib == 32 &&
      output.amounts["ml.m5.4xlarge"].accelerators == 0 &&
      output.amounts["ml.m5.4xlarge"].efa == 0
    )
    error_message = "ml.m5.4xlarge applied ${jsonencode(output.amounts["ml.m5.4xlarge"])}, want 8 vCPU, 32 GiB, no accelerators or EFA."
  }

  assert {
    condition     = hyperpod_compute_quota.this.cohort == "module-tests" && length(hyperpod_compute_quota.this.drift) == 0
    error_message = "The quota was applied in cohort ${hyperpod_compute_quota.this.cohort} with drift ${jsonencode(hyperpod_compute_quota.this.drift)}."
  }
}

# A job of 4 vCPU and 8 GiB in the team's namespace, with its queue label: the helper module
# submits it, waits until the ClusterQueue counts it admitted, then reads the queue as Kueue
# reports it (data "hyperpod_team_usage").
run "job_admitted" {
  module {
    source = "./tests/job"
  }

  variables {
    team               = run.team.team
    namespace          = run.team.namespace
    local_queue_name   = run.team.local_queue_name
    cluster_queue_name = run.team.cluster_queue_name
    cpu                = 4
    memory_in_gib      = 8
  }

  assert {
    condition     = output.usage.active && output.usage.admitted_workloads == 1 && output.usage.pending_workloads == 0
    error_message = "The queue is active: ${output.usage.active} (${output.usage.active_reason}), with ${output.usage.admitted_workloads} admitted and ${output.usage.pending_workloads} pending workloads; want active, 1 and 0."
  }

  # The ClusterQueue holds the amounts the first run applied.
  assert {
    condition = (
      output.by_resource["ml.m5.4xlarge cpu"].nominal == 8 &&
      output.by_resource["ml.m5.4xlarge memory"].nominal == 32
    )
    error_message = "The queue's ml.m5.4xlarge cpu is ${jsonencode(output.by_resource["ml.m5.4xlarge cpu"])} and memory ${jsonencode(output.by_resource["ml.m5.4xlarge memory"])}: want a nominal quota of 8 vCPU and 32 GiB."
  }

  assert {
    condition = (
      output.by_resource["ml.m5.4xlarge cpu"].reserved == 4 &&
      output.by_resource["ml.m5.4xlarge memory"].reserved == 8 &&
      output.by_resource["ml.m5.4xlarge cpu"].borrowed == 0
    )
    error_message = "The queue's ml.m5.4xlarge cpu is ${jsonencode(output.by_resource["ml.m5.4xlarge cpu"])} and memory ${jsonencode(output.by_resource["ml.m5.4xlarge memory"])}: want 4 vCPU and 8 GiB reserved, none borrowed."
  }
}
