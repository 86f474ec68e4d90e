#!/usr/bin/env bash
# Everything that runs on the GPU machine, one call a command, from the
# repository root with the pack carried (bench/make_devpack.sh BUILD makes
# .devpack.tgz; bench/make_ompipack.sh .devextra/ompi.tgz for mpi):
#
#   bash bench/device.sh COMMAND [PART] [ARGS...]
#
#   tests     [gpu|check|cli]  the GPU suites in parallel, the sanitizers,
#                              the CLI suites on the GPU, forces/tune and
#                              the main job (gpu, the default); check: the
#                              suites a change of the gpu schedule's
#                              kernels touches, then profile
#   schedule  [tests|bench|scale|ladder|leaves|main|all]
#                              the gpu schedule (issue 13): its suites;
#                              bench_tree gpu against hybrid; bodies
#                              resident from 262,144 to 64M; time against
#                              accuracy; near-field rate against leaf;
#                              the main job per leaf size
#   near      [check|rate|scale|all]  the tree methods' GPU near field
#   direct    [tests|bench|all]       the all-pairs kernel: every suite
#                              plus sanitizers on bench_direct, the sweeps
#   tree      [tests|bench]    the GPU tree build (bench_tree_gpu)
#   upward    [tests|bench|far|hybrid|all]  upward pass and far field
#   active                     forces at a subset (bench_active)
#   sim       [bench|merger|gpu|tests|fixed|hernquist|io|cold|all]
#                              tilefmm run's speed, the merger with its
#                              pictures, the sim's GPU module, bench_sim;
#                              io: run at its defaults with output
#                              (bench/run_io.sh; RUN_IO_BEFORE: another
#                              CLI beside it); cold: block steps on the
#                              cold collapse
#   mpi       [tests|bench|all]  the MPI tests on CPU ranks and with the
#                              GPU per rank; bench_mpi (needs ompi.tgz)
#   python    [PYTEST ARGS]    the Python package's tests (pytest: .devpy)
#   planner   [tests|bench|grid|all|held]  issue 28: the measured
#                              error's GPU suites and memcheck;
#                              bench_planner on the held-out inputs
#                              (PLANNER_N, PLANNER_TOL); the grid of fixed
#                              settings at 1M beside it; held: the other
#                              targets, 16M, softened families, stages
#   hostio                     host arrays at 1M: tilefmm forces from an
#                              HDF5 file (3 runs) and Python's kept
#                              Solver.forces and tilefmm.forces
#                              (bench/host_transfer/bench_python.py)
#   calibrate [gpu|time]       the accuracy table's GPU rows and the time
#                              at its choices; time at the targets
#   profile                    ncu kernel sums, PROFILE_CASES
#                              ("N LEAF THETA ORDER;...")
#   builds                     the PTX-only and sm_80-only builds of
#                              .devextra.tgz (issue 15's portability)
#   peers                      bench/peers/run_peers.sh (ECL-BH, Ryoanji)
#                              when .devextra/peers.txz is carried
#   compare                    a refactor before and after, in one call:
#                              .devextra/pack.txz holds .basebin and
#                              .newbin (each apps/tilefmm, bench/bench_tree,
#                              src/libtilefmm.so; .newbin its GPU tests)
#                              and .devlibs; forces of both builds hashed
#                              (gpu, hybrid, direct; single and double),
#                              bench_tree's gpu schedule alternated, then
#                              the new build's GPU suites
#
# One preamble for all: the pack unpacked (a warm machine's .devbin
# replaced), .devlibs on LD_LIBRARY_PATH, $b the binaries
# (TFMM_DEVICE_BUILD, default .devbin), $out = $OUT/COMMAND with
# device.txt (date, commit, GPU, driver, clocks, cores); each step's log
# in $out/NAME.log and a line in $out/summary.txt, printed last. The
# device tool returns few files: the logs travel as $OUT/COMMAND_logs.tgz.
# Tables meant for the docs go to bench/results/<topic>/ by hand (the
# policy in bench/README.md), never the logs.
set -uo pipefail
cmd=${1:-help}
part=${2:-}
here=$(cd "$(dirname "$0")" && pwd)

usage() {
  sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

# ---- the preamble ---------------------------------------------------------
setup() { # NAME
  OUT=${OUT:-/tmp/tilefmm-out}
  out=$OUT/$1
  mkdir -p "$out"
  if [ -f .devpack.tgz ]; then
    rm -rf .devbin .devlibs
    tar -xf .devpack.tgz # gzip or xz: GNU tar tells them apart
  fi
  # the CLI tests preload stand-ins for libhdf5's writes by the path they
  # had in the build: put them there
  local lib want
  for lib in .devbin/tests/cli/lib*.so; do
    [ -f "$lib" ] || continue
    want=$(grep -aohE "/[^[:space:]\"]*/${lib##*/}" .devbin/tests/cli/test_* | head -1)
    [ -n "$want" ] && mkdir -p "${want%/*}" && cp "$lib" "$want" 2>/dev/null
  done
  export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  b=$PWD/${TFMM_DEVICE_BUILD:-.devbin}
  export LD_LIBRARY_PATH=$b/src:$LD_LIBRARY_PATH
  export TFMM_CLI=$b/apps/tilefmm
  BT=$b/bench/bench_tree
  sum=$out/summary.txt
  : >"$sum"
  {
    date -u +"date: %Y-%m-%dT%H:%M:%SZ"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,power.limit \
      --format=csv
    nproc | sed 's/^/cpu cores: /'
  } >"$out/device.txt" 2>&1
}

# step NAME LIMIT COMMAND...: COMMAND under a time limit, its output in
# $out/NAME.log; its exit status, seconds and last verdict line (Criterion's
# synthesis, an MPI test's "passed"/"FAILED", a sanitizer's summary) in
# $sum.
step() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  printf '%-26s rc=%-3d %4ds %s\n' "$name" "$rc" $((SECONDS - t0)) \
    "$(grep -aE 'Synthesis|passed \(|FAILED|ERROR SUMMARY|RACECHECK SUMMARY|^sim:.*steps/s' \
      "$out/$name.log" | tail -1 | cut -c1-160)" >>"$sum"
}

