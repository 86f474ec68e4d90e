#!/usr/bin/env bash
# The simulation state's GPU module on the GPU machine: tests/test_sim_gpu
# twice (fresh seeds each time), once under compute-sanitizer memcheck, and
# bench_sim_gpu. From the repository root with a pack of those two binaries
# carried (.devpack.tgz: .devbin/tests/test_sim_gpu,
# .devbin/bench/bench_sim_gpu and .devlibs/, as bench/make_devpack.sh lays
# them out):
#   bash bench/device_sim_gpu.sh
# Logs in $OUT/sim_gpu.tgz; a summary is printed last.
set -uo pipefail
out=${OUT:-/tmp/tilefmm-out}/sim_gpu
mkdir -p "$out"
if [ -f .devpack.tgz ]; then rm -rf .devbin .devlibs; tar -xf .devpack.tgz; fi
export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
b=$PWD/${TFMM_DEVICE_BUILD:-.devbin}
sum=$out/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv \
  >"$sum" 2>&1
suite() { # name, limit, command...
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  printf '%-10s rc=%d %s\n' "$name" "$rc" \
    "$(grep -a Synthesis "$out/$name.log" | tail -1)" >>"$sum"
}
suite test1 150 "$b/tests/test_sim_gpu" --jobs 1 --verbose
suite test2 150 "$b/tests/test_sim_gpu" --jobs 1
suite memcheck 240 compute-sanitizer --tool memcheck --error-exitcode 9 \
  "$b/tests/test_sim_gpu" --jobs 1
grep -a "ERROR SUMMARY" "$out/memcheck.log" >>"$sum"
grep -a "largest error" "$out/test1.log" "$out/test2.log" >>"$sum"
suite bench 150 "$b/bench/bench_sim_gpu" --reps 5
cat "$out/bench.log" >>"$sum"
# Registers and spills of the module's kernels (the bench links only them).
cuobjdump --dump-resource-usage "$b/bench/bench_sim_gpu" >"$out/resources.txt" 2>&1
grep -a "REG" "$out/resources.txt" | sed 's/^ *//' | cut -c1-90 >>"$sum"
tar -czf "$out.tgz" -C "$(dirname "$out")" sim_gpu
cat "$sum"
