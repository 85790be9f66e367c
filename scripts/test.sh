#!/usr/bin/env bash
# test.sh: what `make test` and `make test-all` run, phase by phase, with a timing summary.
#
#   scripts/test.sh          builds, unit tests, the acceptance suite under Terraform, under
#                            OpenTofu and under the newest Terraform the tests whose outcome
#                            depends on the CLI (all on the newest Kubernetes and the default
#                            Kueue, the task-governance add-on's), and the tests whose outcome
#                            depends on Kueue's release on the oldest supported Kueue (on the
#                            newest Kubernetes)
#   scripts/test.sh --all    the full cross product: every acceptance test under every CLI and
#                            on every supported Kueue release (on the newest Kubernetes), and the
#                            version-dependent tests on the oldest pair: the oldest supported
#                            Kubernetes minor running the oldest supported Kueue
#
# Phases run in order and stop at the first failure, except two that run in the background, taking
# the CPU that the acceptance phases leave idle while they wait on their clusters: the unit tests, at
# a lower priority, from the builds' end to the first acceptance phase's (.cache/test/unit.log), and
# in `make test` the oldest Kueue's phase, on a control plane of its own, beside the OpenTofu and
# newest Terraform phases (.cache/test/oldest-kueue.log). A failure of either fails the run when it
# is waited for: the unit tests' after the first acceptance phase, the oldest Kueue's at the end. Each
# phase's whole output is kept
# in .cache/test/<phase>.log; at the end (also after a failure) the script prints the time of each
# phase, the run's wall time, and the ten slowest acceptance tests, so a slow test is seen before
# it becomes a slow CI. The packages that hold acceptance tests are linked once, in the builds
# phase (.cache/test/bin), and every phase runs those test binaries.
#
# The acceptance phases of one Kueue release share one local control plane, started before the
# first (in .cache/test/cluster) and stopped after the last, also after a failure or an
# interrupt: the tests attach to it through HYPERPOD_LOCALCLUSTER_DIR, and fail when they leave
# objects behind that the next phase would find. Tests that need a different cluster still start
# their own: the TestAccKueueVersions tests (they change the CRDs or upgrade Kueue) and the
# TestAccTaskGovernance tests. These, with the admission preview's differential test and the plan
# review's workflow test, run in the first phase beside the others, in a test process of their
# own (.cache/test/acc-terraform-beside.log).
#
# Environment: TERRAFORM (terraform binary, default: the one on PATH), TOFU (an OpenTofu binary
# instead of building one), TERRAFORM_LATEST (a Terraform 1.15.0 binary instead of building one,
# scripts/terraform-assets.sh), KUBE_CONFIG_PATH (an existing, disposable cluster instead of the local
# control plane), TEST_TIMEOUT (go test -timeout of an acceptance phase, default 60m),
# HYPERPOD_DIFFERENTIAL_SEEDS (the admission preview's differential seeds: N for 1 to N, or A-B;
# default: a sample per Kueue release, 40 with --all).
set -euo pipefail

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
repo_root=$(cd -- "${script_dir}/.." && pwd -P)
cd -- "${repo_root}"

all=false
case "${1:-}" in
--all) all=true ;;
"") ;;
*)
	echo "usage: scripts/test.sh [--all]" >&2
	exit 2
	;;
esac

# The acceptance tests OpenTofu runs in `make test`: those whose outcome depends on the CLI
# (state saving on failure, interrupts and kills, import and import blocks, -generate-config-out,
# identity, provider functions, unknown provider configuration, modules, updates and replacements)
# and a lifecycle of every resource and data source: the complete example's (every resource
# through the team module, and the capacity data source), the usage data source's, and the
# SageMaker path's quota. Everything else talks to the same provider server and the same API
# server under either CLI, so a second run buys nothing; `make test-all` runs it anyway.
opentofu_tests=(
	'TestAccInterruptedApply_.*'
	'TestAccPartialCreate_.*'
	'TestAccAdoption_hyperpodShapes'
	'TestAccIdentity_teamResources'
	'TestAccIdentity_schedulerConfig'
	'TestAccComputeQuota_import'
	'TestAccComputeQuota_updateAndReplace'
	'TestAccComputeQuota_plansWithoutCluster'
	'TestAccTeamUsage_missingQueue'
	'TestAccExamples_complete'
	'TestAccProvider_configErrorsAtPlan'
	'TestAccTaskGovernance_quotaLifecycle'
	'TestAccTaskGovernance_oneOwnerAndAdoption'
	'TestFunction_.*'
)

