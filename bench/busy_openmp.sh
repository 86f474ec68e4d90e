#!/usr/bin/env bash
# tilefmm on a busy machine (issue 11): the cores are taken by as many
# spinning processes as there are cores, then a 1,000-body `forces` and a
# 5,000-body, 20-step `run` are timed with OpenMP's default thread count,
# for each tilefmm binary given (e.g. one built before and one after the
# teams sized to the work and the passive waiting policy).
#   bench/busy_openmp.sh OLD/tilefmm NEW/tilefmm
# Prints one line per binary and case: wall seconds of each of 3 tries.
set -uo pipefail
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
"$1" ic plummer --n 1000 --out "$work/p1k.txt" 2>/dev/null
for _ in $(seq "$(nproc)"); do sh -c 'while :; do :; done' & done
sleep 1
time_it() { # label, command...
  local label=$1 line=""
  shift
  for _ in 1 2 3; do
    local s e
    s=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s.%N)
    line="$line $(echo "$e - $s" | bc)"
  done
  echo "$label:$line"
}
for b in "$@"; do
  time_it "$b forces 1k" "$b" forces --in "$work/p1k.txt" \
    --out "$work/f.txt" --device cpu
  time_it "$b run 5k x 20" "$b" run --n 5000 --steps 20 --device cpu \
    --out "$work/run" --force --progress off
done