# Lines for the summary that are not steps.
note() { echo "$*" >>"$sum"; }

# compute-sanitizer TOOL on a test binary with a Criterion filter.
sanitize() { # NAME LIMIT TOOL BINARY FILTER [ARGS...]
  local name=$1 limit=$2 tool=$3 bin=$4 filter=$5 only=()
  shift 5
  [ -n "$filter" ] && only=(--filter "$filter")
  step "$name" "$limit" compute-sanitizer --tool "$tool" --error-exitcode 9 \
    "$@" "$bin" --jobs 1 "${only[@]}"
}

finish() { # the short table last; the logs as one archive
  tar -czf "$OUT/${cmd}_logs.tgz" -C "$out" . 2>/dev/null
  echo "==== $cmd $part"
  cat "$out/device.txt" "$sum"
}

has() { # PART...: is the part asked for one of these (or all)?
  local p
  for p in "$@" all; do [ "$part" = "$p" ] && return 0; done
  return 1
}

# ---- tests ----------------------------------------------------------------
cmd_tests() {
  part=${part:-gpu}
  setup tests
  t=$b/tests
  if has gpu; then
    step test_near_gpu 480 "$t/test_near_gpu" --jobs 10 &
    step test_direct_gpu 480 "$t/test_direct_gpu" --jobs 4 &
    step test_units 300 "$t/test_units" --jobs 1 &
    step test_solver 300 "$t/test_solver" --jobs 1 &
    step test_tree_gpu 300 "$t/test_tree_gpu" --jobs 1 &
    step test_upward_gpu 300 "$t/test_upward_gpu" --jobs 2 &
    step test_farfield_gpu 300 "$t/test_farfield_gpu" --jobs 2 &
    step test_device_api 300 "$t/test_device_api" --jobs 1 &
    step test_traverse_gpu 300 "$t/test_traverse_gpu" --jobs 2 &
    step test_schedule_gpu 300 "$t/test_schedule_gpu" --jobs 1 &
    step test_accuracy_gpu 400 "$t/test_accuracy_gpu" --jobs 4 &
    step test_active_gpu 300 "$t/test_active_gpu" --jobs 2 &
    step test_sim_gpu 300 "$t/test_sim_gpu" --jobs 2 &
    step test_simulation_gpu 400 "$t/test_simulation_gpu" --jobs 2 &
    step test_soft_far_gpu 400 "$t/test_soft_far_gpu" --jobs 4 &
    step test_measure_gpu 300 "$t/test_measure_gpu" --jobs 2 &
    step test_measure_fast_gpu 300 "$t/test_measure_fast_gpu" --jobs 2 &
    wait
    sanitize memcheck_soft_far 200 memcheck "$t/test_soft_far_gpu" \
      'soft_far_gpu/subset_is_the_whole'
    sanitize memcheck_near 200 memcheck "$t/test_near_gpu" \
      'near_gpu/coincident*' --target-processes all
    sanitize memcheck_upward 200 memcheck "$t/test_upward_gpu" \
      'upward_gpu/@(degenerate|errors*)'
    sanitize memcheck_far 200 memcheck "$t/test_farfield_gpu" \
      'farfield_gpu/degenerate'
    sanitize memcheck_tree 200 memcheck "$t/test_tree_gpu" ''
    sanitize racecheck_schedule 200 racecheck "$t/test_schedule_gpu" \
      'schedule_gpu/coincident_bodies_named'
  fi
  if has gpu cli; then
    for s in test_run test_cli test_snapshot_cli test_binary_input \
      test_render test_ic; do
      [ -x "$t/cli/$s" ] && step "$s" 300 "$t/cli/$s" --jobs 8
    done
    # Where each stage ran, as forces reports it: the default (the gpu
    # schedule), and hybrid with the tree and far field on the GPU.
    "$TFMM_CLI" ic plummer --n 262144 --out /tmp/tfmm-p262k.txt >/dev/null 2>&1
    for sched in auto hybrid; do
      step "forces_262k_$sched" 120 "$TFMM_CLI" forces --in /tmp/tfmm-p262k.txt \
        --out /tmp/tfmm-f262k.txt --schedule "$sched" --leaf 64
      note "  $(grep -a -m1 schedule "$out/forces_262k_$sched.log" | cut -c1-150)"
    done
    step tune 300 "$TFMM_CLI" tune --ic plummer --n 200000 --leaf-min 32 \
      --leaf-max 128 --csv "$out/tune.csv" --png "$out/tune.png"
    note "  $(grep -a '^chosen' "$out/tune.log")"
    main_job main_job
  fi
  if has check; then
    for s in farfield_gpu tree_gpu upward_gpu traverse_gpu schedule_gpu \
      device_api solver; do
      step "test_$s" 300 "$t/test_$s" --jobs 2 &
    done
    step test_accuracy_gpu 400 "$t/test_accuracy_gpu" --jobs 4 &
    wait
    sanitize memcheck_far 200 memcheck "$t/test_farfield_gpu" \
      'farfield_gpu/degenerate'
    sanitize memcheck_tree 200 memcheck "$t/test_tree_gpu" ''
    sanitize racecheck_schedule 200 racecheck "$t/test_schedule_gpu" \
      'schedule_gpu/coincident_bodies_named'
    PROFILE_CASES=${PROFILE_CASES:-"262144 64 0.5 5;1048576 64 0.6 5"} \
      profile_cases >"$out/profile.txt" 2>&1
    cat "$out/profile.txt"
  fi
}