# The acceptance tests the newest Terraform runs in `make test`, besides the terraform on PATH:
# those whose outcome depends on what its newer releases changed in the CLI: import by ID and by
# identity (import blocks with identity need Terraform >= 1.12, so only this phase runs them under
# Terraform), -generate-config-out, provider functions, the plan's warnings as the CLI's JSON
# carries them (the admission preview, and the saved plan plan-review reads), and terraform query
# (list resources, Terraform >= 1.14, so only this phase runs them; they skip on older CLIs) with the
# configuration it generates. moved and removed blocks never reach the provider (it has no state
# moves or upgrades): the CLI alone handles them.
terraform_latest_tests=(
	'TestAccIdentity_teamResources'
	'TestAccIdentity_schedulerConfig'
	'TestAccComputeQuota_import'
	'TestAccAdoption_hyperpodShapes'
	'TestAccAdmissionPreview_plan'
	'TestAccQuery_adoptsQueues'
	'TestAccTaskGovernance_queryAdoptsQuotas'
	'TestFunction_.*'
)

# The acceptance tests the oldest supported Kueue runs in `make test` (on the newest Kubernetes), and
# the oldest pair (the oldest supported Kubernetes minor running that Kueue) in `make test-all`:
# those whose outcome depends on what Kueue's or the API server's version changes (webhook defaults,
# admission and borrowing, status fields, the stored API version, server-side apply and field
# management): admission, drift, import and version detection. The oldest Kubernetes minor is left
# to `make test-all`, before each release: its build (a second kube-apiserver and etcd) does not fit
# a cold `make test` in 45 minutes on 2 cores, and of the API server the provider uses only core v1
# Namespaces, Nodes and Pods and server-side apply.
oldest_kueue_tests=(
	'TestAccAdmission_.*'
	'TestAccAdmissionPreview_differential'
	'TestAccComputeQuota_(drift|driftOutsideAttributes|noDrift|import|importTakesOver)'
	'TestAccTeamNamespace_drift'
	'TestAccClusterSchedulerConfig_labelDrift'
	'TestAccTeamUsage_borrowing'
	'TestAccKueueVersions_v1beta1Only'
)

# The Kueue upgrade test starts its own control plane on the oldest supported Kueue and upgrades it
# to the default one: it runs in the phases of the oldest Kueue, whose build it needs, not in the first.
oldest_kueue=v0.15.0
upgrade_test='TestAccKueueVersions_upgradedFromV1beta1Storage'

# The acceptance tests that need no shared control plane, which the first phase runs beside the
# others in a test process that does not attach to it: the task-governance tests (each on the
# control plane with the SageMaker API emulator that their process starts) and the admission
# preview's differential test (scenarios of its own against Kueue's manager), the plan review's
# workflow test (a package of its own, cmd/hyperpod-plan-review, on its own control plane) and the
# test of a Kueue that serves only v1beta1 (a control plane of its own whose CRDs it changes). The
# shared control plane then has one test process at a time, whose check for objects left behind
# counts only its own.
beside_tests=('TestAccTaskGovernance_.*' 'TestAccAdmissionPreview_differential' 'TestAccPlanReview_workflow'
	'TestAccKueueVersions_v1beta1Only')
beside="$(IFS='|'; printf '%s' "${beside_tests[*]}")"

# The admission preview's differential test runs a sample of seeds in `make test` (sized by the
# test for each Kueue release); `make test-all` runs many more and prints the tally.
if ${all}; then
	export HYPERPOD_DIFFERENTIAL_SEEDS=${HYPERPOD_DIFFERENTIAL_SEEDS:-40}
fi

terraform=${TERRAFORM:-$(command -v terraform || true)}
if [[ -z "${terraform}" ]]; then
	echo "terraform is not on PATH. Install Terraform >= 1.11 (https://developer.hashicorp.com/terraform/install)," >&2
	echo "or set TERRAFORM=/path/to/terraform." >&2
	exit 1
fi
timeout=${TEST_TIMEOUT:-60m}
# Nothing goes out at test time: Terraform's update check (checkpoint) stays off in every phase.
export CHECKPOINT_DISABLE=1
# Every Go process of the run (the compiler, the tests, Terraform, OpenTofu, kube-apiserver, etcd and
# Kueue's manager) collects garbage four times less often: on five acceptance tests with their own
# control plane, 10% less CPU (61.4 s against 68.6 s) for a largest process of 0.9 GB instead of 0.5
# GB, and the phases are bound by CPU. The product is measured at Go's default, in make bench.
export GOGC=${GOGC:-400}
# The unit phase runs provider functions through the CLI too; never let plugin-testing download one.
export TF_ACC_TERRAFORM_PATH="${terraform}"

