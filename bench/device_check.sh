#!/usr/bin/env bash
# The GPU suites that a change of the gpu schedule's kernels touches, in
# parallel, with memcheck on the far field and the tree, then the ncu
# kernel sums of one evaluation (device_profile_gpu.sh). From the
# repository root with .devpack.tgz carried (bench/make_devpack.sh):
#   bash bench/device_check.sh
# Logs in $OUT/check/; a summary is printed last.
set -uo pipefail
source "$(dirname "$0")/device_setup.sh"
device_setup check >/dev/null
sum=$out/summary.txt
: >"$sum"
for t in farfield_gpu tree_gpu upward_gpu traverse_gpu schedule_gpu \
  device_api solver; do
  device_suite "test_$t" 300 "$b/tests/test_$t" --jobs 2 &
done
device_suite test_accuracy_gpu 400 "$b/tests/test_accuracy_gpu" --jobs 4 &
wait
device_suite memcheck_far 200 compute-sanitizer --tool memcheck --error-exitcode 9 \
  "$b/tests/test_farfield_gpu" --filter 'farfield_gpu/degenerate' --jobs 1
device_suite memcheck_tree 200 compute-sanitizer --tool memcheck --error-exitcode 9 \
  "$b/tests/test_tree_gpu" --jobs 1
device_suite racecheck_schedule 200 compute-sanitizer --tool racecheck \
  --error-exitcode 9 "$b/tests/test_schedule_gpu" --jobs 1 \
  --filter 'schedule_gpu/coincident_bodies_named'
PROFILE_CASES=${PROFILE_CASES:-"262144 64 0.5 5;1048576 64 0.6 5"} \
  bash "$(dirname "$0")/device_profile_gpu.sh" >"$out/profile.txt" 2>&1
cat "$out/profile.txt" "$out/device.txt" "$sum"
# The device tool returns at most 8 files: the logs travel as one.
tar -czf "${OUT:-/tmp/tilefmm-out}/check_logs.tgz" -C "$out" .
