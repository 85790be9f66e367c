# Best: the EKS cluster, the HyperPod cluster and Kueue in a configuration of their own, applied
# before the quotas; the quota configuration reads the cluster with data "aws_eks_cluster".

# If they must share one configuration: apply the cluster and Kueue first, on their own, naming
# the addresses your configuration gives them (these are placeholders: the guide's example
# declares neither), then everything else. Only then is the hyperpod provider's configuration
# known while planning.
terraform apply -target='<the EKS cluster resource>' -target='<the Kueue installation>'
terraform apply