logs=${repo_root}/.cache/test
mkdir -p -- "${logs}"
rm -f -- "${logs}"/*.log
# The acceptance phases' local control plane: its work directory and the command that runs it.
cluster_dir=${logs}/cluster
cluster_log=${logs}/cluster.log
localcluster=${logs}/localcluster
cluster_started=false
script_started=$(date +%s)

phases=()   # "name<TAB>seconds<TAB>result"
current=""
started=0

begin() {
	current=$1
	started=$(date +%s)
	printf '\n==> %s\n' "${current}"
}
finish() { # result
	phases+=("${current}"$'\t'"$(($(date +%s) - started))"$'\t'"$1")
	current=""
}

# stop_cluster stops the acceptance phases' control plane, if this script started one.
stop_cluster() {
	if ! ${cluster_started}; then
		return 0
	fi
	cluster_started=false
	begin "stopping the local control plane"
	if "${localcluster}" down --dir "${cluster_dir}" >>"${cluster_log}" 2>&1; then
		finish ok
	else
		finish "FAILED (see ${cluster_log})"
	fi
}

# Phases in the background (the unit tests, the oldest Kueue's): each in a subshell and a process
# group of its own, at the priority it is given, its output in its own log, its phase times merged
# into the table when it is waited for.
declare -A background_pids=()
# start_background <name> <niceness> <log> <command...>
start_background() {
	local name=$1 niceness=$2 log=$3
	shift 3
	rm -f -- "${logs}/.${name}-phases"
	set -m
	(
		# Its commands stay in its process group, which a stop signals as a whole.
		set +m
		background_name=${name}
		renice -n "${niceness}" -p "${BASHPID}" >/dev/null 2>&1 || true
		phases=() current="" side="" builders=() cluster_started=false background_pids=()
		trap 'rc=$?; [[ -z "${current}" ]] || finish FAILED; stop_side; stop_cluster; printf "%s\n" ${phases[@]+"${phases[@]}"} >"${logs}/.${background_name}-phases"; exit "${rc}"' EXIT
		trap 'exit 143' TERM INT
		"$@"
	) </dev/null >"${log}" 2>&1 &
	background_pids[${name}]=$!
	set +m
}
# wait_background <name> <log>: waits for it, adds its phase times, and fails with its log's end
# if it failed.
wait_background() {
	local pid=${background_pids[$1]}
	unset "background_pids[$1]"
	wait_job "${pid}" "$2" "the $1 phase (in the background)" merge_background "$1"
}
# wait_job <pid> <log> <what> [command...]: waits for a job run in the background, runs the
# command, prints the job's summary lines, and fails the run with the end of its log when it failed.
wait_job() {
	local pid=$1 log=$2 what=$3 rc=0
	shift 3
	wait "${pid}" || rc=$?
	"$@"
	grep -E '^(==>|ok|FAIL|--- FAIL|panic)' "${log}" || true
	if ((rc != 0)); then
		echo "${what} failed; the end of ${log}:" >&2
		tail -n 60 -- "${log}" >&2
		exit "${rc}"
	fi
}
merge_background() {
	local line file=${logs}/.$1-phases
	if [[ -f "${file}" ]]; then
		while IFS= read -r line; do
			[[ -z "${line}" ]] || phases+=("${line}")
		done <"${file}"
		rm -f -- "${file}"
	fi
}
stop_backgrounds() {
	local name
	for name in "${!background_pids[@]}"; do
		kill -TERM -- "-${background_pids[${name}]}" 2>/dev/null || true
		wait "${background_pids[${name}]}" 2>/dev/null || true
		unset "background_pids[${name}]"
		merge_background "${name}"
	done
}

summary() {
	local rc=$?
	if [[ -n "${current}" ]]; then
		finish "FAILED"
	fi
	stop_builders
	stop_side
	stop_cluster
	stop_backgrounds
	printf '\n==> Time per phase\n'
	local total=0 line name secs result width=52
	for line in "${phases[@]}"; do
		name=${line%%$'\t'*}
		((${#name} <= width)) || width=${#name}
	done
	for line in "${phases[@]}"; do
		IFS=$'\t' read -r name secs result <<<"${line}"
		total=$((total + secs))
		printf '  %-*s %4dm%02ds  %s\n' "${width}" "${name}" $((secs / 60)) $((secs % 60)) "${result}"
	done
	printf '  %-*s %4dm%02ds\n' "${width}" "total of the phases" $((total / 60)) $((total % 60))
	local wall=$(($(date +%s) - script_started))
	printf '  %-*s %4dm%02ds\n' "${width}" "wall time (phases \"in the background\" overlap others)" $((wall / 60)) $((wall % 60))
	# Top-level tests only: go test -v prints them at column 0, subtests indented.
	local slow
	slow=$(for f in "${logs}"/acc-*.log; do
		[[ -f "$f" ]] || continue
		sed -nE 's/^--- (PASS|FAIL|SKIP): ([^ ]+) \(([0-9.]+)s\)$/\3\t\2\t\1/p' "$f" |
			awk -v phase="$(basename "$f" .log)" -F'\t' '{ printf "%s\t%s\t%s\t%s\n", $1, $2, $3, phase }'
	done | sort -t$'\t' -k1,1 -rn | awk 'NR <= 10')
	if [[ -n "${slow}" ]]; then
		printf '\n==> Ten slowest acceptance tests\n'
		printf '%s\n' "${slow}" | awk -F'\t' '{ printf "  %7.1fs  %-58s %-4s  %s\n", $1, $2, $3, $4 }'
	fi
	printf '\nLogs: %s\n' "${logs}"
	exit "${rc}"
}
trap summary EXIT
# An interrupt or a kill ends the script through the EXIT trap, which stops the control plane.
trap 'exit 130' INT
trap 'exit 143' TERM

# run <log> <command...>: the command's output goes to the log and, unless QUIET_FILTER is set,
# to the terminal; with QUIET_FILTER only lines matching it reach the terminal.
run() {
	local log=$1
	shift
	if [[ -n "${QUIET_FILTER:-}" ]]; then
		"$@" 2>&1 | tee "${log}" | { grep -E "${QUIET_FILTER}" || true; }
	else
		"$@" 2>&1 | tee "${log}"
	fi
}

# The control planes, OpenTofu and the newest Terraform build in two background jobs while the
# foreground vets and runs the unit tests: the first builds the first acceptance phase's control
# plane; the second, at a lower priority, what the other phases need, in their order, so it takes
# the CPU the rest leave idle (while modules download, while a build links, while tests wait on
# the cluster) rather than slowing them. A phase whose build is not done yet waits for it, and the wait shows in the time
# table. With warm caches every build is a no-op.
assets_log=${logs}/assets.log
# emit <name> <command...>: run a build command and pass on the path it prints as "<name> <path>",
# or "failed <name>".
emit() {
	local name=$1 out
	shift
	if ! out=$("$@"); then
		printf 'failed %s\n' "${name}"
		exit 1
	fi
	printf '%s %s\n' "${name}" "${out}"
}
build_first() {
	emit servers scripts/controlplane-assets.sh --servers-only
	emit assets scripts/controlplane-assets.sh
}
# The other Kueue releases and the oldest pair always come from the cache, whatever
# HYPERPOD_CONTROLPLANE_DIR names; another Kueue release on the newest Kubernetes builds only its
# manager.
# In make test the oldest Kueue's phase, the longest after the first, starts as soon as its build is
# done, in the background: its build comes first. make test-all runs the phases one after another
# in the order of their builds.
build_kueue() { # <version>
	emit "kueue-$1" nice -n 10 env -u HYPERPOD_CONTROLPLANE_DIR -u HYPERPOD_K8S_VERSION HYPERPOD_KUEUE_VERSION="$1" scripts/controlplane-assets.sh
}
build_later() {
	if ! ${all}; then
		build_kueue "${oldest_kueue}"
	fi
	if [[ -n "${TOFU:-}" ]]; then
		printf 'tofu %s\n' "${TOFU}"
	else
		emit tofu nice -n 10 scripts/tofu-assets.sh
	fi
	if [[ -n "${TERRAFORM_LATEST:-}" ]]; then
		printf 'terraform-latest %s\n' "${TERRAFORM_LATEST}"
	else
		emit terraform-latest nice -n 10 scripts/terraform-assets.sh
	fi
	if ${all}; then
		build_kueue "${oldest_kueue}"
		build_kueue v0.17.0
		emit oldest nice -n 10 env -u HYPERPOD_CONTROLPLANE_DIR HYPERPOD_K8S_VERSION=v1.32.13 HYPERPOD_KUEUE_VERSION="${oldest_kueue}" scripts/controlplane-assets.sh
	fi
}
declare -A built_paths=()
# next_build <name>: wait for the background build <name> and set built to its path. The wait is
# a phase of its own when it takes a second or more.
next_build() {
	local name path waited
	waited=$(date +%s)
	while [[ -z "${built_paths[$1]:-}" ]]; do
		if ! read -r -u 7 name path || [[ "${name}" == failed ]]; then
			echo "the ${path:-$1} build failed; the end of ${assets_log}:" >&2
			tail -n 40 -- "${assets_log}" >&2
			exit 1
		fi
		built_paths[${name}]=${path}
	done
	built=${built_paths[$1]}
	waited=$(($(date +%s) - waited))
	if ((waited > 0)); then
		printf '\n==> waited %ds for the %s build\n' "${waited}" "$1"
		phases+=("waiting for the $1 build (background)"$'\t'"${waited}"$'\t'"ok")
	fi
}
# unattached <command...>: the command without the shared control plane (in the subshell that
# runs it in the background).
unattached() {
	unset HYPERPOD_LOCALCLUSTER_DIR
	"$@"
}
# The test process that runs beside a phase's main one (run_beside), in a process group of its own.
side=""
side_log=""
run_beside() { # <log> <command...>
	side_log=$1
	shift
	set -m
	"$@" >"${side_log}" 2>&1 &
	side=$!
	set +m
}
# wait_beside waits for it and fails the phase with its failures when it failed.
wait_beside() {
	local pid=${side}
	side=""
	wait_job "${pid}" "${side_log}" "the tests beside this phase's main run" true
}
stop_side() {
	if [[ -n "${side}" ]]; then
		# The test binaries stop the control planes they started, then exit.
		kill -TERM -- "-${side}" 2>/dev/null || true
		wait "${side}" 2>/dev/null || true
		side=""
	fi
}
builders=()
stop_builders() {
	local pid
	for pid in ${builders[@]+"${builders[@]}"}; do
		# Each job leads a process group of its own: its builds stop with it.
		kill -TERM -- "-${pid}" 2>/dev/null || true
	done
	builders=()
}

# The acceptance packages' test binaries, linked once in the builds phase.
testbin=${logs}/bin
module=$(go list -m)
# test_binary <package>: the path of the package's test binary.
test_binary() {
	local pkg=${1#./}
	printf '%s/%s.test' "${testbin}" "${pkg//\//_}"
}
# run_binary <package> <test flags...>: the package's test binary in the package's directory,
# as go test runs it, and go test's closing line ("ok", or "FAIL", the package and its time).
run_binary() {
	local pkg=$1 start rc=0
	shift
	start=$(date +%s%N)
	(cd -- "${pkg}" && exec "$(test_binary "${pkg}")" -test.paniconexit0 -test.count=1 -test.timeout="${timeout}" -test.v "$@") || rc=$?
	local secs
	secs=$(awk -v ns="$(($(date +%s%N) - start))" 'BEGIN { printf "%.3f", ns / 1e9 }')
	if ((rc == 0)); then
		printf 'ok  \t%s\t%ss\n' "${module}/${pkg#./}" "${secs}"
	else
		printf 'FAIL\t%s\t%ss\n' "${module}/${pkg#./}" "${secs}"
	fi
	return "${rc}"
}
# run_tests <-run regexp> <-skip regexp or ""> <package...> [-- <command...>]: what
# `go test -count=1 -v -run -skip <packages>` prints and returns, from the linked binaries. The
# packages run at once, as go test runs them, each one's output printed whole when it ends (one
# package: as it goes); a command after -- runs beside them (the unit phase's go test of the
# other packages).
run_tests() {
	local selection=$1 skip=$2
	shift 2
	local pkgs=() extra=()
	while (($# > 0)); do
		if [[ "$1" == -- ]]; then
			shift
			extra=("$@")
			break
		fi
		pkgs+=("$1")
		shift
	done
	local args=()
	[[ -z "${selection}" ]] || args+=(-test.run "${selection}")
	[[ -z "${skip}" ]] || args+=(-test.skip "${skip}")
	if ((${#pkgs[@]} == 1 && ${#extra[@]} == 0)); then
		run_binary "${pkgs[0]}" ${args[@]+"${args[@]}"}
		return
	fi
	local dir pids=() rc=0 i
	dir=$(mktemp -d)
	for i in "${!pkgs[@]}"; do
		run_binary "${pkgs[$i]}" ${args[@]+"${args[@]}"} >"${dir}/${i}.log" 2>&1 &
		pids+=($!)
	done
	if ((${#extra[@]} > 0)); then
		"${extra[@]}" || rc=1
	fi
	for i in "${!pkgs[@]}"; do
		wait "${pids[$i]}" || rc=1
		cat -- "${dir}/${i}.log"
	done
	rm -rf -- "${dir}"
	return "${rc}"
}

begin "builds (go vet, the harness; control planes, OpenTofu and Terraform in the background, ${assets_log})"
rm -f -- "${logs}/.builds"
mkfifo -- "${logs}/.builds"
set -m # gives each background job a process group of its own
build_first </dev/null >"${logs}/.builds" 2>>"${assets_log}" &
builders+=($!)
build_later </dev/null >"${logs}/.builds" 2>>"${assets_log}" &
builders+=($!)
set +m
exec 7<"${logs}/.builds"
rm -f -- "${logs}/.builds"
# A build output committed by mistake (a binary, or anything over 1 MB) fails here, before any build.
scripts/check-tracked-files.sh
# The provider requires the k8s.io releases kube-apiserver is built from, so the packages they share
# (k8s.io's API types, client-go, apimachinery, gRPC, OpenTelemetry...) compile once: on a cold
# cache the provider is vetted after the API server's build, which leaves them in Go's build cache,
# and not beside it, where both would compile them at once. With a warm cache this waits for nothing.
next_build servers
# vet type-checks every package and test without linking one: the unit phase links and runs them.
go vet ./...
go build -o "${localcluster}" ./internal/cmd/localcluster
# The packages that hold acceptance tests are linked once, here, and every phase runs their test
# binaries: a phase that ran `go test` would link them again (the provider's alone takes 10-15 s
# of CPU), five to eight times in a run.
mapfile -t acc_packages < <(grep -rl --include='*_test.go' '^func TestAcc' internal cmd | xargs -n1 dirname | sort -u | sed 's|^|./|')
mkdir -p -- "${testbin}"
for pkg in "${acc_packages[@]}"; do
	go test -c -o "$(test_binary "${pkg}")" "${pkg}"
done
finish ok

# The unit tests run in the background at a lower priority, beside the wait for the first control
# plane and the first acceptance phase, taking the CPU that phase's test processes leave idle while
# they wait on their clusters; a failure fails the run when that phase ends.
mapfile -t unit_only < <(go list ./... | grep -vxF -f <(cd "${repo_root}" && go list "${acc_packages[@]}"))
unit_log=${logs}/unit.log
unit_phase() {
	begin "unit tests (in the background)"
	run_tests '' '' "${acc_packages[@]}" -- go test -count=1 -v "${unit_only[@]}"
	finish ok
}
start_background unit 10 "${unit_log}" unit_phase

next_build assets
assets=${built}
kueue_version=$(cat "${assets}/kueue-version")

export HYPERPOD_CONTROLPLANE_DIR="${assets}" TF_ACC=1

# packages_with <grep option...>: the acceptance packages holding a test whose name grep selects
# with these options.
packages_with() {
	local pkg
	for pkg in "${acc_packages[@]}"; do
		if sed -nE 's/^func (TestAcc[A-Za-z0-9_]*)\(.*/\1/p' "${pkg}"/*_test.go | grep "$@" >/dev/null; then
			printf '%s\n' "${pkg}"
		fi
	done
}
mapfile -t shared_packages < <(packages_with -vxE "${beside}")

