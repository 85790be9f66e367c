#!/usr/bin/env bash
# kind-up.sh: a kind cluster that looks enough like a SageMaker HyperPod cluster for the
# provider, for machines with Docker (`make kind-up`). It installs the same Kueue CRDs as
# the local control plane and dresses the kind worker nodes as HyperPod instances:
#   - labels node.kubernetes.io/instance-type, sagemaker.amazonaws.com/node-health-status,
#     topology.kubernetes.io/{region,zone}
#   - extended resources nvidia.com/gpu and vpc.amazonaws.com/efa patched into
#     status.capacity (the kubelet copies them to allocatable). cpu and memory stay what
#     the kubelet reports for the Docker host; it would overwrite anything patched there.
# The Kueue manager is not installed, only its CRDs (the local control plane runs the manager too),
# so the end-to-end admission tests need the local control plane.
# The cluster gets the Namespace hyperpod-provider-dev-cluster, the marker without which
# `make test` and `make demo` refuse to use it.
#
# Idempotent: an existing cluster of the same name is reused.
#
# Environment (defaults in brackets):
#   KIND_CLUSTER_NAME   [hyperpod-dev]
#   KIND_NODE_IMAGE     [kind's default node image]
#   KIND_WORKERS        [2]   worker nodes; with 0 the control-plane node is dressed instead
#   KIND_INSTANCE_TYPE  [ml.g5.12xlarge]
#   KIND_GPUS           [4]   nvidia.com/gpu per node (0: none)
#   KIND_EFA            [1]   vpc.amazonaws.com/efa per node (0: none)
#   KUEUE_VERSION       [v0.19.2]
set -euo pipefail

KIND_CLUSTER_NAME=${KIND_CLUSTER_NAME:-hyperpod-dev}
KIND_NODE_IMAGE=${KIND_NODE_IMAGE:-}
KIND_WORKERS=${KIND_WORKERS:-2}
KIND_INSTANCE_TYPE=${KIND_INSTANCE_TYPE:-ml.g5.12xlarge}
KIND_GPUS=${KIND_GPUS:-4}
KIND_EFA=${KIND_EFA:-1}
KUEUE_VERSION=${KUEUE_VERSION:-v0.19.2}
REGION=us-west-2
ZONE=us-west-2a

log() { printf 'kind-up: %s\n' "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

for tool in kind kubectl go; do
	command -v "${tool}" >/dev/null 2>&1 || die "${tool} is not on PATH"
done
[[ "${KIND_WORKERS}" =~ ^[0-9]+$ ]] || die "KIND_WORKERS must be a number, got '${KIND_WORKERS}'"

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
repo_root=$(cd -- "${script_dir}/.." && pwd -P)
kubeconfig="${repo_root}/.cache/kind/kubeconfig"
mkdir -p -- "$(dirname -- "${kubeconfig}")"

k() { kubectl --kubeconfig "${kubeconfig}" "$@"; }

# 1. The cluster.
if kind get clusters 2>/dev/null | grep -qx -- "${KIND_CLUSTER_NAME}"; then
	log "reusing kind cluster ${KIND_CLUSTER_NAME}"
	kind export kubeconfig --name "${KIND_CLUSTER_NAME}" --kubeconfig "${kubeconfig}" >&2
else
	log "creating kind cluster ${KIND_CLUSTER_NAME} (1 control plane, ${KIND_WORKERS} workers)"
	config=$'kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n- role: control-plane\n'
	for ((i = 0; i < KIND_WORKERS; i++)); do
		config+=$'- role: worker\n'
	done
	create_args=(create cluster --name "${KIND_CLUSTER_NAME}" --kubeconfig "${kubeconfig}" --wait 180s --config -)
	if [[ -n "${KIND_NODE_IMAGE}" ]]; then
		create_args+=(--image "${KIND_NODE_IMAGE}")
	fi
	printf '%s' "${config}" | kind "${create_args[@]}" >&2
fi

# The marker of a disposable cluster: `make test` and `make demo` refuse clusters without it
# (internal/localcluster/disposable.go has the names). A reused cluster keeps its creation time.
marker=hyperpod-provider-dev-cluster
if ! k get namespace "${marker}" >/dev/null 2>&1; then
	log "marking the cluster as disposable (Namespace ${marker})"
	k create -f - >&2 <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: ${marker}
  labels:
    hyperpod.quotaworks.io/disposable-cluster: "true"
  annotations:
    hyperpod.quotaworks.io/created-by: "kind-up.sh (kind cluster ${KIND_CLUSTER_NAME})"
    hyperpod.quotaworks.io/created-at: "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    hyperpod.quotaworks.io/note: "This cluster was created by the terraform-provider-hyperpod development harness and may be written to by its acceptance tests and demo. Never create this Namespace on a cluster that matters."
EOF
fi
k label --overwrite namespace "${marker}" hyperpod.quotaworks.io/disposable-cluster=true >/dev/null

# 2. The Kueue CRDs, from the module proxy like the local control plane.
log "installing the Kueue ${KUEUE_VERSION} CRDs"
kueue_dir=$(cd -- "${repo_root}" && GOWORK=off go mod download -json "sigs.k8s.io/kueue@${KUEUE_VERSION}" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
crds="${kueue_dir}/config/components/crd/bases"
compgen -G "${crds}/*.yaml" >/dev/null || die "no CRDs in ${crds}"
k apply --server-side --force-conflicts --field-manager=hyperpod-kind-up -f "${crds}" >&2
k wait --for condition=established --timeout=120s -f "${crds}" >&2

# 3. Dress the nodes as HyperPod instances.
if ((KIND_WORKERS > 0)); then
	selector='!node-role.kubernetes.io/control-plane'
else
	selector='node-role.kubernetes.io/control-plane'
	# A lone control-plane node must accept workloads.
	k taint nodes -l "${selector}" node-role.kubernetes.io/control-plane:NoSchedule- >/dev/null 2>&1 || true
fi
nodes=()
while IFS= read -r node; do nodes+=("${node}"); done < <(k get nodes -l "${selector}" -o name)
((${#nodes[@]} > 0)) || die "no nodes match ${selector}"

patch='['
sep=''
add_capacity() { # resource (with / escaped as ~1) and count
	patch+="${sep}{\"op\":\"add\",\"path\":\"/status/capacity/$1\",\"value\":\"$2\"}"
	sep=','
}
if ((KIND_GPUS > 0)); then add_capacity 'nvidia.com~1gpu' "${KIND_GPUS}"; fi
if ((KIND_EFA > 0)); then add_capacity 'vpc.amazonaws.com~1efa' "${KIND_EFA}"; fi
patch+=']'

for node in "${nodes[@]}"; do
	log "${node}: ${KIND_INSTANCE_TYPE}, ${KIND_GPUS} nvidia.com/gpu, ${KIND_EFA} vpc.amazonaws.com/efa"
	k label --overwrite "${node}" \
		"node.kubernetes.io/instance-type=${KIND_INSTANCE_TYPE}" \
		sagemaker.amazonaws.com/node-health-status=Schedulable \
		"topology.kubernetes.io/region=${REGION}" \
		"topology.kubernetes.io/zone=${ZONE}" >&2
	if [[ "${patch}" != '[]' ]]; then
		k patch "${node}" --subresource=status --type=json -p "${patch}" >&2
	fi
done

log "ready; kubectl --kubeconfig ${kubeconfig} get nodes -L node.kubernetes.io/instance-type"
log "delete it with: kind delete cluster --name ${KIND_CLUSTER_NAME}"
printf 'export KUBE_CONFIG_PATH=%s\n' "${kubeconfig}"
