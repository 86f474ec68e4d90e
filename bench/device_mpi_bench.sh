#!/usr/bin/env bash
# bench_mpi alone on the GPU machine (the speed half of
# bench/device_issue16.sh): GPU at 1 and 2 ranks for 4M and 16M Plummer
# bodies, the CPU cores at 1, 2, 4 ranks for 1M. Carry .devpack.tgz and
# .devextra/ompi.tgz. Logs in $OUT/mpi_bench/, a summary last.
set -uo pipefail
out=${OUT:-/tmp/tilefmm-out}/mpi_bench
mkdir -p "$out"
if [ -f .devpack.tgz ]; then rm -rf .devbin .devlibs; tar -xf .devpack.tgz; fi
rm -rf /tmp/ompi && mkdir -p /tmp/ompi && tar -C /tmp/ompi -xzf .devextra/ompi.tgz
source bench/ompi_env.sh /tmp/ompi
export LD_LIBRARY_PATH=$PWD/.devlibs:$PWD/.devbin/src:$LD_LIBRARY_PATH
b=$PWD/.devbin
sum=$out/summary.txt
: >"$sum"
bench() { # tag, ranks, args...
  local tag=$1 np=$2
  shift 2
  OMP_NUM_THREADS=$((16 / np)) timeout 240 bash tests/mpi/mpirun.sh "$np" \
    "$b/bench/bench_mpi" "$@" >"$out/$tag.log" 2>&1
  echo "$tag rc=$? $(grep -a summary "$out/$tag.log")" >>"$sum"
  grep -a '^timed' "$out/$tag.log" | tail -1 >>"$sum"
}
for n in 4000000 16000000; do
  for np in 1 2; do bench gpu_n${n}_np$np $np --n $n --reps 2 --device gpu; done
done
for np in 1 2 4; do bench cpu_n1000000_np$np $np --n 1000000 --reps 2 --device cpu; done
cat "$sum"
