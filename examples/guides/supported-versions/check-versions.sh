terraform version # 1.11 or newer (or: tofu version)
kubectl version   # the API server's version
aws eks describe-cluster --name my-eks-cluster --query cluster.version --output text

# The Kueue API versions the cluster serves: the provider needs v1beta2 (Kueue v0.15 through v0.19).
kubectl get crd clusterqueues.kueue.x-k8s.io -o jsonpath='{.spec.versions[*].name}'
# Kueue's own version, from the image of its manager: v0.15 through v0.19 are supported.
kubectl -n kueue-system get deployment kueue-controller-manager \
  -o jsonpath='{.spec.template.spec.containers[0].image}'
