#!/usr/bin/env bash
# Runs a test on NP ranks: mpirun.sh NP PROGRAM [ARGS...]. Open MPI is told
# it may put more ranks than cores on this machine (CI has 2) and run as
# root (CI containers); each rank takes one OpenMP thread unless
# OMP_NUM_THREADS says otherwise.
set -euo pipefail
np=$1
shift
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
# One host: shared memory through ob1 (not UCX, which looks for networks).
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}
launcher=${MPIEXEC:-mpirun}
# (Open MPI refuses even --version as root without these.)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
version=$("$launcher" --version 2>&1 || true)
if [[ $version == *"Open MPI"* || $version == *OpenRTE* ]]; then
  # No network in containers: shared memory and loopback only.
  exec "$launcher" --oversubscribe --bind-to none --mca btl self,vader \
    -x OMP_NUM_THREADS -x OMPI_MCA_pml -np "$np" "$@"
fi
exec "$launcher" -np "$np" "$@"
