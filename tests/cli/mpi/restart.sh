#!/bin/bash
# 'tilefmm run' under mpirun: a run of a fresh seed on 4 ranks writes its
# checkpoint half-way; restarted from it on 2 ranks (and, as one process
# without mpirun, into another directory) it runs on to the end. Against
# the run of one process straight through: the same bodies, ids, step and
# time, snapshot 0000 the initial conditions bit for bit, and positions,
# velocities and energies within what the force accuracy allows
# (check.py restart). With one global step, and with individual steps
# (their bins travel with the bodies).
#   bash restart.sh TILEFMM MPIEXEC WORKDIR
. "$(dirname "$0")/common.sh" "$@"

N=4000
TOL=1e-3

# case NAME HALF END DT FLAGS...: the runs and their checks in NAME/.
case_() {
  local name=$1 half=$2 end=$3 dt=$4
  shift 4
  mkdir "$name" && cd "$name" || exit 1
  # --measure off: over the ranks theta and order come from the
  # calibration (a measured error needs every body on one process), so the
  # runs of one process compared with them take theta and order from it
  # too; measured, one process would take the cheapest setting meeting TOL
  # at the 99th percentile, whose largest errors the bound below does not
  # allow.
  local run=(run --ic merger --n "$N" --seed "$SEED" --dt "$dt" --accuracy "$TOL"
    --measure off --snapshot-every "$half" --plots off --progress off "$@")
  "$TILEFMM" "${run[@]}" --steps "$end" --out straight >straight.log 2>&1 || {
    cat straight.log
    fail "$name: the run of one process"
  }
  mpi 4 "${run[@]}" --steps "$half" --out ranks >ranks4.log 2>&1 || {
    cat ranks4.log
    fail "$name: the run on 4 ranks"
  }
  grep -q "over 4 ranks (MPI)" ranks4.log ||
    fail "$name: the run does not name 4 ranks"
  "$PY" - "$half" "$dt" <<'PY' || fail "$name: the checkpoint of 4 ranks"
import sys, h5py
with h5py.File("ranks/checkpoint.hdf5", "r") as f:
    state = {k: v.decode() for k, v in f["RunState"].attrs.items()}
    ids = f["PartType1/ParticleIDs"][()]
    time = f["Header"].attrs["Time"][0]
assert time == int(sys.argv[1]) * float(sys.argv[2]), time
assert state["ranks"] == "4", state
assert (ids == range(1, len(ids) + 1)).all(), "ids not sorted"
PY
  cp -r ranks alone
  mpi 2 run --restart ranks/checkpoint.hdf5 --steps "$end" --plots off \
    --progress off >ranks2.log 2>&1 || {
    cat ranks2.log
    fail "$name: the restart on 2 ranks"
  }
  grep -q "over 2 ranks (MPI)" ranks2.log ||
    fail "$name: the restart does not name 2 ranks"
  "$TILEFMM" run --restart alone/checkpoint.hdf5 --steps "$end" --plots off \
    --progress off >alone.log 2>&1 || {
    cat alone.log
    fail "$name: the restart of one process"
  }
  echo "$name: restarted on 2 ranks:"
  "$PY" "$HERE/check.py" restart straight ranks $N "$end" "$dt" $TOL || exit 1
  echo "$name: restarted as one process:"
  "$PY" "$HERE/check.py" restart straight alone $N "$end" "$dt" $TOL || exit 1
  cd ..
}

case_ global 10 20 0.0078125
# Synchronisation points every dt_max = 1/32, bodies in up to 3 bins.
case_ individual 3 6 0.03125 --eta 0.025 --dt-min 0.005
echo PASS
