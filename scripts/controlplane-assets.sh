#!/usr/bin/env bash
# controlplane-assets.sh: make sure the local control plane used by the acceptance tests,
# `make demo` and `make cluster-up` exists, and print its directory on stdout.
#
# The directory holds:
#   kube-apiserver  built from k8s.io/kubernetes through the Go module proxy
#   etcd            built from go.etcd.io/etcd/server/v3 through the Go module proxy
#   crds/*.yaml     the Kueue CRDs, copied from the sigs.k8s.io/kueue module zip
#   crds-jobs/      the Kubeflow Training Operator's PyTorchJob CRD, at the version Kueue's go.mod requires
#   kueue-manager   Kueue's controller manager (cmd/kueue), built from the same module
#   kueue-version   the Kueue release the directory was prepared for
#   kueue/          the module's webhook manifests and CRD conversion patches, from which the
#                   harness registers Kueue's webhooks with the local API server
#
# It is $HYPERPOD_CONTROLPLANE_DIR when set, otherwise a directory named after the versions
# below in the user's cache directory, so a fresh clone (as CI makes) reuses earlier builds.
# $HYPERPOD_KUEUE_VERSION picks the Kueue release (default: the one AWS's task-governance
# add-on ships). $HYPERPOD_K8S_VERSION picks the Kubernetes release (default: the newest; the
# other is the oldest minor that both SageMaker HyperPod and EKS support), each built from
# its own module under tools/ with the etcd release it ships with. Directories of different
# Kueue versions share one kube-apiserver and etcd build, linked from a directory named after
# the Kubernetes and etcd versions alone; directories of different Kubernetes versions share one
# Kueue manager build, linked from a directory named after the Kueue version alone (the manager
# is a client of the API server: its build does not depend on the server's version).
# Idempotent: only what is missing is built or copied. Builds write to a temporary name and
# are renamed into place, so an interrupted build never leaves a half-written binary.
# Only the directory goes to stdout; everything else goes to stderr. --servers-only builds
# kube-apiserver and etcd alone (into the same directory) and prints it.
set -euo pipefail

servers_only=false
case "${1:-}" in
--servers-only) servers_only=true ;;
"") ;;
*)
	printf 'usage: %s [--servers-only]\n' "$0" >&2
	exit 2
	;;
esac

# Kubernetes releases the suite runs, each with the tools module that pins it and the etcd
# release that Kubernetes release uses; the first is the default.
SUPPORTED_K8S_VERSIONS="v1.37.2 v1.32.13"
K8S_VERSION=${HYPERPOD_K8S_VERSION:-v1.37.2}
case "${K8S_VERSION}" in
v1.37.2)
	tools_module=controlplane
	ETCD_VERSION=v3.7.0
	;;
v1.32.13)
	tools_module=controlplane-k8s132
	ETCD_VERSION=v3.5.16
	;;
*)
	printf 'controlplane-assets: error: HYPERPOD_K8S_VERSION=%s is not one of: %s\n' "${K8S_VERSION}" "${SUPPORTED_K8S_VERSIONS}" >&2
	exit 1
	;;
esac
# Kueue releases the suite runs; the module proxy serves these (not v0.16, v0.18 or v0.20).
SUPPORTED_KUEUE_VERSIONS="v0.15.0 v0.17.0 v0.19.2"
KUEUE_VERSION=${HYPERPOD_KUEUE_VERSION:-v0.19.2}

log_name=controlplane-assets
# shellcheck source=scripts/assets-common.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/assets-common.sh"

[[ "$(pinned k8s.io/kubernetes)" == "${K8S_VERSION}" ]] ||
	die "tools/${tools_module}/go.mod pins k8s.io/kubernetes $(pinned k8s.io/kubernetes), this script says ${K8S_VERSION}: update the versions above"
[[ "$(pinned go.etcd.io/etcd/server/v3)" == "${ETCD_VERSION}" ]] ||
	die "tools/${tools_module}/go.mod pins go.etcd.io/etcd/server/v3 $(pinned go.etcd.io/etcd/server/v3), this script says ${ETCD_VERSION}: update the versions above"

