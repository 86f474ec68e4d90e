#!/usr/bin/env bash
# The accuracy commands of bench/device.sh (sourced by it; its setup, step,
# note and has are theirs): hostio (host arrays at 1M), calibrate (the
# accuracy table's GPU rows) and planner (the measured error and the
# settings chosen from it). Usage: bench/device.sh's header.
# out, b, here, sum and the like are device.sh's (its setup and preamble).
# shellcheck disable=SC2154
# ---- hostio: host arrays in and out at 1M (issue 28) -------------------------
cmd_hostio() {
  setup hostio
  local n=${HOSTIO_N:-1048576} r
  step hostio_ic 120 "$TFMM_CLI" ic plummer --n "$n" --seed 1 \
    --out "$out/f.hdf5"
  for r in 1 2 3; do
    step "hostio_forces_$r" 120 "$TFMM_CLI" forces --in "$out/f.hdf5" \
      --out "$out/forces_$r.txt"
    note "  forces $r: $(grep -aE 'solver total|^plan|measured' \
      "$out/hostio_forces_$r.log" | tr '\n' ' ' | cut -c1-200)"
  done
  rm -f "$out"/forces_*.txt "$out/f.hdf5"
  step hostio_python 300 env TILEFMM_LIBRARY="$b/src/libtilefmm.so" \
    PYTHONPATH="$PWD/python:$PWD/.devpy${PYTHONPATH:+:$PYTHONPATH}" \
    python3 bench/host_transfer/bench_python.py main "$n" 12
  cp "$out/hostio_python.log" "$OUT/python_forces.csv"
}

# ---- calibrate: the accuracy table on the GPU, time at its choices ----------------
cmd_calibrate() {
  part=${part:-gpu}
  setup calibrate
  local dev=${CAL_DEVICE:-gpu}
  local common=(--device "$dev" --reps 2 --warmup 1 --sample 1000
    --seed 20261123)
  if has gpu; then
    # calibrate_accuracy on the GPU (leaf 64, the default; fmm, geometric), the theta
    # and order the rule of src/accuracy.c takes from its rows (the
    # cheapest whose error times MARGIN = 3 is within the target, theta
    # <= 0.6), then bench_tree at those settings beside fixed ones.
    step calibrate "${CAL_LIMIT:-300}" "$b/bench/calibrate_accuracy" \
      --device "$dev" --leaf "${CAL_LEAF:-64}" --n "${CAL_N:-50000}" --sample 1000 \
      --method fmm --theta "${CAL_THETA:-0.4,0.5,0.6,0.7,0.8}" \
      --order-max "${CAL_PMAX:-10}" \
      --threads 0 --cost-n "${CAL_COST_N:-1048576}" --reps "${CAL_REPS:-7}" \
      --csv "$out/gpu_calibration.csv" --table "$out/gpu_table.h"
    python3 "$here/device_tables.py" choice "$out/gpu_table.h" \
      >"$out/choice.txt"
    cat "$out/choice.txt"
    local n leaves tol theta p soft eps
    # CAL_BENCH=0: the table alone (the planner measures; these runs time
    # the unmeasured rule's choices).
    [ "${CAL_BENCH:-1}" = 0 ] && return 0
    for n in ${BENCH_N:-262144 1048576 4194304}; do
      leaves=${BENCH_LEAVES:-512,1024,2048}
      step "fixed_$n" 120 "$BT" --n "$n" --leaf "$leaves" --theta 0.5 \
        --order 4,6,8 "${common[@]}" --csv "$out/accuracy.csv"
      while read -r tol theta p _ _; do
        case $tol in 1e-3 | 0.001 | 0.0001) ;; *) continue ;; esac
        for soft in none spline plummer; do
          eps=0.01
          [ "$soft" = none ] && eps=0 && soft=plummer
          step "chosen_${n}_${tol}_${soft}_$eps" 120 "$BT" --n "$n" \
            --leaf "$leaves" --theta "$theta" --order "$p" --accuracy "$tol" \
            --eps "$eps" --softening "$soft" "${common[@]}" \
            --csv "$out/accuracy.csv"
        done
      done <"$out/choice.txt"
    done
    python3 "$here/device_tables.py" best "$out/accuracy.csv" \
      >"$out/table.txt"
  fi
  if has time; then
    # Time per evaluation at the targets (theta and order from the
    # library's table), geometric and error criteria, beside fixed
    # settings; TIME_N and TIME_LEAVES override the sizes and leaves.
    local n lv mac
    for n in ${TIME_N:-262144 1048576 4194304}; do
      lv=${TIME_LEAVES:-512,1024,2048}
      for mac in geometric error; do
        step "t_${n}_1e-3_$mac" 150 "$BT" --n "$n" --leaf "$lv" --accuracy 1e-3 \
          --mac "$mac" "${common[@]}" --csv "$out/time.csv"
        step "t_${n}_1e-3_${mac}_spline" 150 "$BT" --n "$n" --leaf "$lv" \
          --accuracy 1e-3 --mac "$mac" --eps 0.01 --softening spline \
          "${common[@]}" --csv "$out/time.csv"
        step "t_${n}_1e-3_${mac}_plummer" 150 "$BT" --n "$n" --leaf "$lv" \
          --accuracy 1e-3 --mac "$mac" --eps 0.01 --softening plummer \
          "${common[@]}" --csv "$out/time.csv"
        step "t_${n}_1e-4_$mac" 150 "$BT" --n "$n" --leaf "$lv" --accuracy 1e-4 \
          --mac "$mac" "${common[@]}" --csv "$out/time.csv"
      done
      step "t_${n}_fixed" 150 "$BT" --n "$n" --leaf "$lv" --theta 0.5 \
        --order 4,6 "${common[@]}" --csv "$out/time.csv"
    done
    python3 "$here/device_tables.py" best "$out/time.csv" >"$out/table.txt"
  fi
  cat "$out/table.txt" 2>/dev/null
}

