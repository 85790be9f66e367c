# The Kubernetes path: a cluster that runs its own Kueue, without the task-governance add-on
# (which brings its own Kueue and refuses to install next to another one). Run it once, as a
# cluster administrator, before the first quota.
#
# Kueue v0.19.2 with fair sharing on and the integrations of the HyperPod CLI's jobs
# (kueue-values.yaml; see "Jobs: Kueue integrations and queue labels"). Any Kueue from v0.15
# serves kueue.x-k8s.io/v1beta2, which the provider needs; see "Supported versions".
helm install kueue oci://registry.k8s.io/kueue/charts/kueue --version 0.19.2 \
  --namespace kueue-system --create-namespace \
  --values kueue-values.yaml --wait
kubectl -n kueue-system rollout status deployment/kueue-controller-manager

# Fair sharing on? The manager's configuration has the fairSharing block:
kubectl -n kueue-system get configmap kueue-manager-config -o jsonpath='{.data.controller_manager_config\.yaml}' |
  grep -A1 fairSharing

# Serves v1beta2? (A cluster that serves only v1beta1 is refused with an error naming the version.)
kubectl get crd clusterqueues.kueue.x-k8s.io -o jsonpath='{.spec.versions[*].name}'

# Later, to change the configuration (or upgrade): helm upgrade with the same values. Kueue's
# manager reads its configuration at start, and the chart restarts it when the ConfigMap changes.
