#!/usr/bin/env bash
# Kernel time by name (ncu, gpu__time_duration) of one gpu-schedule
# evaluation per configuration: PROFILE_CASES, each "N LEAF THETA ORDER"
# separated by ';'. The raw CSVs land in $OUT/prof/; the per-kernel sums
# (bench/ncu_kernel_sums.py) are printed.
set -uo pipefail
source "$(dirname "$0")/device_setup.sh"
device_setup prof >/dev/null
cases=${PROFILE_CASES:-"1048576 64 0.6 5"}
IFS=';' read -ra list <<<"$cases"
for c in "${list[@]}"; do
  read -r n leaf theta order <<<"$c"
  f=$out/ncu_${n}_${leaf}_${theta}_${order}.csv
  ncu --metrics gpu__time_duration.sum --csv --print-units base \
    "$b/bench/bench_tree" --n "$n" --method fmm --device gpu --schedule gpu \
    --leaf "$leaf" --theta "$theta" --order "$order" --sample 0 --reps 1 \
    --warmup 0 >"$f" 2>/dev/null
  echo "== N $n leaf $leaf theta $theta order $order"
  python3 "$(dirname "$0")/ncu_kernel_sums.py" "$f"
done
