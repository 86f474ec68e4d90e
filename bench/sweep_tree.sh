#!/usr/bin/env bash
# Runs the bench_tree sweeps behind bench/plot_tree.sh. One CSV (and a .log
# of the table) per sweep:
#
#   OUTDIR/grid.csv        (a) FMM, leaf 16..256 x order 2, 4, 6, 8 at
#                              N = 256K and 1M, errors on 1000 bodies
#   OUTDIR/n4m.csv         (b) FMM, N = 4M at leaf 64, 128 and order 4, 6
#                              (N = 256K first: it predicts the 4M cost)
#   OUTDIR/tree_build.csv  (c) the tree alone (--tree-only: order 1,
#                              theta 1, no errors), N = 4M and 16M at leaf
#                              16, 64, 256, two repetitions
#   OUTDIR/bh.csv          (d) Barnes-Hut, N = 1M, leaf 64, order 0, 2, 4
#   OUTDIR/env.txt         host, CPU, memory, OpenMP settings, commit
#
#   bench/sweep_tree.sh BENCH_TREE OUTDIR [BENCH_ARGS...]
#
# BENCH_ARGS go last on every bench_tree command line and so replace the
# sweep's own values: e.g. "--threads 16", or "--n 65536 --threads 2" for a
# quick check of the whole pipeline on a small machine.
#
# Time: about 5 minutes on 16 cores. Each sweep passes --time-limit, so a
# point predicted (from the same configuration at the smaller N) to take
# longer is skipped and recorded as a "# skipped" comment; the largest
# orders at small leaves are the first to go. A whole sweep is skipped once
# SWEEP_TREE_BUDGET seconds (default 420) have passed. Existing CSVs are
# never appended to: move them away first.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 BENCH_TREE OUTDIR [BENCH_ARGS...]" >&2
  exit 2
fi
bench=$1
out=$2
shift 2
extra=("$@")
budget=${SWEEP_TREE_BUDGET:-420}
[ -x "$bench" ] || { echo "$0: $bench is not executable" >&2; exit 2; }
mkdir -p "$out"
sweeps=(grid n4m tree_build bh)
for s in "${sweeps[@]}"; do
  if [ -e "$out/$s.csv" ]; then
    echo "$0: $out/$s.csv exists; move it away first" >&2
    exit 1
  fi
done

here="$(cd "$(dirname "$0")" && pwd)"
{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -a)"
  echo "command: $0 $bench $out ${extra[*]:-}"
  echo "nproc: $(nproc)"
  echo "commit: $(git -C "$here" rev-parse HEAD 2>/dev/null || echo unknown)" \
    "($(git -C "$here" status --porcelain 2>/dev/null | wc -l) paths changed)"
  echo "OMP_NUM_THREADS=${OMP_NUM_THREADS:-} OMP_PROC_BIND=${OMP_PROC_BIND:-}" \
    "OMP_PLACES=${OMP_PLACES:-} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-}"
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)"
  if command -v free >/dev/null; then free -g; fi
  if command -v lscpu >/dev/null; then lscpu; fi
} >"$out/env.txt" 2>&1 || true

failed=0
# run NAME BENCH_ARGS...: one sweep into OUTDIR/NAME.csv and NAME.log.
run() {
  local name=$1
  shift
  if [ "$SECONDS" -ge "$budget" ]; then
    echo "== $name: skipped, ${SECONDS} s past the ${budget} s budget" |
      tee "$out/$name.log"
    return 0
  fi
  echo "== $name: $bench $* ${extra[*]:-}"
  local rc=0 t0=$SECONDS
  "$bench" "$@" "${extra[@]}" --csv "$out/$name.csv" 2>&1 |
    tee "$out/$name.log" || rc=$?
  echo "== $name: $((SECONDS - t0)) s"
  if [ "$rc" -ne 0 ]; then
    echo "== $name: bench_tree failed (exit $rc)" >&2
    failed=1
  fi
}

# (a) The leaf x order grid. Points up to ~10 s each at 1M; at 256K
# nothing is known yet, so everything runs.
run grid --method fmm --n 262144,1048576 --leaf 16,32,64,128,256 \
  --order 2,4,6,8 --sample 1000 --time-limit 10
# (b) 4M, the largest N with errors (the reference costs ~4e9 pair sums).
run n4m --method fmm --n 262144,4194304 --leaf 64,128 --order 4,6 \
  --sample 1000 --time-limit 40
# (c) The tree build alone; 4M predicts 16M.
run tree_build --tree-only --n 4194304,16777216 --leaf 16,64,256 \
  --order 1 --reps 2 --time-limit 30
# (d) Barnes-Hut against the FMM rows of (a) at leaf 64.
run bh --method bh --n 1048576 --leaf 64 --order 0,2,4 --sample 1000 \
  --time-limit 60

echo "== total: ${SECONDS} s"
if command -v gnuplot >/dev/null; then
  "$here/plot_tree.sh" "$out" || failed=1
fi
exit "$failed"