# k8s_version <assets>: the Kubernetes release of an assets directory's API server.
k8s_version() {
	"$1/kube-apiserver" --version | sed -nE 's/^Kubernetes //p'
}
k8s=$(k8s_version "${assets}")

# start_cluster <assets> <kueue version>: one control plane for the acceptance phases of a
# Kubernetes and Kueue release pair, unless KUBE_CONFIG_PATH names a cluster to use.
start_cluster() {
	[[ -z "${KUBE_CONFIG_PATH:-}" ]] || return 0
	begin "local control plane, Kubernetes $(k8s_version "$1"), Kueue $2 (shared by its acceptance phases)"
	# A run that was killed outright (no EXIT trap) may have left its control plane running.
	"${localcluster}" down --dir "${cluster_dir}" >"${cluster_log}" 2>&1
	cluster_started=true
	"${localcluster}" up --dir "${cluster_dir}" --assets "$1" >>"${cluster_log}" 2>&1 || {
		cat "${cluster_log}" >&2
		exit 1
	}
	# The same line as the tests print for a control plane of their own.
	echo "local control plane at $(sed -nE 's/^ *API server: *//p' "${cluster_log}")" \
		"started in $(sed -nE 's/^local control plane is up after ([^ ]+) .*/\1/p' "${cluster_log}") (${cluster_dir})"
	export HYPERPOD_LOCALCLUSTER_DIR="${cluster_dir}"
	finish ok
}

