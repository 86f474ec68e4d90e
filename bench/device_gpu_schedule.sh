#!/usr/bin/env bash
# The gpu schedule (issue 13) on the GPU machine, in one call (from the
# repository root, with .devpack.tgz carried; bench/make_devpack.sh):
#   bash bench/device_gpu_schedule.sh [tests|bench|all|table]
# tests: test_traverse_gpu (GPU lists equal to the CPU's as sets),
#        test_schedule_gpu (gpu against hybrid, determinism, reuse),
#        test_accuracy_gpu (the accuracy targets under the gpu schedule),
#        memcheck and racecheck on parts of them;
# bench: bench_tree, Plummer, eps 0 (p99 against a double sum on 1000
#        bodies), the gpu schedule at leaves 32, 64 with theta 0.5-0.6 and
#        order 5 (GPU_LEAVES, GPU_THETAS, GPU_ORDERS), the hybrid schedule
#        at leaf 1024 with accuracy 1e-3; N = 262,144 to 16M (BENCH_N).
# table: bodies resident on the GPU, N = 262,144 to 64M at leaf 64, theta
#        0.6, order 5, and the accuracy ladder at 1M and 16M.
# Logs in $OUT/gpu_schedule/; a summary is printed last.
set -uo pipefail
what=${1:-all}
source "$(dirname "$0")/device_setup.sh"
device_setup gpu_schedule
sum=$out/summary.txt
echo "== $what $(date -u +%FT%TZ)" >>"$sum"
if [ "$what" = tests ] || [ "$what" = all ]; then
  device_suite test_traverse_gpu 200 "$b/tests/test_traverse_gpu" --jobs 4
  device_suite test_schedule_gpu 200 "$b/tests/test_schedule_gpu" --jobs 2
  device_suite test_accuracy_gpu 400 "$b/tests/test_accuracy_gpu" --jobs 8 --verbose
  device_suite memcheck_traverse 150 compute-sanitizer --tool memcheck \
    --error-exitcode 9 "$b/tests/test_traverse_gpu" --jobs 1 \
    --filter 'traverse_gpu/@(errors_are_reported|degenerate)'
  device_suite memcheck_schedule 200 compute-sanitizer --tool memcheck \
    --error-exitcode 9 "$b/tests/test_schedule_gpu" --jobs 1 \
    --filter 'schedule_gpu/coincident_bodies_named'
  device_suite racecheck_schedule 200 compute-sanitizer --tool racecheck \
    --error-exitcode 9 "$b/tests/test_schedule_gpu" --jobs 1 \
    --filter 'schedule_gpu/coincident_bodies_named'
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  n=${BENCH_N:-262144,1048576,4194304,16777216}
  # Theta and order given: the accuracy table's choice is the worst case
  # over adversarial inputs (docs/accuracy.md), far tighter than Plummer
  # needs; the p99 column says what each setting reached.
  device_suite bench_gpu 500 "$b/bench/bench_tree" --n "$n" --method fmm \
    --device gpu --schedule gpu --leaf ${GPU_LEAVES:-32,64} \
    --theta ${GPU_THETAS:-0.5,0.55,0.6} --order ${GPU_ORDERS:-5} \
    --sample 1000 --reps 3 --warmup 1 --time-limit 60 --csv "$out/gpu.csv"
  device_suite bench_hybrid 300 "$b/bench/bench_tree" --n "$n" --method fmm \
    --device gpu --schedule hybrid --leaf 1024 --accuracy 1e-3 \
    --sample 1000 --reps 2 --warmup 1 --time-limit 60 --csv "$out/hybrid.csv"
fi
if [ "$what" = table ]; then
  # Bodies resident on the GPU (bench_tree --resident), Plummer, eps 0,
  # leaf 64: the default target's setting at every N to 64M, then the
  # accuracy ladder at 1M and 16M (double precision for the last rung).
  t=("$b/bench/bench_tree" --method fmm --device gpu --schedule gpu
    --resident --sample 1000 --reps 3 --warmup 1 --time-limit 60)
  device_suite scale 300 "${t[@]}" --n 262144,1048576,4194304,16777216,33554432,67108864 \
    --leaf 64 --theta 0.6 --order 5 --csv "$out/scale.csv"
  device_suite ladder_1e4 150 "${t[@]}" --n 1048576,16777216 --leaf 64 --theta 0.5 \
    --order 6 --csv "$out/ladder.csv"
  device_suite ladder_1e5 150 "${t[@]}" --n 1048576,16777216 --leaf 64 --theta 0.4 \
    --order 8 --csv "$out/ladder.csv"
  device_suite ladder_1e6 200 "${t[@]}" --n 1048576,16777216 --leaf 64 --theta 0.35 \
    --order 10 --precision double --csv "$out/ladder.csv"
fi
cat "$out/summary.txt"
for f in bench_gpu bench_hybrid scale ladder_1e4 ladder_1e5 ladder_1e6; do
  [ -f "$out/$f.log" ] && { echo "-- $f"; tail -25 "$out/$f.log"; }
done
