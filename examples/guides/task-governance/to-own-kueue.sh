# Step 2, from the add-on to your own Kueue. Before: no job runs that cannot be restarted, and
# nobody submits jobs until step 4.
eks_cluster_name=my-eks-cluster

kubectl get workloads --all-namespaces -o wide > workloads-before.txt

# Remove the add-on without --preserve, so that its Kueue goes with it.
aws eks delete-addon --cluster-name "$eks_cluster_name" \
  --addon-name amazon-sagemaker-hyperpod-taskgovernance
aws eks wait addon-deleted --cluster-name "$eks_cluster_name" \
  --addon-name amazon-sagemaker-hyperpod-taskgovernance

# AWS does not document what the add-on leaves behind: look. Queues and priority classes still
# listed here are imported in step 3 (teams/imports.tf); a leftover Kueue deployment goes first.
kubectl get crd -o name | grep kueue.x-k8s.io
kubectl get deployments --all-namespaces -l app.kubernetes.io/name=kueue
kubectl get clusterqueues,resourceflavors,workloadpriorityclasses
kubectl get localqueues --all-namespaces

# Then install Kueue as for any cluster of the Kubernetes path: helm install with fair sharing,
# as in the guide "Getting started", step 2 (install-kueue.sh).
