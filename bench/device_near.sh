#!/usr/bin/env bash
# The tree methods with their near field on the GPU, on the GPU machine
# (repository root, the build's binaries and .devlibs/ carried; see
# bench/device_run.sh):
#   bash bench/device_near.sh [check|rate|scale|all]
# check: GPU against CPU near field, sanitizers on a small tree run;
# rate:  near-field kernel rate against leaf size (bench/results/h100/near);
# scale: time per evaluation at N = 262144 .. 16M.
# Logs and CSVs go to $OUT/near.tgz; a short table is printed last.
set -uo pipefail
what=${1:-all}
out=${OUT:-/tmp/tilefmm-out}
run=$out/near
mkdir -p "$run"
export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
build=${TFMM_DEVICE_BUILD:-build-h100}
bt=$build/bench/bench_tree
summary=$run/summary.txt
: >"$summary"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv >"$run/device.txt" 2>&1
nproc >>"$run/device.txt"

if [ "$what" = check ] || [ "$what" = all ]; then
  for dev in cpu gpu; do
    "$bt" --device $dev --n 20000,200000 --leaf 1,16,64,200,1000 --order 4 \
      --reps 1 --sample 1000 --csv "$run/check_$dev.csv" >"$run/check_$dev.log" 2>&1
    echo "check $dev rc=$?" >>"$summary"
  done
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 "$bt" --device gpu \
      --n 3000 --leaf 1,7,64,100 --order 2 --reps 1 --sample 0 \
      >"$run/sanitizer_$tool.log" 2>&1
    echo "sanitizer $tool rc=$? $(grep -aE 'ERROR SUMMARY|RACECHECK SUMMARY' "$run/sanitizer_$tool.log" | tail -1)" >>"$summary"
  done
fi
if [ "$what" = rate ] || [ "$what" = all ]; then
  "$bt" --device gpu --n 1048576 --leaf 16,32,64,128,256,512,1024,2048,4096 \
    --order 4 --reps 3 --warmup 1 --sample 0 --csv "$run/rate.csv" \
    >"$run/rate.log" 2>&1
  echo "rate rc=$?" >>"$summary"
fi
if [ "$what" = scale ] || [ "$what" = all ]; then
  "$bt" --device gpu --n 262144,1048576,4194304 --leaf 256,512,1024,2048 \
    --order 4,5,6 --reps 3 --warmup 1 --sample 1000 --time-limit 60 \
    --csv "$run/scale.csv" >"$run/scale.log" 2>&1
  echo "scale rc=$?" >>"$summary"
  "$bt" --device gpu --n 16777216 --leaf 1024,2048,4096 --order 5 --reps 2 \
    --warmup 1 --sample 1000 --time-limit 120 --csv "$run/scale16m.csv" \
    >"$run/scale16m.log" 2>&1
  echo "scale16m rc=$?" >>"$summary"
fi
tar -C "$out" -czf "$out/near.tgz" near
for f in "$run"/*.log; do
  echo "==== $(basename "$f")"
  grep -av "^#" "$f" | cut -c1-400 | tail -25
done
echo "==== summary"
cat "$summary"