# The README's main job ('tilefmm run' on its defaults), timed.
main_job() { # NAME [ARGS...]
  local name=$1
  shift
  rm -rf "/tmp/tfmm-$name"
  step "$name" 300 "$TFMM_CLI" run --out "/tmp/tfmm-$name" --force \
    --progress off "$@"
  note "  $(grep -aE 'steps/s|energy' "$out/$name.log" | tr '\n' ' ' | cut -c1-200)"
  rm -rf "/tmp/tfmm-$name"
}

# ---- schedule: the gpu schedule (issue 13) ---------------------------------
cmd_schedule() {
  part=${part:-all}
  setup schedule
  t=$b/tests
  if has tests; then
    step test_traverse_gpu 200 "$t/test_traverse_gpu" --jobs 4
    step test_schedule_gpu 200 "$t/test_schedule_gpu" --jobs 2
    step test_accuracy_gpu 400 "$t/test_accuracy_gpu" --jobs 8 --verbose
    sanitize memcheck_traverse 150 memcheck "$t/test_traverse_gpu" \
      'traverse_gpu/@(errors_are_reported|degenerate)'
    sanitize memcheck_schedule 200 memcheck "$t/test_schedule_gpu" \
      'schedule_gpu/coincident_bodies_named'
    sanitize racecheck_schedule 200 racecheck "$t/test_schedule_gpu" \
      'schedule_gpu/coincident_bodies_named'
  fi
  if has bench; then
    # Theta and order given: the accuracy table's choice is the worst case
    # over adversarial inputs (docs/accuracy.md), far tighter than Plummer
    # needs; the p99 column says what each setting reached.
    local n=${BENCH_N:-262144,1048576,4194304,16777216}
    step bench_gpu 500 "$BT" --n "$n" --method fmm --device gpu --schedule gpu \
      --leaf "${GPU_LEAVES:-32,64}" --theta "${GPU_THETAS:-0.5,0.55,0.6}" \
      --order "${GPU_ORDERS:-5}" --sample 1000 --reps 3 --warmup 1 \
      --time-limit 60 --csv "$out/gpu.csv"
    step bench_hybrid 300 "$BT" --n "$n" --method fmm --device gpu \
      --schedule hybrid --leaf 1024 --accuracy 1e-3 --sample 1000 --reps 2 \
      --warmup 1 --time-limit 60 --csv "$out/bench_hybrid.csv"
  fi
  local common=(--method fmm --device gpu --order 5 --warmup 1 --time-limit 60)
  if has scale; then
    # Bodies resident on the GPU (Plummer seed 42, eps 0; p99 against the
    # double sum on 1000 bodies up to 4M, which stands for the larger N),
    # and the hybrid schedule at its best measured setting, host bodies.
    step scale_small 400 "$BT" "${common[@]}" --schedule gpu --resident \
      --n 262144,1048576,4194304 --leaf 32,64 --theta 0.5,0.6 --sample 1000 \
      --reps 5 --csv "$out/small.csv"
    step scale_large 400 "$BT" "${common[@]}" --schedule gpu --resident \
      --n 16777216,33554432,67108864 --leaf 64 --theta 0.6 --sample 0 \
      --reps 3 --csv "$out/large.csv"
    step scale_hybrid 400 "$BT" "${common[@]}" --schedule hybrid \
      --n 262144,1048576,4194304 --leaf 256,1024 --theta 0.5 --sample 1000 \
      --reps 2 --csv "$out/hybrid.csv"
  fi
  local r=(--method fmm --device gpu --schedule gpu --resident --warmup 1
    --time-limit 60 --leaf 64)
  if has ladder; then
    # Time against requested accuracy at 1M and 16M: theta and order per
    # rung; the last rungs' near field in double.
    local rung name theta order prec
    for rung in "1e4 0.5 6 single" "1e5 0.45 7 single" "1e6 0.4 8 double" \
      "1e8 0.35 10 double"; do
      read -r name theta order prec <<<"$rung"
      step "ladder_${name}_1M" 120 "$BT" "${r[@]}" --n 1048576 --theta "$theta" \
        --order "$order" --precision "$prec" --sample 1000 --reps 3 \
        --csv "$out/ladder.csv"
      step "ladder_${name}_16M" 150 "$BT" "${r[@]}" --n 16777216 \
        --theta "$theta" --order "$order" --precision "$prec" --sample 0 \
        --reps 2 --csv "$out/ladder.csv"
    done
  fi
  if has leaves; then
    step leaves 200 "$BT" --method fmm --device gpu --schedule gpu --resident \
      --warmup 1 --n 1048576 --leaf 16,32,64,128,256,512 --theta 0.6 \
      --order 5 --sample 1000 --reps 3 --csv "$out/leaves.csv"
  fi
  if has main; then
    local leaf
    for leaf in 64 128 256 1024; do main_job "main_leaf$leaf" --leaf "$leaf"; done
  fi
}

