#!/usr/bin/env python3
"""Weights of the aligned labeler's parts, chosen on train splits.

    bench/labelgrid.py [--base COLUMN] [--eq4 W,W,...] TRAIN/pairs.tsv [...] [--dev DEV/pairs.tsv ...]

Reads the pairs.tsv of bin/evaluate runs (made with the default variant
"origin", so that the columns ctx_align, origin:eq4, tfidf_stem and
ctx_cosine are there, and origin, the configured label) and tries 180
weightings of those four parts on the train files. It prints the best by
mean Spearman x100 over the train files, and the best of those that lose
on no train file against the configured label (the rule the labeler is
chosen by), each with its Spearman on the --dev files when given.
--base names another column as the label to beat (a variant's, such as
zwhite, when the run's own similarity is new), and --eq4 the weights of
Eq. 4 tried (default 0,0.5,1). The
files are tab-separated without quoting (sentences may hold quotes).
Plain Python, no packages.
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
args = sys.argv[1:]
def option(name, default):
    if name in args:
        i = args.index(name)
        v = args[i+1]
        del args[i:i+2]
        return v
    return default
base_col = option('--base', 'origin')
eq4_weights = [float(x) for x in option('--eq4', '0,0.5,1').split(',')]
def load(p):
    rows = list(csv.DictReader(open(p), delimiter='\t', quoting=csv.QUOTE_NONE))
    g = [float(r['gold']) for r in rows]
    cols = {k: [float(r[k]) for r in rows] for k in ('ctx_align', 'origin:eq4', 'tfidf_stem', 'ctx_cosine', base_col)}
    cols['origin'] = cols[base_col]
    return g, cols
def score(sets, w):
    wa, we, wl, wm = w
    return [100*spearman([wa*a + we*e + wl*l + wm*m for a, e, l, m in
                          zip(c['ctx_align'], c['origin:eq4'], c['tfidf_stem'], c['ctx_cosine'])], g) for g, c in sets]
dev_at = args.index('--dev') if '--dev' in args else len(args)
train = [load(p) for p in args[:dev_at]]
dev = [load(p) for p in args[dev_at+1:]]
fmt = lambda xs: ["%.2f" % x for x in xs]
base = [100*spearman(c['origin'], g) for g, c in train]
print("label to beat (%s): train" % base_col, fmt(base), "dev", fmt([100*spearman(c['origin'], g) for g, c in dev]))
res = []
for w in itertools.product([1, 2, 3, 4, 6], eq4_weights, [0, 0.5, 1], [0, 0.25, 0.5, 1]):
    sc = score(train, w)
    res.append((sum(sc)/len(sc), w, sc))
res.sort(reverse=True)
print("weightings tried:", len(res), "(alignment, Eq. 4, tfidf_stem, ctx_cosine)")
for m, w, sc in res[:8]:
    print("best mean %.2f" % m, w, "train", fmt(sc), "dev", fmt(score(dev, w)))
ok = [r for r in res if all(x >= b for x, b in zip(r[2], base))]
print("losing on no train file against the configured label:", len(ok))
for m, w, sc in ok[:8]:
    print("mean %.2f" % m, w, "train", fmt(sc), "dev", fmt(score(dev, w)))
