"""The softened far field's accuracy rows (src/accuracy_table_soft.h) from
the fmm-soft-grid rows of fmm_soft_n20000.csv and fmm_soft_n50000.csv.

error: the worst p99 of a (theta, order) over the twelve cases (three
inputs, eps 0.001 and 0.01, 20,000 and 50,000 bodies); where the grid left
a case out (it stopped, per order, at the first theta whose p99 met 1e-4:
the smaller thetas would be more accurate still), at least 1e-4.
cost: the geometric mean over the cases present of cpu_eval relative to
theta 0.5, order 4 of the same case.

    python3 soft_rows.py > ../../../src/accuracy_table_soft.h
"""
import collections
import csv
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = ["fmm_soft_n20000.csv", "fmm_soft_n50000.csv"]

rows = [r for f in FILES for r in csv.DictReader(open(os.path.join(HERE, f)))
        if r["method"] == "fmm-soft-grid"]
grid = collections.defaultdict(dict)
for r in rows:
    case = (r["family"], r["n"], r["eps"])
    grid[(float(r["theta"]), int(r["order"]))][case] = (float(r["p99"]),
                                                        float(r["cpu_eval"]))
cases = sorted({c for d in grid.values() for c in d})
ref = grid[(0.5, 4)]
print("""/* The softened far field's calibration (tfmm_config.far_kernel
 * softened; accuracy_table.h's rows are Newton's with the separation):
 * per opening angle and order, the worst 99th-percentile relative
 * acceleration error over the inputs of bench/results/soft_expansion
 * (Plummer sphere, clusters, line + coincident pile; eps 0.001 and 0.01;
 * 20,000 and 50,000 bodies; leaf 48; near field in double; truth: 1,000
 * bodies summed directly in double), and the cost of an evaluation
 * relative to theta 0.5, order 4 of the same input (geometric mean; one
 * thread, CPU seconds). A first table from that bench's grid, not from
 * bench/calibrate_accuracy. Written by
 * bench/results/soft_expansion/soft_rows.py (do not edit by hand). */
#ifndef TFMM_ACCURACY_TABLE_SOFT_H
#define TFMM_ACCURACY_TABLE_SOFT_H

#include "accuracy_table.h"

static const tfmm_accuracy_row TFMM_ACCURACY_TABLE_SOFT[] = {""")
for (theta, order), d in sorted(grid.items()):
    error = max(v[0] for v in d.values())
    if len(d) < len(cases):
        error = max(error, 1e-4)
    cost = math.exp(sum(math.log(v[1] / ref[c][1]) for c, v in d.items())
                    / len(d))
    print("    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, %g, %d, %.2e, %.3g, 48, 0, 0},"
          % (theta, order, error, cost))
print("""};

#endif""")
