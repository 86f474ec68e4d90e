#!/usr/bin/env bash
# What output costs `tilefmm run` (issue 31; bench/results/run_io): each CLI
# given runs the same cases at its defaults (statistics every step, a
# snapshot every 10 steps, a checkpoint every 100 and at the end), then the
# first CLI once more with no snapshots, checkpoints only at the ends
# (--snapshot-every 0 --checkpoint-every 0). Prints one CSV row per run:
#   name,n,steps,steps_per_s,io_ms_per_step,io_max_ms,process_s
# steps/s: steps over the sum of wall_step over steps 1..S of
# statistics.csv (step 0, the first evaluation, is outside); io: wall_io,
# the main thread's time in output; process_s: the whole process,
# start-up and the last writes included.
#   bench/run_io.sh OUTDIR NAME=CLI [NAME=CLI ...]
# RUN_IO_CASES: "N STEPS;..." (default "1048576 200;1048576 20;16777216 20").
set -euo pipefail
out=$1
shift
mkdir -p "$out"
IFS=';' read -ra cases <<<"${RUN_IO_CASES:-1048576 200;1048576 20;16777216 20}"
first=${1#*=}
one() { # name cli n steps [flags]
  local name=$1 cli=$2 n=$3 steps=$4 dir
  shift 4
  dir=$(mktemp -d "${RUN_IO_DIR:-/tmp}/run_io.XXXXXX")
  local t0 t1
  t0=$(date +%s.%N)
  "$cli" run --ic plummer --n "$n" --steps "$steps" --progress off \
    --plots off --out "$dir" "$@" >"$out/$name-$n-$steps.log" 2>&1 ||
    echo "$name $n $steps: exit $?" >&2
  t1=$(date +%s.%N)
  cp "$dir/statistics.csv" "$out/$name-$n-$steps.csv" 2>/dev/null || true
  grep -v '^#' "$dir/statistics.csv" | awk -F, -v name="$name" -v n="$n" \
    -v steps="$steps" -v t0="$t0" -v t1="$t1" '
    NR > 1 && $1 > 0 { s += $23; io += $22; if ($22 > m) m = $22; k++ }
    END { printf "%s,%d,%d,%.2f,%.2f,%.1f,%.2f\n", name, n, steps,
          k / s, 1e3 * io / k, 1e3 * m, t1 - t0 }'
  rm -rf "$dir"
}
echo "name,n,steps,steps_per_s,io_ms_per_step,io_max_ms,process_s"
for c in "${cases[@]}"; do
  read -r n steps <<<"$c"
  for pair in "$@"; do
    one "${pair%%=*}" "${pair#*=}" "$n" "$steps"
  done
  one "no-output" "$first" "$n" "$steps" --snapshot-every 0 \
    --checkpoint-every 0
done
