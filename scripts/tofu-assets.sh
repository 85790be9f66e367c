#!/usr/bin/env bash
# tofu-assets.sh: make sure the OpenTofu binary `make test-tofu` runs the acceptance tests with
# exists, and print its path on stdout.
#
# `tofu` is built from github.com/opentofu/opentofu (pinned by tools/opentofu/go.mod) through the
# Go module proxy, as a release build (version.dev=no, so `tofu version` reports the plain
# version), once: a cold build takes about 4 minutes on 2 cores. It is cached by version in the
# same cache root as the control plane (scripts/controlplane-assets.sh):
#   ${XDG_CACHE_HOME:-~/.cache}/terraform-provider-hyperpod/opentofu-<version>/tofu
# or $HYPERPOD_TOFU_DIR/tofu when that is set. Later runs are a no-op. The build writes to a
# temporary name and is renamed into place, so an interrupted build never leaves a half-written
# binary. Only the path goes to stdout; everything else goes to stderr.
set -euo pipefail

# The version pinned by tools/opentofu/go.mod.
TOFU_VERSION=v1.12.6

log_name=tofu-assets
tools_module=opentofu
# shellcheck source=scripts/assets-common.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/assets-common.sh"

pinned_tofu=$(pinned github.com/opentofu/opentofu)
[[ "${pinned_tofu}" == "${TOFU_VERSION}" ]] ||
	die "tools/opentofu/go.mod pins github.com/opentofu/opentofu ${pinned_tofu:-nothing}, this script says ${TOFU_VERSION}: update TOFU_VERSION"

dir=${HYPERPOD_TOFU_DIR:-${XDG_CACHE_HOME:-${HOME}/.cache}/terraform-provider-hyperpod/opentofu-${TOFU_VERSION}}
cached_binary "${dir}" tofu "tofu ${TOFU_VERSION}"

if [[ ! -x "${out}" ]]; then
	tmp="${dir}/.tofu.tmp.$$"
	trap 'rm -f -- "${tmp}"' EXIT
	log "tofu ${TOFU_VERSION}: building github.com/opentofu/opentofu/cmd/tofu in tools/opentofu (a cold build takes ~4 minutes on 2 cores; later runs reuse ${dir})"
	start=${SECONDS}
	# Stripped (-s -w), so the compiler's debug information would be thrown away: without it the
	# build takes about 7% less CPU.
	(cd -- "${tools_dir}" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -gcflags=all=-dwarf=false \
		-ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" \
		-o "${tmp}" github.com/opentofu/opentofu/cmd/tofu) >&2
	# An empty CLI configuration: OpenTofu prints a warning on stdout, before the version, when
	# TF_CLI_CONFIG_FILE names a file that does not exist.
	got=$(TF_CLI_CONFIG_FILE=/dev/null "${tmp}" version 2>&1) || die "the built tofu does not run: ${got}"
	got=${got%%$'\n'*}
	[[ "${got}" == "OpenTofu ${TOFU_VERSION}" ]] || die "the built tofu reports \"${got}\", expected \"OpenTofu ${TOFU_VERSION}\""
	mv -f -- "${tmp}" "${out}"
	log "tofu ${TOFU_VERSION}: built in $((SECONDS - start)) s"
fi

printf '%s\n' "${out}"
