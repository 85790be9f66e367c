# Quotas made in the SageMaker console, taken over by Terraform: one block per team, written to
# match what the console holds, and the import blocks of imports.tf beside it.
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
  description = "The HyperPod cluster's ARN, not the EKS cluster's."
}

variable "kube_context" {
  type        = string
  description = "The kubeconfig context aws eks update-kubeconfig wrote for the EKS cluster: its ARN."
}

provider "hyperpod" {
  task_governance {
    cluster_arn = var.hyperpod_cluster_arn
  }
  config_path    = "~/.kube/config"
  config_context = var.kube_context
}

# Per team, what its quota holds (list-quotas.sh, or the console's policy page): the quota's
# name, one instance type sized by accelerators or by whole instances (count), and its weight.
variable "teams" {
  type = map(object({
    quota_name        = string
    instance_type     = string
    accelerators      = optional(number)
    count             = optional(number)
    fair_share_weight = optional(number, 0)
  }))
  default = {
    "guide-research"  = { quota_name = "research", instance_type = "ml.p5.48xlarge", accelerators = 8, fair_share_weight = 10 }
    "guide-inference" = { quota_name = "inference", instance_type = "ml.g5.12xlarge", count = 2 }
  }
}

# The namespaces hyperpod-ns-<team>, which the add-on created with the quotas.
resource "hyperpod_team_namespace" "team" {
  for_each = var.teams
  team     = each.key
}

resource "hyperpod_compute_quota" "team" {
  for_each = var.teams

  name              = each.value.quota_name
  team              = hyperpod_team_namespace.team[each.key].team
  fair_share_weight = each.value.fair_share_weight

  resources = [{
    instance_type = each.value.instance_type
    accelerators  = each.value.accelerators
    count         = each.value.count
  }]
}
