#!/usr/bin/env bash
# Turns the CSVs written by sweep_tree.sh into PNGs beside them.
#
#   bench/plot_tree.sh CSV_DIR
#
# Reads whichever of grid.csv, n4m.csv, tree_build.csv and bh.csv exist in
# CSV_DIR (and any other bench_tree CSV named *.csv there is ignored) and
# writes:
#   stages_vs_leaf_n<N>.png  FMM: median seconds per phase, stacked, against
#                            leaf size; a panel per order (grid, n4m)
#   time_vs_leaf.png         FMM: total seconds against leaf size, a curve
#                            per order; a panel per N (log-log)
#   error_vs_order.png       FMM: relative acceleration error against order,
#                            99th percentile (solid) and median (dashed), a
#                            curve per leaf; a panel per N (log y)
#   time_vs_error.png        FMM: seconds against the 99th-percentile error,
#                            a curve per leaf through the orders; per N
#   bh_vs_fmm.png            error and time against order for Barnes-Hut
#                            (bh.csv) and the FMM at the same N and leaf
#   tree_build.png           the tree's stages (keys, sort, permute, build,
#                            moments), stacked, against leaf; a panel per N
# Rows repeated for one configuration (reruns, or the N = 256K rows that
# n4m.csv shares with grid.csv) are averaged. "other" is prepare + upload +
# download + finish. Needs gnuplot with the pngcairo terminal.
set -euo pipefail

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
  echo "usage: $0 CSV_DIR" >&2
  exit 2
