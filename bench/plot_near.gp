# Figures of bench/plot_near.sh, which prepares whitespace tables and calls
# this with -e:
#   term  pngcairo or png;  out  the PNG;  fig  which figure:
#   "rate"     d: rows "leaf n leaf_mean near_interactions near_kernel_time
#              near_rate ..."; ap: all-pairs rate with the potential at N =
#              apn; n: the runs' N
#   "balance"  d as for "rate" (near_time col 7, far_time 8, t_total 10)
#   "scale"    d: rows "n leaf order t_total ..."; dapm, dape: all-pairs
#              "n seconds flag", measured and extrapolated (dap: both);
#              decl: ECL-BH "n seconds"; dtg: the target "n seconds";
#              emax: the err_p99 bound (text)

if (term eq "pngcairo") {
  set terminal pngcairo size 900, 600 enhanced font "sans,11"
} else {
  set terminal png size 900, 600 enhanced
}
set output out
set datafile separator whitespace
set datafile missing "NaN"
set grid xtics ytics mxtics mytics lc rgb "#dddddd", lc rgb "#f0f0f0"
set key box opaque samplen 2

if (fig eq "rate") {
  set title sprintf("Near-field kernel rate against leaf size, N = %d\n{/*0.8 GPU kernel only (near\\_kernel\\_time); Plummer sphere, theta = 0.5, p = 4; with the potential}", n)
  set logscale x 2
  set format x "%g"
  set xlabel "leaf size L (bodies at most)"
  set ylabel "interactions per second"
  set format y "%.2g"
  set yrange [0:1.15 * ap]
  set ytics nomirror
  set link y2 via 100 * y / ap inverse y * ap / 100
  set y2tics 10 format "%g %%"
  set y2label "% of the all-pairs rate with potential"
  set key bottom right
  plot d using 1:6 with linespoints lw 2 pt 7 ps 1.1 lc rgb "#1f77b4" \
         title "near-field kernel", \
       ap with lines lw 2 dt 2 lc rgb "black" \
         title sprintf("all-pairs kernel, with potential, N = %d: %.3g/s", apn, ap), \
       0.6 * ap with lines lw 2 dt 3 lc rgb "#d62728" \
         title sprintf("60 %% of it (target for L >= 64): %.3g/s", 0.6 * ap)
}

if (fig eq "balance") {
  set title sprintf("GPU near field against CPU far field, N = %d\n{/*0.8 median seconds per evaluation; p = 4, theta = 0.5; near = upload + kernel + download, far on 16 cores; they run concurrently}", n)
  set logscale x 2
  set logscale y 10
  set format x "%g"
  set format y "10^{%L}"
  set xlabel "leaf size L (bodies at most)"
  set ylabel "seconds"
  set key top center
  plot d using 1:7 with linespoints lw 2 pt 7 ps 1.1 lc rgb "#2ca02c" \
         title "GPU near field (near\\_time)", \
       d using 1:8 with linespoints lw 2 pt 5 ps 1.1 lc rgb "#ff7f0e" \
         title "CPU far field (far\\_time)", \
       d using 1:10 with linespoints lw 2.5 pt 9 ps 1.3 lc rgb "black" \
         title "total per evaluation (t\\_total)"
}

if (fig eq "scale") {
  set title sprintf("Time per evaluation against N\n{/*0.8 tilefmm: fastest measured leaf/order with err\\_p99 <= %s (label: L, p); ECL-BH and all-pairs on the same H100}", emax)
  set logscale x 2
  set logscale y 10
  set format x "2^{%L}"
  set format y "10^{%L}"
  set xrange [2**17:2**25]
  set xlabel "N (bodies)"
  set ylabel "seconds per evaluation"
  set key top left
  plot dap using 1:2 with lines lw 1.5 dt 2 lc rgb "#7f7f7f" notitle, \
       dapm using 1:2 with points pt 7 ps 1.3 lc rgb "#7f7f7f" \
         title "all-pairs GPU kernel, with potential (measured)", \
       dape using 1:2 with points pt 6 ps 1.3 lc rgb "#7f7f7f" \
         title sprintf("all-pairs, extrapolated N(N-1) / %.3g", ap), \
       d using 1:4 with linespoints lw 2.5 pt 7 ps 1.3 lc rgb "#1f77b4" \
         title "tilefmm FMM, GPU near + CPU far", \
       d using 1:4:(sprintf("L=%d, p=%d", $2, $3)) with labels offset 0, 1.2 \
         font ",9" tc rgb "#1f77b4" notitle, \
       decl using 1:2 with linespoints lw 2 pt 5 ps 1.2 lc rgb "#d62728" \
         title "ECL-BH (GPU Barnes-Hut, theta = 0.5)", \
       dtg using 1:2 with points pt 3 ps 2.5 lw 2 lc rgb "black" \
         title "target: 1 s at 16M"
}
