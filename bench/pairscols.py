#!/usr/bin/env python3
"""Spearman x100 of every numeric column of bin/evaluate's pairs.tsv against
its gold column (ties get their mean rank), e.g. the Eq. 4 parts alone
(origin:eq4, random_contexts:eq4) beside the labelers. Plain Python.

    python3 bench/pairscols.py out/evaluate-stsb-dev/pairs.tsv ...

--sum A+B adds a row for the sum of columns A and B (e.g.
ctx_align+origin:eq4, the overlap rule (alignment + Eq. 4)/2), and
--pairs_of OTHER/pairs.tsv keeps only the pairs (s1, s2, gold) that file
holds, to compare runs made with different --pairs.
"""
import csv
import sys
from collections import Counter


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


def read(path):
    return list(csv.DictReader(open(path), delimiter='\t', quoting=csv.QUOTE_NONE))


def main(argv):
    sums, only, paths = [], None, []
    it = iter(argv)
    for a in it:
        if a == '--sum':  # another row: the Spearman of COL1+COL2+...
            sums.append(next(it))
        elif a == '--pairs_of':  # only the pairs (s1, s2, gold) of this file
            only = Counter((r['s1'], r['s2'], r['gold']) for r in read(next(it)))
        else:
            paths.append(a)
    for path in paths:
        rows = read(path)
        if only is not None:
            left, kept = Counter(only), []
            for r in rows:
                k = (r['s1'], r['s2'], r['gold'])
                if left[k] > 0:
                    left[k] -= 1
                    kept.append(r)
            rows = kept
        gold = [float(r['gold']) for r in rows]
        print(f"== {path} ({len(rows)} pairs)")
        cols = [c for c in rows[0] if c not in ('gold', 's1', 's2')] + sums
        for col in cols:
            vals = [sum(float(r[c]) for c in col.split('+')) if col in sums else float(r[col]) for r in rows]
            print(f"{col:30s} {spearman(vals, gold):7.3f}")


main(sys.argv[1:])
