#!/usr/bin/env python3
"""The README's tables from bench_soft_expansion's CSV rows (stdin): per
family, N, eps and target, the library's rows and the bh row, and the
ratio of the cheapest library row that meets the target to bh (CPU
seconds of one evaluation, one thread). --scaling: the compact table of
N; --soft: the library against the softened FMM (fmm-soft rows)."""
import csv
import sys

def full(rows):
    keys = []
    for r in rows:
        if r["method"] == "bh-grid":
            continue
        k = (r["family"], int(r["n"]), float(r["eps"]), float(r["tol"]))
        if k not in keys:
            keys.append(k)

    print("| input | N | eps | TOL | lib-auto: theta/p, s, near pairs, p99 "
          "| lib-off | lib-fixed (0.6/6) | bh softened: theta/p, s, near pairs, "
          "M2P, p99 | cheapest lib meeting TOL / bh |")
    print("|---|---|---|---|---|---|---|---|---|")


    def fmt(r, far=False):
        if r is None or r["order"] == "-1":
            return "none met TOL"
        s = "%s/%s, %.2f s, %.2g, %.2g" % (r["theta"].rstrip("0").rstrip("."),
                                           r["order"], float(r["cpu_eval"]),
                                           float(r["near_pairs"]), float(r["p99"]))
        if far:
            s = "%s/%s, %.2f s, %.2g, %.2g, %.2g" % (
                r["theta"].rstrip("0").rstrip("."), r["order"],
                float(r["cpu_eval"]), float(r["near_pairs"]),
                float(r["far_ops"]), float(r["p99"]))
        return s + ("" if r["meets"] == "1" else " (misses)")


    for k in keys:
        sel = {r["method"]: r for r in rows
               if r["method"] != "bh-grid" and
               (r["family"], int(r["n"]), float(r["eps"]), float(r["tol"])) == k}
        libs = [sel[m] for m in ("lib-auto", "lib-off", "lib-fixed")
                if m in sel and sel[m]["meets"] == "1"]
        bh = sel.get("bh")
        ratio = "-"
        if libs and bh is not None and bh["order"] != "-1":
            best = min(float(r["cpu_eval"]) for r in libs)
            ratio = "%.2f" % (best / float(bh["cpu_eval"]))
        print("| %s | %d | %g | %g | %s | %s | %s | %s | %s |" % (
            k[0], k[1], k[2], k[3], fmt(sel.get("lib-auto")),
            fmt(sel.get("lib-off")), fmt(sel.get("lib-fixed")), fmt(bh, True),
            ratio))


def compact(all_rows):
    """--scaling: one line per input, N, eps and target: the CPU seconds
    (and near pairs) of lib-auto, lib-off and bh (its theta/p)."""
    print("| input | N | eps | TOL | lib-auto s (near pairs) "
          "| lib-off s (near pairs) | bh s (theta/p, near pairs, M2P) |")
    print("|---|---|---|---|---|---|---|")
    seen = []
    for r in all_rows:
        k = (r["family"], int(r["n"]), float(r["eps"]), float(r["tol"]))
        if r["method"] != "bh-grid" and k not in seen:
            seen.append(k)

    def cell(r, bh=False):
        if r is None:
            return "-"
        if r["order"] == "-1":
            return "none met TOL"
        miss = "" if r["meets"] == "1" else ", misses"
        if bh:
            return "%.2f (%s/%s, %.2g, %.2g%s)" % (
                float(r["cpu_eval"]), r["theta"].rstrip("0").rstrip("."),
                r["order"], float(r["near_pairs"]), float(r["far_ops"]), miss)
        return "%.2f (%.2g%s)" % (float(r["cpu_eval"]),
                                  float(r["near_pairs"]), miss)
    for k in sorted(seen, key=lambda k: (k[0], k[2], k[3], k[1])):
        sel = {r["method"]: r for r in all_rows
               if r["method"] != "bh-grid" and
               (r["family"], int(r["n"]), float(r["eps"]),
                float(r["tol"])) == k}
        print("| %s | %d | %g | %g | %s | %s | %s |" % (
            k[0], k[1], k[2], k[3], cell(sel.get("lib-auto")),
            cell(sel.get("lib-off")), cell(sel.get("bh"), True)))


def soft(all_rows):
    """--soft: per input, N, eps and target, lib-auto, lib-off and fmm-soft
    (theta/p, CPU s, near pairs, far operations, p99) and the ratio of the
    cheapest library row that meets the target to fmm-soft (> 1: the
    softened FMM is cheaper)."""
    print("| input | N | eps | TOL | lib-auto: theta/p, s, near pairs, p99 "
          "| lib-off: theta/p, s, near pairs, p99 "
          "| fmm-soft: theta/p, s, near pairs, M2L+M2P, p99 "
          "| cheapest lib meeting TOL / fmm-soft |")
    print("|---|---|---|---|---|---|---|---|")
    seen = []
    for r in all_rows:
        k = (r["family"], int(r["n"]), float(r["eps"]), float(r["tol"]))
        if not r["method"].endswith("-grid") and k not in seen:
            seen.append(k)

    def cell(r, far=False):
        if r is None:
            return "-"
        if r["order"] == "-1":
            return "none met TOL"
        s = "%s/%s, %.2f s, %.2g" % (r["theta"].rstrip("0").rstrip("."),
                                     r["order"], float(r["cpu_eval"]),
                                     float(r["near_pairs"]))
        if far:
            s += ", %.2g" % float(r["far_ops"])
        s += ", %.2g" % float(r["p99"])
        return s + ("" if r["meets"] == "1" else " (misses)")
    for k in sorted(seen, key=lambda k: (k[1], k[0], k[2], -k[3])):
        sel = {r["method"]: r for r in all_rows
               if not r["method"].endswith("-grid") and
               (r["family"], int(r["n"]), float(r["eps"]),
                float(r["tol"])) == k}
        libs = [sel[m] for m in ("lib-auto", "lib-off", "lib-fixed")
                if m in sel and sel[m]["meets"] == "1"]
        sf = sel.get("fmm-soft")
        ratio = "-"
        if libs and sf is not None and sf["meets"] == "1":
            best = min(float(r["cpu_eval"]) for r in libs)
            ratio = "%.2f" % (best / float(sf["cpu_eval"]))
        print("| %s | %d | %g | %g | %s | %s | %s | %s |" % (
            k[0], k[1], k[2], k[3], cell(sel.get("lib-auto")),
            cell(sel.get("lib-off")), cell(sf, True), ratio))


rows = list(csv.DictReader(sys.stdin))
if "--soft" in sys.argv[1:]:
    soft(rows)
elif "--scaling" in sys.argv[1:]:
    compact(rows)
else:
    full(rows)