# ---- near: the tree methods' near field on the GPU ---------------------------
cmd_near() {
  part=${part:-all}
  setup near
  if has check; then
    local dev tool
    for dev in cpu gpu; do
      step "check_$dev" 300 "$BT" --device "$dev" --n 20000,200000 \
        --leaf 1,16,64,200,1000 --order 4 --reps 1 --sample 1000 \
        --csv "$out/check_$dev.csv"
    done
    for tool in memcheck racecheck synccheck; do
      step "sanitizer_$tool" 300 compute-sanitizer --tool "$tool" \
        --error-exitcode 9 "$b/bench/bench_tree" --device gpu --n 3000 \
        --leaf 1,7,64,100 --order 2 --reps 1 --sample 0
    done
  fi
  if has rate; then
    step rate 300 "$BT" --device gpu --n 1048576 \
      --leaf 16,32,64,128,256,512,1024,2048,4096 --order 4 --reps 3 \
      --warmup 1 --sample 0 --csv "$out/rate.csv"
  fi
  if has scale; then
    step scale 500 "$BT" --device gpu --n 262144,1048576,4194304 \
      --leaf 256,512,1024,2048 --order 4,5,6 --reps 3 --warmup 1 \
      --sample 1000 --time-limit 60 --csv "$out/scale.csv"
    step scale16m 300 "$BT" --device gpu --n 16777216 --leaf 1024,2048,4096 \
      --order 5 --reps 2 --warmup 1 --sample 1000 --time-limit 120 \
      --csv "$out/scale16m.csv"
  fi
}

# ---- direct: the all-pairs kernel --------------------------------------------
cmd_direct() {
  part=${part:-all}
  setup direct
  if has tests; then
    local t tool
    for t in "$b"/tests/test_* "$b"/tests/cli/test_*; do
      [ -x "$t" ] && step "$(basename "$t")" 600 "$t" --jobs 8
    done
    # compute-sanitizer on small runs of every launch shape family: out of
    # bounds accesses, shared-memory races and barrier misuse (no thread
    # may be left behind a barrier, at any N).
    for tool in memcheck racecheck synccheck; do
      step "sanitizer_$tool" 300 compute-sanitizer --tool "$tool" \
        --error-exitcode 9 "$b/bench/bench_direct" --n 1,31,129,1000,4097 \
        --p 32,128,256 --q 0,1,4 --r 1,2,4 --unroll 4 --potential 1 \
        --reps 1 --warmup 0
    done
    main_job main_job
    # The kernel's machine code, for counting the inner loop's instructions.
    local lib
    for lib in "$b"/src/libtilefmm.so*; do
      [ -f "$lib" ] && cuobjdump -sass "$lib" >"$out/kernels.sass" 2>&1 && break
    done
  fi
  if has bench; then
    step sweeps 600 bash "$here/sweep_direct.sh" "$b/bench/bench_direct" \
      "$out/csv"
  fi
}

# ---- tree, upward: the GPU tree build, upward pass and far field ----------------
cmd_tree() {
  part=${part:-all}
  setup tree
  if has tests; then
    step test_tree_gpu 120 "$b/tests/test_tree_gpu" --jobs 4 --verbose
    local tool
    for tool in memcheck synccheck; do
      sanitize "$tool" 100 "$tool" "$b/tests/test_tree_gpu" \
        'tree_gpu/@(small_n|errors_are_reported|line_and_one_body)'
    done
  fi
  if has bench; then
    step bench 120 "$b/bench/bench_tree_gpu" \
      --n 262144,1048576,4194304,16777216 --leaf 64 --reps 10 --cpu-reps 2
    cat "$out/bench.log"
  fi
}

