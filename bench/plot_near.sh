#!/usr/bin/env bash
# Plots the runs of bench/device.sh near (tree methods, near field on the
# GPU, far field on the CPU) and prints their tables as Markdown.
#
#   bench/plot_near.sh [RESULTS_DIR]     (default bench/results/near)
#
# Reads from RESULTS_DIR:
#   rate.csv                 -> near_rate.png       near-field kernel rate
#                                                   against leaf size
#                            -> near_far_total.png  GPU near span, CPU far
#                                                   field, total, against leaf
#   scale.csv, scale16m.csv  -> scale.png           time per evaluation
#                                                   against N
# and the all-pairs kernel's n_sweep_potential.csv (and n_sweep.csv, for the
# table only) from ALLPAIRS_DIR (default: RESULTS_DIR/../direct). The all-pairs
# reference rate is the one WITH the potential (the near field computes it
# too) at the largest N measured; all-pairs times at an N that was measured
# are the measured medians, beyond that N(N-1) / that rate.
# ECL-BH points (Burtscher's GPU Barnes-Hut, measured by the issue's author
# on the same H100) and the 16M target are constants below.
# Columns are found by name in each CSV's header; '#' lines are skipped;
# rows repeated for one configuration are averaged. Needs gnuplot.
set -euo pipefail

dir=${1:-bench/results/near}
[ -d "$dir" ] || { echo "usage: $0 [RESULTS_DIR]" >&2; exit 2; }
ap=${ALLPAIRS_DIR:-$dir/../direct}
gp="$(cd "$(dirname "$0")" && pwd)/plot_near.gp"
command -v gnuplot >/dev/null || { echo "$0: gnuplot not found" >&2; exit 1; }
if gnuplot -e 'set terminal' 2>&1 | grep -q pngcairo; then term=pngcairo; else term=png; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ECL-BH on the H100 (N seconds) and the target at 16M.
ecl="262144 0.0106
1048576 0.0435
4194304 0.182"
target="16777216 1.0"
p99_max=1e-3   # accuracy the scale figure and table require

# extract "KEYCOLS" "VALCOLS" CSV... : whitespace table, a row per distinct
# key (in order of first appearance), values averaged over its rows (an
# empty field reads NaN). Columns are looked up in each file's header.
extract() {
  awk -F, -v keys="$1" -v vals="$2" '
    FNR == 1 { hdr = 0 }
    /^#/ || /^[ \t]*$/ { next }
    !hdr {
      hdr = 1; delete col
      for (i = 1; i <= NF; i++) col[$i] = i
      nk = split(keys, kc, " "); nv = split(vals, vc, " ")
      for (j = 1; j <= nk; j++) if (!(kc[j] in col)) {
        print "plot_near: " FILENAME ": no column " kc[j] > "/dev/stderr"; exit 1 }
      for (j = 1; j <= nv; j++) if (!(vc[j] in col)) {
        print "plot_near: " FILENAME ": no column " vc[j] > "/dev/stderr"; exit 1 }
      next
    }
    {
      k = ""
      for (j = 1; j <= nk; j++) k = k (j > 1 ? " " : "") ($(col[kc[j]]) + 0)
      if (!(k in cnt)) order[++nr] = k
      cnt[k]++
      for (j = 1; j <= nv; j++) {
        v = $(col[vc[j]])
        if (v == "" || v ~ /nan/) bad[k, j] = 1; else sum[k, j] += v
      }
    }
    END {
      for (i = 1; i <= nr; i++) {
        k = order[i]; line = k
        for (j = 1; j <= nv; j++)
          line = line " " (bad[k, j] ? "NaN" : sprintf("%.9g", sum[k, j] / cnt[k]))
        print line
      }
    }' "${@:3}"
}

need() { [ -s "$1" ] || { echo "plot_near: missing $1" >&2; exit 1; }; }
need "$dir/rate.csv"
need "$ap/n_sweep_potential.csv"

# All-pairs kernel: "n median_s rate" with the potential; reference rate at
# the largest N.
extract "n" "median_s interactions_per_s" "$ap/n_sweep_potential.csv" |
  sort -g >"$tmp/ap_pot.txt"
read -r ap_n ap_rate < <(awk 'END { print $1, $3 }' "$tmp/ap_pot.txt")
ap_nopot=NaN
if [ -s "$ap/n_sweep.csv" ]; then
  ap_nopot=$(extract "n" "interactions_per_s" "$ap/n_sweep.csv" |
    awk -v n="$ap_n" '$1 == n { print $2 }')
fi

# (a), (b): rate.csv at its N.
extract "leaf" "n leaf_mean near_interactions near_kernel_time near_rate near_time far_time overlap t_total t_tree t_lists" \
  "$dir/rate.csv" | sort -g >"$tmp/rate.txt"
rate_n=$(awk 'NR == 1 { print $2 }' "$tmp/rate.txt")

