#!/usr/bin/env bash
# The full fuzz run of the readers (issue 29; tests/fuzz/): CASES damaged
# files (default 20000) from the seeds of tests/fuzz/fuzz_slice.sh, read
# by forces, validate, run --ic, render, run --restart and run --params
# of the tool built in BUILD (default build); then PYTHON_CASES (default
# CASES / 10) damaged snapshots read by Python's tilefmm.read, when
# BUILD/venv holds the package (scripts/python_env.sh BUILD); Python
# starts in 0.3 s a case, hence fewer. ctest -L fuzz runs a slice of 1000
# of the first kind. Results: bench/results/fuzz/.
# Usage: scripts/fuzz_readers.sh [CASES [SEED [PYTHON_CASES]]]; BUILD,
# WORK (default /tmp/tilefmm-fuzz) in the environment. Exit status 1 when
# either run found a crash, a hang, a wrong result or an odd end.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
work=${WORK:-/tmp/tilefmm-fuzz}
cases=${1:-20000} seed=${2:-1}
python_cases=${3:-$((cases / 10))}
cmake --build "$build" --target tilefmm_cli fuzz_readers fuzz_make_seeds
slice=(bash "$root/tests/fuzz/fuzz_slice.sh" "$build/apps/tilefmm"
  "$build/tests/fuzz/fuzz_make_seeds" "$build/tests/fuzz/fuzz_readers")
rc=0
"${slice[@]}" "$work/tool" "$cases" "$seed" || rc=1
if [ "$python_cases" -gt 0 ] && [ -x "$build/venv/bin/python" ]; then
  FUZZ_PYTHON=$build/venv/bin/python "${slice[@]}" "$work/python" \
    "$python_cases" "$seed" || rc=1
elif [ "$python_cases" -gt 0 ]; then
  echo "fuzz_readers.sh: no $build/venv (scripts/python_env.sh $build):" \
    "Python's tilefmm.read not run" >&2
fi
exit "$rc"
