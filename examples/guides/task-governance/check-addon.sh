eks_cluster_name=my-eks-cluster

# Is the task-governance add-on installed? ("ResourceNotFoundException": it is not.)
aws eks describe-addon --cluster-name "$eks_cluster_name" \
  --addon-name amazon-sagemaker-hyperpod-taskgovernance \
  --query '{status: addon.status, version: addon.addonVersion}'

# Which Kueue runs, and who wrote the queues: an empty MANAGED-BY column means not this provider.
kubectl get deployments --all-namespaces -l app.kubernetes.io/name=kueue
kubectl get clusterqueues -L app.kubernetes.io/managed-by,sagemaker.amazonaws.com/quota-allocation-id
kubectl get workloadpriorityclasses -L app.kubernetes.io/managed-by
