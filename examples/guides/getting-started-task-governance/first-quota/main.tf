# A first quota on a HyperPod cluster with the task-governance add-on: the team's namespace
# through Kubernetes, and its compute quota through the SageMaker API.
terraform {
  required_version = ">= 1.11"
  required_providers {
    hyperpod = {
      source  = "quotaworks/hyperpod"
      version = "~> 0.1"
    }
  }
}

variable "hyperpod_cluster_arn" {
  type        = string
  description = "The HyperPod cluster's ARN, not the EKS cluster's (find-cluster.sh shows both)."
}

variable "kube_context" {
  type        = string
  description = "The kubeconfig context aws eks update-kubeconfig wrote for the EKS cluster: its ARN."
}

provider "hyperpod" {
  # Quotas and the cluster policy go through the SageMaker API, in the cluster's region, with
  # the credentials of the standard AWS chain (AWS_PROFILE and SSO, AWS_* variables, web
  # identity, the instance's role).
  task_governance {
    cluster_arn = var.hyperpod_cluster_arn
  }

  # Kubernetes, for team namespaces, team usage and Nodes: the context aws eks update-kubeconfig
  # wrote, whose token comes from aws eks get-token.
  config_path    = "~/.kube/config"
  config_context = var.kube_context
}

# The Namespace hyperpod-ns-guide-research. Its LocalQueue is the add-on's: the add-on creates
# it with the team's quota.
resource "hyperpod_team_namespace" "research" {
  team = "guide-research"
}

# The cluster's compute quota for the team: 2 of the 4 A10G GPUs of an ml.g5.12xlarge. The plan
# shows what follows from that ratio of 0.5 (vcpu = 24, memory_in_gib = 96) and the apply sends
# those numbers; efa stays null, the add-on decides it. quota_id is known after apply.
resource "hyperpod_compute_quota" "research" {
  name              = "guide-research"
  team              = hyperpod_team_namespace.research.team
  fair_share_weight = 1 # teams that borrow need a weight of at least 1

  resources = [
    { instance_type = "ml.g5.12xlarge", accelerators = 2 },
  ]
}

output "quota_id" {
  value = hyperpod_compute_quota.research.quota_id
}

# Jobs of the team carry this label (and run in the namespace above).
output "queue_label" {
  value = "kueue.x-k8s.io/queue-name: ${hyperpod_team_namespace.research.local_queue_name}"
}
