#!/usr/bin/env python3
"""Issue 13's figures from one device run's results (stdlib and gnuplot).

    python3 bench/plot_gpu_schedule.py DIR [MAX_P99]

DIR holds bench_tree CSVs (bench/device.sh schedule scale: small.csv, large.csv,
hybrid.csv; schedule leaves: leaves.csv) and, when the peers ran
beside them, peers.txt (rows "code N median_ms p50 p99 max bodies/s
status"). Writes into DIR:

  time_per_body.png  nanoseconds a body against N: the gpu schedule's
                     fastest row with p99 <= MAX_P99 (default 9e-4) at each
                     N (past the sampled N, the setting chosen at the
                     largest sampled N), hybrid's fastest such row, and the
                     peers' rows with p99 <= MAX_P99
  phases.png         the gpu schedule's phases (tree, lists, upward, far,
                     near) at those rows, milliseconds a million bodies
  near_rate.png      the near field's interactions a second against leaf
                     size (leaves.csv), beside the pairwise kernel's FP32
                     limit (2.8e12 on the H100) and 60 % of it
  summary.txt        the rows chosen, as a table
"""
import csv
import os
import subprocess
import sys

LIMIT = 2.8e12  # 132 SMs x 128 lanes x 1.98 GHz / 12 instructions


def rows(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(l for l in f if not l.startswith("#")))


def num(r, k):
    try:
        return float(r[k])
    except (KeyError, ValueError):
        return None


def best(rs, max_p99, setting=None):
    """Fastest row per N with p99 <= max_p99; past the sampled N the row
    of the setting (leaf, theta, order) chosen at the largest sampled N."""
    out = {}
    for r in rs:
        n, t, p99 = int(num(r, "n")), num(r, "t_total"), num(r, "err_p99")
        key = (r["leaf"], r["theta"], r["order"])
        ok = (p99 is not None and p99 <= max_p99) or (
            p99 is None and setting is not None and key == setting)
        if ok and (n not in out or t < num(out[n], "t_total")):
            out[n] = r
    return out


def main():
    d = sys.argv[1]
    max_p99 = float(sys.argv[2]) if len(sys.argv) > 2 else 9e-4
    gpu_rows = rows(os.path.join(d, "small.csv"))
    sampled = best(gpu_rows, max_p99)
    setting = None
    if sampled:
        r = sampled[max(sampled)]
        setting = (r["leaf"], r["theta"], r["order"])
    gpu = best(gpu_rows + rows(os.path.join(d, "large.csv")), max_p99,
               setting)
    hybrid = best(rows(os.path.join(d, "hybrid.csv")), max_p99)
    peers = {}
    path = os.path.join(d, "peers.txt")
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) >= 8 and f[-1] == "ok" and f[1].isdigit():
                if float(f[4]) <= max_p99:
                    peers.setdefault(f[0], {})[int(f[1])] = (float(f[2]),
                                                             float(f[4]))
    lines = ["# p99 <= %g; times in ms (whole evaluation)" % max_p99,
             "%-8s %10s %6s %6s %3s %10s %9s %8s" %
             ("code", "N", "leaf", "theta", "p", "ms", "p99", "B/body")]
    series = {}
    for name, chosen in (("gpu", gpu), ("hybrid", hybrid)):
        with open(os.path.join(d, name + "_best.dat"), "w") as f:
            for n in sorted(chosen):
                r = chosen[n]
                t = num(r, "t_total")
                f.write("%d %g\n" % (n, 1e9 * t / n))
                p99 = num(r, "err_p99")
                bb = num(r, "device_bytes")
                lines.append("%-8s %10d %6s %6s %3s %10.2f %9s %8s" % (
                    name, n, r["leaf"], r["theta"], r["order"], 1e3 * t,
                    "%.1e" % p99 if p99 is not None else "-",
                    "%.0f" % (bb / n) if bb else "-"))
        series[name] = chosen
    for code, pts in sorted(peers.items()):
        with open(os.path.join(d, code + "_best.dat"), "w") as f:
            for n in sorted(pts):
                ms, p99 = pts[n]
                f.write("%d %g\n" % (n, 1e6 * ms / n))
                lines.append("%-8s %10d %6s %6s %3s %10.2f %9.1e %8s" %
                             (code, n, "-", "0.5", "-", ms, p99, "-"))
    with open(os.path.join(d, "phases.dat"), "w") as f:
        for n in sorted(gpu):
            r = gpu[n]
            per = 1e3 * 1e6 / n
            f.write("%d %s\n" % (n, " ".join(
                "%g" % (per * (num(r, k) or 0)) for k in
                ("t_tree", "t_lists", "t_upward", "t_far", "t_near"))))
    leaves = sorted(rows(os.path.join(d, "leaves.csv")),
                    key=lambda r: int(r["leaf"]))
    with open(os.path.join(d, "near_rate.dat"), "w") as f:
        for r in leaves:
            f.write("%s %g\n" % (r["leaf"], num(r, "near_rate")))
    open(os.path.join(d, "summary.txt"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))
    plots = ["set terminal pngcairo size 900,600",
             "set logscale x 2", "set format x '%.0s%c'", "set grid",
             "set key top left",
             "set output '%s/time_per_body.png'" % d,
             "set title 'Whole evaluation, Plummer, eps 0, p99 <= %g (H100)'"
             % max_p99,
             "set xlabel 'N'", "set ylabel 'ns per body'", "set logscale y",
             "plot " + ", ".join(
                 "'%s/%s_best.dat' using 1:2 with linespoints title '%s'" %
                 (d, name, name) for name in
                 ["gpu", "hybrid"] + sorted(peers)),
             "unset logscale y",
             "set output '%s/phases.png'" % d,
             "set title 'gpu schedule phases (ms per million bodies)'",
             "set style data histograms", "set style histogram rowstacked",
             "set style fill solid 0.8", "unset logscale x",
             "set ylabel 'ms per 10^6 bodies'", "set key top right",
             "plot '%s/phases.dat' using 2:xtic(1) title 'tree', '' using 3 "
             "title 'lists', '' using 4 title 'upward', '' using 5 title "
             "'far', '' using 6 title 'near'" % d]
    if leaves:
        plots += ["set style data linespoints", "set logscale x 2",
                  "set output '%s/near_rate.png'" % d,
                  "set title 'Near field at N = %s (theta 0.6, p 5)'" %
                  leaves[0]["n"],
                  "set xlabel 'leaf size'", "set ylabel 'interactions / s'",
                  "set key bottom right",
                  "plot '%s/near_rate.dat' using 1:2 title 'near kernel', "
                  "%g title 'FP32 limit' dt 2, %g title '60%% of it' dt 3" %
                  (d, LIMIT, 0.6 * LIMIT)]
    subprocess.run(["gnuplot"], input="\n".join(plots) + "\n", text=True,
                   check=True)


if __name__ == "__main__":
    main()
