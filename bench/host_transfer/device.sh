#!/usr/bin/env bash
# Issue 28 on the GPU machine, in one call, from the directory that holds
# .pin (make_pack.sh): tilefmm forces on a 1M Plummer snapshot, base and
# new alternated three times (the solver's times in the logs) and their
# outputs compared; the Python figures of both (bench_python.py); the new
# build's GPU suites and the Python GPU tests. The logs go to $OUT as one
# tarball, logs.tgz (the tool returns few files), beside summary.txt.
set -uo pipefail
P=$PWD/.pin
out=$(mktemp -d)
export LD_LIBRARY_PATH=$P/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
s=$out/summary.txt
{
  date -u +%FT%TZ
  echo "new $(cat "$P/commit.txt") base $(cat "$P/base_commit.txt")"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,pcie.link.gen.max,pcie.link.width.max --format=csv,noheader
  echo "cores $(nproc)"
  python3 -c 'import sys, numpy; print("python", sys.version.split()[0], "numpy", numpy.__version__)'
} >"$out/device.txt" 2>&1
cat "$out/device.txt"
work=$(mktemp -d)
cd "$work" || exit 1
"$P/new/tilefmm" ic plummer --n 1048576 --seed 1 --out f.hdf5 2>"$out/ic.log"
builds="base new"
[ -x "$P/pin/tilefmm" ] && builds="base new pin"
for r in 1 2 3; do
  for b in $builds; do
    /usr/bin/time -f "%e s wall" "$P/$b/tilefmm" forces --in f.hdf5 \
      --out "$b.txt" 2>"$out/forces_${b}_$r.log"
    echo "forces $b run $r rc=$?" >>"$s"
  done
done
for b in $builds; do
  if cmp -s base.txt "$b.txt"; then
    echo "forces: base and $b outputs identical" >>"$s"
  else
    echo "forces: base and $b OUTPUTS DIFFER" >>"$s"
  fi
done
sha256sum ./*.txt >>"$s"
for b in base new; do
  TILEFMM_LIBRARY=$P/$b/libtilefmm.so PYTHONPATH=$P/py-$b \
    timeout 200 python3 "$P/bench_python.py" "$b" >"$out/python_$b.csv" \
    2>"$out/python_$b.err"
  echo "python $b rc=$?" >>"$s"
done
for t in test_host_memory test_device_api test_solver test_tree_gpu \
  test_active_gpu test_schedule_gpu; do
  timeout 150 "$P/new/$t" --jobs 1 >"$out/$t.log" 2>&1
  echo "$t rc=$? $(grep -a Synthesis "$out/$t.log" | tail -1)" >>"$s"
done
cd "$P/pytests" &&
  TILEFMM_LIBRARY=$P/new/libtilefmm.so PYTHONPATH=$P/py-new:$P/site \
    timeout 150 python3 -m pytest -q -p no:cacheprovider test_host.py \
    test_gpu.py test_forces.py test_inputs.py >"$out/pytest.log" 2>&1
echo "pytest rc=$? $(tail -1 "$out/pytest.log")" >>"$s"
tar -C "$out" -czf "${OUT:-/tmp}/logs.tgz" .
cp "$s" "${OUT:-/tmp}/summary.txt"
cat "$s"
grep -h "total\|^ *pin\|upload\|download\|prepare" "$out"/forces_*.log
cat "$out"/python_*.csv
