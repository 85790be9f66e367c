# What the provider wrote, as Kueue sees it.
kubectl get clusterqueues -L sagemaker.amazonaws.com/quota-allocation-id,app.kubernetes.io/managed-by
kubectl get clusterqueue hyperpod-ns-guide-research-clusterqueue -o yaml
kubectl get resourceflavors
kubectl get localqueues --all-namespaces
kubectl get workloadpriorityclasses

# Kueue's decisions for the team's jobs, and whether fair sharing is on.
kubectl -n hyperpod-ns-guide-research get workloads
kubectl -n kueue-system get configmap kueue-manager-config -o yaml
