# Best: the EKS cluster (and the HyperPod cluster and Kueue) in a configuration of their own,
# applied before the quotas; the quota configuration reads the cluster with data "aws_eks_cluster".

# If they must share one configuration: apply the cluster and Kueue first, on their own,
# then everything else. Only then is the hyperpod provider's configuration known while planning.
terraform apply -target=aws_eks_cluster.ml -target=helm_release.kueue
terraform apply
