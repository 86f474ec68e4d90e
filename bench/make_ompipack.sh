#!/usr/bin/env bash
# Packs Debian's Open MPI (mpirun, its libraries, plugins and help files)
# into .devextra/ompi.tgz for the GPU machine, which has no MPI; there,
# bench/ompi_env.sh DIR points Open MPI at the unpacked copy.
set -euo pipefail
mkdir -p .devextra
pkgs=(openmpi-bin libopenmpi3 openmpi-common libpmix2 libhwloc15
  libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libucx0 libnuma1
  libibverbs1 librdmacm1 libnl-3-200 libnl-route-3-200 libpsm2-2
  libpsm-infinipath1 libefa1 libmunge2 libxnvctrl0)
list=$(mktemp)
for p in "${pkgs[@]}"; do dpkg -L "$p" 2>/dev/null || true; done |
  grep -v '/doc/\|/man/\|/lintian/' |
  while read -r f; do [ -f "$f" ] && [ ! -d "$f" ] && echo "${f#/}"; done \
    >"$list"
tar -C / -czhf .devextra/ompi.tgz -T "$list"
rm -f "$list"
ls -la .devextra/ompi.tgz
