#!/usr/bin/python3
"""Xapian on the terms of our index, for bench/xapian.sh.

Reads what `retrievalbench terms` exports (chunks.tsv.gz: chunk ID then every
bigram token of the chunk; queries.tsv.gz: number, text, distinct bigrams)
and compares Xapian with bleve on exactly those terms.

  xapian.py info
  xapian.py build TERMS_DIR DB         one document per chunk, compacted
  xapian.py search DB QUERIES --weight ntn|bm25 [--k 20000] [--ids FILE --ids-k 1000]
  xapian.py overlap A_IDS B_IDS [--k 1000] [--names A,B]

Run with /usr/bin/python3 and Debian's python3-xapian. Everything runs on one
thread: Python's, and Xapian's search is single-threaded.
"""

import argparse
import collections
import gzip
import hashlib
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

# This file's own directory comes first on sys.path, and this file is named
# xapian.py: take the directory out so that the import finds the bindings.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != _here]
try:
    import xapian
except ImportError:
    sys.exit("xapian.py: the Xapian Python bindings are missing: apt-get install python3-xapian")

# Xapian refuses terms longer than 245 bytes. A longer bigram (two very long
# "words": URLs, runs of symbols) becomes its first 200 bytes and a hash of
# the whole, the same way in documents and queries, so it stays exact.
MAX_TERM = 245


def xterm(t):
    b = t.encode("utf-8")
    if len(b) <= MAX_TERM:
        return b
    return b[:200] + b"#" + hashlib.sha1(b).hexdigest().encode()


