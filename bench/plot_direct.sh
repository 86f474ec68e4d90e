#!/usr/bin/env bash
# Turns the CSVs written by sweep_direct.sh into PNGs beside them: GPU Gems 3,
# chapter 31's performance figures 31-5 to 31-8, measured on this GPU.
#
#   bench/plot_direct.sh CSV_DIR
#
# Reads whichever of these exist in CSV_DIR and writes:
#   n_sweep.csv      -> fig31-5_n.png            GFLOP/s vs N
#   unroll_sweep.csv -> fig31-6_unroll.png       GFLOP/s vs unroll, per N
#                       fig31-6_unroll_vs_n.png  GFLOP/s vs N, per unroll
#   p_sweep.csv      -> fig31-7_p.png            GFLOP/s vs p, per N
#                       fig31-7_p_vs_n.png       GFLOP/s vs N, per p
#   q_sweep.csv      -> fig31-8_q.png            GFLOP/s vs N, per q
#   r_sweep.csv      -> fig_r_vs_n.png           GFLOP/s vs N, per r (ours)
#   cpu_sweep.csv    -> fig_gpu_vs_cpu.png       with n_sweep.csv, log scale
# Each point is the median repetition; rows repeated for one point (reruns
# appended to a CSV) are averaged. Needs gnuplot with the pngcairo terminal.
set -euo pipefail

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
  echo "usage: $0 CSV_DIR" >&2
  exit 2
fi
dir=$1
gp="$(cd "$(dirname "$0")" && pwd)/plot_direct.gp"
command -v gnuplot >/dev/null || { echo "$0: gnuplot not found" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# blocks OUT XCOL SCOL TITLE_FORMAT FILTER CSV...
# Writes OUT as gnuplot index blocks, one per value of column SCOL (numeric
# order; the value 0 of q reads "auto"), each row "x gflops low high" in
# order of XCOL. FILTER is "" or "column=value". Prints
# "xmin|xmax|ymax|limit|device|p|q|unroll|r|rows" for the plot's ranges and
# subtitle (device names from the "# solver_device:" comments, the rest from
# the first row).
blocks() {
  local out=$1 xcol=$2 scol=$3 fmt=$4 filter=$5
  shift 5
  awk -F, -v out="$out" -v xcol="$xcol" -v scol="$scol" -v fmt="$fmt" \
      -v filter="$filter" '
    function isort(a, n,   i, j, t) {   # numeric insertion sort of a[1..n]
      for (i = 2; i <= n; i++) {
        t = a[i]
        for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]
        a[j + 1] = t
      }
    }
    FNR == 1 { hdr = 0 }
    /^# solver_device: / {   # the devices named in the files, each once
      d = substr($0, 18)
      if (!(d in devseen)) { devseen[d] = 1; dev = dev (dev == "" ? "" : " vs ") d }
    }
    /^#/ || /^[ \t]*$/ { next }
    !hdr {
      hdr = 1
      for (i = 1; i <= NF; i++) col[$i] = i
      split("n,gflops,median_s,min_s,max_s,limit_gflops,p,q,unroll,r", need, ",")
      for (k in need) if (!(need[k] in col)) {
        print "missing column " need[k] > "/dev/stderr"; exit 1
      }
      if (!(xcol in col) || !(scol in col)) {
        print "missing column " xcol " or " scol > "/dev/stderr"; exit 1
      }
      fcol = ""
      if (filter != "") { split(filter, f, "="); fcol = f[1]; fval = f[2] }
      next
    }
    {
      if (fcol != "" && $(col[fcol]) != fval) next
      x = $(col[xcol]) + 0; s = $(col[scol]); g = $(col["gflops"]) + 0
      med = $(col["median_s"]); mn = $(col["min_s"]); mx = $(col["max_s"])
      k = s SUBSEP x
      if (!(s in seen)) { seen[s] = 1; ns++; sv[ns] = s }
      if (!(x in xseen)) { xseen[x] = 1; nx++; xv[nx] = x }
      sum[k] += g; cnt[k]++
      lo[k] += (mx > 0 ? g * med / mx : g)
      hi[k] += (mn > 0 ? g * med / mn : g)
      l = $(col["limit_gflops"])
      if (l ~ /^[0-9.eE+-]+$/ && l + 0 > limit) limit = l + 0
      if (rows++ == 0) {
        fp = $(col["p"]); fq = $(col["q"]); fu = $(col["unroll"])
        fr = $(col["r"])
      }
    }
    END {
      if (!rows) { print "0|0|0|0||||||0"; exit }
      isort(sv, ns); isort(xv, nx)
      xmin = xv[1]; xmax = xv[nx]; ymax = 0
      for (i = 1; i <= ns; i++) {
        s = sv[i]
        t = (scol == "q" && s + 0 == 0) ? "auto" : s
        if (i > 1) printf "\n\n" > out   # blank lines part index blocks
        printf "\"%s\" x y low high\n", sprintf(fmt, t) > out
        for (j = 1; j <= nx; j++) {
          k = s SUBSEP xv[j]
          if (!(k in cnt)) continue
          h = hi[k] / cnt[k]
          if (h > ymax) ymax = h
          printf "%s %.6g %.6g %.6g\n", xv[j], sum[k] / cnt[k], \
                 lo[k] / cnt[k], h > out
        }
      }
      if (fq + 0 == 0) fq = "auto"
      printf "%s|%s|%.6g|%.6g|%s|%s|%s|%s|%s|%d\n", xmin, xmax, ymax, \
             limit + 0, dev, fp, fq, fu, fr, rows
    }' "$@"
}

