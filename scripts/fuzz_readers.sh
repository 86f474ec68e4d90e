#!/usr/bin/env bash
# The full fuzz run of the readers (issue 29; tests/fuzz/): CASES damaged
# files (default 20000) from the seeds of tests/fuzz/fuzz_slice.sh, read
# by forces, run --ic, render and run --restart of the tool built in
# BUILD (default build). ctest -L fuzz runs a slice of 1000.
# Usage: scripts/fuzz_readers.sh [CASES [SEED]]; BUILD, WORK in the
# environment.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
cmake --build "$build" --target tilefmm_cli fuzz_readers fuzz_make_seeds
exec bash "$root/tests/fuzz/fuzz_slice.sh" "$build/apps/tilefmm" \
  "$build/tests/fuzz/fuzz_make_seeds" "$build/tests/fuzz/fuzz_readers" \
  "${WORK:-/tmp/tilefmm-fuzz}" "${1:-20000}" "${2:-1}"
