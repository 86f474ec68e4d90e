#!/usr/bin/env bash
# On the GPU machine, in the folder holding .devpack.tgz
# (bench/make_devpack.sh): the suites that the forces at a subset
# of the bodies touch, in parallel, memcheck on a small bench_active run,
# then bench_active alone on the GPU (1M and 16M Plummer bodies resident,
# active fractions 1 to 0.001, drawn at random and of the largest
# accelerations). Logs tarred into $OUT/active.tgz; the summary and the
# bench's table are printed too.
#   bash bench/device_active.sh
set -uo pipefail
out=${OUT:-/tmp/tilefmm-out}/active
mkdir -p "$out"
if [ -f .devpack.tgz ]; then rm -rf .devbin .devlibs; tar -xf .devpack.tgz; fi
export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
b=$PWD/${TFMM_DEVICE_BUILD:-.devbin}
sum=$out/summary.txt
: >"$sum"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv \
  >"$out/device.txt" 2>&1
suite() { # name, limit, binary, args...
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  printf '%-20s rc=%d %4ds %s\n' "$name" "$rc" $((SECONDS - t0)) \
    "$(grep -a Synthesis "$out/$name.log" | tail -1)" >>"$sum"
}
suite test_active_gpu 240 "$b/tests/test_active_gpu" --jobs 2 &
suite test_active 240 "$b/tests/test_active" --jobs 4 &
suite test_schedule_gpu 240 "$b/tests/test_schedule_gpu" --jobs 1 &
suite test_device_api 240 "$b/tests/test_device_api" --jobs 1 &
suite test_traverse_gpu 240 "$b/tests/test_traverse_gpu" --jobs 2 &
suite test_farfield_gpu 240 "$b/tests/test_farfield_gpu" --jobs 2 &
wait
suite memcheck_active 120 compute-sanitizer --tool memcheck \
  --error-exitcode 9 "$b/bench/bench_active" --n 30000 --reps 1 \
  --warmup 0 --fractions 0.3,0.01
timeout 200 "$b/bench/bench_active" --n 1048576,16777216 --reps 5 \
  --warmup 2 >"$out/bench_active.log" 2>&1
echo "bench_active rc=$?" >>"$sum"
cat "$sum"
cat "$out/bench_active.log"
grep -a -h -B1 -A6 "Assertion\|CRASH\|ERROR SUMMARY: [1-9]" "$out"/*.log |
  head -60
tar -czf "${OUT:-/tmp/tilefmm-out}/active.tgz" -C "$out" .
