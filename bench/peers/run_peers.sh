#!/usr/bin/env bash
# Measures the two peer GPU codes, ECL-BH v4.5 and Ryoanji, on the GPU
# machine: unpacks their sources (.devextra/peers.txz, made here by
# bench/peers/make_peerpack.sh; the GPU machine has no network), builds both
# for $PEER_ARCH with our drivers (ecl_driver.cu, ryoanji_driver.cu: what
# each times is written at their top), runs each at every N of $PEER_N with
# a time limit a run, checks the accelerations at 1000 sampled bodies
# against a float64 direct sum (ref_accuracy.py, CuPy) and prints
#   code  N  median_ms  p50  p99  max  bodies/s  status
# as bench/results/gpu_schedule/peers.txt has it; also writes
# $OUT/peers/peers.csv, peers.txt and the logs (build.log, runs.log: each
# run's output, run.log: this script's).
#
#   from the repository (carry [".devextra/peers.txz"]):
#     bash bench/peers/run_peers.sh
#   from the unpacked pack (everything the run needs is in it):
#     mkdir -p /tmp/pp && tar -xJf .devextra/peers.txz -C /tmp/pp && bash /tmp/pp/run_peers.sh
#
# Environment:
#   PEER_N        sizes (default "262144 1048576 4194304"; the README's table
#                 adds 16777216)
#   PEER_REPS     timed evaluations a run, after one warm-up (default 7)
#   PEER_TIMEOUT  seconds for one code at one N, and again for its accuracy
#                 check (default 180); a code that times out skips larger N
#   PEER_CODES    which codes (default "ecl-bh ryoanji")
#   PEER_ARCH     nvcc -arch (default sm_90: H100 and H200)
#   PEER_WORK     build and scratch folder (default /tmp/peers)
#   PEERPACK      the pack (default .devextra/peers.txz of the repository)
#   PEER_PREBUILT 1: use the pack's bin/ecl_driver and bin/ryoanji_driver
#                 (make_peerpack.sh --prebuilt builds them on the machine
#                 that packs) instead of building here; default 0
#
#   run_peers.sh --build-only   builds into $PEER_WORK/build and stops
#                               (make_peerpack.sh --prebuilt uses it)
#   OUT           results go to $OUT/peers (default ./peers-out)
set -uo pipefail
build_only=0
[ "${1:-}" = --build-only ] && build_only=1

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ns=${PEER_N:-262144 1048576 4194304}
reps=${PEER_REPS:-7}
tlimit=${PEER_TIMEOUT:-180}
codes=${PEER_CODES:-ecl-bh ryoanji}
arch=${PEER_ARCH:-sm_90}
work=${PEER_WORK:-/tmp/peers}
out=${OUT:-$PWD/peers-out}/peers
mkdir -p "$work" "$out"

# The peers' sources: next to this script when it runs from the unpacked
# pack, else unpacked from the pack into $work/src.
if [ -f "$here/ecl-bh/ECL-BH_45.cu" ] && [ -d "$here/sph-exa" ]; then
  src=$here
else
  pack=${PEERPACK:-$here/../../.devextra/peers.txz}
  if [ ! -f "$pack" ]; then
    echo "run_peers: no pack at $pack (make it here with bench/peers/make_peerpack.sh; carry .devextra/peers.txz)" >&2
    exit 1
  fi
  src=$work/src
  rm -rf "$src" && mkdir -p "$src" && tar -xJf "$pack" -C "$src" || exit 1
fi
drv=$here # our drivers: bench/peers/ of the repository, or the pack's root
for f in ecl_driver.cu ryoanji_driver.cu peers_common.h ref_accuracy.py; do
  [ -f "$drv/$f" ] || { echo "run_peers: $drv/$f missing" >&2; exit 1; }
done

log() { echo "$@" | tee -a "$out/run.log"; }
: >"$out/run.log"
: >"$out/build.log"
: >"$out/runs.log"
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
log "run_peers: $(date -u '+%Y-%m-%d %H:%M UTC'), ${gpu:-no nvidia-smi}, $(nvcc --version | tail -1)"
[ -f "$src/VERSIONS" ] && sed 's/^/  /' "$src/VERSIONS" | tee -a "$out/run.log"

# ---- build -------------------------------------------------------------
bld=$work/build
if [ "${PEER_PREBUILT:-0}" = 1 ]; then
  [ -x "$src/bin/ecl_driver" ] && [ -x "$src/bin/ryoanji_driver" ] ||
    { echo "run_peers: PEER_PREBUILT=1 but the pack has no bin/ (make it with make_peerpack.sh --prebuilt)" >&2; exit 1; }
  rm -rf "$bld" && mkdir -p "$bld"
  cp "$src/bin/ecl_driver" "$src/bin/ryoanji_driver" "$bld/"
  log "build: prebuilt drivers from the pack ($(cat "$src/bin/BUILT" 2>/dev/null))"
else
rm -rf "$bld" && mkdir -p "$bld/ryoanji"
# ECL-BH: the peer's file up to its main(), its drnd() in unsigned arithmetic
# (the original's signed overflow is undefined behaviour); kernels unchanged.
awk '/^int main\(/ {exit} {print}' "$src/ecl-bh/ECL-BH_45.cu" |
  sed 's/randx = (1103515245 \* randx + 12345) & 0x7FFFFFFF;/randx = (int)((1103515245u * (unsigned)randx + 12345u) \& 0x7FFFFFFFu);/' \
    >"$bld/ecl_kernels.cuh"
if ! grep -q '1103515245u \* (unsigned)randx' "$bld/ecl_kernels.cuh" || grep -q '^int main(' "$bld/ecl_kernels.cuh"; then
  echo "run_peers: ECL-BH_45.cu is not the expected file (drnd or main not found)" >&2
  exit 1
