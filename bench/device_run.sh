#!/usr/bin/env bash
# Everything that needs the GPU, in one call on the GPU machine, from the
# repository root, with the build's binaries and .devlibs/ carried (see
# README, "Working on the GPU machine"; TFMM_DEVICE_BUILD names the build
# directory, default build-h100, or a slim copy of its binaries):
#   bash bench/device_run.sh [tests|bench|all]
# Full logs and CSVs go to $OUT/run.tgz; a short table is printed last.
set -uo pipefail
what=${1:-all}
out=${OUT:-/tmp/tilefmm-out}
run=$out/run
mkdir -p "$run"
export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
build=${TFMM_DEVICE_BUILD:-build-h100}
export TFMM_CLI=$PWD/$build/apps/tilefmm
summary=$run/summary.txt
: >"$summary"

{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,power.limit \
    --format=csv
  nproc | sed 's/^/cpu cores: /'
} >"$run/device.txt" 2>&1
cat "$run/device.txt"

if [ "$what" != bench ]; then
  for t in "$build"/tests/test_* "$build"/tests/cli/test_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    "$t" --jobs 8 >"$run/$name.log" 2>&1
    rc=$?
    line=$(grep -a "Synthesis" "$run/$name.log" | tail -1)
    printf '%-24s rc=%d %s\n' "$name" "$rc" "$line" >>"$summary"
  done
  # compute-sanitizer on small runs of every launch shape family: out of
  # bounds accesses, shared-memory races and barrier misuse (the kernel
  # must never leave a thread behind a barrier, at any N).
  bench_bin="$build/bench/bench_direct"
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 9 "$bench_bin" \
      --n 1,31,129,1000,4097 --p 32,128,256 --q 0,1,4 --r 1,2,4 --unroll 4 \
      --potential 1 --reps 1 --warmup 0 >"$run/sanitizer_$tool.log" 2>&1
    rc=$?
    line=$(grep -aE "ERROR SUMMARY|RACECHECK SUMMARY" "$run/sanitizer_$tool.log" |
      tail -1)
    printf '%-24s rc=%d %s\n' "sanitizer $tool" "$rc" "$line" >>"$summary"
  done
  # The README's main job on the GPU: 'tilefmm run' on its defaults.
  "$TFMM_CLI" run --out "$run/main" --progress off >"$run/main_job.log" 2>&1
  echo "main job (run, N = 262144, 20 steps) rc=$?" >>"$summary"
  rm -rf "$run/main"
  # The kernel's machine code, for counting the inner loop's instructions.
  for lib in "$build"/src/libtilefmm.a "$build"/src/libtilefmm.so*; do
    [ -f "$lib" ] && cuobjdump -sass "$lib" >"$run/kernels.sass" 2>&1 && break
  done
fi

if [ "$what" != tests ]; then
  bash bench/sweep_direct.sh "$build/bench/bench_direct" "$run/csv" \
    >"$run/bench.log" 2>&1
  echo "bench rc=$?" >>"$summary"
fi

tar -C "$out" -czf "$out/run.tgz" run
echo "==== main job"
cat "$run/main_job.log" 2>/dev/null
echo "==== summary"
cat "$summary"
