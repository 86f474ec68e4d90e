#!/usr/bin/env bash
# Issue 14 on the GPU machine, in one call: the simulation's GPU suites
# (test_sim_gpu, test_simulation_gpu, memcheck on a restart), the CLI's run
# suite, then the benchmarks: 1M and 16M Plummer with the fixed step
# (steps per second and the split of a step), 1M Hernquist with block
# steps against the fixed step at equal energy error, and the README's
# main job. From the repository root with .devpack.tgz carried:
#   bash bench/device_simulation.sh [tests|fixed|hernquist|bench|all]
# (bench: fixed and hernquist)
# Logs under $OUT/sim/ (packed into $OUT/sim.tgz); a summary last.
set -uo pipefail
what=${1:-all}
out=${OUT:-/tmp/tilefmm-out}/sim
mkdir -p "$out"
if [ -f .devpack.tgz ]; then rm -rf .devbin .devlibs; tar -xf .devpack.tgz; fi
export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
b=$PWD/${TFMM_DEVICE_BUILD:-.devbin}
export TFMM_CLI=$b/apps/tilefmm
sum=$out/summary.txt
: >"$sum"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv \
  >"$out/device.txt" 2>&1
date -u +%FT%TZ >>"$out/device.txt"
suite() { # name, limit, command...
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  printf '%-26s rc=%d %s\n' "$name" "$rc" \
    "$(grep -a 'Synthesis\|^sim:.*steps/s\|faster\|^sim: block' \
      "$out/$name.log" | tail -1)" >>"$sum"
}
if [ "$what" = tests ] || [ "$what" = all ]; then
  suite test_sim_gpu 200 "$b/tests/test_sim_gpu" --jobs 1
  suite test_simulation_gpu 300 "$b/tests/test_simulation_gpu" --jobs 1
  suite test_timesteps 300 "$b/tests/test_timesteps" --jobs 4
  suite test_simulation 300 "$b/tests/test_simulation" --jobs 4
  suite memcheck_sim 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$b/tests/test_simulation_gpu" --filter \
    'simulation_gpu/restart_mid*' --jobs 1
  suite test_run 300 "$b/tests/cli/test_run" --jobs 8
  [ -x "$b/tests/test_active_gpu" ] &&
    suite test_active_gpu 300 "$b/tests/test_active_gpu" --jobs 2
fi
has() { case " bench all $* " in *" $what "*) return 0 ;; esac; return 1; }
if has fixed; then
  # The defaults (theta and order from the accuracy 1e-3: 0.4 and 8, whose
  # measured p99 is three decades below it), then settings whose p99 is
  # measured below 1e-3 by validate.
  suite fixed_1M 200 "$b/bench/bench_sim" fixed 1048576 60 64
  suite fixed_1M_t06p5 200 "$b/bench/bench_sim" fixed 1048576 60 64 0.6 5
  suite fixed_1M_t06p5_L32 200 "$b/bench/bench_sim" fixed 1048576 60 32 0.6 5
  suite fixed_1M_t05p5 200 "$b/bench/bench_sim" fixed 1048576 60 64 0.5 5
  suite fixed_16M 300 "$b/bench/bench_sim" fixed 16777216 10 64
  suite fixed_16M_t06p5 300 "$b/bench/bench_sim" fixed 16777216 20 64 0.6 5
  for set in "auto auto" "0.6 5" "0.5 5"; do
    read -r th od <<<"$set"
    "$TFMM_CLI" validate --ic plummer --n 1048576 --sample 2000 \
      --softening spline --eps 0.01 --leaf 64 --theta "$th" --order "$od" \
      >"$out/validate_1M_$th.log" 2>&1
    echo "validate 1M theta $th order $od: $(grep -a 'met' \
      "$out/validate_1M_$th.log" | tr '\n' ' ')" >>"$sum"
  done
fi
if has hernquist; then
  suite hernquist_1M 400 "$b/bench/bench_sim" hernquist 1048576 1 0.025 64 \
    0.6 5 0.01
  suite hernquist_1M_eps003 500 "$b/bench/bench_sim" hernquist 1048576 1 \
    0.025 64 0.6 5 0.003
fi
if has fixed hernquist; then  rm -rf /tmp/tfmm-main
  ( cd /tmp && time "$TFMM_CLI" run --out /tmp/tfmm-main --progress off ) \
    >"$out/main_job.log" 2>&1
  echo "main job rc=$? $(grep -a 'real\|steps/s' "$out/main_job.log" | tr '\n' ' ')" \
    >>"$sum"
fi
tar -czf "${OUT:-/tmp/tilefmm-out}/sim.tgz" -C "$(dirname "$out")" sim
cat "$sum"
grep -ah '^sim:' "$out"/*.log
