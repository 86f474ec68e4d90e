# One figure of bench_tree results: np panels side by side (two a row).
# plot_tree.sh prepares one data file a panel and calls this with -e:
#   out        PNG to write
#   ttl, sub   figure title and second line (sub may be "")
#   np         panels; for k = 1..np:
#   d<k>       the panel's data file;  t<k>  its title;  y<k>  its y label
#   kind       "stages": d<k> is a table with a header line "x name1 name2
#              ..." and nc columns in all, drawn as stacked bars (one bar
#              per row, labelled by x; one colour per named column);
#              "lines": d<k> holds index blocks, each starting with a line
#              whose first field is the curve's title; drawn as lines with
#              points, x from column xc and y from column yc, and, when
#              dashed is 1, a dashed line of the same colour from column yc2
#   nc         columns of a "stages" table
#   xc, yc, yc2, dashed   columns of a "lines" panel
#   xlab       x label;  xlog  0, 2 or 10 (log base);  ylog  0 or 1
#   key        legend placement, e.g. "top left"

ncols = np > 1 ? 2 : 1
nrows = (np + ncols - 1) / ncols
set terminal pngcairo size 680 * ncols, 460 * nrows + 70 enhanced font "sans,10"
set output out
set datafile separator whitespace
set grid xtics ytics lc rgb "#dddddd"

big = strlen(sub) > 0 ? ttl . "\n{/*0.85 " . sub . "}" : ttl
set multiplot layout nrows, ncols title big font "sans,12"

do for [k = 1:np] {
  f = value(sprintf("d%d", k))
  set title value(sprintf("t%d", k))
  set ylabel value(sprintf("y%d", k))
  set xlabel xlab
  eval "set key " . key . " box opaque samplen 2 font 'sans,9'"
  if (kind eq "stages") {
    unset logscale
    set style data histograms
    set style histogram rowstacked
    set style fill solid 0.85 border rgb "#444444"
    set boxwidth 0.7
    set yrange [0:*]
    set xtics nomirror
    plot for [i = 2:nc] f using i:xtic(1) title columnheader(i)
  } else {
    set style data linespoints
    unset logscale
    set autoscale
    if (xlog > 0) { set logscale x xlog; set format x "%g" }
    if (ylog) { set logscale y 10; set format y "10^{%L}" } else { set format y "%g" }
    stats f using 1 nooutput
    nb = STATS_blocks
    if (dashed) {
      plot for [i = 0:nb - 1] f index i using xc:yc lw 2 pt 7 ps 0.8 \
             lc i + 1 title columnheader(1), \
           for [i = 0:nb - 1] f index i using xc:yc2 lw 1.5 dt 2 pt 6 \
             ps 0.7 lc i + 1 notitle
    } else {
      plot for [i = 0:nb - 1] f index i using xc:yc lw 2 pt 7 ps 0.8 \
             lc i + 1 title columnheader(1)
    }
  }
}
unset multiplot
