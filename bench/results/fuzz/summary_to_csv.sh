#!/usr/bin/env bash
# The per-target summary lines that tests/fuzz/fuzz_readers prints at its
# end, as rows of fuzz.csv:
#   run,format,command,seed_file,cases,crash,hang,refused,same,read,differs,wrong,odd
# Usage: summary_to_csv.sh RUN_NAME FUZZ_READERS_OUTPUT >> fuzz.csv
set -eu
run=$1 log=$2
grep -E '^  [a-z]+ +/' "$log" | while read -r kind seed rest; do
  set -- $rest
  crash=$2 hang=$4 refused=$6 same=$8 read=${10} differs=${12} wrong=${14} odd=${16}
  cases=$((crash + hang + refused + same + read + differs + wrong + odd))
  f=$(basename "$seed")
  case "$f" in
    plummer.hdf5) fmt="HDF5, tilefmm snapshot (1.8 format, checksums)";;
    gadget4.hdf5) fmt="HDF5, GADGET-4-like (earliest format, no checksums)";;
    checkpoint.hdf5) fmt="HDF5, tilefmm checkpoint";;
    vlstrings.hdf5) fmt="HDF5, checkpoint of variable-length strings";;
    tipsy.bin) fmt="Tipsy";;
    gadget2.bin) fmt="GADGET-2 format 1, one file";;
    gadget2parts.0) fmt="GADGET-2 format 1, two files";;
    bodies.txt) fmt="text bodies";;
    params.yml) fmt="YAML parameter file";;
    *) fmt=$f;;
  esac
  case "$kind" in
    forces) cmd="forces --in";; validate) cmd="validate --in";; ic) cmd="run --ic";;
    render) cmd="render";; restart) cmd="run --restart";; params) cmd="run --params";;
    python) cmd="python tilefmm.read";; *) cmd=$kind;;
  esac
  echo "$run,\"$fmt\",\"$cmd\",$f,$cases,$crash,$hang,$refused,$same,$read,$differs,$wrong,$odd"
done
