#!/usr/bin/env bash
# make demo: apply examples/quickstart to the local control plane (or the cluster that
# KUBE_CONFIG_PATH names) with a freshly built provider, and print what it did.
# Never touches ~/.terraformrc: the dev_overrides CLI config lives in a temporary folder.
#
# make demo-task-governance (--task-governance): the same through the SageMaker API, on a local
# control plane of its own that stands for a HyperPod cluster with the task-governance add-on
# (localcluster up --task-governance): only the example's provider block changes.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
terraform="${TERRAFORM:-terraform}"

task_governance=0
case "${1:-}" in
  "") ;;
  --task-governance) task_governance=1 ;;
  *) echo "usage: scripts/demo.sh [--task-governance]" >&2; exit 2 ;;
esac

step() { printf '\n==> %s\n' "$*" >&2; }

if [[ "$task_governance" == 1 ]]; then
  # The emulator runs only beside the local control plane, so KUBE_CONFIG_PATH cannot name another.
  if [[ -n "${KUBE_CONFIG_PATH:-}" ]]; then
    step "Ignoring KUBE_CONFIG_PATH=$KUBE_CONFIG_PATH: the task-governance demo runs on a local control plane of its own"
  fi
  step "Starting a local HyperPod cluster with the task-governance add-on (control plane + Kueue + fake nodes, the add-on's mark, the SageMaker API emulator with the add-on's stand-in)"
  make --no-print-directory cluster-up-task-governance >&2
  cluster_dir="$repo/.cache/localcluster-tg"
  export KUBE_CONFIG_PATH="$cluster_dir/kubeconfig"
  started_here=1
elif [[ -z "${KUBE_CONFIG_PATH:-}" ]]; then
  step "Starting the local control plane (kube-apiserver + etcd + Kueue CRDs and manager + fake HyperPod nodes)"
  make --no-print-directory cluster-up >&2
  export KUBE_CONFIG_PATH="$repo/.cache/localcluster/kubeconfig"
  started_here=1
else
  step "Using the cluster in KUBE_CONFIG_PATH=$KUBE_CONFIG_PATH"
  started_here=0
fi

# Before anything is written: refuse a cluster this repository's harness did not start (it
# could be production) unless HYPERPOD_DISPOSABLE_CLUSTER=1 says it is disposable. One GET of
# the marker Namespace, on the cluster the provider resolves from KUBE_CONFIG_PATH, KUBE_CTX,
# KUBE_HOST...; run for the local control plane too, in case those variables point elsewhere.
step "Checking that the cluster is disposable"
check_flags=()
if [[ "$started_here" == 1 ]]; then check_flags+=(--started-here); fi
if ! go run ./internal/cmd/localcluster check-disposable ${check_flags[@]+"${check_flags[@]}"}; then
  echo "make demo: stopped before writing anything to the cluster." >&2
  exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

step "Building the provider"
go build -o "$tmp/plugins/terraform-provider-hyperpod" .
go build -o "$tmp/localcluster" ./internal/cmd/localcluster
go build -o "$tmp/hyperpod-plan-review" ./cmd/hyperpod-plan-review

# dev_overrides makes plan and apply use the fresh build. `terraform init` ignores it and still
# resolves quotaworks/hyperpod (unpublished) for the lock file, so the same build is also offered
# as a local filesystem mirror: init then succeeds offline instead of asking the registry.
version="0.1.0" # a release version (init never picks pre-releases from a mirror) within the example's "~> 0.1"
platform="$(go env GOOS)_$(go env GOARCH)"
mirror="$tmp/mirror/registry.terraform.io/quotaworks/hyperpod/$version/$platform"
mkdir -p "$mirror"
cp "$tmp/plugins/terraform-provider-hyperpod" "$mirror/terraform-provider-hyperpod_v$version"

