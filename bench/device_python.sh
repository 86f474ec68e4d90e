#!/usr/bin/env bash
# The Python package's tests on the GPU machine, which has python3 and
# numpy but no network: the package from python/ (not installed: on
# PYTHONPATH), the library of the carried build, pytest from .devpy/
# (bench/make_devpack.sh packs it). From the repository root:
#   bash bench/device_python.sh [PYTEST ARGS...]
# TFMM_DEVICE_BUILD names the build directory (default build-h100, or
# .devbin). Suites needing h5py or matplotlib skip, saying so, where those
# are missing; test_gpu.py is the one that needs the GPU.
set -uo pipefail
build=${TFMM_DEVICE_BUILD:-build-h100}
export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TILEFMM_LIBRARY=$PWD/$build/src/libtilefmm.so
export TILEFMM_CLI=$PWD/$build/apps/tilefmm
export PYTHONPATH=$PWD/python:$PWD/.devpy${PYTHONPATH:+:$PYTHONPATH}
python3 -c 'import tilefmm; print("tilefmm", tilefmm.__version__, "CUDA",
  tilefmm.has_cuda(), "GPUs", tilefmm.gpu_count(), "from", tilefmm.library_path)'
python3 -m pytest -p no:cacheprovider -rs "${@:-python/tests}"
