#!/usr/bin/env bash
# The gpu schedule's whole evaluation from bodies resident on the GPU
# (bench_tree --resident; Plummer seed 42, eps 0, p99 against the double
# sum on 1000 bodies up to 4M), its phase split, and the hybrid schedule
# at its best measured setting with host bodies, for the table of issue
# 13. From the repository root with .devpack.tgz carried:
#   bash bench/device_scale.sh [small|large|hybrid|all]
# small: 262,144 to 4M at leaves 32, 64, theta 0.5, 0.6, order 5;
# large: 16M, 32M, 64M at leaf 64, theta 0.6, order 5 (no error sample:
#        the reference would take minutes; 4M's p99 stands for them);
# hybrid: leaves 256, 1024, theta 0.5, order 5, 262,144 to 4M.
# Logs and CSVs in $OUT/scale/; the summary lines last.
set -uo pipefail
what=${1:-all}
source "$(dirname "$0")/device_setup.sh"
device_setup scale >/dev/null
common=(--method fmm --device gpu --order 5 --warmup 1 --time-limit 60)
run() { # name, args...
  local name=$1
  shift
  local t0=$SECONDS
  timeout 400 "$b/bench/bench_tree" "${common[@]}" "$@" \
    --csv "$out/$name.csv" >"$out/$name.log" 2>&1
  echo "$name rc=$? $((SECONDS - t0))s" >>"$out/summary.txt"
}
if [ "$what" = small ] || [ "$what" = all ]; then
  run small --schedule gpu --resident --n 262144,1048576,4194304 \
    --leaf 32,64 --theta 0.5,0.6 --sample 1000 --reps 5
fi
if [ "$what" = large ] || [ "$what" = all ]; then
  run large --schedule gpu --resident --n 16777216,33554432,67108864 \
    --leaf 64 --theta 0.6 --sample 0 --reps 3
fi
if [ "$what" = hybrid ] || [ "$what" = all ]; then
  run hybrid --schedule hybrid --n 262144,1048576,4194304 --leaf 256,1024 \
    --theta 0.5 --sample 1000 --reps 2
fi
cat "$out/device.txt" "$out/summary.txt"
# The device tool returns at most 8 files: the logs travel as one.
tar -czf "${OUT:-/tmp/tilefmm-out}/scale_logs.tgz" -C "$out" .
for f in "$out"/*.log; do echo "== $f"; tail -n 25 "$f"; done
