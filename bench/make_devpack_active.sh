#!/usr/bin/env bash
# Packs what device_active.sh runs into .devpack.tgz: the GPU suites that
# the forces at a subset of the bodies touch (test_active_gpu,
# test_schedule_gpu, test_device_api, test_traverse_gpu,
# test_farfield_gpu), the CPU suite test_active, and bench_active, with the
# shared libraries they load (make_devpack.sh packs the whole build), and
# device_active.sh itself, so that the pack alone runs anywhere:
#   bash bench/make_devpack_active.sh [BUILD]      (default build)
# then on the GPU machine, in the folder holding the pack:
#   tar -xf .devpack.tgz && bash device_active.sh
set -euo pipefail
build=${1:-build}
devlibs=${DEVICE_LIBS:-../shared/tools/device-libs}
rm -rf .devbin .devlibs .devpack.tgz
mkdir -p .devbin/bench .devbin/tests
for t in test_active test_active_gpu test_schedule_gpu test_device_api \
  test_traverse_gpu test_farfield_gpu; do
  cp "$build/tests/$t" .devbin/tests/
done
cp "$build/bench/bench_active" .devbin/bench/
strip -s .devbin/bench/* .devbin/tests/*
"$devlibs" -o .devlibs .devbin/bench/* .devbin/tests/*
cp bench/device_active.sh .devbin/
tar -cf - .devbin .devlibs -C .devbin device_active.sh | xz -T2 -6 --lzma2=dict=128MiB >.devpack.tgz
ls -la .devpack.tgz
