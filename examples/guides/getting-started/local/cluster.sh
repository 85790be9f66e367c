# In a clone of the repository, with Go 1.26 and Terraform >= 1.11 on PATH (no Docker, no
# cloud account). The first run builds kube-apiserver, etcd and Kueue's manager from source
# (about 10 minutes on 2 cores, once; cached in ~/.cache/terraform-provider-hyperpod/).

# (a) All in one: the local control plane, a fresh build of the provider, terraform apply of
#     examples/quickstart, some jobs and what Kueue decided about them.
make demo

# (b) Only the local control plane, for your own configuration.
make cluster-up
export KUBE_CONFIG_PATH="$PWD/.cache/localcluster/kubeconfig"
terraform -chdir=examples/guides/getting-started/first-quota init
terraform -chdir=examples/guides/getting-started/first-quota plan # no API request for the new quota
terraform -chdir=examples/guides/getting-started/first-quota apply

# What the provider wrote.
kubectl --kubeconfig "$KUBE_CONFIG_PATH" get clusterqueue hyperpod-ns-guide-research-clusterqueue -o yaml

# Stop the control plane; what it held is gone with it.
make cluster-down
