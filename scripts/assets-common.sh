# assets-common.sh: what the build scripts of the test assets share (controlplane-assets.sh,
# tofu-assets.sh, terraform-assets.sh). Sourced, never run: the caller sets log_name (the prefix
# of its log lines) first, and tools_module (its module under tools/) when it has one.

log() { printf '%s: %s\n' "${log_name}" "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

repo_root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
if [[ -n "${tools_module:-}" ]]; then
	tools_dir="${repo_root}/tools/${tools_module}"
	[[ -f "${tools_dir}/go.mod" ]] || die "cannot find ${tools_dir}/go.mod (is the script inside the repository?)"
fi
command -v go >/dev/null 2>&1 || die "go is not on PATH"
# Never let a go.work elsewhere change what gets built.
export GOWORK=off

# pinned MODULE: the version the tools module's go.mod requires of MODULE. The version variables
# of a script name its cache directories, so each script refuses to file a build under a wrong name.
pinned() {
	awk -v m="$1" '$1 == m && $2 ~ /^v[0-9]/ { print $2; exit }' "${tools_dir}/go.mod"
}
