#!/usr/bin/env bash
# Runs the whole lit suite (Frontend, Dialect, MLIRGen, Driver, Fuzz, ...)
# against ./build and ends with one summary line, "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
LIT=/usr/lib/llvm-22/bin/lit
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Arguments: test folders to run (default: all of them).
suites=("$BUILD_DIR/test")
if [ $# -gt 0 ]; then
  suites=()
  for dir in "$@"; do suites+=("$BUILD_DIR/test/$dir"); done
fi
"$LIT" -v "${suites[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# lit prints "  Passed: N (..%)" etc.; everything that is not a pass counts
# as a failure, so an unexpectedly passing or unresolved test is not hidden.
count() { sed -n "s/^ *$1 *: *\([0-9]*\).*/\1/p" "$log" | head -1; }
passed=$(count Passed); passed=${passed:-0}
failed=0
for kind in Failed "Unexpectedly Passed" Unresolved "Timed Out"; do
  n=$(count "$kind"); failed=$((failed + ${n:-0}))
done
skipped=$(count Unsupported); skipped=${skipped:-0}
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1 # lit failed without a per-test count (e.g. a config error).
fi
echo "$passed passed, $failed failed, $skipped skipped"
exit "$status"
