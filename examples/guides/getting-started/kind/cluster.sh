# In a clone of the repository, on a machine with Docker, kind and kubectl: a kind cluster with
# the Kueue v0.19.2 CRDs and worker nodes labelled and sized like ml.g5.12xlarge instances.
# Only the CRDs are installed, not Kueue's manager: quotas are written and read back, but no
# job is admitted until you install Kueue itself.
make kind-up
export KUBE_CONFIG_PATH="$PWD/.cache/kind/kubeconfig"

terraform -chdir=examples/guides/getting-started/first-quota init
terraform -chdir=examples/guides/getting-started/first-quota apply

# make demo uses this cluster too while KUBE_CONFIG_PATH is set.
make demo

# Remove it.
kind delete cluster --name hyperpod-dev
