# Give the IAM principal that runs Terraform access to the EKS cluster. Use the role's ARN
# (arn:aws:iam::<account>:role/<name>), not the sts assumed-role ARN of a session.
eks_cluster_name=my-eks-cluster
principal_arn=arn:aws:iam::111122223333:role/platform-terraform

# Access entries need the authentication mode API or API_AND_CONFIG_MAP.
aws eks describe-cluster --name "$eks_cluster_name" \
  --query 'cluster.accessConfig.authenticationMode' --output text

aws eks create-access-entry --cluster-name "$eks_cluster_name" \
  --principal-arn "$principal_arn"

# Quick start only: administrator of the whole cluster.
aws eks associate-access-policy --cluster-name "$eks_cluster_name" \
  --principal-arn "$principal_arn" \
  --policy-arn arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy \
  --access-scope type=cluster
