#!/usr/bin/env bash
# Issue 13's secondary tables on the GPU machine, bodies resident:
# time against requested accuracy at 1M and 16M (the ladder: theta and
# order per rung; the last rung's near field in double), the near field's
# rate against leaf size at 1M, and the main job's step at the gpu
# schedule's leaf sizes. From the repository root with .devpack.tgz:
#   bash bench/device_ladder.sh [ladder|leaves|main|all]
# Logs in $OUT/ladder/ (packed into $OUT/ladder_logs.tgz); summary last.
set -uo pipefail
what=${1:-all}
source "$(dirname "$0")/device_setup.sh"
device_setup ladder >/dev/null
t=("$b/bench/bench_tree" --method fmm --device gpu --schedule gpu --resident
  --warmup 1 --time-limit 60 --leaf 64)
run() { # name, limit, args...
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  echo "$name rc=$? $((SECONDS - t0))s" >>"$out/summary.txt"
}
if [ "$what" = ladder ] || [ "$what" = all ]; then
  for rung in "1e4 0.5 6 single" "1e5 0.45 7 single" "1e6 0.4 8 double" \
    "1e8 0.35 10 double"; do
    read -r name theta order prec <<<"$rung"
    run "ladder_${name}_1M" 120 "${t[@]}" --n 1048576 --theta "$theta" \
      --order "$order" --precision "$prec" --sample 1000 --reps 3 \
      --csv "$out/ladder.csv"
    run "ladder_${name}_16M" 150 "${t[@]}" --n 16777216 --theta "$theta" \
      --order "$order" --precision "$prec" --sample 0 --reps 2 \
      --csv "$out/ladder.csv"
  done
fi
if [ "$what" = leaves ] || [ "$what" = all ]; then
  run leaves 200 "$b/bench/bench_tree" --method fmm --device gpu \
    --schedule gpu --resident --warmup 1 --n 1048576 \
    --leaf 16,32,64,128,256,512 --theta 0.6 --order 5 --sample 1000 \
    --reps 3 --csv "$out/leaves.csv"
fi
if [ "$what" = main ] || [ "$what" = all ]; then
  for leaf in 64 128 256 1024; do
    run "main_leaf$leaf" 120 "$b/apps/tilefmm" run --out "/tmp/tfmm-main-$leaf" \
      --force --progress off --leaf "$leaf"
  done
fi
cat "$out/device.txt" "$out/summary.txt"
for f in "$out"/*.log; do
  echo "== $f"
  grep -aE "^ +[0-9]+ +fmm|steps/s|mean per step|energy" "$f"
done
tar -czf "${OUT:-/tmp/tilefmm-out}/ladder_logs.tgz" -C "$out" .
