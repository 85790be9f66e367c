#!/usr/bin/env bash
# terraform-assets.sh: make sure the newest Terraform, the one `make test` runs the CLI-dependent
# acceptance tests with besides the terraform on PATH, exists, and print its path on stdout.
#
# `go install github.com/hashicorp/terraform@<version>` is refused: Terraform's go.mod replaces its
# remote-state backend modules (internal/backend/remote-state/{azure,consul,cos,gcs,kubernetes,oci,
# oss,pg,s3}) and internal/legacy with local folders, and the module zip does not carry those
# folders (they are modules of their own). So this script builds Terraform as the main module: it
# downloads the zip through the Go module proxy, refuses it unless its hash is the one pinned
# below, copies it to a temporary directory and leaves those modules out of go.mod and those
# backends out of internal/backend/init/init.go. The tests keep their state locally; every other
# backend (local, remote, cloud, http, inmem) stays. It is a release build (version.dev=no), so
# `terraform version` reports the plain version. A cold build takes about 7 minutes on 2 cores.
#
# Cached by version in the same cache root as the control plane (scripts/controlplane-assets.sh):
#   ${XDG_CACHE_HOME:-~/.cache}/terraform-provider-hyperpod/terraform-<version>/terraform
# or $HYPERPOD_TERRAFORM_DIR/terraform when that is set. Later runs are a no-op. The build writes to
# a temporary name and is renamed into place, so an interrupted build never leaves a half-written
# binary. Only the path goes to stdout; everything else goes to stderr.
set -euo pipefail

TERRAFORM_VERSION=v1.15.0
# The module zip's hash (go.sum's h1:, `go mod download -json`'s Sum): another source is refused.
TERRAFORM_MODULE_SUM='h1:buWgdQ2nwC7PKwZEVlEE8zhsIku4SQZFBn0h83+s/1c='
# The modules that go.mod replaces with folders the zip lacks, and the init.go names of the
# backends they hold.
left_out_modules=(
	internal/backend/remote-state/azure
	internal/backend/remote-state/consul
	internal/backend/remote-state/cos
	internal/backend/remote-state/gcs
	internal/backend/remote-state/kubernetes
	internal/backend/remote-state/oci
	internal/backend/remote-state/oss
	internal/backend/remote-state/pg
	internal/backend/remote-state/s3
	internal/legacy
)
left_out_backends='Azure|Consul|Cos|GCS|Kubernetes|OCI|OSS|Pg|S3'
left_out_names='azurerm|consul|cos|gcs|kubernetes|oci|oss|pg|s3'

log_name=terraform-assets
# shellcheck source=scripts/assets-common.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/assets-common.sh"

module=github.com/hashicorp/terraform
dir=${HYPERPOD_TERRAFORM_DIR:-${XDG_CACHE_HOME:-${HOME}/.cache}/terraform-provider-hyperpod/terraform-${TERRAFORM_VERSION}}
cached_binary "${dir}" terraform "terraform ${TERRAFORM_VERSION}"

# json_field <name>: the value of a string field of the JSON object on stdin (go mod download -json).
json_field() {
	sed -nE "s/^[[:space:]]*\"$1\":[[:space:]]*\"([^\"]*)\",?\$/\\1/p"
}

# patch_source <dir>: leave the modules the zip lacks out of go.mod and their backends out of
# init.go, and check that nothing else refers to them.
patch_source() {
	local src=$1 path edits=()
	for path in "${left_out_modules[@]}"; do
		edits+=("-droprequire=${module}/${path}" "-dropreplace=${module}/${path}")
	done
	(cd -- "${src}" && go mod edit "${edits[@]}")
	local init="${src}/internal/backend/init/init.go" before after
	before=$(wc -l <"${init}")
	sed -i -E \
		-e "/^[[:space:]]*backend(${left_out_backends}) \"${module//\//\\/}\/internal\/backend\/remote-state\/[a-z0-9]+\"\$/d" \
		-e "/^[[:space:]]*\"(${left_out_names})\":[[:space:]]+func\(\) backend\.Backend \{ return backend(${left_out_backends})\.New\(\) \},\$/d" \
		"${init}"
	after=$(wc -l <"${init}")
	# Nine imports and nine entries of the backends map.
	((before - after == 18)) || die "init.go of ${TERRAFORM_VERSION}: $((before - after)) lines left out, expected 18"
	local pattern
	pattern="${module}/($(IFS='|'; printf '%s' "${left_out_modules[*]}"))\\b"
	if grep -rlE --include='*.go' --exclude='*_test.go' "\"${pattern}" "${src}" >&2 ||
		grep -E "${pattern}" "${src}/go.mod" >&2; then
		die "the source of ${TERRAFORM_VERSION} still refers to a module left out (above)"
	fi
}

if [[ ! -x "${out}" ]]; then
	work=$(mktemp -d "${dir}/.build.XXXXXX")
	tmp="${dir}/.terraform.tmp.$$"
	trap 'chmod -R u+w -- "${work}" 2>/dev/null; rm -rf -- "${work}" "${tmp}"' EXIT
	log "terraform ${TERRAFORM_VERSION}: building ${module} from its module zip, without the remote-state backends (a cold build takes ~7 minutes on 2 cores; later runs reuse ${dir})"
	start=${SECONDS}
	# Outside any module, so only the module proxy and the checksum database decide what comes.
	info=$(cd -- "${work}" && GOFLAGS=-mod=mod go mod download -json "${module}@${TERRAFORM_VERSION}")
	sum=$(json_field Sum <<<"${info}")
	source_dir=$(json_field Dir <<<"${info}")
	[[ "${sum}" == "${TERRAFORM_MODULE_SUM}" ]] ||
		die "${module}@${TERRAFORM_VERSION} has hash ${sum:-none}, expected ${TERRAFORM_MODULE_SUM}: refusing to build it"
	[[ -f "${source_dir}/go.mod" ]] || die "go mod download gave no module directory for ${module}@${TERRAFORM_VERSION}"
	src="${work}/terraform"
	cp -R -- "${source_dir}" "${src}"
	chmod -R u+w -- "${src}"
	patch_source "${src}"
	# The zip's go.sum covers every module the build needs: -mod=readonly refuses anything else.
	# Built as OpenTofu is (scripts/tofu-assets.sh), so the packages both use at the same version
	# are compiled once.
	(cd -- "${src}" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -gcflags=all=-dwarf=false \
		-ldflags "-s -w -X ${module}/version.dev=no" -o "${tmp}" .) >&2
	# No update check: the version is all that is asked.
	got=$(CHECKPOINT_DISABLE=1 TF_CLI_CONFIG_FILE=/dev/null "${tmp}" version 2>&1) || die "the built terraform does not run: ${got}"
	got=${got%%$'\n'*}
	[[ "${got}" == "Terraform ${TERRAFORM_VERSION}" ]] || die "the built terraform reports \"${got}\", expected \"Terraform ${TERRAFORM_VERSION}\""
	mv -f -- "${tmp}" "${out}"
	log "terraform ${TERRAFORM_VERSION}: built in $((SECONDS - start)) s"
fi

printf '%s\n' "${out}"