cmd_upward() {
  part=${part:-all}
  setup upward
  t=$b/tests
  if has tests; then
    step test_upward_gpu 240 "$t/test_upward_gpu" --jobs 4 --verbose
    step test_farfield_gpu 240 "$t/test_farfield_gpu" --jobs 4 --verbose
    step test_solver 120 "$t/test_solver" --jobs 4
    step test_device_api 120 "$t/test_device_api" --jobs 4
    sanitize memcheck_far 150 memcheck "$t/test_farfield_gpu" \
      'farfield_gpu/@(errors_are_reported|degenerate)'
    sanitize racecheck_far 200 racecheck "$t/test_farfield_gpu" \
      'farfield_gpu/degenerate'
    sanitize memcheck_upward 120 memcheck "$t/test_upward_gpu" \
      'upward_gpu/@(errors_are_reported|degenerate)'
    sanitize racecheck_upward 120 racecheck "$t/test_upward_gpu" \
      'upward_gpu/errors_are_reported'
    sanitize racecheck_m2m 200 racecheck "$t/test_upward_gpu" \
      'upward_gpu/degenerate'
  fi
  if has bench; then
    step bench 300 "$b/bench/bench_upward_gpu" \
      --n "${UPWARD_N:-262144,1048576,4194304,16777216,67108864}" \
      --order 4,8 --reps 5 --cpu-reps 1 --cpu-max "${UPWARD_CPU_MAX:-16777216}"
    cat "$out/bench.log"
  fi
  if has far; then
    step far 300 "$b/bench/bench_farfield_gpu" \
      --n "${FAR_N:-262144,1048576,4194304}" --leaf 64,512 --order 4,8 --reps 3
    cat "$out/far.log"
  fi
  if has hybrid; then
    local td
    for td in cpu gpu; do
      step "hybrid_tree_$td" 200 "$BT" \
        --n 16384,32768,65536,131072,262144,1048576,4194304 --leaf 64,1024 \
        --device gpu --tree-device "$td" --accuracy 1e-3 --reps 3 --warmup 1 \
        --sample 0 --csv "$out/hybrid.csv"
    done
  fi
}

# ---- active: forces at a subset of the bodies ----------------------------------
cmd_active() {
  setup active
  t=$b/tests
  step test_active_gpu 240 "$t/test_active_gpu" --jobs 2 &
  step test_active 240 "$t/test_active" --jobs 4 &
  step test_schedule_gpu 240 "$t/test_schedule_gpu" --jobs 1 &
  step test_device_api 240 "$t/test_device_api" --jobs 1 &
  step test_traverse_gpu 240 "$t/test_traverse_gpu" --jobs 2 &
  step test_farfield_gpu 240 "$t/test_farfield_gpu" --jobs 2 &
  wait
  step memcheck_active 120 compute-sanitizer --tool memcheck \
    --error-exitcode 9 "$b/bench/bench_active" --n 30000 --reps 1 \
    --warmup 0 --fractions 0.3,0.01
  # 1M and 16M Plummer bodies resident, active fractions 1 to 0.001.
  step bench_active 200 "$b/bench/bench_active" --n 1048576,16777216 \
    --reps 5 --warmup 2
  cat "$out/bench_active.log"
}

# ---- sim: tilefmm run and the simulation ----------------------------------
cmd_sim() {
  part=${part:-all}
  setup sim
  local work=${TMPDIR:-/tmp}/tilefmm-sim
  mkdir -p "$work"
  if has bench; then
    # Steps per second and time per step by phase (bench/run_bench.sh).
    step run_bench 600 bash "$here/run_bench.sh" "$TFMM_CLI" \
      "$out/run_bench.csv" "$work" \
      "262144:20:gpu 1048576:10:gpu 4194304:6:gpu 262144:5:cpu"
    cat "$out/run_bench.csv"
  fi
  if has merger; then
    # The merger of docs/tutorial.md (full size), rendered every 100 steps, with its statistics
    # (the snapshots themselves are not kept).
    local m=$work/merger s
    rm -rf "$m"
    step merger 600 "$TFMM_CLI" run --ic merger --n 262144 --dt 0.02 \
      --t-end 16 --snapshot-every 100 --checkpoint-every 0 --progress off \
      --out "$m"
    cp "$m/statistics.csv" "$out/merger_statistics.csv"
    cp "$m/used_parameters.yml" "$out/merger_parameters.yml"
    for s in "$m"/snapshot_*.hdf5; do
      "$TFMM_CLI" render "$s" --out "$out/$(basename "$s" .hdf5).png" \
        --axis z --extent 8 --centre 0,0,0 --size 768 >>"$out/render.log" 2>&1
    done
    note "render rc=$?"
    rm -rf "$m"
  fi
  t=$b/tests
  if has gpu; then
    # The simulation state's GPU module: twice (fresh seeds), memcheck,
    # its bench, and the registers and spills of its kernels.
    step test_sim_gpu_1 150 "$t/test_sim_gpu" --jobs 1 --verbose
    step test_sim_gpu_2 150 "$t/test_sim_gpu" --jobs 1
    sanitize memcheck_sim_gpu 240 memcheck "$t/test_sim_gpu" ''
    step bench_sim_gpu 150 "$b/bench/bench_sim_gpu" --reps 5
    cuobjdump --dump-resource-usage "$b/bench/bench_sim_gpu" \
      >"$out/resources.txt" 2>&1
  fi
  if has tests; then
    step test_simulation_gpu 300 "$t/test_simulation_gpu" --jobs 1
    step test_timesteps 300 "$t/test_timesteps" --jobs 4
    step test_simulation 300 "$t/test_simulation" --jobs 4
    sanitize memcheck_simulation 300 memcheck "$t/test_simulation_gpu" \
      'simulation_gpu/restart_mid*'
    step test_run 300 "$t/cli/test_run" --jobs 8
  fi
  if has io; then
    # What the snapshots, checkpoints and statistics cost tilefmm run at
    # its defaults (bench/results/run_io), beside RUN_IO_BEFORE if given.
    local clis=("new=$TFMM_CLI")
    [ -n "${RUN_IO_BEFORE:-}" ] && clis=("before=$RUN_IO_BEFORE" "${clis[@]}")
    step run_io 580 bash "$here/run_io.sh" "$out/run_io" "${clis[@]}"
  fi
  if has cold; then
    # Block steps against fixed steps through a cold collapse (close
    # encounters in its core): issue 31's second system.
    step blocks_cold 580 "$b/bench/bench_sim" cold "${COLD_N:-262144}" 5 \
      0.025 64 0.6 5 "${COLD_EPS:-0.003}"
  fi
  if has fixed; then
    # bench_sim fixed N STEPS LEAF [THETA ORDER]: the defaults, then
    # settings whose p99 validate measures below 1e-3.
    local bs=$b/bench/bench_sim th od set
    step fixed_1M 200 "$bs" fixed 1048576 60 64
    step fixed_1M_t06p5 200 "$bs" fixed 1048576 60 64 0.6 5
    step fixed_1M_t06p5_L32 200 "$bs" fixed 1048576 60 32 0.6 5
    step fixed_1M_t05p5 200 "$bs" fixed 1048576 60 64 0.5 5
    step fixed_16M 300 "$bs" fixed 16777216 10 64
    step fixed_16M_t06p5 300 "$bs" fixed 16777216 20 64 0.6 5
    for set in "auto auto" "0.6 5" "0.5 5"; do
      read -r th od <<<"$set"
      step "validate_1M_$th" 300 "$TFMM_CLI" validate --ic plummer \
        --n 1048576 --sample 2000 --softening spline --eps 0.01 --leaf 64 \
        --theta "$th" --order "$od"
      note "  $(grep -a 'met' "$out/validate_1M_$th.log" | tr '\n' ' ')"
    done
  fi
  if has hernquist; then
    step hernquist_1M 400 "$b/bench/bench_sim" hernquist 1048576 1 0.025 64 \
      0.6 5 0.01
    step hernquist_1M_eps003 500 "$b/bench/bench_sim" hernquist 1048576 1 \
      0.025 64 0.6 5 0.003
  fi
  has bench fixed hernquist && main_job main_job
}

