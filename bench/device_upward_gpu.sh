#!/usr/bin/env bash
# The upward pass on the GPU and the hybrid schedule with its tree on the
# GPU, on the GPU machine, in one call (from the repository root, with
# .devpack.tgz carried; bench/make_devpack.sh):
#   bash bench/device_upward_gpu.sh [tests|bench|far|hybrid|all]
# tests:  test_upward_gpu (multipoles equal to the CPU's; hybrid forces with
#         the GPU tree equal to the CPU tree's), test_farfield_gpu (M2L,
#         L2L, L2P, M2P equal to the CPU's), memcheck and racecheck on
#         parts of them, test_solver, test_device_api;
# bench:  bench_upward_gpu, tree + upward pass, N = 262,144 to 64M, orders 4
#         and 8, beside the CPU's;
# far:    bench_farfield_gpu, M2L, L2L + L2P and M2P on the GPU beside the
#         CPU's, N = 262,144 to 4M, leaves 64 and 512, orders 4 and 8;
# hybrid: bench_tree, the whole hybrid evaluation with --tree-device cpu and
#         gpu, N = 16K to 4M (the crossover that sets
#         TFMM_TREE_GPU_MIN_BODIES).
# Logs in $OUT/upward/; a summary is printed last.
set -uo pipefail
what=${1:-all}
source "$(dirname "$0")/device_setup.sh"
device_setup upward
sum=$out/summary.txt
echo "== $what $(date -u +%FT%TZ)" >>"$sum"
suite() { # name, limit, command...
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  printf '%-22s rc=%d %s\n' "$name" "$rc" \
    "$(grep -a Synthesis "$out/$name.log" | tail -1)" >>"$sum"
}
if [ "$what" = tests ] || [ "$what" = all ]; then
  suite test_upward_gpu 240 "$b/tests/test_upward_gpu" --jobs 4 --verbose
  suite test_farfield_gpu 240 "$b/tests/test_farfield_gpu" --jobs 4 --verbose
  suite memcheck_far 150 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$b/tests/test_farfield_gpu" --jobs 1 \
    --filter 'farfield_gpu/@(errors_are_reported|degenerate)'
  suite racecheck_far 200 compute-sanitizer --tool racecheck \
    --error-exitcode 9 "$b/tests/test_farfield_gpu" --jobs 1 \
    --filter 'farfield_gpu/degenerate'
  suite test_solver 120 "$b/tests/test_solver" --jobs 4
  suite test_device_api 120 "$b/tests/test_device_api" --jobs 4
  suite memcheck 120 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$b/tests/test_upward_gpu" --jobs 1 \
    --filter 'upward_gpu/@(errors_are_reported|degenerate)'
  suite racecheck 120 compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$b/tests/test_upward_gpu" --jobs 1 --filter 'upward_gpu/errors_are_reported'
  suite racecheck_m2m 200 compute-sanitizer --tool racecheck \
    --error-exitcode 9 "$b/tests/test_upward_gpu" --jobs 1 \
    --filter 'upward_gpu/degenerate'
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  suite bench 300 "$b/bench/bench_upward_gpu" \
    --n ${UPWARD_N:-262144,1048576,4194304,16777216,67108864} --order 4,8 \
    --reps 5 --cpu-reps 1 --cpu-max ${UPWARD_CPU_MAX:-16777216}
  cp "$out/bench.log" "$out/table.txt"
fi
if [ "$what" = far ] || [ "$what" = all ]; then
  suite far 300 "$b/bench/bench_farfield_gpu" \
    --n ${FAR_N:-262144,1048576,4194304} --leaf 64,512 --order 4,8 --reps 3
  cp "$out/far.log" "$out/far_table.txt"
fi
if [ "$what" = hybrid ] || [ "$what" = all ]; then
  for td in cpu gpu; do
    timeout 200 "$b/bench/bench_tree" \
      --n 16384,32768,65536,131072,262144,1048576,4194304 --leaf 64,1024 \
      --device gpu --tree-device "$td" --accuracy 1e-3 --reps 3 --warmup 1 \
      --sample 0 --csv "$out/hybrid.csv" >>"$out/hybrid.log" 2>&1 ||
      echo "hybrid tree-device $td rc=$?" >>"$sum"
  done
fi
cat "$out/device.txt" "$sum"
[ -f "$out/table.txt" ] && cat "$out/table.txt"
[ -f "$out/far_table.txt" ] && cat "$out/far_table.txt"
[ -f "$out/hybrid.log" ] && grep -v '^#' "$out/hybrid.log" | tail -40
exit 0
