#!/usr/bin/env bash
# Bit-for-bit fingerprints of a build, so that two builds (before and after
# a refactor) can be compared:
#
#   bench/compare_bits.sh BIN_DIR OUT_DIR
#   diff OUT_BEFORE/manifest.txt OUT_AFTER/manifest.txt   # empty: same bits
#
# BIN_DIR is a CMake build of tilefmm (apps/tilefmm, src/libtilefmm.so).
# On fixed inputs and seeds (a Plummer sphere and a merger, clustered,
# without softening and with the spline and Plummer kernels) it runs
#   - tilefmm ic, forces (fmm, bh, direct, reference; single and double),
#   - tilefmm run for a few steps (one step and individual steps), and the
#     same run stopped half-way and restarted from its checkpoint,
#   - under mpirun -np 2 when mpirun is found and the build has MPI (the
#     forces, and a run's first step only: later splits follow measured
#     times, so a run over ranks is not the same bits twice),
#   - the library itself (bench/compare_bits_lib.c, compiled against the
#     build's own header): forces, forces at a subset, sim steps,
# on the CPU (--device cpu), and again on the GPU when one is usable, and
# writes OUT_DIR/manifest.txt: "SHA-256  NAME" a line, one per numeric
# output: the forces files without their '#' comments, each dataset of
# every snapshot and checkpoint (h5dump -b: the stored bytes) and their
# numeric header and run-state attributes (not the code's version or the
# output directory), the
# statistics.csv columns that are not timings (wall-clock columns and the
# leaf size that --leaf auto picks from them are dropped), the library's
# raw doubles. No timing is hashed, so the manifest of one build is the
# same on every run (a run that wrote nothing hashes as MISSING).
# Needs h5dump and h5ls (hdf5-tools), sha256sum, python3 and a C compiler.
# Compare manifests made on the same machine type: the CPU's and GPU's bits
# are each the same run to run, not across processors.
set -uo pipefail
if [ $# -ne 2 ]; then
  sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
bin=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
cli=$bin/apps/tilefmm
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$bin/CMakeCache.txt")
[ -x "$cli" ] || { echo "compare_bits: no $cli" >&2; exit 2; }
work=$out/work
rm -rf "$work"
mkdir -p "$work"
manifest=$out/manifest.txt
: >"$manifest"
log=$out/compare_bits.log
: >"$log"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
export LD_LIBRARY_PATH=$bin/src${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# ---- hashing ----------------------------------------------------------------
put() { # NAME, the hash read from stdin
  echo "$(sha256sum | cut -d' ' -f1)  $1" >>"$manifest"
}
missing() { echo "MISSING  $1" >>"$manifest"; }

# A text file of numbers: the lines that are not '#' comments.
hash_text() { # NAME FILE
  if [ -s "$2" ]; then grep -av '^#' "$2" | put "$1"; else missing "$1"; fi
}

# Every dataset of an HDF5 file, its stored bytes (little-endian), and the
# header's numeric attributes.
hash_h5() { # NAME FILE
  local name=$1 f=$2 d
  if [ ! -s "$f" ]; then
    missing "$name"
    return
  fi
  h5ls -r "$f" | awk '$2 == "Dataset" { print $1 }' | sort |
    while read -r d; do
      rm -f "$work/ds.bin"
      if h5dump -d "$d" -b LE -o "$work/ds.bin" "$f" >/dev/null 2>&1 &&
        [ -f "$work/ds.bin" ]; then
        put "$name:$d" <"$work/ds.bin"
      else
        missing "$name:$d"
      fi
    done
  # The numeric attributes that say where the bodies are and when: the
  # header's, and a checkpoint's /RunState (its step, clock and energy).
  for d in Header/Time Header/NumPart_ThisFile Header/NumPart_Total \
    Header/MassTable Header/BoxSize Header/Shift RunState/step \
    RunState/ticks RunState/tick RunState/time_initial \
    RunState/energy_initial; do
    h5dump -m '%.17g' -a "/$d" "$f" >"$work/attr.txt" 2>/dev/null &&
      grep -av 'HDF5 "' "$work/attr.txt" | put "$name:/${d/\//@}"
  done
}

# statistics.csv without its timing columns (by name: wall times, the
# seconds of each phase, steps per second) and without the leaf size,
# which --leaf auto takes from measured times.
hash_stats() { # NAME FILE
  if [ ! -s "$2" ]; then
    missing "$1"
    return
  fi
  python3 - "$2" <<'PY' | put "$1"
import csv, re, sys
timing = re.compile(r'(wall|seconds|_s$|^t_|time_s|per_s|_ms$|elapsed|leaf)')
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
keep = [i for i, h in enumerate(rows[0]) if not timing.search(h.strip())]
for r in rows:
    print(",".join(r[i] for i in keep if i < len(r)))
PY
}

# Every numeric output of a run directory.
hash_run() { # NAME DIR
  local name=$1 dir=$2 f
  hash_stats "$name/statistics.csv" "$dir/statistics.csv"
  for f in "$dir"/snapshot_*.hdf5 "$dir"/checkpoint*.hdf5; do
    [ -f "$f" ] && hash_h5 "$name/$(basename "$f")" "$f"
  done
}

# Runs a command, its output in the log; a failure is noted there and in
# the manifest (so that two manifests differ where one build failed).
try() { # NAME COMMAND...
  local name=$1
  shift
  echo "== $name: $*" >>"$log"
  if ! "$@" >>"$log" 2>&1; then
    echo "FAILED  $name" >>"$manifest"
    echo "compare_bits: $name failed (see $log)" >&2
  fi
}

# ---- the machine ----------------------------------------------------------
version=$("$cli" --version 2>&1)
echo "$version" >>"$log"
devices=cpu
case $version in *"usable GPUs: 0"*) ;; *"usable GPUs: "*) devices="cpu gpu" ;; esac
mpi=()
if command -v "${MPIEXEC:-mpirun}" >/dev/null 2>&1 &&
  [[ $version == *"MPI: yes"* || $version == *"MPI: on"* ]]; then
  mpi=(bash "$here/../tests/mpi/mpirun.sh" 2)