fi
sx=$src/sph-exa
rflags=(-O3 -DNDEBUG -std=c++17 -arch="$arch" -I"$sx/domain/include" -I"$sx/ryoanji/src" -I"$sx/domain/test" -I"$drv")
t0=$(date +%s)
# all compilations at once (8 of them); a failed one is logged, the others go on
compile() { # NAME nvcc-args...
  local name=$1; shift
  nvcc "$@" >"$bld/$name.log" 2>&1 || echo "FAILED: $name" >>"$bld/$name.log"
}
compile ecl_driver -O3 -arch="$arch" -I"$bld" -I"$drv" -o "$bld/ecl_driver" "$drv/ecl_driver.cu" &
compile ryoanji_driver "${rflags[@]}" -c -o "$bld/ryoanji/driver.o" "$drv/ryoanji_driver.cu" &
for f in ryoanji/src/ryoanji/interface/treebuilder.cu domain/include/cstone/sfc/sfc_gpu.cu \
  domain/include/cstone/tree/octree_gpu.cu domain/include/cstone/tree/csarray_gpu.cu \
  domain/include/cstone/primitives/primitives_gpu.cu domain/include/cstone/cuda/device_vector.cu; do
  b=$(basename "$f" .cu)
  compile "$b" "${rflags[@]}" -c -o "$bld/ryoanji/$b.o" "$sx/$f" &
done
wait
cat "$bld"/*.log >>"$out/build.log"
if ls "$bld"/ryoanji/*.o >/dev/null 2>&1 && [ "$(ls "$bld"/ryoanji/*.o | wc -l)" -eq 7 ]; then
  nvcc -arch="$arch" -o "$bld/ryoanji_driver" "$bld"/ryoanji/*.o >>"$out/build.log" 2>&1 ||
    echo "FAILED: link ryoanji_driver" >>"$out/build.log"
fi
log "build: $(($(date +%s) - t0)) s; $(grep -c FAILED "$out/build.log") failed"
grep FAILED "$out/build.log" | tee -a "$out/run.log"
fi
if [ $build_only = 1 ]; then
  [ -x "$bld/ecl_driver" ] && [ -x "$bld/ryoanji_driver" ]
  exit
fi

# ---- runs --------------------------------------------------------------
csv=$out/peers.csv
echo "code,n,median_ms,min_ms,max_ms,reps,p50,p99,max,bodies_per_s,status,device" >"$csv"
rows=()
for code in $codes; do
  case $code in
    ecl-bh) exe=$bld/ecl_driver ;;
    ryoanji) exe=$bld/ryoanji_driver ;;
    *) log "run_peers: unknown code $code"; continue ;;
  esac
  skip=""
  for n in $ns; do
    med=nan lo=nan hi=nan r=0 p50=nan p99=nan pmax=nan bps=nan status=ok
    if [ ! -x "$exe" ]; then
      status=build-failed
    elif [ -n "$skip" ]; then
      status=$skip
    else
      dump=$work/$code-$n.bin
      rlog=$work/$code-$n.log
      rm -f "$dump"
      timeout -k 10 "$tlimit" "$exe" "$n" "$reps" "$dump" >"$rlog" 2>&1
      rc=$?
      res=$(grep '^PEER_RESULT' "$rlog" | tail -1)
      if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        status=timeout skip=skipped
      elif [ $rc -ne 0 ] || [ -z "$res" ]; then
        status=error-rc$rc
        tail -3 "$rlog" | sed "s/^/  $code $n: /" | tee -a "$out/run.log"
      fi
      if [ -n "$res" ]; then
        read -r _ _ _ med lo hi r <<<"$res"
        bps=$(awk -v n="$n" -v t="$med" 'BEGIN { printf "%.3e", n / (t * 1e-3) }')
      fi
      if [ "$status" = ok ]; then
        acc=$(timeout -k 10 "$tlimit" python3 "$drv/ref_accuracy.py" "$dump" 2>>"$rlog" | grep '^PEER_ACC')
        if [ -n "$acc" ]; then
          read -r _ p50 p99 pmax _ <<<"$acc"
        else
          status=no-accuracy
        fi
      fi
      rm -f "$dump"
      { echo "==== $code N=$n rc=$rc"; cat "$rlog"; } >>"$out/runs.log"
    fi
    echo "$code,$n,$med,$lo,$hi,$r,$p50,$p99,$pmax,$bps,$status,${gpu%%,*}" >>"$csv"
    rows+=("$(printf '%-8s %9s %10s %10s %10s %10s %11s  %s' "$code" "$n" "$med" "$p50" "$p99" "$pmax" "$bps" "$status")")
    log "  $code N=$n: ${med} ms, p99 $p99, $status"
  done
done

{
  echo "peers: theta 0.5, eps 0 (ECL-BH eps^2 = 1e-24, Ryoanji h = 1e-12: zero for distinct bodies), Plummer (each code its own generator), p = |a-a_ref|/|a_ref| vs float64 direct sum on 1000 sampled bodies (seed 1); median of $reps evaluations after a warm-up"
  echo "ECL-BH: monopole, full eval = bbox+tree+summ+sort+force; Ryoanji: Cartesian quadrupole, ncrit 64, groups 64, full eval = bbox+tree+upsweep+traverse"
  echo "device: ${gpu:-unknown}; $(date -u '+%Y-%m-%d')"
  printf '%-8s %9s %10s %10s %10s %10s %11s  %s\n' code N median_ms p50 p99 max bodies/s status
  printf '%s\n' "${rows[@]}"
} | tee "$out/peers.txt"
