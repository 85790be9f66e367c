# A HyperPod cluster has its own name; the EKS cluster that orchestrates it has another.
# aws eks get-token and data "aws_eks_cluster" need the EKS cluster's name: the end of the
# HyperPod cluster's Orchestrator.Eks.ClusterArn.
aws sagemaker describe-cluster --cluster-name my-hyperpod-cluster \
  --query 'Orchestrator.Eks.ClusterArn' --output text
# arn:aws:eks:us-west-2:111122223333:cluster/my-eks-cluster

eks_arn=$(aws sagemaker describe-cluster --cluster-name my-hyperpod-cluster \
  --query 'Orchestrator.Eks.ClusterArn' --output text)
eks_cluster_name=${eks_arn##*/}

# Is the task-governance add-on installed? "ResourceNotFoundException" means no. If it is
# ACTIVE, the provider needs a task_governance block (the SageMaker path): see the guide
# "HyperPod task governance: the SageMaker API or your own Kueue".
aws eks describe-addon --cluster-name "$eks_cluster_name" \
  --addon-name amazon-sagemaker-hyperpod-taskgovernance --query 'addon.status' --output text

# Can you reach the cluster with the credentials Terraform will use?
aws eks update-kubeconfig --name "$eks_cluster_name" --region us-west-2
kubectl get nodes -L node.kubernetes.io/instance-type

# Does it run a Kueue already? Which versions does it serve (the provider needs v1beta2)?
kubectl get crd clusterqueues.kueue.x-k8s.io -o jsonpath='{.spec.versions[*].name}'
