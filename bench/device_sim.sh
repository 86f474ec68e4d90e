#!/usr/bin/env bash
# tilefmm run on the GPU machine, in one call, from the repository root,
# with the binaries and .devlibs/ carried (TFMM_DEVICE_BUILD: the build or
# its slim copy, default build-h100):
#   bash bench/device_sim.sh [bench|merger|all]
# bench: steps per second and time per step by phase for 262,144, 1M and
#   4M Plummer bodies with the GPU near field, and 262,144 on the CPU
#   alone (bench/run_bench.sh, CSV in $OUT/sim/run_bench.csv);
# merger: the README's merger run, rendered every 100 steps, with its
#   statistics.csv (the snapshots themselves are not kept).
# Results go to $OUT/sim.tgz; a short table is printed last.
set -uo pipefail
what=${1:-all}
out=${OUT:-/tmp/tilefmm-out}
sim=$out/sim
mkdir -p "$sim"
export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
build=${TFMM_DEVICE_BUILD:-build-h100}
cli=$PWD/$build/apps/tilefmm
work=${TMPDIR:-/tmp}/tilefmm-sim
mkdir -p "$work"

if [ "$what" != merger ]; then
  bash bench/run_bench.sh "$cli" "$sim/run_bench.csv" "$work" \
    "262144:20:gpu 1048576:10:gpu 4194304:6:gpu 262144:5:cpu" \
    >"$sim/run_bench.log" 2>&1
  echo "run_bench rc=$?" >>"$sim/summary.txt"
fi

if [ "$what" != bench ]; then
  m=$work/merger
  rm -rf "$m"
  "$cli" run --ic merger --n 262144 --dt 0.02 --t-end 16 \
    --snapshot-every 100 --checkpoint-every 0 --progress off --out "$m" \
    >"$sim/merger.log" 2>&1
  echo "merger rc=$?" >>"$sim/summary.txt"
  cp "$m/statistics.csv" "$sim/merger_statistics.csv"
  cp "$m/used_parameters.yml" "$sim/merger_parameters.yml"
  for s in "$m"/snapshot_*.hdf5; do
    "$cli" render "$s" --out "$sim/$(basename "$s" .hdf5).png" \
      --axis z --extent 8 --centre 0,0,0 --size 768 \
      >>"$sim/render.log" 2>&1
  done
  echo "render rc=$?" >>"$sim/summary.txt"
  rm -rf "$m"
fi

tar -C "$out" -czf "$out/sim.tgz" sim
cat "$sim/summary.txt"
[ -f "$sim/run_bench.csv" ] && cat "$sim/run_bench.csv"
tail -3 "$sim/merger.log" 2>/dev/null
