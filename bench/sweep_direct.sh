#!/usr/bin/env bash
# Runs the bench_direct sweeps behind bench/plot_direct.sh: GPU Gems 3,
# chapter 31's figures 31-5 to 31-8 on this GPU, plus bodies per thread r
# and the CPU for comparison. One CSV (and a .log of the table) per sweep:
#
#   OUTDIR/n_sweep.csv       N = 1K..1M at the defaults          (fig. 31-5)
#   OUTDIR/unroll_sweep.csv  unroll 1..32, N = 1K..256K          (fig. 31-6)
#   OUTDIR/p_sweep.csv       p = 32..256, N = 1K..256K           (fig. 31-7)
#   OUTDIR/q_sweep.csv       q = auto,1..32 at p = 32, N = 1K..64K (fig. 31-8)
#   OUTDIR/r_sweep.csv       r = 1, 2, 4, N = 1K..256K
#   OUTDIR/cpu_sweep.csv     the CPU direct path, N = 1K..256K
#   OUTDIR/env.txt           host, GPU and clocks before the sweeps
#   OUTDIR/gpu_samples.csv   SM clock, power, temperature every 0.5 s
#                            during the sweeps (when nvidia-smi exists)
#
#   bench/sweep_direct.sh BENCH_DIRECT OUTDIR [BENCH_ARGS...]
#
# BENCH_ARGS (e.g. --gpu-id 1) go to every run. Each point takes about
# 0.2 s (bench_direct's automatic repetitions); the GPU sweeps total about
# 1-2 minutes on an H100, and N = 1M appears only in the first. Existing
# CSVs are never appended to: move them away first. Without a GPU the
# script prints "skipped: no GPU" and exits 0.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 BENCH_DIRECT OUTDIR [BENCH_ARGS...]" >&2
  exit 2
fi
bench=$1
out=$2
shift 2
extra=("$@")
[ -x "$bench" ] || { echo "$0: $bench is not executable" >&2; exit 2; }
mkdir -p "$out"
sweeps=(n_sweep n_sweep_potential unroll_sweep p_sweep q_sweep r_sweep cpu_sweep)
for s in "${sweeps[@]}"; do
  if [ -e "$out/$s.csv" ]; then
    echo "$0: $out/$s.csv exists; move it away first" >&2
    exit 1
  fi
done

n_all=1024,2048,4096,8192,16384,32768,65536,131072,262144,524288,1048576
n_sub=1024,4096,16384,65536,262144
n_small=1024,2048,4096,8192,16384,32768,65536

{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -a)"
  echo "command: $0 $bench $out ${extra[*]:-}"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=index,name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.applications.graphics,power.limit,temperature.gpu --format=csv
    nvidia-smi -q -d PERFORMANCE,CLOCK
  fi
  if command -v lscpu >/dev/null; then lscpu | sed -n '1,20p'; fi
} >"$out/env.txt" 2>&1 || true

sampler=""
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw,temperature.gpu \
    --format=csv -lms 500 >"$out/gpu_samples.csv" 2>/dev/null &
  sampler=$!
fi
stop_sampler() { if [ -n "$sampler" ]; then kill "$sampler" 2>/dev/null || true; fi; }
trap stop_sampler EXIT

failed=0
# run NAME BENCH_ARGS...: one sweep into OUTDIR/NAME.csv and NAME.log.
run() {
  local name=$1
  shift
  echo "== $name: $bench $* ${extra[*]:-}"
  local rc=0
  "$bench" "$@" "${extra[@]}" --csv "$out/$name.csv" 2>&1 |
    tee "$out/$name.log" || rc=$?
  if grep -q '^skipped: no GPU' "$out/$name.log"; then
    echo "skipped: no GPU"
    rm -f "$out/$name.log"
    exit 0
  fi
  if [ "$rc" -ne 0 ]; then
    echo "== $name: bench_direct failed (exit $rc)" >&2
    failed=1
  fi
}

run n_sweep --n "$n_all" --device-time-limit 20
run n_sweep_potential --n "$n_all" --potential 1 --device-time-limit 20
run unroll_sweep --n "$n_sub" --p 128 --r 2 --unroll 1,2,4,8,16,32 --device-time-limit 10
run p_sweep --n "$n_sub" --p 32,64,128,256 --r 2 --device-time-limit 10
run q_sweep --n "$n_small" --p 32 --r 1 --q 0,1,2,4,8,16,32 --device-time-limit 10
run r_sweep --n "$n_sub" --p 128 --r 1,2,4 --device-time-limit 10
run cpu_sweep --device cpu --n 1024,2048,4096,8192,16384,32768,65536,131072,262144 \
  --warmup 1 --device-time-limit 30

stop_sampler
if command -v gnuplot >/dev/null; then
  "$(dirname "$0")/plot_direct.sh" "$out" || failed=1
fi
exit "$failed"