fi
echo "devices: $devices; mpi: ${mpi[*]}" >>"$log"

# ---- the inputs -------------------------------------------------------------
try ic_plummer "$cli" ic plummer --n 3000 --seed 11 --out "$work/plummer.txt"
try ic_merger "$cli" ic merger --n 3000 --seed 12 --out "$work/merger.txt"
hash_text ic/plummer.txt "$work/plummer.txt"
hash_text ic/merger.txt "$work/merger.txt"
softenings=("newton:" "spline:--eps 0.01 --softening spline"
  "plummer:--eps 0.01 --softening plummer")

# ---- tilefmm forces -----------------------------------------------------------
forces_cases() { # PREFIX COMMAND-PREFIX... (the launcher, if any)
  local prefix=$1 dev in m s label flags o
  shift
  for dev in $devices; do
    for in in plummer merger; do
      for m in fmm bh direct; do
        for s in "${softenings[@]}"; do
          label=${s%%:*} flags=${s#*:}
          o=$work/${prefix}forces_${dev}_${in}_${m}_$label.txt
          # shellcheck disable=SC2086
          try "${prefix}forces $dev $in $m $label" "$@" "$cli" forces \
            --in "$work/$in.txt" --out "$o" --method "$m" --device "$dev" $flags
          hash_text "${prefix}forces/$dev/$in/$m/$label" "$o"
        done
      done
      o=$work/${prefix}forces_${dev}_${in}_fmm_double.txt
      try "${prefix}forces $dev $in fmm double" "$@" "$cli" forces \
        --in "$work/$in.txt" --out "$o" --method fmm --precision double \
        --accuracy 1e-6 --device "$dev"
      hash_text "${prefix}forces/$dev/$in/fmm/double_1e-6" "$o"
    done
  done
}
forces_cases ""
o=$work/forces_reference.txt
try "forces reference" "$cli" forces --in "$work/plummer.txt" --out "$o" \
  --method reference --eps 0.01
hash_text forces/cpu/plummer/reference/plummer_0.01 "$o"

# ---- tilefmm run, and a restart -----------------------------------------------
run_cases() { # PREFIX COMMAND-PREFIX...
  local prefix=$1 dev d common
  shift
  for dev in $devices; do
    common=(--n 2000 --seed 5 --eps 0.01 --device "$dev" --progress off
      --plots off --snapshot-every 3 --checkpoint-every 3 --force)
    d=$work/${prefix}run_${dev}_plummer
    try "${prefix}run $dev plummer" "$@" "$cli" run --ic plummer --steps 6 \
      --out "$d" "${common[@]}"
    if [ -n "$prefix" ]; then
      # Over several ranks the split after the first evaluation follows
      # each rank's measured cost (docs/mpi.md), so the sums' order, and
      # the last bits, change from run to run: the first step only.
      hash_h5 "${prefix}run/$dev/plummer/snapshot_0000.hdf5" \
        "$d/snapshot_0000.hdf5"
      continue
    fi
    hash_run "${prefix}run/$dev/plummer" "$d"
    d=$work/${prefix}run_${dev}_merger_eta
    try "${prefix}run $dev merger eta" "$@" "$cli" run --ic merger --steps 4 \
      --eta 0.025 --out "$d" "${common[@]}"
    hash_run "${prefix}run/$dev/merger_eta" "$d"
    # Half-way, then on from the checkpoint to the same end.
    d=$work/${prefix}restart_${dev}_plummer
    try "${prefix}restart $dev first half" "$@" "$cli" run --ic plummer \
      --steps 3 --out "$d" "${common[@]}"
    try "${prefix}restart $dev second half" "$@" "$cli" run \
      --restart "$d/checkpoint.hdf5" --steps 6 --progress off --plots off
    hash_run "${prefix}restart/$dev/plummer" "$d"
  done
}
run_cases ""

# ---- several processes ----------------------------------------------------------
if [ ${#mpi[@]} -gt 0 ]; then
  devices_all=$devices
  devices=cpu # one GPU here: the ranks would share it
  forces_cases mpi2_ "${mpi[@]}"
  run_cases mpi2_ "${mpi[@]}"
  devices=$devices_all
fi

# ---- the library ------------------------------------------------------------
lib=$work/compare_bits_lib
if cc -O2 -std=c11 -I "$src/include" "$here/compare_bits_lib.c" -o "$lib" \
  -L "$bin/src" -ltilefmm -lm -Wl,-rpath,"$bin/src" >>"$log" 2>&1; then
  for dev in $devices; do
    mkdir -p "$work/lib_$dev"
    try "library $dev" "$lib" "$work/lib_$dev" "$dev"
    for f in "$work/lib_$dev"/*.bin; do
      [ -f "$f" ] && put "lib/$(basename "$f" .bin)" <"$f"
    done
  done
else
  echo "FAILED  library (does not build: see $log)" >>"$manifest"
fi

echo "$(wc -l <"$manifest") hashes in $manifest ($(grep -c '^FAILED\|^MISSING' "$manifest") failed or missing)"
