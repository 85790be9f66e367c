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
go build -o "$tmp/localcluster" ./internal/cmd/localcluster

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
rm -f "$work"/*.tf # a file removed from the example must not linger here
cp examples/quickstart/*.tf "$work/"

# No `terraform init`: the quickstart uses this provider only, which dev_overrides supplies, and
# init would still ask registry.terraform.io for quotaworks/hyperpod (unpublished; offline here)
# and fail. plan and apply work without it.

# If the cluster was restarted since the last demo, the state names objects that are gone:
# refresh drops them from state and the plan creates them again.
step "terraform apply -auto-approve (examples/quickstart)"
# The dev_overrides warning Terraform prints is expected here.
"$terraform" -chdir="$work" apply -auto-approve -input=false -no-color >&2

echo >&2
echo "Cluster:  $KUBE_CONFIG_PATH" >&2
echo "Explore:  export KUBE_CONFIG_PATH=$KUBE_CONFIG_PATH" >&2
echo "          terraform -chdir=$work output quotas" >&2
echo "          go run ./internal/cmd/localcluster queues --all" >&2
if [[ "$started_here" == 1 ]]; then
  echo "Stop the local control plane with: make cluster-down" >&2
fi

step "Capacity per instance type (terraform output summary)"
"$terraform" -chdir="$work" output -raw summary
echo

step "Quotas per team, as the cluster holds them (localcluster queues)"
"$tmp/localcluster" queues --kubeconfig "$KUBE_CONFIG_PATH"