gnuplot -e "term='$term'; fig='rate'; out='$dir/near_rate.png'; d='$tmp/rate.txt';
  ap=$ap_rate; apn=$ap_n; n=$rate_n" "$gp"
echo "plot_near: wrote $dir/near_rate.png" >&2
gnuplot -e "term='$term'; fig='balance'; out='$dir/near_far_total.png'; d='$tmp/rate.txt';
  n=$rate_n" "$gp"
echo "plot_near: wrote $dir/near_far_total.png" >&2

# (c): fastest configuration meeting err_p99 <= p99_max, per N.
scale_files=()
for f in scale.csv scale16m.csv; do [ -s "$dir/$f" ] && scale_files+=("$dir/$f"); done
if [ ${#scale_files[@]} -gt 0 ]; then
  extract "n leaf order" "t_total t_tree t_lists near_time near_kernel_time far_time overlap err_p99" \
    "${scale_files[@]}" >"$tmp/scale_all.txt"
  awk -v emax="$p99_max" '
    $11 != "NaN" && $11 + 0 <= emax + 0 && (!($1 in best) || $4 + 0 < t[$1]) {
      best[$1] = $0; t[$1] = $4 + 0 }
    END { for (n in best) print best[n] }' "$tmp/scale_all.txt" | sort -g >"$tmp/best.txt"
  # all-pairs at each N of the scale runs: measured (flag 1) or N(N-1)/rate (0)
  awk -v rate="$ap_rate" 'NR == FNR { m[$1] = $2; next }
    { n = $1; if (n in m) print n, m[n], 1; else print n, n * (n - 1) / rate, 0 }' \
    "$tmp/ap_pot.txt" "$tmp/best.txt" >"$tmp/ap_at.txt"
  awk '$3 == 1' "$tmp/ap_at.txt" >"$tmp/ap_meas.txt"
  awk '$3 == 0' "$tmp/ap_at.txt" >"$tmp/ap_extr.txt"
  printf '%s\n' "$ecl" >"$tmp/ecl.txt"
  printf '%s\n' "$target" >"$tmp/target.txt"
  gnuplot -e "term='$term'; fig='scale'; out='$dir/scale.png'; d='$tmp/best.txt';
    dap='$tmp/ap_at.txt'; dapm='$tmp/ap_meas.txt'; dape='$tmp/ap_extr.txt';
    decl='$tmp/ecl.txt'; dtg='$tmp/target.txt'; ap=$ap_rate; apn=$ap_n;
    emax='$p99_max'" "$gp"
  echo "plot_near: wrote $dir/scale.png" >&2
fi

# Tables (Markdown) on stdout.
echo "All-pairs reference: $ap_rate interactions/s with the potential, $ap_nopot without (N = $ap_n)."
echo
echo "### Near-field kernel rate, N = $rate_n (rate.csv)"
echo
echo "| leaf L | mean bodies/leaf | near interactions/body | kernel ms | rate (interactions/s) | % of all-pairs with potential | % of all-pairs without |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
awk -v ap="$ap_rate" -v apn="$ap_nopot" '{
  printf "| %d | %.1f | %.0f | %.2f | %.3g | %.0f %% | %s |\n", $1, $3, $4 / $2, \
    $5 * 1e3, $6, 100 * $6 / ap, (apn == "NaN" ? "" : sprintf("%.0f %%", 100 * $6 / apn)) }' \
  "$tmp/rate.txt"
echo
echo "### Near / far balance, N = $rate_n (rate.csv, order 4)"
echo
echo "| leaf L | total ms | tree ms | lists ms | GPU near span ms | CPU far ms | overlap ms |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
awk '{ printf "| %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", $1, $10 * 1e3, \
  $11 * 1e3, $12 * 1e3, $7 * 1e3, $8 * 1e3, $9 * 1e3 }' "$tmp/rate.txt"
if [ -s "${tmp}/best.txt" ]; then
  echo
  echo "### Fastest configuration with err_p99 <= $p99_max, per N (scale*.csv)"
  echo
  echo "| N | leaf | order | total ms | tree ms | lists ms | GPU near span ms | CPU far ms | overlap ms | err_p99 | ECL-BH ms | total / ECL-BH | all-pairs ms |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  awk 'FILENAME == ARGV[1] { e[$1] = $2; next }
       FILENAME == ARGV[2] { a[$1] = $2; am[$1] = $3; next }
    { n = $1
      el = (n in e) ? sprintf("%.1f", e[n] * 1e3) : "–"
      r = (n in e) ? sprintf("%.1f×", $4 / e[n]) : "–"
      printf "| %d | %d | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2g | %s | %s | %.0f%s |\n", \
        n, $2, $3, $4 * 1e3, $5 * 1e3, $6 * 1e3, $7 * 1e3, $9 * 1e3, $10 * 1e3, $11, \
        el, r, a[n] * 1e3, (am[n] ? " (measured)" : " (extrapolated)") }' \
    "$tmp/ecl.txt" "$tmp/ap_at.txt" "$tmp/best.txt"
fi
