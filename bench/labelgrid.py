#!/usr/bin/env python3
"""Weights of the aligned labeler's parts, chosen on train splits.

    bench/labelgrid.py EVAL_DIR/pairs.tsv [EVAL_DIR/pairs.tsv ...]

Reads the pairs.tsv of bin/evaluate runs (made with the default variant
"origin", so that the columns ctx_align, origin:eq4, tfidf_stem and
ctx_cosine are there) and ranks 108 weightings of those four parts by the
mean Spearman x100 over the files given, printing the best and a few fixed
ones. Plain Python, no packages.
"""
import csv, sys, itertools
def ranks(x):
    idx = sorted(range(len(x)), key=lambda i: x[i])
    r = [0.0]*len(x); i = 0
    while i < len(idx):
        j = i
        while j+1 < len(idx) and x[idx[j+1]] == x[idx[i]]: j += 1
        for k in range(i, j+1): r[idx[k]] = (i+j)/2
        i = j+1
    return r
def pearson(a, b):
    n = len(a); ma = sum(a)/n; mb = sum(b)/n
    sab = sum((x-ma)*(y-mb) for x, y in zip(a, b)); saa = sum((x-ma)**2 for x in a); sbb = sum((y-mb)**2 for y in b)
    return sab/(saa*sbb)**0.5
def spearman(a, b): return pearson(ranks(a), ranks(b))
def load(p):
    rows = list(csv.DictReader(open(p), delimiter='\t'))
    g = [float(r['gold']) for r in rows]
    cols = {k: [float(r[k]) for r in rows] for k in ('ctx_align', 'origin:eq4', 'tfidf_stem', 'ctx_cosine', 'origin')}
    return g, cols
sets = [load(p) for p in sys.argv[1:]]
res = []
for wa, we, wl, wm in itertools.product([1, 2, 3, 4], [0, 0.5, 1], [0, 0.5, 1], [0, 0.5, 1]):
    sc = []
    for g, c in sets:
        pred = [wa*a + we*e + wl*l + wm*m for a, e, l, m in zip(c['ctx_align'], c['origin:eq4'], c['tfidf_stem'], c['ctx_cosine'])]
        sc.append(100*spearman(pred, g))
    res.append((sum(sc)/len(sc), (wa, we, wl, wm), sc))
res.sort(reverse=True)
print("settings tried:", len(res))
base = [100*spearman(c['origin'], g) for g, c in sets]
print("hybrid (configured):", ["%.2f" % x for x in base])
for r in res[:12]: print("%.2f" % r[0], r[1], ["%.2f" % x for x in r[2]])
for w in [(2,1,1,1),(1,0,0,0),(2,0,1,1),(3,1,1,1)]:
    print("at", w, [ "%.2f" % x[2][i] for x in res if x[1]==w for i in range(len(sets))])
