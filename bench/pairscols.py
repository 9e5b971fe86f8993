#!/usr/bin/env python3
"""Spearman x100 of every numeric column of bin/evaluate's pairs.tsv against
its gold column (ties get their mean rank), e.g. the Eq. 4 parts alone
(origin:eq4, random_contexts:eq4) beside the labelers. Plain Python.

    python3 bench/pairscols.py out/evaluate-stsb-dev/pairs.tsv ...
"""
import csv
import sys


def ranks(x):
    order = sorted(range(len(x)), key=lambda i: x[i])
    r = [0.0] * len(x)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and x[order[j + 1]] == x[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5
    return 100 * num / den


for path in sys.argv[1:]:
    rows = list(csv.DictReader(open(path), delimiter='\t', quoting=csv.QUOTE_NONE))
    gold = [float(r['gold']) for r in rows]
    print(f"== {path} ({len(rows)} pairs)")
    for col in rows[0]:
        if col in ('gold', 's1', 's2'):
            continue
        print(f"{col:28s} {spearman([float(r[col]) for r in rows], gold):7.3f}")
