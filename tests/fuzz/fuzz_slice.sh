#!/usr/bin/env bash
# Makes the fuzz harness's seeds and damages them CASES times (seed SEED):
#   plummer.hdf5        tilefmm's snapshot (HDF5 1.8 format, checksums)
#   run/checkpoint.hdf5 tilefmm's checkpoint
#   gadget4.hdf5        GADGET-4-like, earliest format (no checksums)
#   vlstrings.hdf5      the checkpoint with variable-length /Parameters
#   tipsy.bin, gadget2.bin  the GADGET-4-like bodies in Tipsy and GADGET-2
#   gadget2parts.0, .1  the same in a GADGET-2 snapshot of two files
#   bodies.txt          the same in a text body file
#   params.yml          a YAML parameter file of run (read with plummer.hdf5)
# Each body file goes to forces, validate, run --ic and render; the
# checkpoints to run --restart; see fuzz_readers.c for what is checked.
# Usage: fuzz_slice.sh TILEFMM MAKE_SEEDS FUZZ_READERS WORK [CASES [SEED]]
# FUZZ_PYTHON=PYTHON (a Python that imports tilefmm) damages the snapshots
# for Python's tilefmm.read instead (python_read.py).
# Exit status 1 when a case crashed, hung or ended oddly; the damaged
# files behind them are kept in WORK/kept, every case logged in
# WORK/log.txt.
set -eu
tool=$1 make_seeds=$2 fuzz=$3 work=$4 cases=${5:-1000} seed=${6:-1}
rm -rf "$work"
mkdir -p "$work/seeds"
s=$work/seeds
"$tool" ic plummer --n 64 --format hdf5 --out "$s/plummer.hdf5"
"$tool" run --ic "$s/plummer.hdf5" --steps 2 --checkpoint-every 1 \
  --plots off --progress off --threads 1 --out "$s/run" > /dev/null
"$make_seeds" "$s" "$s/run/checkpoint.hdf5"
# A reader that loops is cut off after 2 s of CPU time (the tool's own
# bound is 60 s and more), well inside the harness's 10 s.
export TILEFMM_READ_CPU_LIMIT=${TILEFMM_READ_CPU_LIMIT:-2}
export OMP_NUM_THREADS=1
targets=()
if [ -n "${FUZZ_PYTHON:-}" ]; then
  # Python's tilefmm.read (snapshots only: it reads no text or YAML).
  for f in plummer.hdf5 gadget4.hdf5 tipsy.bin gadget2.bin gadget2parts.0 \
    run/checkpoint.hdf5; do
    targets+=("python:$s/$f")
  done
  python=(--python "$FUZZ_PYTHON" --python-script
    "$(dirname "$0")/python_read.py")
else
  for f in plummer.hdf5 gadget4.hdf5 tipsy.bin gadget2.bin gadget2parts.0 \
    bodies.txt; do
    for k in forces validate ic render; do
      targets+=("$k:$s/$f")
    done
  done
  targets+=("restart:$s/run/checkpoint.hdf5" "restart:$s/vlstrings.hdf5"
    "params:$s/params.yml")
  python=()
fi
exec "$fuzz" --tool "$tool" --work "$work/w" --cases "$cases" \
  --seed "$seed" --timeout 10 --keep "$work/kept" --log "$work/log.txt" \
  --bodies "$s/plummer.hdf5" "${python[@]}" "${targets[@]}"
