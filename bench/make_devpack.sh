#!/usr/bin/env bash
# Packs what the GPU machine needs into .devpack.tgz (under the 64 MiB a
# call carries): the stripped binaries of a CUDA build in .devbin/ (same
# layout as the build) and the shared libraries they load in .devlibs/.
#   bench/make_devpack.sh [BUILD]      (default build-h100)
# On the GPU machine, carrying it: bash bench/device.sh COMMAND (it unpacks
# the pack), e.g.
#   bash bench/device.sh tests
#   bash bench/device.sh sim all
#   bash bench/device.sh python
set -euo pipefail
build=${1:-build-h100}
devlibs=${DEVICE_LIBS:-../shared/tools/device-libs}
rm -rf .devbin .devlibs .devpy .devpack.tgz
mkdir -p .devbin/apps .devbin/bench .devbin/tests/cli .devbin/tests/mpi .devbin/src
cp "$build/apps/tilefmm" .devbin/apps/
cp "$build"/bench/bench_tree "$build"/bench/bench_direct \
  "$build"/bench/calibrate_accuracy .devbin/bench/
for extra in bench_sim bench_sim_gpu bench_active bench_mpi bench_planner \
  bench_reference_gpu bench_watch bench_tree_gpu bench_oneshot bench_upward_gpu; do
  [ -x "$build/bench/$extra" ] && cp "$build/bench/$extra" .devbin/bench/
done
for t in "$build"/tests/test_* "$build"/tests/cli/test_* \
  "$build"/tests/mpi/test_*; do
  [ -f "$t" ] && [ -x "$t" ] || continue
  cp "$t" ".devbin/${t#"$build"/}"
done
cp -a "$build"/src/libtilefmm.so* .devbin/src/
# the preloaded stand-ins of the CLI tests (hdf5_fault, hdf5_stall), which
# the tests name by their build path: bench/device.sh puts them back there
cp "$build"/tests/cli/lib*.so .devbin/tests/cli/ 2>/dev/null || true
strip -s .devbin/apps/tilefmm .devbin/bench/* .devbin/tests/test_* \
  .devbin/tests/cli/test_* .devbin/tests/mpi/test_* 2>/dev/null || true
"$devlibs" -o .devlibs .devbin/apps/tilefmm .devbin/bench/* \
  .devbin/tests/test_* .devbin/tests/cli/test_* .devbin/tests/mpi/test_* \
  .devbin/src/libtilefmm.so
# pytest for the Python package's tests (bench/device.sh python): pure
# Python, so any python3 there runs it; the GPU machine has no network.
python3 -m pip install -q --target .devpy pytest
# xz with a dictionary larger than one binary: every binary carries the same
# static CUDA code (~13 MB), stored once (a pack of ~190 MB of binaries
# becomes ~12 MB, under what a call carries).
# DEVPACK_PRESET: xz's preset (default 6); 1 packs several times faster
# on a busy 2-core machine for a pack a few MB larger.
tar -cf - .devbin .devlibs .devpy |
  xz -T2 --lzma2=preset="${DEVPACK_PRESET:-6}",dict=128MiB >.devpack.tgz
ls -la .devpack.tgz
