#!/usr/bin/env bash
# The relative energy error of a run against time, from its statistics.csv:
#   bench/plot_energy.sh DIR/statistics.csv OUT.png [TITLE]
# Needs gnuplot (scripts/setup.sh installs gnuplot-nox).
set -euo pipefail
csv=$1 png=$2 title=${3:-"tilefmm run"}
gnuplot <<GP
set terminal pngcairo size 900,500 font ",11"
set output "$png"
set datafile separator ","
set title "$title"
set xlabel "time (N-body units)"
set ylabel "(E - E_0) / |E_0|"
set grid
set key off
set format y "%.1e"
plot "$csv" every ::1 using 2:6 with lines lw 2 lc rgb "#b5367a"
GP
echo "wrote $png"