# ---- mpi: several ranks (Open MPI from .devextra/ompi.tgz) --------------------
cmd_mpi() {
  part=${part:-all}
  setup mpi
  [ -f .devextra.tgz ] && tar -xzf .devextra.tgz
  if [ -f .devextra/ompi.tgz ]; then
    rm -rf /tmp/ompi && mkdir -p /tmp/ompi &&
      tar -C /tmp/ompi -xzf .devextra/ompi.tgz
    source "$here/ompi_env.sh" /tmp/ompi
  fi
  local mpi=(bash tests/mpi/mpirun.sh) np n
  t=$b/tests
  if has tests; then
    # The suites the solver's entry points and the sim touch, then the MPI
    # tests on the CPU cores and with one GPU per rank (ranks share it).
    step test_solver 300 "$t/test_solver" --jobs 1 &
    step test_simulation_gpu 400 "$t/test_simulation_gpu" --jobs 2 &
    step test_sim_gpu 300 "$t/test_sim_gpu" --jobs 2 &
    step test_active_gpu 300 "$t/test_active_gpu" --jobs 2 &
    wait
    for np in 1 2 4; do
      OMP_NUM_THREADS=4 step "mpi_forces_cpu_np$np" 300 "${mpi[@]}" "$np" \
        "$t/mpi/test_mpi_forces"
    done
    for np in 1 2; do
      TFMM_TEST_DEVICE=gpu OMP_NUM_THREADS=8 step "mpi_forces_gpu_np$np" 300 \
        "${mpi[@]}" "$np" -x TFMM_TEST_DEVICE "$t/mpi/test_mpi_forces"
      TFMM_TEST_DEVICE=gpu OMP_NUM_THREADS=8 step "mpi_sim_gpu_np$np" 300 \
        "${mpi[@]}" "$np" -x TFMM_TEST_DEVICE "$t/mpi/test_mpi_sim"
      # the planner over the ranks, its exact sums on the GPU
      TFMM_TEST_DEVICE=gpu OMP_NUM_THREADS=8 step "mpi_planner_gpu_np$np" 300 \
        "${mpi[@]}" "$np" -x TFMM_TEST_DEVICE "$t/mpi/test_mpi_planner"
    done
    OMP_NUM_THREADS=4 step mpi_sim_cpu_np4 300 "${mpi[@]}" 4 \
      "$t/mpi/test_mpi_sim"
  fi
  if has bench; then
    # bench_mpi: the GPU at 1 and 2 ranks, the CPU cores at 1 to 4 ranks.
    for n in 4000000 16000000; do
      for np in 1 2; do
        OMP_NUM_THREADS=$((16 / np)) step "bench_gpu_n${n}_np$np" 300 \
          "${mpi[@]}" "$np" "$b/bench/bench_mpi" --n "$n" --reps 2 --device gpu
        note "  $(grep -a summary "$out/bench_gpu_n${n}_np$np.log" | tail -1)"
      done
    done
    for np in 1 2 4; do
      OMP_NUM_THREADS=$((16 / np)) step "bench_cpu_n1000000_np$np" 300 \
        "${mpi[@]}" "$np" "$b/bench/bench_mpi" --n 1000000 --reps 2 --device cpu
      note "  $(grep -a summary "$out/bench_cpu_n1000000_np$np.log" | tail -1)"
    done
  fi
}

