#!/usr/bin/env bash
# Steps per second of 'tilefmm run' and its time per step by phase:
#   bench/run_bench.sh TILEFMM OUT.csv WORKDIR "N:STEPS:DEVICE ..."
# Each case is a Plummer sphere run on its defaults (fmm, theta 0.5,
# order 4, the device's default leaf size) for STEPS steps, without
# snapshots past the initial one. The means are over steps 1..STEPS (step
# 0 is the initial force evaluation); io is the snapshot and checkpoint
# time, kept apart from the step's own time.
set -euo pipefail
cli=$1 csv=$2 work=$3 cases=$4
mkdir -p "$work"
{
  echo "# tilefmm run benchmark: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# command: $0 $*"
  echo "# device: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $(nproc) cpu cores"
  echo "n,device,steps,leaf,steps_per_s,step_s,tree_s,near_s,far_s,integrate_s,io_s,final_rel_energy_error"
} >"$csv"
for c in $cases; do
  IFS=: read -r n steps dev <<<"$c"
  dir=$work/run_${n}_$dev
  rm -rf "$dir"
  "$cli" run --ic plummer --n "$n" --steps "$steps" --device "$dev" \
    --snapshot-every 0 --checkpoint-every 0 --progress off --out "$dir" \
    >"$dir.log" 2>&1 || { echo "case $c failed:"; tail -5 "$dir.log"; continue; }
  # statistics.csv columns: 1 step, 6 rel_energy_error, 17 leaf_size,
  # 18 tree, 19 near, 20 far, 21 integrate, 22 io, 23 step.
  awk -F, -v n="$n" -v dev="$dev" 'NR > 1 && $1 > 0 {
      k++; tree += $18; near += $19; far += $20; integ += $21; io += $22;
      step += $23 - $22; leaf = $17; err = $6 }
    END { printf "%s,%s,%d,%s,%.3f,%.5f,%.5f,%.5f,%.5f,%.5f,%.5f,%.3e\n",
      n, dev, k, leaf, k / step, step / k, tree / k, near / k, far / k,
      integ / k, io / k, err }' "$dir/statistics.csv" >>"$csv"
  rm -rf "$dir"
done
cat "$csv"
