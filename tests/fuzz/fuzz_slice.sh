#!/usr/bin/env bash
# Makes the fuzz harness's seeds and damages them CASES times (seed SEED):
#   plummer.hdf5        tilefmm's snapshot (HDF5 1.8 format, checksums)
#   run/checkpoint.hdf5 tilefmm's checkpoint
#   gadget4.hdf5        GADGET-4-like, earliest format (no checksums)
#   vlstrings.hdf5      the checkpoint with variable-length /Parameters
#   tipsy.bin, gadget2.bin  the GADGET-4-like bodies in Tipsy and GADGET-2
# Usage: fuzz_slice.sh TILEFMM MAKE_SEEDS FUZZ_READERS WORK [CASES [SEED]]
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
exec "$fuzz" --tool "$tool" --work "$work/w" --cases "$cases" \
  --seed "$seed" --timeout 10 --keep "$work/kept" --log "$work/log.txt" \
  "forces:$s/gadget4.hdf5" "ic:$s/gadget4.hdf5" "render:$s/gadget4.hdf5" \
  "restart:$s/vlstrings.hdf5" "forces:$s/plummer.hdf5" \
  "restart:$s/run/checkpoint.hdf5" "forces:$s/tipsy.bin" \
  "ic:$s/gadget2.bin"