# ---- python: the package's tests ----------------------------------------------
cmd_python() {
  setup python
  export TILEFMM_LIBRARY=$b/src/libtilefmm.so
  export TILEFMM_CLI=$b/apps/tilefmm
  export PYTHONPATH=$PWD/python:$PWD/.devpy${PYTHONPATH:+:$PYTHONPATH}
  python3 -c 'import tilefmm; print("tilefmm", tilefmm.__version__, "CUDA",
    tilefmm.has_cuda(), "GPUs", tilefmm.gpu_count(), "from", tilefmm.library_path)' \
    >>"$sum" 2>&1
  # Suites needing h5py or matplotlib skip, saying so, where those are
  # missing; test_gpu.py is the one that needs the GPU.
  step pytest 600 python3 -m pytest -p no:cacheprovider -rs "${@:-python/tests}"
  note "  $(tail -1 "$out/pytest.log")"
}

# ---- hostio, calibrate, planner: the accuracy commands (issue 28) ------------
# shellcheck source=bench/device_accuracy.sh
source "$here/device_accuracy.sh"

# ---- profile: kernel time by name (ncu) ------------------------------------
profile_cases() {
  local cases=${PROFILE_CASES:-"1048576 64 0.6 5"} c n leaf theta order f
  local list
  IFS=';' read -ra list <<<"$cases"
  for c in "${list[@]}"; do
    read -r n leaf theta order <<<"$c"
    f=$out/ncu_${n}_${leaf}_${theta}_${order}.csv
    ncu --metrics gpu__time_duration.sum --csv --print-units base \
      "$b/bench/bench_tree" --n "$n" --method fmm --device gpu \
      --schedule gpu --leaf "$leaf" --theta "$theta" --order "$order" \
      --sample 0 --reps 1 --warmup 0 >"$f" 2>/dev/null
    echo "== N $n leaf $leaf theta $theta order $order"
    python3 "$here/ncu_kernel_sums.py" "$f"
  done
}

cmd_profile() {
  setup profile
  profile_cases | tee "$out/profile.txt"
}

# ---- builds: other targets' machine code (issue 15) -------------------------
cmd_builds() {
  setup builds
  [ -f .devextra.tgz ] && tar -xf .devextra.tgz
  # The compute_80 PTX JIT-compiled for the GPU (a build of 80-virtual).
  local p=$PWD/.devextra/ptx s=$PWD/.devextra/sm80 tt
  if [ -d "$p" ]; then
    step ptx_version 60 "$p/tilefmm" --version
    note "  $(grep -a -o 'usable GPUs: [0-9]*' "$out/ptx_version.log")"
    for tt in test_direct_gpu test_schedule_gpu test_near_gpu; do
      step "ptx_$tt" 400 "$p/$tt" --jobs 8
    done
    step ptx_validate 300 "$p/tilefmm" validate --ic plummer --n 200000 \
      --device gpu
  fi
  # A build for sm_80 only: the GPU named unusable, with the fix.
  if [ -d "$s" ]; then
    step sm80_version 60 "$s/tilefmm" --version
    "$s/tilefmm" ic plummer --n 20000 --out /tmp/p20k.txt >/dev/null 2>&1
    step sm80_gpu 120 "$s/tilefmm" forces --in /tmp/p20k.txt --out /tmp/f.txt \
      --device gpu
    note "  $(grep -a -m1 'not usable' "$out/sm80_gpu.log" | cut -c1-200)"
    step sm80_auto 120 "$s/tilefmm" forces --in /tmp/p20k.txt \
      --out /tmp/f.txt --device auto
    note "  $(grep -a -m1 'running on the CPU' "$out/sm80_auto.log" | cut -c1-200)"
  fi
}

# ---- peers: ECL-BH and Ryoanji beside the gpu schedule ------------------------
cmd_peers() {
  setup peers
  if [ -f .devextra/peers.txz ]; then
    # bench/peers/run_peers.sh writes its table and peers.csv to $OUT/peers
    # The peers are built on the machine: its own libstdc++, not the
    # pack's older one (.devlibs) that the preamble puts first.
    step peers 600 env -u LD_LIBRARY_PATH OUT="$OUT" bash bench/peers/run_peers.sh
    tail -25 "$out/peers.log"
  else
    note "peers: .devextra/peers.txz was not carried (bench/peers/make_peerpack.sh)"
  fi
}

# ---- compare: two builds of a refactor, bit for bit and in time -------------
record() { # INPUT OPTIONS BASE_HASH NEW_HASH: a line of bits.csv
  local verdict=DIFF
  [ "$3" = "$4" ] && verdict=SAME
  echo "$verdict,$1,$2,$3,$4" >>"$out/bits.csv"
}

