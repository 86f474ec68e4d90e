#!/usr/bin/env python3
"""Sums ncu's gpu__time_duration per kernel name from a --csv report
(bash bench/device.sh profile): milliseconds, launches, name; largest
first."""
import collections
import csv
import re
import sys

lines = [l for l in open(sys.argv[1]) if l.startswith('"')]
rows = list(csv.reader(lines))
head = rows[0]
name_at, value_at = head.index("Kernel Name"), head.index("Metric Value")
total = collections.defaultdict(lambda: [0, 0.0])
for r in rows[1:]:
    m = re.search(r"(?:<unnamed>::|\s|^)([A-Za-z_0-9]+)(?:<[^(]*)?\(", r[name_at])
    name = m.group(1) if m else r[name_at][:50]
    total[name][0] += 1
    total[name][1] += float(r[value_at].replace(",", ""))
print("all kernels %.3f ms" % (sum(v[1] for v in total.values()) / 1e6))
for name, (count, ns) in sorted(total.items(), key=lambda x: -x[1][1])[:14]:
    print("%9.3f ms %5d  %s" % (ns / 1e6, count, name))
