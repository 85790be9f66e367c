# The SageMaker path: a HyperPod cluster with the task-governance add-on. Quotas and the cluster
# policy are written through the SageMaker API; the add-on turns them into Kueue objects.
provider "hyperpod" {
  task_governance {
    # The HyperPod cluster's ARN (not the EKS cluster's). The SageMaker API is called in its
    # region, us-west-2 here.
    cluster_arn = var.hyperpod_cluster_arn

    # Credentials come from the standard AWS chain, as for the aws provider: AWS_* variables,
    # a profile of the shared config files (SSO included), web identity or pod identity. A role
    # assumed on top of them (optional) keeps the quota permissions in one role.
    assume_role {
      role_arn     = "arn:aws:iam::111122223333:role/hyperpod-quota-admin"
      session_name = "terraform-hyperpod"
    }
  }

  # The same budget for SageMaker's throttling and 5xx answers as for the Kubernetes API's.
  retry {
    max_elapsed = "5m"
  }

  # Optional Kubernetes connection, which the provider uses only to read Nodes and Kueue's
  # status and to write team namespaces (hyperpod_team_namespace and hyperpod_team_usage need it).
  host                   = data.aws_eks_cluster.ml.endpoint
  cluster_ca_certificate = base64decode(data.aws_eks_cluster.ml.certificate_authority[0].data)
  exec {
    api_version = "client.authentication.k8s.io/v1beta1"
    command     = "aws"
    args        = ["eks", "get-token", "--cluster-name", var.eks_cluster_name, "--region", "us-west-2"]
  }
}

variable "hyperpod_cluster_arn" {
  type        = string
  description = "aws sagemaker describe-cluster --cluster-name <name> --query ClusterArn, e.g. arn:aws:sagemaker:us-west-2:111122223333:cluster/abcd1234efgh."
}

variable "eks_cluster_name" {
  type        = string
  description = "The EKS cluster that orchestrates the HyperPod cluster, for the Kubernetes connection's token."
}
