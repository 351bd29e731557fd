#!/usr/bin/env bash
# Runs .ci/run on a fresh clone while two busy-loop processes keep two cores
# busy for the whole run, then prints CI's "N passed, N failed" line, its exit
# status and the duration. This is the measurement of "the suite stays green
# on a loaded two-core machine"; run it twice to repeat the published figures.
#
#   scripts/ci-under-load.sh [commit]   (default: HEAD; uncommitted changes are not part of a clone)
#
# The clone and its log stay in a temporary folder (printed at the end).
set -uo pipefail

repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
commit=$(git -C "$repo" rev-parse --verify "${1:-HEAD}^{commit}") || exit 2
work=$(mktemp -d "${TMPDIR:-/tmp}/pi-mcp-ci-under-load-XXXXXX")
git clone --quiet --no-hardlinks "$repo" "$work/clone" && git -C "$work/clone" checkout --quiet --detach "$commit" || exit 2

busy=()
stop_busy() {
  if [ "${#busy[@]}" -gt 0 ]; then kill "${busy[@]}" 2>/dev/null; fi
  busy=()
}
trap stop_busy EXIT
for _ in 1 2; do
  (while :; do :; done) &
  busy+=("$!")
done

started=$(date +%s)
(cd "$work/clone" && .ci/run) > "$work/ci.log" 2>&1
status=$?
seconds=$(( $(date +%s) - started ))
stop_busy

summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$work/ci.log" | tail -n 1)
echo "commit ${commit:0:12}: ${summary:-no summary line}; .ci/run exit $status; $((seconds / 60)) min $((seconds % 60)) s with two busy loops"
echo "log: $work/ci.log"
grep -E '^ FAIL |^ +(×|✗) ' "$work/ci.log" | sed 's/\x1b\[[0-9;]*m//g' | sort -u | head -n 40
exit "$status"
