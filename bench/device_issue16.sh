#!/usr/bin/env bash
# Issue 16 on the one-GPU machine, in one call: the GPU suites that the
# solver and simulation changes touch; the MPI tests with one GPU per rank
# (ranks sharing the one GPU there is); bench_mpi on the GPU at 1, 2 and 4
# ranks, and on the CPU cores at 1 to 8 ranks. From the repository root with
# .devpack.tgz and .devextra.tgz (bench/make_ompipack.sh) carried:
#   bash bench/device_issue16.sh
# Logs under $OUT/issue16/; a summary last.
set -uo pipefail
out=${OUT:-/tmp/tilefmm-out}/issue16
mkdir -p "$out"
if [ -f .devpack.tgz ]; then rm -rf .devbin .devlibs; tar -xf .devpack.tgz; fi
if [ -f .devextra.tgz ]; then tar -xzf .devextra.tgz; fi
rm -rf /tmp/ompi && mkdir -p /tmp/ompi && tar -C /tmp/ompi -xzf .devextra/ompi.tgz
source bench/ompi_env.sh /tmp/ompi
export LD_LIBRARY_PATH=$PWD/.devlibs:$PWD/.devbin/src:$LD_LIBRARY_PATH
b=$PWD/.devbin
export TFMM_CLI=$b/apps/tilefmm
sum=$out/summary.txt
: >"$sum"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv \
  >"$out/device.txt" 2>&1
nproc >>"$out/device.txt"
suite() { # name, limit, command...
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  printf '%-26s rc=%d %s\n' "$name" "$rc" \
    "$(grep -a 'Synthesis\|passed\|FAILED' "$out/$name.log" | tail -1)" >>"$sum"
}
mpi=(bash tests/mpi/mpirun.sh)
# The suites whose code changed (the solver's entry points, the sim).
suite test_solver 300 "$b/tests/test_solver" --jobs 1 &
suite test_simulation_gpu 400 "$b/tests/test_simulation_gpu" --jobs 2 &
suite test_sim_gpu 300 "$b/tests/test_sim_gpu" --jobs 2 &
suite test_active_gpu 300 "$b/tests/test_active_gpu" --jobs 2 &
suite test_device_api 300 "$b/tests/test_device_api" --jobs 1 &
suite test_schedule_gpu 300 "$b/tests/test_schedule_gpu" --jobs 1 &
wait
# The MPI tests on the CPU (16 cores) and with one GPU per rank.
for np in 1 2 4; do
  OMP_NUM_THREADS=4 suite mpi_forces_cpu_np$np 300 "${mpi[@]}" $np "$b/tests/mpi/test_mpi_forces"
done
for np in 1 2; do
  TFMM_TEST_DEVICE=gpu OMP_NUM_THREADS=8 suite mpi_forces_gpu_np$np 300 \
    "${mpi[@]}" $np -x TFMM_TEST_DEVICE "$b/tests/mpi/test_mpi_forces"
  TFMM_TEST_DEVICE=gpu OMP_NUM_THREADS=8 suite mpi_sim_gpu_np$np 300 \
    "${mpi[@]}" $np -x TFMM_TEST_DEVICE "$b/tests/mpi/test_mpi_sim"
done
OMP_NUM_THREADS=4 suite mpi_sim_cpu_np4 300 "${mpi[@]}" 4 "$b/tests/mpi/test_mpi_sim"
# bench_mpi: the GPU at 1, 2, 4 ranks (one GPU shared), the CPU 1..8 ranks.
for n in 4000000 16000000; do
  for np in 1 2; do
    OMP_NUM_THREADS=$((16 / np)) timeout 300 bash tests/mpi/mpirun.sh $np \
      "$b/bench/bench_mpi" --n $n --reps 3 --device gpu \
      >"$out/bench_gpu_n${n}_np$np.log" 2>&1
    echo "bench gpu n $n np $np rc=$? $(grep -a summary "$out/bench_gpu_n${n}_np$np.log")" >>"$sum"
  done
done
for np in 1 2 4 8; do
  OMP_NUM_THREADS=$((16 / np)) timeout 300 bash tests/mpi/mpirun.sh $np \
    "$b/bench/bench_mpi" --n 1000000 --reps 2 --device cpu \
    >"$out/bench_cpu_np$np.log" 2>&1
  echo "bench cpu n 1000000 np $np rc=$? $(grep -a summary "$out/bench_cpu_np$np.log")" >>"$sum"
done
cat "$out/device.txt" "$sum"
# Fewer files than the machine returns: the logs in one archive.
tar -C "$out" -czf "$out/../issue16_logs.tgz" . && rm -rf "$out"/*.log
