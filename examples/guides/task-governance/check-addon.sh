eks_cluster_name=my-eks-cluster

# Is the task-governance add-on installed? ACTIVE: the SageMaker path (a task_governance block).
# "ResourceNotFoundException": it is not, and the cluster needs a Kueue of its own for the
# Kubernetes path.
aws eks describe-addon --cluster-name "$eks_cluster_name" \
  --addon-name amazon-sagemaker-hyperpod-taskgovernance \
  --query '{status: addon.status, version: addon.addonVersion}'

# Which Kueue runs, and who wrote the queues: MANAGED-BY terraform-provider-hyperpod means this
# provider on the Kubernetes path; the add-on's queues carry no such label.
kubectl get deployments --all-namespaces -l app.kubernetes.io/name=kueue
kubectl get clusterqueues -L app.kubernetes.io/managed-by,sagemaker.amazonaws.com/quota-allocation-id
kubectl get workloadpriorityclasses -L app.kubernetes.io/managed-by
