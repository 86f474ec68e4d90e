#!/usr/bin/env bash
# Packs issue 28's measurement for the GPU machine into one tarball (under
# the 64 MiB a call carries): .pin/base (apps/tilefmm and libtilefmm.so of
# the commit BASE, built beforehand into BASE_DIR), .pin/new (the same and
# the GPU test binaries of BUILD), .pin/libs (their shared libraries),
# .pin/py-base and .pin/py-new (the Python packages of both), .pin/pytests
# and .pin/site (python/tests and pytest, pure Python, from a venv), and
# this folder's scripts. On the GPU machine: bash .pin/device.sh (after
# tar -xJf).
# PIN_CLI=DIR adds DIR/tilefmm as .pin/pin/tilefmm: a CLI that pins its
# arrays (commit 1c36e4c's), run beside the others.
#   bench/host_transfer/make_pack.sh BUILD BASE_DIR BASE OUT.txz [VENV_SITE]
set -euo pipefail
build=$1 base_dir=$2 base=$3 out=$4
site=${5:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
P=$tmp/.pin
mkdir -p "$P/new" "$P/base" "$P/libs" "$P/py-new" "$P/py-base" "$P/site"
cp "$base_dir/tilefmm" "$P/base/tilefmm"
cp -L "$base_dir/libtilefmm.so" "$P/base/libtilefmm.so"
cp "$build/apps/tilefmm" "$P/new/tilefmm"
if [ -n "${PIN_CLI:-}" ]; then
  mkdir -p "$P/pin"
  cp "$PIN_CLI/tilefmm" "$P/pin/tilefmm"
fi
cp -L "$build/src/libtilefmm.so" "$P/new/libtilefmm.so"
for t in test_host_memory test_device_api test_schedule_gpu test_active_gpu \
  test_tree_gpu test_solver; do
  cp "$build/tests/$t" "$P/new/"
done
strip -s "$P"/new/* "$P"/base/* "$P"/pin/* 2>/dev/null || true
/work/shared/tools/device-libs -o "$P/libs" "$P"/new/* "$P"/base/*
cp -r "$root/python/tilefmm" "$P/py-new/"
git -C "$root" archive "$base" python/tilefmm | tar -x -C "$tmp"
mv "$tmp/python/tilefmm" "$P/py-base/"
cp -r "$root/python/tests" "$P/pytests"
find "$P" -name __pycache__ -prune -exec rm -rf {} +
rm -f "$P"/py-*/tilefmm/libtilefmm.so*
if [ -n "$site" ]; then
  for m in _pytest pytest pluggy iniconfig packaging py.py; do
    [ -e "$site/$m" ] && cp -r "$site/$m" "$P/site/"
  done
fi
cp "$root/bench/host_transfer/"*.py "$root/bench/host_transfer/device.sh" "$P/"
git -C "$root" rev-parse HEAD >"$P/commit.txt"
echo "$base" >"$P/base_commit.txt"
mkdir -p "$(dirname "$out")"
tar -C "$tmp" -cf - .pin | xz -T2 -6 --lzma2=dict=128MiB >"$out"
rm -rf "$tmp"
ls -la "$out"
