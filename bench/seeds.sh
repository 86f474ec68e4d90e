#!/usr/bin/env bash
# The whole ctest suite on many fresh seeds at once, as CI runs it: a CUDA
# build with no GPU visible (issue 30: "./scripts/test passes on 20 fresh
# seeds in a row"). Every test that draws a seed (the Criterion suites
# through tests/common/testutil.c, the MPI tests through mpi_check.h and
# tests/cli/mpi/common.sh) reads TFMM_TEST_SEED; each copy of the suite
# gets its own. By default only those run: the others give the same
# result whatever the seed. The suites that need this machine's Python
# environment (python_*, docs, install_package) never run there.
#
#   here:        bash bench/seeds.sh pack [BUILD]   (default build)
#                -> .devextra/seeds.txz (carry it; Open MPI: carry
#                .devextra/ompi.tgz from bench/make_ompipack.sh)
#   GPU machine: bash bench/seeds.sh run COPIES JOBS [SEED...]
#                COPIES suites side by side, JOBS tests each; fresh seeds
#                unless given; logs and a table in $OUT/seeds
#                Only the tests that draw a seed unless SEEDS_ONLY=REGEX
#                says which
set -uo pipefail
cmd=${1:-}
here=$(cd "$(dirname "$0")/.." && pwd)

pack() {
  local build=${1:-build} devlibs=${DEVICE_LIBS:-../shared/tools/device-libs}
  local src
  src=$(cd "$build" && pwd)
  rm -rf .seedbin .seedlibs && mkdir -p .seedbin .devextra
  # The ctest files, and every program and library the tests start.
  (cd "$src" && find . -name CTestTestfile.cmake -not -path './_deps/*' \
    -not -path './tests/install_check/*' -print0 |
    xargs -0 cp --parents -t "$here/.seedbin")
  (cd "$src" && find apps bench tests src -type f \( -perm -u+x -o -name '*.so*' \) \
    -not -path '*/CMakeFiles/*' -not -path 'tests/install_check/*' \
    -not -name '*.sh' -not -name '*.py' -print0 |
    xargs -0 cp -a --parents -t "$here/.seedbin")
  cp -a "$src"/src/libtilefmm.so* .seedbin/src/
  find .seedbin -type f \( -perm -u+x -o -name '*.so*' \) -exec strip -s {} + \
    2>/dev/null
  echo "$src" >.seedbin/BUILD_PATH
  git rev-parse --short HEAD >.seedbin/COMMIT
  "$devlibs" -o .seedlibs $(find .seedbin -type f -perm -u+x)
  tar -cf - .seedbin .seedlibs |
    xz -T2 --lzma2=preset=1,dict=128MiB >.devextra/seeds.txz
  rm -rf .seedbin .seedlibs
  ls -la .devextra/seeds.txz
}

run() {
  local copies=${1:-10} jobs=${2:-3}
  shift 2
  local out=${OUT:-/tmp/tilefmm-out}/seeds top=$PWD
  mkdir -p "$out"
  rm -rf .seedbin .seedlibs && tar -xf .devextra/seeds.txz
  local mpiexec=/usr/bin/mpiexec
  if [ -f .devextra/ompi.tgz ]; then
    mkdir -p /tmp/ompi && tar -xzf .devextra/ompi.tgz -C /tmp/ompi
    source bench/ompi_env.sh /tmp/ompi
    mpiexec=$MPIEXEC
  fi
  # Many MPI tests side by side: Open MPI sees no oversubscription on a
  # large machine and its ranks spin while they wait (two 4-rank tests
  # took most of a 530 s run); told to yield, they wait as on CI.
  export OMPI_MCA_mpi_yield_when_idle=1
  export LD_LIBRARY_PATH=$top/.seedbin/src:$top/.seedlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  local old src=$(cat .seedbin/BUILD_PATH)
  old=$(dirname "$src")
  local seeds=("$@") i
  for ((i = ${#seeds[@]}; i < copies; i++)); do
    seeds+=("$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')")
  done
  for ((i = 0; i < copies; i++)); do
    # One build tree each: the ctest files pointing at it, the programs
    # linked to the one unpacked copy (tests write beside themselves).
    local b=$top/copy$i/build
    rm -rf "$top/copy$i" && mkdir -p "$b"
    (cd .seedbin && find . -type d -exec mkdir -p "$b/{}" \;)
    (cd .seedbin && find . -type f -not -name CTestTestfile.cmake \
      -exec ln -s "$top/.seedbin/{}" "$b/{}" \;)
    (cd .seedbin && find . -name CTestTestfile.cmake) | while read -r f; do
      sed -e "s#$src#$b#g" -e "s#$old#$top#g" -e "s#/usr/bin/mpiexec#$mpiexec#g" \
        ".seedbin/$f" >"$b/$f"
    done
  done
  # The tests that draw a seed: the suites whose sources call
  # test_fresh_seed, and the MPI tests. The others draw none: one run shows
  # them (SEEDS_ONLY=. runs everything but the Python ones).
  local only=${SEEDS_ONLY:-}
  if [ -z "$only" ]; then
    only="^($(grep -l test_fresh_seed tests/*.c | xargs -n1 basename |
      sed 's/\.c$//' | tr '\n' '|')test_mpi_.*|cli_mpi_.*)\$"
  fi
  echo "tests: $only" >"$out/tests.txt"
  local t0=$SECONDS
  for ((i = 0; i < copies; i++)); do
    # One OpenMP thread a test (CI's 2 cores run 2 tests at once): 32
    # threads in each of 30 tests made test_tree 30x slower than alone.
    (cd "$top/copy$i/build" && CUDA_VISIBLE_DEVICES= \
      OMP_NUM_THREADS=${SEEDS_OMP:-1} \
      TFMM_TEST_SEED=${seeds[$i]} timeout "${SEEDS_LIMIT:-560}" ctest --timeout 900 \
      -j "$jobs" --output-on-failure -E '^(python_|docs$|install_package$)' \
      -R "$only" \
      >"$out/seed_${seeds[$i]}.log" 2>&1) &
  done
  wait
  echo "==== seeds: $copies suites, $jobs tests each, $((SECONDS - t0)) s," \
    "commit $(cat .seedbin/COMMIT), $(nproc) cores" | tee "$out/summary.txt"
  for ((i = 0; i < copies; i++)); do
    local log=$out/seed_${seeds[$i]}.log
    printf 'seed %-20s %s %s\n' "${seeds[$i]}" \
      "$(grep -E 'tests passed|Total Test time' "$log" | tr '\n' ' ')" \
      "$(grep -qE 'tests passed' "$log" || echo "UNFINISHED: $(grep -cE 'Test +#[0-9]+:' "$log") tests done")"
    # Every test that ended badly, also in a copy cut off by the limit.
    grep -aE 'Test +#[0-9]+: .*\*\*\*(Failed|Timeout|Exception|Not Run)' "$log" |
      sed 's/^/    /'
  done | tee -a "$out/summary.txt"
  # One archive: the device tool returns only a few files a call.
  tar -czf "$out/../seeds_logs.tgz" -C "$out" . && rm -f "$out"/seed_*.log
}

case $cmd in
pack) pack "${2:-build}" ;;
run) shift && run "$@" ;;
*) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' && exit 2 ;;
esac
