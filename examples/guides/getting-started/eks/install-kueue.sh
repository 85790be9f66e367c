# The Kubernetes path: a cluster that runs its own Kueue, without the task-governance add-on
# (which brings its own Kueue and refuses to install next to another one).
# Kueue v0.15 or newer serves kueue.x-k8s.io/v1beta2; the provider is tested with v0.17.0.
kubectl apply --server-side \
  -f https://github.com/kubernetes-sigs/kueue/releases/download/v0.17.0/manifests.yaml
kubectl -n kueue-system rollout status deployment/kueue-controller-manager

# HyperPod's FairShare = Enabled (fair_share_weight matters) is a setting of Kueue's manager:
# in controller_manager_config.yaml, uncomment the fairSharing block
# (preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]), then restart it.
kubectl -n kueue-system edit configmap kueue-manager-config
kubectl -n kueue-system rollout restart deployment/kueue-controller-manager

# Serves v1beta2? (A cluster that serves only v1beta1 is refused with an error naming the version.)
kubectl get crd clusterqueues.kueue.x-k8s.io -o jsonpath='{.spec.versions[*].name}'
