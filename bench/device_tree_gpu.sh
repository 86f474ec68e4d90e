#!/usr/bin/env bash
# The octree on the GPU on the GPU machine: its test (structure equal to
# the CPU tree, moments within the bound), compute-sanitizer memcheck and
# synccheck on a part of it, then bench_tree_gpu against the CPU build at
# N = 262,144 to 16M (Plummer, leaves of 64). From the repository root with
# .devpack.tgz carried (.devbin/tests/test_tree_gpu,
# .devbin/bench/bench_tree_gpu, .devlibs):
#   bash bench/device_tree_gpu.sh [tests|bench|all]
# Logs and the table in $OUT/; a summary is printed last.
set -uo pipefail
what=${1:-all}
out=${OUT:-/tmp/tilefmm-out}
mkdir -p "$out"
if [ -f .devpack.tgz ]; then rm -rf .devbin .devlibs; tar -xf .devpack.tgz; fi
export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
b=$PWD/${TFMM_DEVICE_BUILD:-.devbin}
sum=$out/summary.txt
: >"$sum"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
} >"$out/device.txt" 2>&1
suite() { # name, limit, command...
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  printf '%-18s rc=%d %s\n' "$name" "$rc" \
    "$(grep -a Synthesis "$out/$name.log" | tail -1)" >>"$sum"
}
if [ "$what" != bench ]; then
  suite test_tree_gpu 120 "$b/tests/test_tree_gpu" --jobs 4 --verbose
  for tool in memcheck synccheck; do
    suite "$tool" 50 compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "$b/tests/test_tree_gpu" --jobs 1 --filter 'tree_gpu/@(small_n|errors_are_reported|line_and_one_body)'
  done
fi
if [ "$what" != tests ]; then
  suite bench 120 "$b/bench/bench_tree_gpu" \
    --n 262144,1048576,4194304,16777216 --leaf 64 --reps 10 --cpu-reps 2
  cp "$out/bench.log" "$out/table.txt"
fi
cat "$out/device.txt" "$sum"
[ -f "$out/table.txt" ] && cat "$out/table.txt"
exit 0