# figure OUT_PNG TITLE XLABEL YLOG FIXED XCOL SCOL TITLE_FORMAT FILTER CSV...
# FIXED lists the parameters held fixed, named in the subtitle.
figure() {
  local png=$1 ttl=$2 xlab=$3 ylog=$4 fixed=$5 xcol=$6 scol=$7 fmt=$8
  local filter=$9
  shift 9
  local data="$tmp/blocks.dat" info
  : >"$data"
  info=$(blocks "$data" "$xcol" "$scol" "$fmt" "$filter" "$@")
  local xmin xmax ymax limit dev p q unroll r rows
  IFS='|' read -r xmin xmax ymax limit dev p q unroll r rows <<<"$info"
  if [ "$rows" -eq 0 ]; then
    echo "plot_direct: no rows for $(basename "$png"); skipped" >&2
    return 0
  fi
  local sub="" item
  for item in $fixed; do
    case $item in
      p) sub+="${sub:+, }p = ${p/#0/auto}" ;;
      q) sub+="${sub:+, }q = $q" ;;
      unroll) sub+="${sub:+, }unroll = $unroll" ;;
      r) sub+="${sub:+, }r = ${r/#0/auto}" ;;
    esac
  done
  [ -n "$dev" ] && sub="$dev${sub:+; $sub}"
  sub=${sub//\'/}   # no quotes inside gnuplot's '...' below
  sub=${sub//_/} # gnuplot enhanced text would read "_" as a subscript
  gnuplot -e "data='$data'; out='$png'; ttl='$ttl'; sub='$sub'; \
xlab='$xlab'; xmin=$xmin; xmax=$xmax; ymax=$ymax; limit=$limit; ylog=$ylog" \
    "$gp"
  echo "plot_direct: wrote $png"
}

have() { [ -s "$dir/$1" ]; }
made=0

if have n_sweep.csv; then
  figure "$dir/fig31-5_n.png" "Fig. 31-5: performance as N grows" \
    "N (bodies)" 0 "p q unroll r" n device "all-pairs, %s" "" \
    "$dir/n_sweep.csv"
  made=1
fi
if have unroll_sweep.csv; then
  figure "$dir/fig31-6_unroll.png" "Fig. 31-6: loop unrolling" \
    "unroll factor" 0 "p q r" unroll n "N = %s" "" "$dir/unroll_sweep.csv"
  figure "$dir/fig31-6_unroll_vs_n.png" "Fig. 31-6 (against N): loop unrolling" \
    "N (bodies)" 0 "p q r" n unroll "unroll = %s" "" "$dir/unroll_sweep.csv"
  made=1
fi
if have p_sweep.csv; then
  figure "$dir/fig31-7_p.png" "Fig. 31-7: tile size p" \
    "p (bodies per tile, threads per block row)" 0 "q unroll r" p n "N = %s" \
    "" "$dir/p_sweep.csv"
  figure "$dir/fig31-7_p_vs_n.png" "Fig. 31-7 (against N): tile size p" \
    "N (bodies)" 0 "q unroll r" n p "p = %s" "" "$dir/p_sweep.csv"
  made=1
fi
if have q_sweep.csv; then
  figure "$dir/fig31-8_q.png" "Fig. 31-8: q threads per body, small N" \
    "N (bodies)" 0 "p unroll r" n q "q = %s" "" "$dir/q_sweep.csv"
  made=1
fi
if have r_sweep.csv; then
  figure "$dir/fig_r_vs_n.png" "Bodies per thread r (not in the chapter)" \
    "N (bodies)" 0 "p q unroll" n r "r = %s" "" "$dir/r_sweep.csv"
  made=1
fi
if have cpu_sweep.csv; then
  files=("$dir/cpu_sweep.csv")
  have n_sweep.csv && files=("$dir/n_sweep.csv" "${files[@]}")
  figure "$dir/fig_gpu_vs_cpu.png" "All pairs on the GPU and the CPU" \
    "N (bodies)" 1 "" n device "all-pairs on the %s" "" "${files[@]}"
  made=1
fi
if [ "$made" -eq 0 ]; then
  echo "plot_direct: no *_sweep.csv in $dir" >&2
  exit 1
fi
