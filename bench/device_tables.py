"""The short tables bench/device.sh prints from what it measured.

  device_tables.py choice TABLE.h   theta and order that the rule of
      src/accuracy.c takes from calibrate_accuracy's rows (fmm, geometric):
      the cheapest row whose error times MARGIN = 3 is within the target,
      theta <= 0.6; lines "TOL THETA ORDER ERROR COST".
  device_tables.py best CSV         bench_tree's rows: the fastest leaf
      size of each configuration, with its p99 and far/near times.
"""
import csv
import re
import sys


def choice(path):
    rows = []
    pattern = re.compile(
        r'\s*\{TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, ([\d.]+), (\d+), '
        r'([\d.e+-]+), ([\d.e+-]+), (\d+), (\d+)(?:, [\d.e+-]+)?\}')
    for line in open(path):
        m = pattern.match(line)
        if m:
            rows.append((float(m[1]), int(m[2]), float(m[3]), float(m[4])))
    for tol in (1e-2, 1e-3, 1e-4, 1e-6):
        ok = [r for r in rows if r[2] * 3 <= tol and r[0] <= 0.6]
        best = (min(ok, key=lambda r: r[3]) if ok
                else min(rows, key=lambda r: r[2]))
        print("%g %g %d %.3g %.3g" % (tol, best[0], best[1], best[2], best[3]))


KEY = ("n", "eps", "softening", "mac", "accuracy", "theta", "order",
       "mac_epsilon", "precision")


def best(path):
    rows = list(csv.reader(l for l in open(path) if not l.startswith('#')))
    head = rows[0]
    col = {k: i for i, k in enumerate(head)}
    key_cols = [k for k in KEY if k in col]
    fastest = {}
    for r in rows[1:]:
        if len(r) != len(head) or r[col['err_p99']] == '':
            continue
        key = tuple(r[col[k]] for k in key_cols)
        t = float(r[col['t_total']])
        if key not in fastest or t < fastest[key][0]:
            fastest[key] = (t, r)
    extra = [k for k in ("far_time", "near_time") if k in col]
    print(" ".join("%9s" % k[:9] for k in key_cols + ["leaf", "ms", "p99"]
                   + [k.replace("_time", "_ms") for k in extra]))
    for key in sorted(fastest, key=lambda k: (int(k[0]),) + k[1:]):
        t, r = fastest[key]
        cells = list(key) + [r[col['leaf']], "%.1f" % (1e3 * t),
                             "%.2e" % float(r[col['err_p99']])]
        cells += ["%.1f" % (1e3 * float(r[col[k]])) for k in extra]
        print(" ".join("%9s" % c for c in cells))


if __name__ == "__main__":
    {"choice": choice, "best": best}[sys.argv[1]](sys.argv[2])