compare_run() { # a simulation of both builds: its statistics hashed
  local name=$1 c h bin
  shift
  c="$*"
  h=()
  for bin in "$B" "$N"; do
    rm -rf /tmp/tfmm-run
    # shellcheck disable=SC2086 # c holds several words
    LD_LIBRARY_PATH=$bin/src:$LD_LIBRARY_PATH "$bin/apps/tilefmm" run \
      --out /tmp/tfmm-run --device gpu $c >/dev/null 2>&1 ||
      note "  rc=$? $(basename "$bin") run $c"
    # The physical columns (step to com_z), not the wall times.
    h+=("$(cut -d, -f1-16 /tmp/tfmm-run/statistics.csv | sha256sum | cut -c1-16)")
  done
  record "$name" "run $c" "${h[@]}"
}

compare_forces() { # the forces of both builds on one input, hashed
  local in=$1 c h bin
  shift
  for c in "$@"; do
    h=()
    for bin in "$B" "$N"; do
      # shellcheck disable=SC2086 # c holds several words
      LD_LIBRARY_PATH=$bin/src:$LD_LIBRARY_PATH "$bin/apps/tilefmm" forces \
        --in "$in" --out /tmp/tfmm-f.txt --device gpu $c >/dev/null 2>&1 ||
        note "  rc=$? $(basename "$bin") $c"
      h+=("$(grep -v '^#' /tmp/tfmm-f.txt | sha256sum | cut -c1-16)")
    done
    record "$(basename "$in")" "$c" "${h[@]}"
  done
}

cmd_compare() {
  setup compare
  tar -xJf .devextra/pack.txz
  export LD_LIBRARY_PATH=$PWD/.devlibs:$LD_LIBRARY_PATH
  B=$PWD/.basebin N=$PWD/.newbin
  echo "result,input,options,base,new" >"$out/bits.csv"
  "$N/apps/tilefmm" ic plummer --n 262144 --seed 11 --out /tmp/p262k.txt >/dev/null 2>&1
  "$N/apps/tilefmm" ic merger --n 1048576 --seed 12 --out /tmp/m1m.txt >/dev/null 2>&1
  compare_forces /tmp/p262k.txt "--schedule gpu" "--schedule gpu --precision double" \
    "--schedule gpu --accuracy 1e-5 --mac error" "--schedule gpu --method bh" \
    "--schedule gpu --eps 0.01 --softening spline" \
    "--schedule hybrid --tree-device cpu --far-device cpu" \
    "--schedule hybrid --tree-device gpu --far-device gpu" "--method direct" \
    "--method direct --precision double"
  compare_forces /tmp/m1m.txt "--schedule gpu" "--schedule gpu --accuracy 1e-4" \
    "--schedule hybrid --tree-device gpu --far-device cpu"
  compare_run plummer --ic plummer --n 262144 --steps 10
  compare_run hernquist_eta --ic hernquist --n 65536 --eps 0.01 --eta 0.025 \
    --steps 4 --stats-every 1
  compare_run merger_hybrid --ic merger --n 131072 --schedule hybrid --steps 5
  note "bits: $(grep -c ^SAME "$out/bits.csv") same, $(grep -c ^DIFF "$out/bits.csv") differ"
  local rep bin k
  for rep in 1 2; do
    for bin in $([ $rep = 1 ] && echo "$B $N" || echo "$N $B"); do
      k=$(basename "$bin" | tr -d .)_$rep
      step "gpu_$k" 120 env LD_LIBRARY_PATH="$bin/src:$LD_LIBRARY_PATH" \
        "$bin/bench/bench_tree" --method fmm --device gpu --schedule gpu \
        --resident --n 262144,1048576,4194304,16777216 --leaf 64 --theta 0.6 \
        --order 5 --sample 1000 --reps 3 --warmup 1 --time-limit 30 \
        --csv "$out/gpu_$k.csv"
      step "hybrid_$k" 60 env LD_LIBRARY_PATH="$bin/src:$LD_LIBRARY_PATH" \
        "$bin/bench/bench_tree" --method fmm --device gpu --schedule hybrid \
        --n 1048576 --leaf 1024 --accuracy 1e-3 --sample 1000 --reps 2 \
        --warmup 1 --time-limit 20 --csv "$out/hybrid_$k.csv"
    done
  done
  export LD_LIBRARY_PATH=$N/src:$LD_LIBRARY_PATH TFMM_CLI=$N/apps/tilefmm
  local left=$((${COMPARE_SECONDS:-540} - SECONDS))
  [ "$left" -lt 60 ] && left=60
  for t in "$N"/tests/test_* "$N"/tests/cli/test_*; do
    step "$(basename "$t")" "$left" "$t" --jobs 3 &
    while [ "$(jobs -r | wc -l)" -ge 6 ]; do sleep 1; done
  done
  wait
  cp "$out"/bits.csv "$out"/gpu_*.csv "$out"/hybrid_*.csv "$OUT/" 2>/dev/null
}

case $cmd in
tests | schedule | near | direct | tree | upward | active | sim | mpi | \
  calibrate | planner | profile | builds | peers | compare | hostio)
  "cmd_$cmd"
  finish
  ;;
python)
  shift
  part=
  cmd_python "$@"
  finish
  ;;
help | -h | --help) usage ;;
*)
  usage >&2
  exit 2
  ;;
esac
