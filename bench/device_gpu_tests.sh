#!/usr/bin/env bash
# The GPU test suites in parallel on the GPU machine (16 cores: the CPU
# truths of the near-field tests are the long pole), memcheck on the
# softened and double near field, the units and solver suites (their GPU
# cases), the GPU tree, upward pass and far field (with memcheck), the
# device API, the CLI suites that run on the GPU, and the main job. From the repository root with .devpack.tgz carried:
#   bash bench/device_gpu_tests.sh
# Logs in $OUT/tests/; a summary is printed last.
set -uo pipefail
out=${OUT:-/tmp/tilefmm-out}/tests
mkdir -p "$out"
if [ -f .devpack.tgz ]; then rm -rf .devbin .devlibs; tar -xf .devpack.tgz; fi
export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
b=$PWD/${TFMM_DEVICE_BUILD:-.devbin}
export TFMM_CLI=$b/apps/tilefmm
sum=$out/summary.txt
: >"$sum"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv \
  >"$out/device.txt" 2>&1
suite() { # name, limit, binary, args...
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  printf '%-22s rc=%d %s\n' "$name" "$rc" \
    "$(grep -a Synthesis "$out/$name.log" | tail -1)" >>"$sum"
}
suite test_near_gpu 480 "$b/tests/test_near_gpu" --jobs 10 &
suite test_direct_gpu 480 "$b/tests/test_direct_gpu" --jobs 4 &
suite test_units 300 "$b/tests/test_units" --jobs 1 &
suite test_solver 300 "$b/tests/test_solver" --jobs 1 &
suite test_tree_gpu 300 "$b/tests/test_tree_gpu" --jobs 1 &
suite test_upward_gpu 300 "$b/tests/test_upward_gpu" --jobs 2 &
suite test_farfield_gpu 300 "$b/tests/test_farfield_gpu" --jobs 2 &
suite test_device_api 300 "$b/tests/test_device_api" --jobs 1 &
suite test_traverse_gpu 300 "$b/tests/test_traverse_gpu" --jobs 2 &
suite test_schedule_gpu 300 "$b/tests/test_schedule_gpu" --jobs 1 &
suite test_accuracy_gpu 400 "$b/tests/test_accuracy_gpu" --jobs 4 &
wait
suite memcheck_near 200 compute-sanitizer --tool memcheck --error-exitcode 9 \
  --target-processes all "$b/tests/test_near_gpu" --filter \
  'near_gpu/coincident*' --jobs 1
suite memcheck_upward 200 compute-sanitizer --tool memcheck --error-exitcode 9 \
  "$b/tests/test_upward_gpu" --filter 'upward_gpu/@(degenerate|errors*)' \
  --jobs 1
suite memcheck_far 200 compute-sanitizer --tool memcheck --error-exitcode 9 \
  "$b/tests/test_farfield_gpu" --filter 'farfield_gpu/degenerate' --jobs 1
suite test_run 200 "$b/tests/cli/test_run" --jobs 8
suite test_cli 200 "$b/tests/cli/test_cli" --jobs 8
# Where each stage ran, as forces reports it: the default (the gpu
# schedule), and hybrid with the tree and far field on the GPU.
"$TFMM_CLI" ic plummer --n 262144 --out /tmp/tfmm-p262k.txt >/dev/null 2>&1
for sched in auto hybrid; do
  "$TFMM_CLI" forces --in /tmp/tfmm-p262k.txt --out /tmp/tfmm-f262k.txt \
    --schedule $sched --leaf 64 >"$out/forces_262k_$sched.log" 2>&1
  echo "forces 262,144 --schedule $sched rc=$? $(grep -a 'schedule' \
    "$out/forces_262k_$sched.log")" >>"$sum"
done
# tune compares the two schedules.
"$TFMM_CLI" tune --ic plummer --n 200000 --leaf-min 32 --leaf-max 128 \
  --csv "$out/tune.csv" --png "$out/tune.png" >"$out/tune.log" 2>&1
echo "tune rc=$? $(grep -a '^chosen' "$out/tune.log")" >>"$sum"
t0=$(date +%s%N)
"$TFMM_CLI" run --out /tmp/tfmm-main --progress off >"$out/main_job.log" 2>&1
rc=$?
echo "main job (tilefmm run) rc=$rc $((($(date +%s%N) - t0) / 1000000)) ms" \
  >>"$sum"
tail -4 "$out/main_job.log"
cat "$out/device.txt" "$sum"