[[ " ${SUPPORTED_KUEUE_VERSIONS} " == *" ${KUEUE_VERSION} "* ]] ||
	die "HYPERPOD_KUEUE_VERSION=${KUEUE_VERSION} is not one of: ${SUPPORTED_KUEUE_VERSIONS}"

k8s_minor=${K8S_VERSION#v}
k8s_major=${k8s_minor%%.*}
k8s_minor=${k8s_minor#*.}
k8s_minor=${k8s_minor%%.*}

cache_root=${XDG_CACHE_HOME:-${HOME}/.cache}/terraform-provider-hyperpod/controlplane
dir=${HYPERPOD_CONTROLPLANE_DIR:-${cache_root}/k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_kueue-${KUEUE_VERSION}}
mkdir -p -- "${dir}"
dir=$(cd -- "${dir}" && pwd -P)
prepared_for=$(cat -- "${dir}/kueue-version" 2>/dev/null || true)
[[ -z "${prepared_for}" || "${prepared_for}" == "${KUEUE_VERSION}" ]] ||
	die "${dir} holds Kueue ${prepared_for}: set HYPERPOD_KUEUE_VERSION=${prepared_for}, or HYPERPOD_CONTROLPLANE_DIR to another directory"
if [[ -x "${dir}/kube-apiserver" ]]; then
	built_for=$("${dir}/kube-apiserver" --version 2>/dev/null | sed -n 's/^Kubernetes //p')
	[[ "${built_for}" == "${K8S_VERSION}" ]] ||
		die "${dir} holds kube-apiserver ${built_for:-of an unknown version}: set HYPERPOD_K8S_VERSION=${built_for:-...}, or HYPERPOD_CONTROLPLANE_DIR to another directory"
fi
# kube-apiserver and etcd do not depend on the Kueue version, nor the Kueue manager on the
# Kubernetes version: each is built once per cache.
bin_dir=${dir}
kueue_bin_dir=${dir}
if [[ -z "${HYPERPOD_CONTROLPLANE_DIR:-}" ]]; then
	bin_dir=${cache_root}/k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}
	kueue_bin_dir=${cache_root}/kueue-${KUEUE_VERSION}
	mkdir -p -- "${bin_dir}" "${kueue_bin_dir}"
fi

# Serialise concurrent runs (make -j, two terminals) when flock is available.
if command -v flock >/dev/null 2>&1; then
	exec 9>"${dir}/.lock"
	if ! flock -n 9; then
		log "another run is preparing ${dir}; waiting for it"
		flock 9
	fi
fi

tmp_files=()
cleanup() {
	if ((${#tmp_files[@]})); then rm -rf -- "${tmp_files[@]}"; fi
}
trap cleanup EXIT

# build NAME PACKAGE [go build flags...]: go build into a temporary file, then rename; then
# link it into the Kueue version's directory.
build() {
	local name=$1 pkg=$2
	shift 2
	local out="${bin_dir}/${name}"
	if [[ -x "${dir}/${name}" ]]; then
		log "${name}: present"
		return
	fi
	if [[ -x "${out}" ]]; then
		log "${name}: present in ${bin_dir}"
		link_into_dir "${name}"
		return
	fi
	local tmp="${bin_dir}/.${name}.tmp.$$"
	tmp_files+=("${tmp}")
	log "${name}: building ${pkg} in tools/${tools_module} (a cold build of kube-apiserver and etcd takes ~5-10 minutes on 2 cores; later runs reuse ${dir})"
	local start=${SECONDS}
	(cd -- "${tools_dir}" && go build "$@" -o "${tmp}" "${pkg}") >&2
	"${tmp}" --version >/dev/null 2>&1 || die "${name}: the built binary does not run"
	mv -f -- "${tmp}" "${out}"
	log "${name}: built in $((SECONDS - start)) s"
	link_into_dir "${name}"
}

# link_into_dir NAME [FROM]: make FROM/NAME (default bin_dir) appear in dir (a hard link, or a
# copy across devices).
link_into_dir() {
	local from=${2:-${bin_dir}}
	[[ "${from}" == "${dir}" ]] && return
	local tmp="${dir}/.$1.link.$$"
	tmp_files+=("${tmp}")
	ln -f -- "${from}/$1" "${tmp}" 2>/dev/null || cp -- "${from}/$1" "${tmp}"
	mv -f -- "${tmp}" "${dir}/$1"
}

# Directories of two Kueue versions prepared at once must not both build the shared binaries.
if [[ "${bin_dir}" != "${dir}" ]] && command -v flock >/dev/null 2>&1; then
	exec 8>"${bin_dir}/.lock"
	flock 8
fi
build etcd go.etcd.io/etcd/server/v3 -ldflags "-s -w"
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver \
	-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=${K8S_VERSION} -X k8s.io/component-base/version.gitMajor=${k8s_major} -X k8s.io/component-base/version.gitMinor=${k8s_minor} -X k8s.io/component-base/version.gitTreeState=clean"
exec 8>&-
# With --servers-only the script ends here: scripts/test.sh builds the provider once the API
# server's packages, which the provider shares, are in Go's build cache.
if [[ "${servers_only}" == true ]]; then
	printf '%s\n' "${dir}"
	exit 0
fi

crds="${dir}/crds"
if compgen -G "${crds}/*.yaml" >/dev/null; then
	log "crds: present"
else
	log "crds: copying the Kueue ${KUEUE_VERSION} CRDs from the module proxy"
	kueue_dir=$(cd -- "${tools_dir}" && go mod download -json "sigs.k8s.io/kueue@${KUEUE_VERSION}" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
	src="${kueue_dir}/config/components/crd/bases"
	compgen -G "${src}/*.yaml" >/dev/null || die "no CRDs found in ${src}"
	tmp="${dir}/.crds.tmp.$$"
	tmp_files+=("${tmp}")
	mkdir -p -- "${tmp}"
	# The module cache is read-only; install gives the copies normal permissions.
	for f in "${src}"/*.yaml; do
		install -m 0644 -- "${f}" "${tmp}/"
	done
	rm -rf -- "${crds}"
	mv -- "${tmp}" "${crds}"
	log "crds: $(find "${crds}" -name '*.yaml' | wc -l | tr -d ' ') files"
fi

# The Kubeflow Training Operator's PyTorchJob CRD, at the version Kueue's go.mod requires, and
# no training operator: Kueue's kubeflow.org/pytorchjob integration admits PyTorchJobs, as it
# does for the HyperPod CLI's jobs; no pods ever run here anyway.
job_crds="${dir}/crds-jobs"
if [[ -f "${job_crds}/kubeflow.org_pytorchjobs.yaml" ]]; then
	log "crds-jobs: present"
else
	kueue_src=$(cd -- "${tools_dir}" && go mod download -json "sigs.k8s.io/kueue@${KUEUE_VERSION}" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
	training_operator_version=$(awk '$1 == "github.com/kubeflow/training-operator" { print $2; exit }' "${kueue_src}/go.mod")
	[[ -n "${training_operator_version}" ]] || die "Kueue ${KUEUE_VERSION}'s go.mod requires no github.com/kubeflow/training-operator"
	log "crds-jobs: copying the PyTorchJob CRD of github.com/kubeflow/training-operator@${training_operator_version} from the module proxy"
	training_operator_dir=$(cd -- "${tools_dir}" && go mod download -json "github.com/kubeflow/training-operator@${training_operator_version}" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
	src="${training_operator_dir}/manifests/base/crds/kubeflow.org_pytorchjobs.yaml"
	[[ -f "${src}" ]] || die "no PyTorchJob CRD at ${src}"
	tmp="${dir}/.crds-jobs.tmp.$$"
	tmp_files+=("${tmp}")
	mkdir -p -- "${tmp}"
	install -m 0644 -- "${src}" "${tmp}/"
	rm -rf -- "${job_crds}"
	mv -- "${tmp}" "${job_crds}"
	log "crds-jobs: copied"
fi

kueue_module_dir() {
	(cd -- "${tools_dir}" && go mod download -json "sigs.k8s.io/kueue@${KUEUE_VERSION}") |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p'
}

# Kueue's manager runs outside the cluster. Built in a writable copy of the module with one
# change: the metrics certificate directory, hard-coded to /etc/kueue/metrics/certs when
# internal certificate management is off, is read from $KUEUE_METRICS_CERT_DIR instead, so the
# manager runs without root and without writing to /etc.
if [[ -x "${dir}/kueue-manager" ]]; then
	log "kueue-manager: present"
else
	# Directories of two Kubernetes versions prepared at once must not both build it.
	if [[ "${kueue_bin_dir}" != "${dir}" ]] && command -v flock >/dev/null 2>&1; then
		exec 8>"${kueue_bin_dir}/.lock"
		flock 8
	fi
	if [[ -x "${kueue_bin_dir}/kueue-manager" ]]; then
		log "kueue-manager: present in ${kueue_bin_dir}"
	else
		log "kueue-manager: building sigs.k8s.io/kueue@${KUEUE_VERSION}/cmd/kueue (a cold build takes a few minutes)"
		start=${SECONDS}
		src=$(kueue_module_dir)
		[[ -f "${src}/cmd/kueue/main.go" ]] || die "no cmd/kueue in ${src}"
		work="${dir}/.kueue-src.tmp.$$"
		tmp_files+=("${work}")
		cp -R -- "${src}" "${work}"
		chmod -R u+w -- "${work}"
		main="${work}/cmd/kueue/main.go"
		grep -q 'metricsCertPath := "/etc/kueue/metrics/certs"' "${main}" ||
			die "cmd/kueue/main.go of Kueue ${KUEUE_VERSION} no longer hard-codes the metrics certificate path; update this script"
		sed -i.orig 's|metricsCertPath := "/etc/kueue/metrics/certs"|metricsCertPath := os.Getenv("KUEUE_METRICS_CERT_DIR")|' "${main}"
		tmp="${kueue_bin_dir}/.kueue-manager.tmp.$$"
		tmp_files+=("${tmp}")
		# Stripped (-s -w), so the compiler's debug information would be thrown away: without it
		# the build takes about 7% less CPU. Nothing else shares this build's packages.
		(cd -- "${work}" && GOFLAGS=-mod=readonly go build -gcflags=all=-dwarf=false \
			-ldflags "-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=${KUEUE_VERSION}" -o "${tmp}" ./cmd/kueue) >&2
		mv -f -- "${tmp}" "${kueue_bin_dir}/kueue-manager"
		log "kueue-manager: built in $((SECONDS - start)) s"
	fi
	link_into_dir kueue-manager "${kueue_bin_dir}"
	exec 8>&-
fi

kueue_cfg="${dir}/kueue"
if [[ -f "${kueue_cfg}/webhook/manifests.yaml" ]]; then
	log "kueue webhook manifests: present"
else
	src=$(kueue_module_dir)
	tmp="${dir}/.kueue-cfg.tmp.$$"
	tmp_files+=("${tmp}")
	mkdir -p -- "${tmp}/webhook" "${tmp}/crd/patches"
	install -m 0644 -- "${src}/config/components/webhook/manifests.yaml" "${tmp}/webhook/"
	install -m 0644 -- "${src}/config/components/crd/kustomization.yaml" "${tmp}/crd/"
	for f in "${src}"/config/components/crd/patches/webhook_in_*.yaml; do
		install -m 0644 -- "${f}" "${tmp}/crd/patches/"
	done
	rm -rf -- "${kueue_cfg}"
	mv -- "${tmp}" "${kueue_cfg}"
	log "kueue webhook manifests: copied"
fi

# The harness and the bench read the Kueue release from here (the directory may have any name).
if [[ "$(cat -- "${dir}/kueue-version" 2>/dev/null)" != "${KUEUE_VERSION}" ]]; then
	printf '%s\n' "${KUEUE_VERSION}" >"${dir}/.kueue-version.tmp.$$"
	mv -f -- "${dir}/.kueue-version.tmp.$$" "${dir}/kueue-version"
fi

printf '%s\n' "${dir}"
