#!/usr/bin/env bash
# Packs what device_active.sh runs into .devpack.tgz: the GPU suites that
# the active-set evaluation touches (test_active_gpu, test_schedule_gpu,
# test_device_api, test_traverse_gpu, test_farfield_gpu, test_accuracy_gpu),
# the CPU suite test_active, and bench_active, with the shared libraries
# they load (make_devpack.sh does the same for the whole build).
#   bash bench/make_devpack_active.sh [BUILD]      (default build)
set -euo pipefail
build=${1:-build}
devlibs=${DEVICE_LIBS:-../shared/tools/device-libs}
rm -rf .devbin .devlibs .devpack.tgz
mkdir -p .devbin/bench .devbin/tests
for t in test_active test_active_gpu test_schedule_gpu test_device_api \
  test_traverse_gpu test_farfield_gpu test_accuracy_gpu; do
  cp "$build/tests/$t" .devbin/tests/
done
cp "$build/bench/bench_active" .devbin/bench/
strip -s .devbin/bench/* .devbin/tests/*
"$devlibs" -o .devlibs .devbin/bench/* .devbin/tests/*
tar -cf - .devbin .devlibs | xz -T2 -6 --lzma2=dict=128MiB >.devpack.tgz
ls -la .devpack.tgz
