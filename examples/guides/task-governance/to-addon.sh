# Step 2, from your own Kueue to the add-on. The add-on brings its own Kueue and refuses to
# install next to another one, so yours goes first. Before: no job runs that cannot be
# restarted, and nobody submits jobs until step 4.
eks_cluster_name=my-eks-cluster

# What runs and waits now, to compare with afterwards.
kubectl get workloads --all-namespaces -o wide > workloads-before.txt

# Remove your Kueue the way it was installed, e.g. for the Helm chart of the getting-started guide:
helm uninstall kueue --namespace kueue-system
# Nothing of it may be left: no kueue.x-k8s.io CRD (one stuck in deletion names the objects
# whose finalizers hold it), no Kueue deployment.
kubectl get crd -o name | grep kueue.x-k8s.io
kubectl get deployments --all-namespaces -l app.kubernetes.io/name=kueue

# Install the add-on (or from the HyperPod cluster's page in the SageMaker console).
aws eks create-addon --cluster-name "$eks_cluster_name" \
  --addon-name amazon-sagemaker-hyperpod-taskgovernance
aws eks wait addon-active --cluster-name "$eks_cluster_name" \
  --addon-name amazon-sagemaker-hyperpod-taskgovernance