# check_selection [--passed] <log> <patterns...>: a renamed test must not drop out of a selection
# unnoticed; with --passed, nor may one that skips. The log of the tests run beside (acceptance)
# counts too.
check_selection() {
	local results='PASS|SKIP' missing='no test matches'
	if [[ "$1" == --passed ]]; then
		results='PASS' missing='no test passed that matches'
		shift
	fi
	local files=("$1") pattern
	shift
	if [[ -f "${files[0]%.log}-beside.log" ]]; then
		files+=("${files[0]%.log}-beside.log")
	fi
	for pattern in "$@"; do
		if ! grep -qhE "^--- (${results}): ${pattern} \(" -- "${files[@]}"; then
			echo "${missing} '${pattern}' of a selection in scripts/test.sh: was it renamed (or skipped)?" >&2
			exit 1
		fi
	done
}

# acceptance <log> <-run regexp> <-skip regexp or ""> [beside patterns...]: the acceptance tests of a
# phase. Those the beside patterns name run in a test process of their own, beside the main one and
# not attached to the shared control plane (<log>, with -beside before .log); the rest of the
# selection runs in the main one, on the shared control plane.
acceptance() {
	local log=$1 selection=$2 skip=$3 main_skip="^(${beside})\$"
	shift 3
	if [[ -n "${skip}" ]]; then
		main_skip+="|${skip}"
	fi
	if (($# > 0)); then
		# Only the packages that hold one of them: a test binary with nothing to run still links
		# and starts.
		local here_packages
		mapfile -t here_packages < <(packages_with -xE "^($(IFS='|'; printf '%s' "$*"))\$")
		if ((${#here_packages[@]} == 0)); then
			echo "no package holds a test that '$*' names: was one renamed?" >&2
			exit 1
		fi
		run_beside "${log%.log}-beside.log" unattached run_tests "^($(IFS='|'; printf '%s' "$*"))\$" "${skip}" "${here_packages[@]}"
	fi
	run "${log}" run_tests "${selection}" "${main_skip}" "${shared_packages[@]}"
	if (($# > 0)); then
		wait_beside
	fi
}

# cli_phase <CLI and version> <log> <check_selection option or ""> <tests...>: the acceptance tests
# whose outcome depends on the CLI (every one with --all) under the CLI that TF_ACC_TERRAFORM_PATH
# names, on the shared control plane.
cli_phase() {
	local cli=$1 log=$2 check=$3 selection label="CLI-dependent tests"
	shift 3
	selection="^($(IFS='|'; printf '%s' "$*"))\$"
	if ${all}; then
		selection='^(TestAcc|TestFunction_)'
		label="all tests"
	fi
	begin "acceptance, ${cli} (${label}), Kubernetes ${k8s}, Kueue ${kueue_version}"
	run "${log}" run_tests "${selection}" '' ./internal/provider
	if ! ${all}; then
		check_selection ${check:+"${check}"} "${log}" "$@"
	fi
	finish ok
}

# plugin-testing serves the provider in-process and registers it as
# <TF_ACC_PROVIDER_HOST>/hashicorp/hyperpod; OpenTofu's implied address for "hyperpod" is
# registry.opentofu.org/hashicorp/hyperpod. OpenTofu prints warnings about a missing CLI
# configuration on stdout, which breaks the JSON plugin-testing reads: give it an empty one.
opentofu_phase() {
	TF_ACC_TERRAFORM_PATH="${tofu}" TF_ACC_PROVIDER_HOST=registry.opentofu.org TF_CLI_CONFIG_FILE=/dev/null \
		cli_phase "OpenTofu $(TF_CLI_CONFIG_FILE=/dev/null "${tofu}" version | sed -nE '1s/^OpenTofu v//p')" \
		"${logs}/acc-opentofu.log" "" "${opentofu_tests[@]}"
}

# The newest Terraform, built from source (scripts/terraform-assets.sh), on the same control
# plane. Its registry host is plugin-testing's default, as for the terraform on PATH. It skips none
# of its tests (--passed): a test that it skipped (a version check) would hide what the phase is for.
terraform_latest_phase() {
	TF_ACC_TERRAFORM_PATH="${terraform_latest}" \
		cli_phase "Terraform $("${terraform_latest}" version | sed -nE '1s/^Terraform v//p')" \
		"${logs}/acc-terraform-latest.log" --passed "${terraform_latest_tests[@]}"
}

# other_pair <build name> <assets>: the acceptance phase of another Kubernetes and Kueue pair, on a
# control plane of its own, stopped after it. In make test the oldest Kueue, on the newest
# Kubernetes, runs the version-dependent selection and the upgrade from it. With --all the other
# Kueue releases run everything, and the oldest pair (the oldest Kubernetes minor running the oldest
# Kueue) the version-dependent selection and the upgrade: what depends on either is checked where
# both are oldest, and each other pairing of them with the newest is another phase's.
other_pair() {
	local build=$1 other=$2 version other_k8s selection label log skip="" seeds=${HYPERPOD_DIFFERENTIAL_SEEDS:-}
	version=$(cat "${other}/kueue-version")
	other_k8s=$(k8s_version "${other}")
	unset HYPERPOD_LOCALCLUSTER_DIR
	export HYPERPOD_CONTROLPLANE_DIR="${other}"
	start_cluster "${other}" "${version}"
	local tests=("${oldest_kueue_tests[@]}")
	if [[ "${version}" == "${oldest_kueue}" ]]; then
		tests+=("${upgrade_test}")
	fi
	selection="^($(IFS='|'; printf '%s' "${tests[*]}"))\$"
	label="Kueue-dependent tests"
	if [[ "${other_k8s}" != "${k8s}" ]]; then
		label="Kueue- and Kubernetes-dependent tests"
	fi
	if ${all} && [[ "${build}" != oldest ]]; then
		selection='^TestAcc'
		label="all tests"
	fi
	log="${logs}/acc-terraform-kueue-${version}.log"
	if [[ "${other_k8s}" != "${k8s}" ]]; then
		log="${logs}/acc-terraform-k8s-${other_k8s}-kueue-${version}.log"
	fi
	begin "acceptance, Terraform $("${terraform}" version | sed -nE '1s/^Terraform v//p') (${label}), Kubernetes ${other_k8s}, Kueue ${version}${other_pair_note:-}"
	if [[ "${version}" == v0.17.* ]]; then
		# The admission model covers Kueue v0.15 and v0.19 (internal/admission): there is no
		# model of v0.17 to compare with its manager.
		skip='^TestAccAdmissionPreview_differential$'
	fi
	local here=() pattern
	for pattern in "${beside_tests[@]}"; do
		if [[ "${selection}" == '^TestAcc' ]] || printf '%s\n' "${tests[@]}" | grep -Fx -- "${pattern}" >/dev/null; then
			here+=("${pattern}")
		fi
	done
	HYPERPOD_DIFFERENTIAL_SEEDS=${seeds} acceptance "${log}" "${selection}" "${skip}" ${here[@]+"${here[@]}"}
	if [[ "${selection}" != '^TestAcc' ]]; then
		check_selection "${log}" "${tests[@]}"
	fi
	finish ok
	stop_cluster
	unset HYPERPOD_LOCALCLUSTER_DIR
}

start_cluster "${assets}" "${kueue_version}"

# The oldest Kueue's phase: its control plane, tests and log are its own, so in make test it runs
# in the background beside the OpenTofu and newest Terraform phases, each one test process running
# one test at a time on the shared control plane, which leave CPU idle that it takes. (Run beside
# the first acceptance phase instead, it slowed that phase by all it took: 21m12s against 20m32s.)
oldest_log=${logs}/oldest-kueue.log
oldest_kueue_phase() { # <assets>
	cluster_dir=${logs}/cluster-oldest cluster_log=${logs}/cluster-oldest.log
	other_pair_note=" (in the background)"
	other_pair "kueue-${oldest_kueue}" "$1"
}

begin "acceptance, Terraform $("${terraform}" version | sed -nE '1s/^Terraform v//p'), Kubernetes ${k8s}, Kueue ${kueue_version}"
acceptance "${logs}/acc-terraform.log" '^TestAcc' "^${upgrade_test}\$" "${beside_tests[@]}"
check_selection "${logs}/acc-terraform.log" "${beside_tests[@]}"
finish ok
wait_background unit "${unit_log}"

# cli_phases: the OpenTofu and newest Terraform phases, each once its CLI is built, then the shared
# control plane stops.
cli_phases() {
	next_build tofu
	tofu=${built}
	opentofu_phase
	next_build terraform-latest
	terraform_latest=${built}
	terraform_latest_phase
	stop_cluster
}

if ${all}; then
	cli_phases
	for build in "kueue-${oldest_kueue}" kueue-v0.17.0 oldest; do
		next_build "${build}"
		other_pair "${build}" "${built}"
	done
else
	next_build "kueue-${oldest_kueue}"
	start_background oldest-kueue 0 "${oldest_log}" oldest_kueue_phase "${built}"
	cli_phases
	wait_background oldest-kueue "${oldest_log}"
fi
