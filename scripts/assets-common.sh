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

# cached_binary DIR NAME WHAT: sets dir (DIR, created and resolved) and out (the binary NAME in it).
# When out is built already, prints its path and ends the script; otherwise holds DIR's lock (when
# flock is available), so that concurrent runs (make -j, two terminals) build it once: the caller
# checks out again before building. WHAT names the binary in log lines.
cached_binary() {
	mkdir -p -- "$1"
	dir=$(cd -- "$1" && pwd -P)
	out="${dir}/$2"
	if [[ -x "${out}" ]]; then
		log "$3: present"
		printf '%s\n' "${out}"
		exit 0
	fi
	if command -v flock >/dev/null 2>&1; then
		exec 9>"${dir}/.lock"
		if ! flock -n 9; then
			log "another run is building ${out}; waiting for it"
			flock 9
		fi
	fi
}
