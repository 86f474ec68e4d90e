#!/usr/bin/env bash
# Installs what tilefmm needs on Debian 12, then configures and builds it in
# build/. Sourced by scripts/main and scripts/test; also usable alone.
# As root it runs apt-get itself; otherwise it prints the apt-get line and
# stops. The CUDA toolkit (nvcc) is optional: without it the CPU backend is
# built; with it the GPU backend too, whether or not a GPU is present.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TILEFMM_BUILD_DIR:-$root/build}

packages=(build-essential cmake pkg-config libcriterion-dev clang-format
  libhdf5-dev libyaml-dev libpng-dev python3-h5py python3-venv
  libopenmpi-dev openmpi-bin)
# libhdf5-dev, libyaml-dev and libpng-dev: snapshots, parameter files and
# pictures of 'tilefmm run' and 'render'; python3-h5py: the test that a
# snapshot opens in h5py; libopenmpi-dev and openmpi-bin: tilefmm under
# mpirun (docs/mpi.md) and its tests; python3-venv: the venv of the Python tests
# (scripts/python_env.sh makes it in the build directory: the package's
# tests, and swiftsimio, pynbody and yt reading a snapshot). gnuplot
# draws the plots of 'tilefmm tune' and 'run'; any installed one will do, else
# gnuplot-nox (no X11: its PNG terminals are all tune needs).
command -v gnuplot >/dev/null || packages+=(gnuplot-nox)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing packages; run this, then try again:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

# nvcc is usually not on PATH after a toolkit install.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi

werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
# Without a GPU to run it, the GPU code is compiled once, as compute_80 PTX
# (which any later GPU's driver compiles at first use), instead of the
# default set's six machine codes: the build is minutes shorter. Only a
# first configuration chooses; a build directory keeps what it has, and
# CMAKE_CUDA_ARCHITECTURES or CUDAARCHS given by you win (docs/building.md).
arch=()
if [ ! -f "$build/CMakeCache.txt" ] && [ -z "${CUDAARCHS:-}" ] &&
  ! { command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; }; then
  arch=(-DCMAKE_CUDA_ARCHITECTURES=80-virtual)
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DTILEFMM_WERROR=$werror "${arch[@]}" >/dev/null
# TILEFMM_BUILD_TARGETS: the targets to build (scripts/main: tilefmm_cli,
# the command-line tool, only);
# all of them by default.
targets=()
for t in ${TILEFMM_BUILD_TARGETS:-}; do
  targets+=(--target "$t")
done
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
