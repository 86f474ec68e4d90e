#!/usr/bin/env bash
# Issue 15 on the GPU machine, in one call: every GPU suite
# (device_gpu_tests.sh), the CLI suites of the new inputs, units and
# pictures on the GPU, the Python package's GPU tests, the compute_80 PTX
# JIT-compiled for the H100 (a build of 80-virtual only: the PTX the
# default build carries for GPUs newer than its machine code), a build of
# 80-real only that must name the H100 as unusable with the fix, and the
# main job with its pictures. From the repository root, carrying
# .devpack.tgz (bench/make_devpack.sh build) and .devextra.tgz
# (build-ptx and build-sm80 binaries):
#   bash bench/device_issue15.sh
# Logs in $OUT/issue15/ (packed to $OUT/issue15.tgz); a table last.
set -uo pipefail
OUT=${OUT:-/tmp/tilefmm-out}
out=$OUT/issue15
mkdir -p "$out"
tar -xf .devpack.tgz
tar -xf .devextra.tgz
export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
b=$PWD/.devbin
export TFMM_CLI=$b/apps/tilefmm
sum=$out/summary.txt
: >"$sum"
note() { echo "$*" >>"$sum"; }

# 1. Every GPU suite and the CLI suites that run on the GPU.
OUT=$out TFMM_DEVICE_BUILD=.devbin bash bench/device_gpu_tests.sh \
  >"$out/gpu_tests.log" 2>&1
cat "$out/tests/summary.txt" >>"$sum"
for t in test_snapshot_cli test_binary_input test_render test_ic; do
  timeout 300 "$b/tests/cli/$t" --jobs 8 >"$out/$t.log" 2>&1
  note "$(printf '%-22s rc=%d %s' "$t" $? "$(grep -a Synthesis "$out/$t.log" | tail -1)")"
done

# 2. The Python package on the GPU (pytest from .devpy; no h5py here).
TFMM_DEVICE_BUILD=.devbin timeout 300 bash bench/device_python.sh \
  python/tests/test_gpu.py python/tests/test_forces.py \
  python/tests/test_simulation.py >"$out/python.log" 2>&1
note "python (gpu, forces, simulation) rc=$? $(grep -a -E '^tilefmm .*CUDA' "$out/python.log") $(tail -1 "$out/python.log")"

# 3. The compute_80 PTX, JIT-compiled for sm_90.
p=$PWD/.devextra/ptx
"$p/tilefmm" --version >"$out/ptx_version.log" 2>&1
note "ptx-only --version: $(grep -a -o 'usable GPUs: [0-9]*' "$out/ptx_version.log")"
for t in test_direct_gpu test_schedule_gpu test_near_gpu; do
  timeout 400 "$p/$t" --jobs 8 >"$out/ptx_$t.log" 2>&1
  note "$(printf 'ptx %-18s rc=%d %s' "$t" $? "$(grep -a Synthesis "$out/ptx_$t.log" | tail -1)")"
done
TFMM_CLI=$p/tilefmm timeout 300 "$p/tilefmm" validate --ic plummer --n 200000 \
  --device gpu >"$out/ptx_validate.log" 2>&1
note "ptx validate 200k rc=$? $(grep -a 'target' "$out/ptx_validate.log" | tail -1)"

# 4. A build for sm_80 only: the H100 named unusable, with the fix.
s=$PWD/.devextra/sm80
"$s/tilefmm" --version >"$out/sm80_version.out" 2>"$out/sm80_version.err"
note "sm80-only --version rc=$? stdout: $(grep -a -o 'usable GPUs: [0-9]*' "$out/sm80_version.out") stderr: $(head -c 300 "$out/sm80_version.err")"
"$s/tilefmm" ic plummer --n 20000 --out /tmp/p20k.txt >/dev/null 2>&1
"$s/tilefmm" forces --in /tmp/p20k.txt --out /tmp/f.txt --device gpu \
  >"$out/sm80_gpu.log" 2>&1
note "sm80-only forces --device gpu rc=$? $(grep -a -m1 'not usable' "$out/sm80_gpu.log" | head -c 300)"
"$s/tilefmm" forces --in /tmp/p20k.txt --out /tmp/f.txt --device auto \
  >"$out/sm80_auto.log" 2>&1
note "sm80-only forces --device auto rc=$? $(grep -a -m1 'running on the CPU' "$out/sm80_auto.log" | head -c 200)"

# 5. The main job, as scripts/main runs it, with its pictures.
start=$(python3 -c "import time; print(time.time())")
"$TFMM_CLI" run --out "$out/mainjob" --force >"$out/mainjob.log" 2>&1
rc=$?
end=$(python3 -c "import time; print(time.time())")
note "main job rc=$rc $(python3 -c "print(round($end - $start, 2))") s: $(grep -a -E 'wall|energy:' "$out/mainjob.log" | tr '\n' ' ' | head -c 300)"
cp "$out/mainjob/picture.png" "$OUT/main_picture.png" 2>/dev/null
cp "$out/mainjob/energy.png" "$OUT/main_energy.png" 2>/dev/null
rm -f "$out"/mainjob/*.hdf5
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv \
  >"$out/device.txt" 2>&1
tar -czf "$OUT/issue15.tgz" -C "$OUT" issue15
cp "$sum" "$OUT/summary.txt"
echo "==== summary"
cat "$sum"