# ---- planner: the measured error and the settings chosen from it ------------
cmd_planner() {
  part=${part:-all}
  setup planner
  local t=$b/tests bp=$b/bench/bench_planner
  if has tests; then
    step test_measure_gpu 300 "$t/test_measure_gpu" --jobs 2 &
    step test_accuracy_gpu 400 "$t/test_accuracy_gpu" --jobs 4 &
    step test_schedule_gpu 300 "$t/test_schedule_gpu" --jobs 1 &
    step test_active_gpu 300 "$t/test_active_gpu" --jobs 2 &
    step test_simulation_gpu 400 "$t/test_simulation_gpu" --jobs 2 &
    step test_sim_gpu 300 "$t/test_sim_gpu" --jobs 2 &
    step test_solver 300 "$t/test_solver" --jobs 1 &
    step test_device_api 300 "$t/test_device_api" --jobs 1 &
    step test_near_precision 300 "$t/test_near_precision" --jobs 1 &
    step test_near_gpu 480 "$t/test_near_gpu" --jobs 6 &
    step test_host_memory 300 "$t/test_host_memory" --jobs 1 &
    step test_soft_convergence 300 "$t/test_soft_convergence" --jobs 1 &
    wait
    sanitize memcheck_measure 300 memcheck "$t/test_measure_gpu" \
      'measure/every_body*'
  fi
  # PLANNER_INPUTS: held_out_inputs.h's indices (default all five);
  # PLANNER_CALLS, PLANNER_REPS: evaluations a run and runs a point.
  local ins=(--calls "${PLANNER_CALLS:-32}" --reps "${PLANNER_REPS:-5}")
  [ -n "${PLANNER_INPUTS:-}" ] && ins+=(--inputs "$PLANNER_INPUTS")
  if has bench; then
    step planner_bench "${PLANNER_LIMIT:-420}" "$bp" \
      --n "${PLANNER_N:-262144,1048576,4194304}" \
      --tol "${PLANNER_TOL:-1e-3}" --truth 4000 "${ins[@]}" \
      --csv "$out/planner.csv"
    [ "${PLANNER_TOLS:-1}" = 1 ] && step planner_tols 300 "$bp" --n 1048576 \
      --tol 1e-2,1e-4,1e-5 --truth 4000 "${ins[@]}" --csv "$out/planner.csv"
    step planner_16m 300 "$bp" --n 16777216 --inputs 0 --tol 1e-3 \
      --truth 1000 --calls 20 --reps 3 --csv "$out/planner.csv"
  fi
  if [ "$part" = held ]; then
    # Issue 28's remaining figures (not part of all); HELD_STEPS picks
    # among: stages (bench_tree at the planner's settings), 16m, tols
    # (every input at 1M at 1e-2, 1e-4, 1e-5), pile5 (the line + pile at
    # 1e-5 alone), soft (Plummer eps 1e-3, 1e-2 and the spline beside eps
    # 0: their near pairs say what opening cells for the softening costs),
    # raise (the clusters at Plummer eps 0.01, lists past 2^31 entries at
    # leaf 64), pile3 (the line + pile at eps 1e-3, TOL 1e-3, two seeds,
    # 4,000 bodies of truth), schedule (test_schedule_gpu), watch (the
    # error sample's watch of the smallest |a|: bench_watch, the sample's
    # cost at 1M and 4M, memcheck of its tests), memcheck (the fast sums),
    # softgpu (the softened far field on the GPU beside Newton's with its
    # cells opened: Plummer eps 1e-3 and 1e-2 at 1M, both kernels).
    # No default: a call meant for one step must not run them all (one
    # did, and took most of a session's device time).
    if [ -z "${HELD_STEPS:-}" ]; then
      note "planner held: HELD_STEPS names the steps (e.g. \"stages 16m tols soft memcheck\")"
      return 0
    fi
    local steps=" $HELD_STEPS "
    local n tp e k
    if [[ $steps == *" stages "* ]]; then
      for tp in 262144:0.7:7 1048576:0.8:7 4194304:0.7:6; do
        n=${tp%%:*}
        step "stages_$n" 25 "$b/bench/bench_tree" --n "$n" --method fmm \
          --device gpu --resident --leaf 64 \
          --theta "$(echo "$tp" | cut -d: -f2)" --order "${tp##*:}" \
          --reps 5 --warmup 1 --sample 300 --csv "$out/stages.csv"
      done
    fi
    [[ $steps == *" schedule "* ]] &&
      step test_schedule_gpu 90 "$t/test_schedule_gpu" --jobs 1
    [[ $steps == *" 16m "* ]] &&
      step held_16m "${HELD_16M_LIMIT:-80}" "$bp" --n 16777216 --inputs 0 \
        --tol 1e-3 --truth 1000 --calls "${HELD_16M_CALLS:-20}" \
        --reps "${HELD_16M_REPS:-2}" --csv "$out/held.csv"
    [[ $steps == *" tols "* ]] &&
      step held_tols "${HELD_LIMIT:-170}" "$bp" --n 1048576 \
        --tol 1e-2,1e-4,1e-5 --truth 2000 --calls 16 --reps 2 \
        --csv "$out/held.csv"
    if [[ $steps == *" pile3 "* ]]; then # the line + pile at eps 1e-3, 1e-3
      for k in 101 202; do
        step "held_pile3_$k" 60 "$bp" --n 1048576 --inputs 4 --tol 1e-3 \
          --eps 0.001 --seed "$k" --truth 4000 --calls 6 --reps 1 \
          --csv "$out/held.csv"
      done
    fi
    [[ $steps == *" raise "* ]] &&
      step held_raise 90 "$bp" --n 1048576 --inputs 1 --tol 1e-3 \
        --eps 0.01 --truth 1000 --calls 4 --reps 1 --csv "$out/held.csv"
    [[ $steps == *" pile5 "* ]] &&
      step held_pile5 120 "$bp" --n 1048576 --inputs 4 --tol 1e-5 \
        --truth 1000 --calls 6 --reps 1 --csv "$out/held.csv"
    if [[ $steps == *" soft "* ]]; then
      step held_soft_0 30 "$bp" --n 1048576 --inputs 0,1 --tol 1e-3,1e-4 \
        --eps 0 --truth 1000 --calls 8 --reps 1 --csv "$out/held.csv"
      for e in 0.001:plummer 0.01:plummer 0.01:spline; do
        k=${e#*:}
        e=${e%:*}
        step "held_soft_${e}_$k" 60 "$bp" --n 1048576 --inputs 0,1,4 \
          --tol 1e-3,1e-4 --eps "$e" --kernel "$k" --truth 1000 --calls 8 \
          --reps 1 --csv "$out/held.csv"
      done
    fi
    if [[ $steps == *" softgpu "* ]]; then
      local fk tols
      for e in 0.001 0.01; do
        for fk in softened newton; do
          tols=1e-3,1e-4
          # Newton's at eps 0.01 opens 1e11 pairs at 1e-3; at 1e-4 its
          # lists pass the cap (bench/results/planner).
          [ "$e:$fk" = 0.01:newton ] && tols=1e-3
          step "held_softgpu_${e}_$fk" "${HELD_LIMIT:-100}" "$bp" \
            --n "${HELD_SOFT_N:-1048576}" --inputs 0,4,1 --tol "$tols" \
            --eps "$e" --far-kernel "$fk" --truth 1000 --calls 6 --reps 1 \
            --csv "$out/held.csv"
        done
      done
    fi
    if [[ $steps == *" watch "* ]]; then # the watch's third part
      step watch_bench 120 "$b/bench/bench_watch" --device gpu --draws 10
      step watch_cost 150 "$bp" --n 1048576,4194304 --inputs 0,1 --tol 1e-3 \
        --truth 1000 --calls 16 --reps 3 --csv "$out/held.csv"
      sanitize memcheck_watch 120 memcheck "$t/test_measure_fast_gpu" \
        'measure_fast_gpu/the_device_draws_the_hosts_sample'
      sanitize memcheck_watch_measure 120 memcheck "$t/test_measure_gpu" \
        'measure/watch_sees_a_cancellation_point'
    fi
    [[ $steps == *" memcheck "* ]] &&
      sanitize memcheck_fast 80 memcheck "$t/test_measure_fast_gpu" ''
  fi
  if has grid; then
    # GRID_N, GRID_THETA, GRID_ORDER: the grid's points.
    step planner_grid "${GRID_LIMIT:-420}" "$bp" --n "${GRID_N:-1048576}" \
      --tol 1e-3 --truth 4000 "${ins[@]}" \
      --grid-theta "${GRID_THETA:-0.4,0.5,0.6,0.7,0.8}" \
      --grid-order "${GRID_ORDER:-3,4,5,6,7,8}" --csv "$out/grid.csv"
  fi
  grep -ahE "planner:|sample at|grid:" "$out"/planner_*.log "$out"/held_*.log 2>/dev/null | cut -c1-220 \
    >"$out/table.txt"
  cat "$out/table.txt"
}
