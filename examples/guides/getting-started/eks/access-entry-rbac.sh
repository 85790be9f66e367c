# Least privilege: the access entry puts the principal into a Kubernetes group, and the
# ClusterRoleBinding in rbac.yaml gives that group exactly what the provider uses.
eks_cluster_name=my-eks-cluster
principal_arn=arn:aws:iam::111122223333:role/platform-terraform

aws eks create-access-entry --cluster-name "$eks_cluster_name" \
  --principal-arn "$principal_arn" \
  --kubernetes-groups hyperpod-quota-admins
# For an existing entry: aws eks update-access-entry ... --kubernetes-groups hyperpod-quota-admins
# (and aws eks disassociate-access-policy for a quick-start admin policy).

# Once, by a cluster administrator:
kubectl apply -f rbac.yaml

# Then, with the principal's credentials:
kubectl auth can-i patch clusterqueues.kueue.x-k8s.io     # yes
kubectl auth can-i delete namespaces                      # yes
kubectl auth can-i create deployments --all-namespaces    # no
