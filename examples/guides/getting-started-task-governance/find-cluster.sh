# The HyperPod cluster's ARN (for the provider's task_governance block) and the EKS cluster that
# orchestrates it (for kubectl and the provider's Kubernetes connection).
hyperpod_cluster=my-hyperpod-cluster
region=us-west-2

aws sagemaker describe-cluster --cluster-name "$hyperpod_cluster" --region "$region" \
  --query '{hyperpod_cluster_arn: ClusterArn, eks_cluster_arn: Orchestrator.Eks.ClusterArn}'

# The task-governance add-on must be ACTIVE on that EKS cluster (its name is the end of the ARN).
eks_cluster_name=my-eks-cluster
aws eks describe-addon --cluster-name "$eks_cluster_name" --region "$region" \
  --addon-name amazon-sagemaker-hyperpod-taskgovernance --query 'addon.status' --output text

# A kubeconfig context for the EKS cluster, named after its ARN; its token comes from
# aws eks get-token, with the credentials you run Terraform with.
aws eks update-kubeconfig --name "$eks_cluster_name" --region "$region"
kubectl config current-context
