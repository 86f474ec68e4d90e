# shellcheck shell=bash disable=SC2034 # the variables are the tests'
# Sourced by the tests of the tool under mpirun (tests/cli/CMakeLists.txt):
#   bash TEST.sh TILEFMM MPIEXEC WORKDIR
# sets TILEFMM, MPIEXEC, WORK (emptied), PY (a python3 with numpy and
# h5py, or the test is skipped: exit 77), SEED (fresh, or TFMM_TEST_SEED)
# and the environment every rank runs in; mpi N ARGS... runs the tool on N
# ranks under a time limit (a hang fails the test, it does not stall CI).
set -u
TILEFMM=$1
MPIEXEC=$2
WORK=$3
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1

# As root (containers, CI) Open MPI refuses to start without these; more
# ranks than cores (CI has 2) needs --oversubscribe; one thread a rank.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# One host: shared memory only (as tests/mpi/mpirun.sh), not UCX, which
# looks for networks a container may not have.
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1} OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
export OMP_NUM_THREADS=1

PY=
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import numpy, h5py' >/dev/null 2>&1; then
    PY=$p
    break
  fi
done
if [ -z "$PY" ]; then
  echo "SKIP: no python3 with numpy and h5py (tried python3, /usr/bin/python3;"
  echo "      Debian: apt-get install python3-h5py)"
  exit 77
fi

SEED=${TFMM_TEST_SEED:-$(( ($(date +%s) * 2654435761 + $$) % 1000000007 ))}
# A 64-bit TFMM_TEST_SEED (as the Criterion suites draw them) overflows the
# shell's arithmetic in SEED + k (a seed of 1.8e19 became -5e15, refused
# by ic): its last 15 digits, the same seed again when it is repeated.
[ ${#SEED} -gt 15 ] && SEED=${SEED: -15}
SEED=$((10#$SEED))
echo "seed $SEED (TFMM_TEST_SEED=$SEED repeats this test)"

fail() {
  echo "FAIL: $*"
  exit 1
}

# mpi N ARGS...: the tool on N ranks; 120 s is 10x what any of these
# takes on 2 shared cores.
mpi() {
  local n=$1
  shift
  timeout 120 "$MPIEXEC" --oversubscribe -np "$n" "$TILEFMM" "$@"
}

# Files a command must replace: a file left as it is fails the reading.
poison() {
  for f in "$@"; do
    echo "poison: not written by tilefmm" >"$f"
  done
}