fi
dir=$1
gp="$(cd "$(dirname "$0")" && pwd)/plot_tree.gp"
command -v gnuplot >/dev/null || { echo "$0: gnuplot not found" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# aggregate CSV... : one whitespace-separated table, a header line then a
# row per (method, n, theta, order, leaf), columns averaged over its rows
# (errors over the rows that have them; NaN when none do).
aggregate() {
  awk -F, '
    FNR == 1 { hdr = 0 }
    /^#/ || /^[ \t]*$/ { next }
    !hdr {
      hdr = 1
      delete col
      for (i = 1; i <= NF; i++) col[$i] = i
      split("method n theta order leaf t_prepare t_upload t_download " \
            "t_finish t_tree t_lists t_upward t_far t_downward t_near " \
            "t_total tree_keys tree_sort tree_permute tree_build " \
            "tree_moments err_median err_p99 err_max pot_err_p99", need, " ")
      for (k in need) if (!(need[k] in col)) {
        print "plot_tree: " FILENAME ": no column " need[k] > "/dev/stderr"
        exit 1
      }
      next
    }
    {
      key = $(col["method"]) " " $(col["n"]) " " ($(col["theta"]) + 0) " " \
            $(col["order"]) " " $(col["leaf"])
      if (!(key in cnt)) keys[++nk] = key
      cnt[key]++
      v["tree"] = $(col["t_tree"]); v["lists"] = $(col["t_lists"])
      v["upward"] = $(col["t_upward"]); v["far"] = $(col["t_far"])
      v["downward"] = $(col["t_downward"]); v["near"] = $(col["t_near"])
      v["other"] = $(col["t_prepare"]) + $(col["t_upload"]) + \
                   $(col["t_download"]) + $(col["t_finish"])
      v["total"] = $(col["t_total"])
      v["keys"] = $(col["tree_keys"]); v["sort"] = $(col["tree_sort"])
      v["permute"] = $(col["tree_permute"]); v["build"] = $(col["tree_build"])
      v["moments"] = $(col["tree_moments"])
      for (c in v) sum[key, c] += v[c]
      if ($(col["err_p99"]) != "") {
        ecnt[key]++
        esum[key, "err_median"] += $(col["err_median"])
        esum[key, "err_p99"] += $(col["err_p99"])
        esum[key, "err_max"] += $(col["err_max"])
        esum[key, "pot_p99"] += $(col["pot_err_p99"])
      }
    }
    END {
      nt = split("tree lists upward far downward near other total keys " \
                 "sort permute build moments", tc, " ")
      ne = split("err_median err_p99 err_max pot_p99", ec, " ")
      printf "method n theta order leaf"
      for (j = 1; j <= nt; j++) printf " %s", tc[j]
      for (j = 1; j <= ne; j++) printf " %s", ec[j]
      printf "\n"
      for (i = 1; i <= nk; i++) {
        key = keys[i]
        printf "%s", key
        for (j = 1; j <= nt; j++) printf " %.6g", sum[key, tc[j]] / cnt[key]
        for (j = 1; j <= ne; j++)
          if (ecnt[key]) printf " %.6g", esum[key, ec[j]] / ecnt[key]
          else printf " NaN"
        printf "\n"
      }
    }' "$@"
}

# pick TABLE "col=value ..." : the header and the rows matching every pair.
pick() {
  awk -v spec="$2" '
    NR == 1 {
      for (i = 1; i <= NF; i++) c[$i] = i
      nf = split(spec, f, " ")
      for (k = 1; k <= nf; k++) { split(f[k], kv, "="); fc[k] = kv[1]; fv[k] = kv[2] }
      print; next
    }
    function same(a, b) {   # equal as text, or as numbers when both are
      if (a == b) return 1
      return a ~ /^[-+0-9.eE]+$/ && b ~ /^[-+0-9.eE]+$/ && a + 0 == b + 0
    }
    {
      for (k = 1; k <= nf; k++) if (!same($(c[fc[k]]), fv[k])) next
      print
    }' "$1"
}

# values TABLE COL : its distinct values, in numeric order.
values() {
  awk -v col="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    !seen[$(c[col])]++ { print $(c[col]) }' "$1" | sort -g
}

# series TABLE OUT SCOL FMT XCOL YCOL... : OUT as gnuplot index blocks, one
# per value of SCOL (numeric order), titled sprintf(FMT, value), each row
# "XCOL YCOL..." in order of XCOL; rows whose first YCOL is NaN are left
# out. Prints the number of blocks.
series() {
  local table=$1 out=$2 scol=$3 fmt=$4 xcol=$5
  shift 5
  awk -v out="$out" -v scol="$scol" -v fmt="$fmt" -v xcol="$xcol" \
      -v ycols="$*" '
    function before(a, b) { return (a + 0 == a && b + 0 == b) ? a + 0 < b + 0 : a < b }
    function isort(a, n,   i, j, t) {
      for (i = 2; i <= n; i++) {
        t = a[i]
        for (j = i - 1; j >= 1 && before(t, a[j]); j--) a[j + 1] = a[j]
        a[j + 1] = t
      }
    }
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; ny = split(ycols, yc, " "); next }
    {
      y1 = $(c[yc[1]])
      if (y1 == "NaN" || y1 == "nan") next
      s = $(c[scol]); x = $(c[xcol])
      if (!(s in ns)) sv[++nsv] = s
      line = x
      for (k = 1; k <= ny; k++) line = line " " $(c[yc[k]])
      xs[s, ++ns[s]] = x; ls[s, x] = line
    }
    END {
      isort(sv, nsv)
      for (i = 1; i <= nsv; i++) {
        s = sv[i]
        delete xa
        for (j = 1; j <= ns[s]; j++) xa[j] = xs[s, j]
        isort(xa, ns[s])
        if (i > 1) printf "\n\n" > out
        printf "\"%s\" x", sprintf(fmt, s) > out
        for (k = 1; k <= ny; k++) printf " %s", yc[k] > out
        printf "\n" > out
        for (j = 1; j <= ns[s]; j++) print ls[s, xa[j]] > out
      }
      print nsv + 0
    }' "$table"
}

