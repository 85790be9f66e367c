#!/usr/bin/env bash
# make demo: apply examples/quickstart to the local control plane (or the cluster that
# KUBE_CONFIG_PATH names) with a freshly built provider, and print what it did.
# Never touches ~/.terraformrc: the dev_overrides CLI config lives in a temporary folder.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
terraform="${TERRAFORM:-terraform}"

step() { printf '\n==> %s\n' "$*" >&2; }

if [[ -z "${KUBE_CONFIG_PATH:-}" ]]; then
  step "Starting the local control plane (kube-apiserver + etcd + Kueue CRDs + fake HyperPod nodes)"
  make --no-print-directory cluster-up >&2
  export KUBE_CONFIG_PATH="$repo/.cache/localcluster/kubeconfig"
  started_here=1
else
  step "Using the cluster in KUBE_CONFIG_PATH=$KUBE_CONFIG_PATH"
  started_here=0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

step "Building the provider"
go build -o "$tmp/plugins/terraform-provider-hyperpod" .

cat >"$tmp/terraformrc" <<CFG
provider_installation {
  dev_overrides {
    "quotaworks/hyperpod" = "$tmp/plugins"
  }
  direct {}
}
CFG
export TF_CLI_CONFIG_FILE="$tmp/terraformrc"
export TF_IN_AUTOMATION=1

# State survives between demos so a second run shows "no changes"; the cluster is the source of truth.
work="$repo/.cache/demo/quickstart"
mkdir -p "$work"
cp examples/quickstart/*.tf "$work/"

step "terraform init"
"$terraform" -chdir="$work" init -input=false -no-color >"$tmp/init.log" 2>&1 || { cat "$tmp/init.log" >&2; exit 1; }

step "terraform apply -auto-approve (examples/quickstart)"
# The dev_overrides warning Terraform prints is expected here.
"$terraform" -chdir="$work" apply -auto-approve -input=false -no-color >&2

step "Summary"
echo "Cluster: $KUBE_CONFIG_PATH"
"$terraform" -chdir="$work" output -raw summary
echo
echo
echo "Explore:  export KUBE_CONFIG_PATH=$KUBE_CONFIG_PATH"
echo "          terraform -chdir=$work output capacity"
if [[ "$started_here" == 1 ]]; then
  echo "Stop the local control plane with: make cluster-down"
fi
