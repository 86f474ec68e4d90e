# One figure of bench_direct results: GFLOP/s (left axis) against x, one
# curve per index block of `data`, and the FP32-pipe limit as a dashed line
# with the fraction of it on the right axis. plot_direct.sh prepares the
# blocks from the CSVs and calls this with -e, setting:
#   data   file of index blocks; each starts with a line whose first field
#          is the curve's title, then rows "x gflops gflops_low gflops_high"
#   out    PNG to write
#   ttl    figure title;  sub  second title line (may be "")
#   xlab   x-axis label
#   xmin, xmax, ymax   data ranges
#   limit  FP32-pipe limit in GFLOP/s, or 0 when unknown (CPU)
#   ylog   1 for a logarithmic y axis (CPU against GPU), else 0
# Error bars span the GFLOP/s of the slowest and fastest repetition.

set terminal pngcairo size 1100,640 enhanced font "sans,11"
set output out
set datafile separator whitespace

set title (strlen(sub) > 0 ? ttl . "\n{/*0.8 " . sub . "}" : ttl)
set xlabel xlab
set ylabel "GFLOP/s (20 flops per interaction)"
set grid xtics ytics lc rgb "#dddddd"
set key outside right top vertical spacing 1.2 Left reverse

# x: powers of two, labelled 256, 1024, 2048, 4K, ..., 1M
set logscale x 2
set xrange [xmin / 1.2 : xmax * 1.2]
lab(v) = v >= 1048576 ? sprintf("%gM", v / 1048576.) : \
         (v >= 4096 ? sprintf("%gK", v / 1024.) : sprintf("%g", v))
set xtics ()
do for [k = 0:40] {
  v = 2.0**k
  if (v >= xmin / 1.01 && v <= xmax * 1.01) { set xtics add (lab(v) v) }
}
set mxtics 1

top = (limit > ymax ? limit : ymax) * 1.1
if (ylog) {
  set logscale y 10
  set yrange [*:top]
} else {
  set yrange [0:top]
}
# The fraction axis only on a linear y axis (gnuplot links linear axes).
if (limit > 0 && !ylog) {
  set link y2 via 100 * y / limit inverse y * limit / 100
  set y2label "% of the FP32-pipe limit"
  set y2tics 10 format "%.0f%%"
  set ytics nomirror
}

stats data using 1 nooutput
nb = STATS_blocks

plot for [i = 0:nb - 1] data index i using 1:2:3:4 \
       with yerrorlines lw 2 pt 7 ps 0.8 title columnheader(1), \
     (limit > 0 ? limit : NaN) with lines dt 2 lw 1.5 lc rgb "black" \
       title sprintf("FP32-pipe limit, %.0f GFLOP/s", limit)