# table TABLE OUT XCOL COL... : OUT with a header "XCOL COL..." and a row
# per value of XCOL, in numeric order. Prints the number of rows.
table() {
  local src=$1 out=$2 xcol=$3
  shift 3
  awk -v xcol="$xcol" -v cols="$*" '
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; n = split(cols, cc, " ")
              printf "%s", xcol; for (k = 1; k <= n; k++) printf " %s", cc[k]
              printf "\n"; next }
    { printf "%s", $(c[xcol]); for (k = 1; k <= n; k++) printf " %s", $(c[cc[k]])
      printf "\n" }' "$src" | { read -r head; echo "$head"; sort -g; } >"$out"
  echo $(($(wc -l <"$out") - 1))
}

# figure PNG TITLE SUB KIND XLAB XLOG YLOG KEY EXTRA PANELS... : one PNG.
# Each PANEL is "file|title|ylabel"; EXTRA is more gnuplot -e settings.
# Texts are gnuplot enhanced text ("_{ref}" is a subscript) and must not
# contain single quotes.
figure() {
  local png=$1 ttl=$2 sub=$3 kind=$4 xlab=$5 xlog=$6 ylog=$7 key=$8 extra=$9
  shift 9
  local set="out='$png'; ttl='$ttl'; sub='$sub'; kind='$kind';"
  set+=" xlab='$xlab'; xlog=$xlog; ylog=$ylog; key='$key'; np=$#;"
  set+=" nc=0; xc=1; yc=2; yc2=3; dashed=0; $extra"
  local k=0 p f t y
  for p in "$@"; do
    k=$((k + 1))
    IFS='|' read -r f t y <<<"$p"
    set+=" d$k='$f'; t$k='$t'; y$k='$y';"
  done
  gnuplot -e "$set" "$gp"
  echo "plot_tree: wrote $png"
}

have() { [ -s "$dir/$1" ]; }
fmm_files=()
have grid.csv && fmm_files+=("$dir/grid.csv")
have n4m.csv && fmm_files+=("$dir/n4m.csv")
made=0
agg="$tmp/agg.txt"