cat >"$tmp/terraformrc" <<CFG
provider_installation {
  dev_overrides {
    "quotaworks/hyperpod" = "$tmp/plugins"
  }
  filesystem_mirror {
    path    = "$tmp/mirror"
    include = ["registry.terraform.io/quotaworks/hyperpod"]
  }
  direct {
    exclude = ["registry.terraform.io/quotaworks/hyperpod"]
  }
}
CFG
export TF_CLI_CONFIG_FILE="$tmp/terraformrc"
export TF_IN_AUTOMATION=1

# State survives between demos so a second run shows "no changes"; the cluster is the source of truth.
work="$repo/.cache/demo/quickstart"
if [[ "$task_governance" == 1 ]]; then work="$work-task-governance"; fi
mkdir -p "$work"
rm -f "$work"/*.tf # a file removed from the example must not linger here
cp examples/quickstart/*.tf "$work/"

if [[ "$task_governance" == 1 ]]; then
  # Only the provider block changes: the one that localcluster wrote reaches the SageMaker API emulator.
  empty_block='provider "hyperpod" {}'
  if ! grep -qxF "$empty_block" "$work/main.tf"; then
    echo "make demo-task-governance: examples/quickstart/main.tf has no line '$empty_block' to replace" >&2
    exit 1
  fi
  if [[ ! -s "$cluster_dir/provider.hcl" ]]; then
    echo "make demo-task-governance: $cluster_dir/provider.hcl is missing; run make cluster-down and try again" >&2
    exit 1
  fi
  awk -v empty="$empty_block" -v block_file="$cluster_dir/provider.hcl" '
    $0 == empty { while ((getline line < block_file) > 0) print line; next }
    { print }' "$work/main.tf" >"$tmp/main.tf"
  mv "$tmp/main.tf" "$work/main.tf"
fi

# Each build is a new package, so the lock file of the previous demo would not match it.
rm -rf "$work/.terraform" "$work/.terraform.lock.hcl"
step "terraform init"
"$terraform" -chdir="$work" init -input=false -no-color >"$tmp/init.log" 2>&1 || { cat "$tmp/init.log" >&2; exit 1; }

# If the cluster was restarted since the last demo, the state names objects that are gone:
# refresh drops them from state and the plan creates them again.
step "terraform apply -auto-approve (examples/quickstart)"
# The dev_overrides warning Terraform prints is expected here.
"$terraform" -chdir="$work" apply -auto-approve -input=false -no-color >&2

step "Capacity per instance type (terraform output summary)"
"$terraform" -chdir="$work" output -raw summary
echo

if [[ "$task_governance" == 1 ]]; then
  step "Quotas per team, as the task-governance add-on wrote them from the SageMaker API's compute quotas (localcluster queues)"
else
  step "Quotas per team, as the cluster holds them (localcluster queues)"
fi
"$tmp/localcluster" queues --kubeconfig "$KUBE_CONFIG_PATH"

# The jobs really run wherever a kubelet does, so they go only to the control plane this demo
# started (no kubelet: admitted jobs never start pods) unless HYPERPOD_DEMO_JOBS=1 asks for them.
# Submitting replaces the jobs of a previous demo, so every run shows the same decisions.
jobs_file=examples/quickstart/jobs.yaml
submitted=0
kueue_off=0
case "$(tr '[:upper:]' '[:lower:]' <<<"${HYPERPOD_KUEUE:-}")" in off | 0 | false | no) kueue_off=1 ;; esac
if [[ "${HYPERPOD_DEMO_JOBS:-}" == 1 ]] || [[ "$started_here" == 1 && "$kueue_off" == 0 ]]; then
  step "Submitting the jobs in $jobs_file (suspended batch/v1 Jobs; Kueue decides which run)"
  "$tmp/localcluster" jobs --submit --file "$jobs_file" --kubeconfig "$KUBE_CONFIG_PATH"
  submitted=1
elif [[ "$started_here" == 1 ]]; then
  step "Not submitting the jobs in $jobs_file: HYPERPOD_KUEUE=$HYPERPOD_KUEUE, so no Kueue manager would decide them"
else
  step "Not submitting the jobs in $jobs_file: on this cluster they would really run (busybox pods in the teams' namespaces); HYPERPOD_DEMO_JOBS=1 submits them"
fi

# Data sources are read again on refresh: the usage outputs now show what the jobs hold.
step "Usage per team (data.hyperpod_team_usage, terraform output usage_summary)"
"$terraform" -chdir="$work" apply -refresh-only -auto-approve -input=false -no-color >"$tmp/refresh.log" 2>&1 ||
  { cat "$tmp/refresh.log" >&2; exit 1; }
"$terraform" -chdir="$work" output -raw usage_summary
echo

# A change reviewed before it is applied: a third ml.g5.12xlarge for inference, whose batch-eval
# job waits for 4 more GPUs. The plan's admission preview and the review of the saved plan say
# what the change does to the jobs; the apply shows Kueue doing it, and the demo then returns to
# the example's configuration (an override file, removed again).
if [[ "$submitted" == 1 ]]; then
  override="$work/demo_preview_override.tf"
  trap 'rm -rf "$tmp" "$override"' EXIT
  cat >"$override" <<'HCL'
resource "hyperpod_compute_quota" "inference" {
  resources = [{ instance_type = "ml.g5.12xlarge", count = 3 }]
}
HCL
  step "Admission preview: inference gets a third ml.g5.12xlarge (terraform plan, the warning it prints)"
  "$terraform" -chdir="$work" plan -input=false -no-color -out="$tmp/preview.tfplan" >"$tmp/preview.log" 2>&1 ||
    { cat "$tmp/preview.log" >&2; exit 1; }
  sed -n '/Warning: Admission preview/,/╵/p' "$tmp/preview.log"
  step "The same plan reviewed for a pull request (hyperpod-plan-review, Markdown)"
  "$terraform" -chdir="$work" show -json "$tmp/preview.tfplan" >"$tmp/preview.json"
  "$tmp/hyperpod-plan-review" -plan "$tmp/preview.json" -kubeconfig "$KUBE_CONFIG_PATH"
  step "Applying it: what Kueue decided (localcluster jobs)"
  "$terraform" -chdir="$work" apply -input=false -no-color "$tmp/preview.tfplan" >"$tmp/preview-apply.log" 2>&1 ||
    { cat "$tmp/preview-apply.log" >&2; exit 1; }
  "$tmp/localcluster" jobs --file "$jobs_file" --kubeconfig "$KUBE_CONFIG_PATH" --wait-admitted hyperpod-ns-inference/batch-eval
  rm -f "$override"
  step "Back to the example's configuration (terraform apply)"
  "$terraform" -chdir="$work" apply -auto-approve -input=false -no-color >"$tmp/revert.log" 2>&1 ||
    { cat "$tmp/revert.log" >&2; exit 1; }
fi

echo >&2
echo "Cluster:  $KUBE_CONFIG_PATH" >&2
echo "Explore:  export KUBE_CONFIG_PATH=$KUBE_CONFIG_PATH" >&2
echo "          terraform -chdir=$work output quotas" >&2
echo "          terraform -chdir=$work output usage" >&2
echo "          go run ./internal/cmd/localcluster queues --all" >&2
if [[ "$submitted" == 1 ]]; then
  echo "          go run ./internal/cmd/localcluster jobs --file $jobs_file            # Kueue's decisions now" >&2
  echo "          go run ./internal/cmd/localcluster jobs --file $jobs_file --delete   # remove the jobs" >&2
fi
if [[ "$task_governance" == 1 ]]; then
  echo "Provider: $cluster_dir/provider.hcl (the SageMaker API emulator lives as long as this control plane)" >&2
fi
if [[ "$started_here" == 1 ]]; then
  echo "Stop the local control plane with: make cluster-down" >&2
fi
