#!/usr/bin/env bash
# check-tracked-files.sh: fails when git tracks a build output: a file of executable machine
# code (ELF, Mach-O, PE), or any file larger than 1 MB. Builds go under bin/ or the cache, which
# .gitignore names. An exception is a line "<path>  <reason>" in scripts/tracked-file-exceptions;
# there is none today.
set -euo pipefail
cd "$(dirname "$0")/.."

limit=$((1024 * 1024))
exceptions=scripts/tracked-file-exceptions
failed=0
while IFS= read -r -d '' path; do
	[[ -f "${path}" ]] || continue # deleted in the work tree, not yet committed
	if [[ -f "${exceptions}" ]] && awk -v p="${path}" '$1 == p { found = 1 } END { exit !found }' "${exceptions}"; then
		continue
	fi
	size=$(stat -c %s -- "${path}")
	if ((size > limit)); then
		echo "tracked file ${path} is ${size} bytes, over the 1 MB limit: build outputs go under bin/ or the cache" >&2
		failed=1
	fi
	magic=$(head -c 4 -- "${path}" | od -An -tx1 | tr -d ' \n')
	case "${magic}" in
	7f454c46 | cffaedfe | cefaedfe | feedfacf | feedface | cafebabe | 4d5a*)
		echo "tracked file ${path} is an executable binary: build it under bin/ and list it in .gitignore" >&2
		failed=1
		;;
	esac
done < <(git ls-files -z)
exit "${failed}"
