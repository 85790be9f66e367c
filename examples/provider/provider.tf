terraform {
  required_providers {
    hyperpod = {
      source  = "quotaworks/hyperpod"
      version = "~> 0.1"
    }
  }
}

# Local or kind cluster: everything comes from the kubeconfig (or KUBE_CONFIG_PATH).
provider "hyperpod" {
  config_path    = "~/.kube/config"
  config_context = "kind-hyperpod-dev"
}

# EKS HyperPod cluster: short-lived token from the AWS CLI, retries for a busy API server,
# and an instance type the built-in catalog does not know yet.
provider "hyperpod" {
  alias                  = "eks"
  host                   = "https://ABCDEF0123456789.gr7.us-west-2.eks.amazonaws.com"
  cluster_ca_certificate = base64decode(var.cluster_ca_data)

  exec {
    api_version = "client.authentication.k8s.io/v1beta1"
    command     = "aws"
    args        = ["eks", "get-token", "--cluster-name", "ml-cluster"]
  }

  retry {
    max_attempts = 8
    max_backoff  = "20s"
  }

  instance_types = {
    "ml.g7.12xlarge" = {
      accelerators  = 4
      vcpu          = 48
      memory_in_gib = 384
      efa           = 1
    }
  }
}

# HyperPod cluster with AWS's task-governance add-on: quotas and the cluster policy go through
# the SageMaker API, with credentials from the standard AWS chain and a role assumed on top.
# The Kubernetes settings (optional here) serve team namespaces, team usage and Nodes.
provider "hyperpod" {
  alias                  = "task_governance"
  host                   = "https://ABCDEF0123456789.gr7.us-west-2.eks.amazonaws.com"
  cluster_ca_certificate = base64decode(var.cluster_ca_data)

  exec {
    api_version = "client.authentication.k8s.io/v1beta1"
    command     = "aws"
    args        = ["eks", "get-token", "--cluster-name", "ml-cluster"]
  }

  task_governance {
    cluster_arn = "arn:aws:sagemaker:us-west-2:111122223333:cluster/abcd1234efgh"

    assume_role {
      role_arn = "arn:aws:iam::111122223333:role/hyperpod-quota-admin"
    }
  }
}

variable "cluster_ca_data" {
  type        = string
  description = "Base64-encoded CA certificate of the EKS cluster."
}
