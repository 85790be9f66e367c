# Cluster access for an EKS-orchestrated HyperPod cluster that already exists (created by
# another configuration, or applied on its own first: see "Why not create the EKS cluster in
# the same apply"). Then its endpoint and CA certificate are known while planning.

variable "region" {
  type    = string
  default = "us-west-2"
}

variable "eks_cluster_name" {
  type        = string
  description = "Name of the EKS cluster that orchestrates the HyperPod cluster (not the HyperPod cluster's name): the end of the HyperPod cluster's Orchestrator.Eks.ClusterArn."
}

provider "aws" {
  region = var.region
}

data "aws_eks_cluster" "ml" {
  name = var.eks_cluster_name
}

provider "hyperpod" {
  host                   = data.aws_eks_cluster.ml.endpoint
  cluster_ca_certificate = base64decode(data.aws_eks_cluster.ml.certificate_authority[0].data)

  # A short-lived token from the AWS CLI, fetched when the provider first needs the cluster,
  # with the credentials Terraform runs with. It needs the EKS cluster's name.
  exec {
    api_version = "client.authentication.k8s.io/v1beta1"
    command     = "aws"
    args        = ["eks", "get-token", "--cluster-name", var.eks_cluster_name, "--region", var.region]
  }
}
