# A first quota: one team, half of an ml.g5.12xlarge's GPUs, and what the cluster has left.
# Works against the local control plane (make cluster-up), kind (make kind-up) or any cluster
# with Kueue that KUBE_CONFIG_PATH points at.
terraform {
  required_version = ">= 1.11"
  required_providers {
    hyperpod = {
      source  = "quotaworks/hyperpod"
      version = "~> 0.1"
    }
  }
}

# Everything comes from KUBE_CONFIG_PATH (export it before terraform plan), or set
# config_path and config_context here.
provider "hyperpod" {}

# The team's namespace hyperpod-ns-guide-research and the LocalQueue its jobs submit to.
resource "hyperpod_team_namespace" "research" {
  team = "guide-research"
}

# The team's ClusterQueue hyperpod-ns-guide-research-clusterqueue: 2 of the 4 A10G GPUs of an
# ml.g5.12xlarge. The plan shows what follows from that ratio of 0.5: vcpu = 24,
# memory_in_gib = 96, efa = 1.
resource "hyperpod_compute_quota" "research" {
  name              = "guide-research"
  team              = hyperpod_team_namespace.research.team
  fair_share_weight = 1 # teams that borrow need a weight of at least 1

  resources = [
    { instance_type = "ml.g5.12xlarge", accelerators = 2 },
  ]
}

# Read during plan: the ml.g5.12xlarge Nodes and what every ClusterQueue already claims of them.
data "hyperpod_instance_type_capacity" "g5" {
  instance_type = "ml.g5.12xlarge"
}

output "g5_gpus" {
  value = {
    nodes       = data.hyperpod_instance_type_capacity.g5.node_count
    total       = data.hyperpod_instance_type_capacity.g5.total_accelerators
    unallocated = data.hyperpod_instance_type_capacity.g5.unallocated_accelerators
  }
}

# Jobs of the team carry this label (and run in the namespace above).
output "queue_label" {
  value = "kueue.x-k8s.io/queue-name: ${hyperpod_team_namespace.research.local_queue_name}"
}