def cpu_line():
    # bench/cpu.sh names the CPU with its family, model and vector
    # extensions, as every benchmark block does.
    try:
        model = subprocess.run([os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpu.sh")],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        model = "unknown"
    return "cpu: %s (%d threads available); kernel %s" % (model, os.cpu_count(), platform.release())


def cmd_info(args):
    print(cpu_line())
    print("xapian: %s, Python %s; one thread (Xapian's search is single-threaded, no thread is started)"
          % (xapian.version_string(), platform.python_version()))


def du(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(root, f))
    return total


def cmd_build(args):
    src = os.path.join(args.terms, "chunks.tsv.gz")
    tmp = args.db + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    # Flush every 100,000 documents instead of 10,000: faster, ~2 GB of RAM.
    os.environ.setdefault("XAPIAN_FLUSH_THRESHOLD", "100000")
    t0 = time.perf_counter()
    db = xapian.WritableDatabase(tmp, xapian.DB_CREATE_OR_OVERWRITE)
    ids = []
    tokens = hashed = 0
    prev = None
    with gzip.open(src, "rt", encoding="utf-8", newline="\n") as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            cid = cols[0]
            if prev is not None and cid <= prev:
                sys.exit("xapian.py: %s is not in ascending chunk ID order at %s" % (src, cid))
            prev = cid
            doc = xapian.Document()
            for t, n in collections.Counter(cols[1:]).items():
                x = xterm(t)
                hashed += len(x) != len(t.encode("utf-8"))
                doc.add_term(x, n)
            tokens += len(cols) - 1
            doc.set_data(cid)
            db.add_document(doc)  # document IDs 1, 2, ... in chunk ID order
            ids.append(cid)
            if len(ids) % 50000 == 0:
                print("  %d chunks, %.0f s" % (len(ids), time.perf_counter() - t0), file=sys.stderr)
    db.commit()
    db.close()
    t1 = time.perf_counter()
    shutil.rmtree(args.db, ignore_errors=True)
    xapian.Database(tmp).compact(args.db)
    shutil.rmtree(tmp)
    t2 = time.perf_counter()
    # Document i holds chunk ids[i-1]: search maps document IDs to chunk IDs
    # through this list instead of reading each hit's document data.
    with open(args.db + ".ids", "w") as f:
        f.write("\n".join(ids) + "\n")
    d = xapian.Database(args.db)
    print("xapian build chunks=%d bigram_tokens=%d distinct_terms=%d hashed_long_terms=%d "
          "index_seconds=%.1f compact_seconds=%.1f index_MiB=%.1f"
          % (d.get_doccount(), tokens, sum(1 for _ in d.allterms()), hashed,
             t1 - t0, t2 - t1, du(args.db) / 1048576))


def read_queries(path):
    qs = []
    with gzip.open(path, "rt", encoding="utf-8", newline="\n") as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            qs.append([xterm(t) for t in cols[2:]])
    return qs


def pct(sorted_vals, p):
    return sorted_vals[int(p * (len(sorted_vals) - 1))]


def cmd_search(args):
    db = xapian.Database(args.db)
    with open(args.db + ".ids") as f:
        ids = f.read().split("\n")
    qs = read_queries(args.queries)
    enq = xapian.Enquire(db)
    if args.weight == "ntn":
        enq.set_weighting_scheme(xapian.TfIdfWeight("ntn"))
    elif args.weight == "bm25":
        enq.set_weighting_scheme(xapian.BM25Weight())
    else:
        sys.exit("xapian.py: --weight must be ntn or bm25")
    # Ties: relevance, then ascending document ID, which is ascending chunk
    # ID: the order bleve's search uses ("-_score", "_id").
    enq.set_docid_order(xapian.Enquire.ASCENDING)

    # With --exact, Xapian counts every match, as bleve does, instead of
    # skipping documents that cannot reach the top k.
    check = db.get_doccount() if args.exact else 0

    def run(terms):
        enq.set_query(xapian.Query(xapian.Query.OP_OR, terms))
        return enq.get_mset(0, args.k, check)

    for terms in qs[:20]:  # warm up, as retrievalbench latency does
        run(terms)
    lat, lat_read = [], []
    hits = empty = 0
    est = 0
    extract = 0.0
    tops = []
    start = time.perf_counter()
    for terms in qs:
        t = time.perf_counter()
        mset = run(terms)
        t1 = time.perf_counter()
        lat.append(t1 - t)
        # Reading every hit's document ID and weight out of the MSet is timed
        # apart (read_*): it is mostly interpreter work, about 1.5 us a hit,
        # that a C++ (or Go) caller would do in microseconds per query.
        hs = [(m.docid, m.weight) for m in mset]
        t2 = time.perf_counter()
        lat_read.append(t2 - t)
        t = t2
        n = mset.size()
        hits += n
        empty += n == 0
        est += mset.get_matches_estimated()
        if args.ids:
            tops.append(top_with_ties(mset, args.ids_k, ids))
        extract += time.perf_counter() - t
    total = time.perf_counter() - start - extract - sum(lat_read) + sum(lat)
    lat.sort()
    lat_read.sort()
    nq = len(qs)
    print("xapian weight=%s%s k=%d queries=%d p50=%.1fms p95=%.1fms max=%.1fms mean=%.1fms qps=%.1f "
          "mean_hits=%.0f no_hits=%d mean_matches_estimated=%.0f index_MiB=%.1f "
          "read_p50=%.1fms read_p95=%.1fms read_mean=%.1fms"
          % (args.weight, "-exact" if args.exact else "", args.k, nq, 1e3 * pct(lat, 0.5),
             1e3 * pct(lat, 0.95), 1e3 * lat[-1], 1e3 * total / nq, nq / total, hits / nq, empty,
             est / nq, du(args.db) / 1048576, 1e3 * pct(lat_read, 0.5), 1e3 * pct(lat_read, 0.95),
             1e3 * sum(lat_read) / nq))
    if args.ids:
        with gzip.open(args.ids, "wt", encoding="utf-8", compresslevel=1) as f:
            for i, top in enumerate(tops):
                f.write("%d%s\n" % (i, "".join("\t%s %r" % h for h in top)))


def top_with_ties(mset, k, ids):
    """The first k hits and those after them that tie with the k-th."""
    out = []
    last = None
    for m in mset:
        w = m.weight
        if len(out) >= k and w != last:
            break
        out.append((ids[m.docid - 1], w))
        last = w
    return out


def read_top(path):
    """{query: [(chunk ID, score string)]} from a top-with-ties file."""
    tops = {}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            tops[int(cols[0])] = [tuple(c.split(" ", 1)) for c in cols[1:]]
    return tops


def split_cut(top, k):
    """(the top k as a set, hits scored strictly above the k-th, hits tied
    with the k-th anywhere in the list); with k hits or fewer there is no cut."""
    ids = [c for c, _ in top]
    head = set(ids[:k])
    if len(top) <= k:
        return head, head, set()
    cut = top[k - 1][1]
    above = {c for c, s in top if s != cut and c in head}
    tied = {c for c, s in top if s == cut}
    return head, above, tied


def best_overlap(a, b, k):
    """The largest |A ∩ B| over every order among equal scores at the cuts:
    A is A's hits above its cut plus any k-|above| of its tied hits, B the same."""
    _, a_above, a_tied = split_cut(a, k)
    _, b_above, b_tied = split_cut(b, k)
    xa = min(k, len(a)) - len(a_above)  # slots A fills from its tied hits
    xb = min(k, len(b)) - len(b_above)
    base = len(a_above & b_above)
    p = min(len(a_above & b_tied), xb)  # B may pick A's sure hits among its ties
    q = min(len(b_above & a_tied), xa)
    r = min(len(a_tied & b_tied), xa - q, xb - p)
    return base + p + q + r


def cmd_overlap(args):
    a, b = read_top(args.a), read_top(args.b)
    name_a, name_b = args.names.split(",")
    k = args.k
    exact, ties = [], []
    skipped = 0
    for i in sorted(a):
        ta, tb = a[i], b.get(i, [])
        n = min(k, max(len(ta), len(tb)))
        if n == 0:
            skipped += 1
            continue
        ha, hb = set(c for c, _ in ta[:k]), set(c for c, _ in tb[:k])
        exact.append(len(ha & hb) / n)
        ties.append(best_overlap(ta, tb, k) / n)
    exact.sort()
    ties.sort()
    print("overlap top-%d %s vs %s queries=%d (no hits: %d): mean=%.3f p5=%.3f median=%.3f; "
          "ties at the cut counted as matches: mean=%.3f p5=%.3f median=%.3f"
          % (k, name_a, name_b, len(exact), skipped, statistics.mean(exact), pct(exact, 0.05),
             statistics.median(exact), statistics.mean(ties), pct(ties, 0.05), statistics.median(ties)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("info")
    p = sub.add_parser("build")
    p.add_argument("terms", help="directory written by retrievalbench terms")
    p.add_argument("db", help="Xapian database to create (replaced)")
    p = sub.add_parser("search")
    p.add_argument("db")
    p.add_argument("queries", help="queries.tsv.gz from retrievalbench terms")
    p.add_argument("--weight", default="ntn", help="ntn (TfIdfWeight('ntn')) or bm25 (BM25Weight())")
    p.add_argument("--k", type=int, default=20000)
    p.add_argument("--exact", action="store_true", help="count every match (check_at_least = all documents)")
    p.add_argument("--ids", help="write each query's top ids-k hits and those tied with the last (gzip TSV)")
    p.add_argument("--ids-k", type=int, default=1000)
    p = sub.add_parser("overlap")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--k", type=int, default=1000)
    p.add_argument("--names", default="a,b")
    args = ap.parse_args()
    {"info": cmd_info, "build": cmd_build, "search": cmd_search, "overlap": cmd_overlap}[args.cmd](args)


if __name__ == "__main__":
    main()
