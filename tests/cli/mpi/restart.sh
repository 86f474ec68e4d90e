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
  # --measure off: the ranks and one process take theta and order from
  # the calibration alike; measured, each would take the cheapest setting
  # meeting TOL at the 99th percentile, whose largest errors the bound
  # below does not allow (the planner over the ranks: planned below).
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

# The planner over the ranks (measure auto): the checkpoint of 2 ranks
# holds its choice (/RunState Choice*, the setting of the last step), and a
# restart on 2 ranks goes on from it: its first evaluation measures only
# where the saved choice said the next one would (since + 1 >= 16,
# TFMM_RECHECK_EVERY), and otherwise keeps the saved setting. Restarted
# without the choice, the planner would choose anew, measuring at once.
planned() {
  mkdir planned && cd planned || exit 1
  local run=(run --ic merger --n "$N" --seed "$SEED" --dt 0.0078125
    --accuracy "$TOL" --snapshot-every 6 --plots off --progress off)
  mpi 2 "${run[@]}" --steps 6 --out ranks >ranks.log 2>&1 || {
    cat ranks.log
    fail "planned: the run on 2 ranks"
  }
  # (the restart writes its own checkpoint over this one at its end)
  cp ranks/statistics.csv first.csv
  cp ranks/checkpoint.hdf5 first.hdf5
  mpi 2 run --restart ranks/checkpoint.hdf5 --steps 10 --plots off \
    --progress off >restart.log 2>&1 || {
    cat restart.log
    fail "planned: the restart on 2 ranks"
  }
  "$PY" - <<'PY' || fail "planned: the planner's choice over a restart"
import csv, h5py
with h5py.File("first.hdf5", "r") as f:
    c = {k: v.decode() for k, v in f["RunState"].attrs.items()
         if k.startswith("Choice")}
first = list(csv.DictReader(open("first.csv")))
rows = {int(r["step"]): r for r in csv.DictReader(open("ranks/statistics.csv"))}
assert c["ChoiceChosen"] == "1", c
last = first[-1]
assert float(c["ChoiceTheta"]) == float(last["theta"]), (c, last["theta"])
assert int(c["ChoiceOrder"]) == int(last["order"]), (c, last["order"])
nxt = rows[int(last["step"]) + 1]
measures = int(c["ChoiceSince"]) + 1 >= 16
print("planned: choice theta %s order %s since %s; the restart's first step:"
      " theta %s order %s, error_p99 '%s'" % (c["ChoiceTheta"], c["ChoiceOrder"],
      c["ChoiceSince"], nxt["theta"], nxt["order"], nxt["error_p99"]))
assert (nxt["error_p99"] != "") == measures, nxt["error_p99"]
if not measures:
    assert float(nxt["theta"]) == float(c["ChoiceTheta"]), nxt["theta"]
    assert int(nxt["order"]) == int(c["ChoiceOrder"]), nxt["order"]
PY
  cd ..
}

planned
case_ global 10 20 0.0078125
# Synchronisation points every dt_max = 1/32, bodies in up to 3 bins.
case_ individual 3 6 0.03125 --eta 0.025 --dt-min 0.005
echo PASS
