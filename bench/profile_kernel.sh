#!/usr/bin/env bash
# Nsight Compute on one launch of the all-pairs kernel, at the card's own
# clocks (--clock-control none), for each bench_direct argument set given:
#   bench/profile_kernel.sh BENCH_DIRECT OUTDIR "ARGS..." ["ARGS..." ...]
# Writes OUTDIR/profile_K.txt per set: issue-slot use, warp stall reasons,
# occupancy and the instruction mix.
set -uo pipefail
bench=$1
out=$2
shift 2
mkdir -p "$out"
k=0
for args in "$@"; do
  k=$((k + 1))
  # shellcheck disable=SC2086
  ncu --clock-control none --kernel-name regex:direct_tiled \
    --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section SchedulerStats \
    --section WarpStateStats --section Occupancy \
    --section InstructionStats --section ComputeWorkloadAnalysis \
    "$bench" $args --warmup 1 --reps 1 >"$out/profile_$k.txt" 2>&1
  echo "profile $k ($args): rc=$?"
done