if [ ${#fmm_files[@]} -gt 0 ]; then
  aggregate "${fmm_files[@]}" >"$agg"
  pick "$agg" "method=fmm" >"$tmp/fmm.txt"
  ns=$(values "$tmp/fmm.txt" n)
  theta=$(values "$tmp/fmm.txt" theta | paste -sd, -)
  stage_cols="tree lists upward far downward near other"

  # Stages against leaf size, one PNG per N, a panel per order.
  for n in $ns; do
    panels=()
    for p in $(values <(pick "$tmp/fmm.txt" "n=$n") order); do
      f="$tmp/st_${n}_$p.txt"
      pick "$tmp/fmm.txt" "n=$n order=$p" >"$tmp/sel.txt"
      [ "$(table "$tmp/sel.txt" "$f" leaf $stage_cols)" -gt 0 ] || continue
      panels+=("$f|order p = $p|seconds (median)")
    done
    [ ${#panels[@]} -gt 0 ] || continue
    figure "$dir/stages_vs_leaf_n$n.png" "FMM phases against leaf size, N = $n" \
      "Plummer sphere, theta = $theta; x: leaf size L" stages "leaf size L" 0 0 \
      "outside right top" "nc=8;" "${panels[@]}"
    made=1
  done

  # Total time and errors, a panel per N.
  tpanels=() epanels=() xpanels=()
  for n in $ns; do
    pick "$tmp/fmm.txt" "n=$n" >"$tmp/sel_$n.txt"
    [ "$(series "$tmp/sel_$n.txt" "$tmp/tl_$n.txt" order "p = %s" leaf total)" -gt 0 ] &&
      tpanels+=("$tmp/tl_$n.txt|N = $n|seconds per evaluation")
    [ "$(series "$tmp/sel_$n.txt" "$tmp/eo_$n.txt" leaf "L = %s" order err_p99 err_median)" -gt 0 ] &&
      epanels+=("$tmp/eo_$n.txt|N = $n|relative acceleration error")
    [ "$(series "$tmp/sel_$n.txt" "$tmp/te_$n.txt" leaf "L = %s" order err_p99 total)" -gt 0 ] &&
      xpanels+=("$tmp/te_$n.txt|N = $n|seconds per evaluation")
  done
  if [ ${#tpanels[@]} -gt 0 ]; then
    figure "$dir/time_vs_leaf.png" "FMM time against leaf size" \
      "theta = $theta; a curve per expansion order p" lines "leaf size L" 2 1 \
      "top left" "" "${tpanels[@]}"
    made=1
  fi
  if [ ${#epanels[@]} -gt 0 ]; then
    figure "$dir/error_vs_order.png" "FMM accuracy against expansion order" \
      "|a - a_{ref}| / |a_{ref}| over the sample: 99th percentile (solid), median (dashed); theta = $theta" \
      lines "order p" 0 1 "top right" "dashed=1;" "${epanels[@]}"
    made=1
  fi
  if [ ${#xpanels[@]} -gt 0 ]; then
    figure "$dir/time_vs_error.png" "FMM cost of accuracy" \
      "a curve per leaf size through the orders (higher p: further left); theta = $theta" \
      lines "99th-percentile relative acceleration error" 10 1 "top right" \
      "xc=2; yc=3;" "${xpanels[@]}"
    made=1
  fi
fi

if have bh.csv; then
  files=("$dir/bh.csv")
  [ ${#fmm_files[@]} -gt 0 ] && files+=("${fmm_files[@]}")
  aggregate "${files[@]}" >"$tmp/all.txt"
  pick "$tmp/all.txt" "method=bh" >"$tmp/bh.txt"
  for n in $(values "$tmp/bh.txt" n); do
    for leaf in $(values <(pick "$tmp/bh.txt" "n=$n") leaf); do
      pick "$tmp/all.txt" "n=$n leaf=$leaf" >"$tmp/sel.txt"
      series "$tmp/sel.txt" "$tmp/me_${n}_$leaf.txt" method "%s" order err_p99 err_median >/dev/null
      series "$tmp/sel.txt" "$tmp/mt_${n}_$leaf.txt" method "%s" order total far >/dev/null
      figure "$dir/bh_vs_fmm_n${n}_l$leaf.png" \
        "Barnes-Hut and FMM, N = $n, leaf $leaf" \
        "left: |a - a_{ref}| / |a_{ref}|, 99th percentile (solid) and median (dashed); right: total (solid) and far-field phase (dashed)" \
        lines "order p" 0 1 "top right" "dashed=1;" \
        "$tmp/me_${n}_$leaf.txt|error|relative acceleration error" \
        "$tmp/mt_${n}_$leaf.txt|time|seconds per evaluation"
      made=1
    done
  done
fi

if have tree_build.csv; then
  aggregate "$dir/tree_build.csv" >"$tmp/tb.txt"
  panels=()
  for n in $(values "$tmp/tb.txt" n); do
    pick "$tmp/tb.txt" "n=$n" >"$tmp/sel.txt"
    [ "$(table "$tmp/sel.txt" "$tmp/tb_$n.txt" leaf keys sort permute build moments)" -gt 0 ] ||
      continue
    panels+=("$tmp/tb_$n.txt|N = $n|seconds (median)")
  done
  if [ ${#panels[@]} -gt 0 ]; then
    figure "$dir/tree_build.png" "Octree construction by stage" \
      "Plummer sphere; x: leaf size L" stages "leaf size L" 0 0 "outside right top" \
      "nc=6;" "${panels[@]}"
    made=1
  fi
fi

if [ "$made" -eq 0 ]; then
  echo "plot_tree: no bench_tree CSVs (grid, n4m, tree_build, bh) in $dir" >&2
  exit 1
fi
