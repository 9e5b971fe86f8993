#!/usr/bin/env bash
# Our retrieval against Xapian on exactly the same terms: top-20,000 chunks
# for 1,000 STS-B dev sentences (the queries of `retrievalbench latency`)
# over the single-shard bigram index of mixed-20m.
#
# 1. Builds bin/index and bin/retrievalbench; indexes mixed-20m into
#    $WORK/x20 (one shard, bigrams only) unless that index exists.
# 2. Exports the chunks' and queries' bigrams as our analyzer gives them
#    (`retrievalbench terms`), and builds a compacted Xapian database from
#    them (bench/xapian.py build): one document per chunk, each bigram with
#    its within-chunk frequency. The database is kept and reused while the
#    exported terms are byte for byte the same (FORCE_BUILD=1 rebuilds).
# 3. Times bleve (GOMAXPROCS=1), Xapian with TfIdfWeight('ntn'), the same
#    counting every match as bleve does (ntn-exact: no skipping of
#    documents that cannot reach the top k), and Xapian with BM25, one after
#    the other, interleaved over ROUNDS rounds (default 3) so that a busy
#    spell of the shared machine falls on all of them; the summary gives
#    min / median / max over the rounds. Xapian's p50/p95/mean time
#    get_mset; read_* adds reading every hit's document ID and weight out
#    of the MSet in Python.
# 4. Compares the top-1,000 chunk lists of the three per query (overlap
#    |A ∩ B| / 1000), as is and with ties at the cut counted as matches.
#
# Needs ../shared/data and Debian's python3-xapian (run by /usr/bin/python3);
# a benchmark, not a test: nothing else needs Xapian. PROFILE=1 adds a CPU
# profile of bleve's queries (GOMAXPROCS=1, `go tool pprof -top`, flat and
# cumulative). BEFORE=PATH also times another retrievalbench binary (say,
# one built at an earlier commit) in every round, on the same index.
# Appends a dated block to bench/results.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/knobs.sh
DATA=${DATA:-../shared/data}
WORK=${WORK:-out/bench}
ROUNDS=${ROUNDS:-3}
N=${N:-1000}
K=20000
TOPK=1000
PY=/usr/bin/python3
RES=bench/results.txt
CORPUS=$DATA/corpus/mixed-20m.jsonl.gz
STS=$DATA/eval/stsb-dev.tsv
IDX=$WORK/x20
TERMS=$WORK/x20-terms
DB=$WORK/x20-xapian

if ! "$PY" -c 'import xapian' 2>/dev/null; then
  echo "bench/xapian.sh: the Xapian Python bindings are missing: apt-get install python3-xapian" >&2
  exit 1
fi
for f in "$CORPUS" "$STS"; do
  [ -f "$f" ] || { echo "bench/xapian.sh: $f not found (set DATA)" >&2; exit 1; }
done
mkdir -p "$WORK"
go build -o bin/index ./pipelines/index
go build -o bin/retrievalbench ./bench/retrievalbench
if [ ! -f "$IDX/index/ctxsim-index.json" ] || [ ! -f "$IDX/chunks/_manifest.json" ]; then
  echo "indexing $CORPUS into $IDX" >&2
  rm -rf "$IDX"
  bin/index --input="$CORPUS" --output="$IDX" --shards=1 --unigrams=false >"$IDX.log"
fi

log() { echo "$*" | tee -a "$RES"; }
dirty=$(git diff --quiet HEAD -- . ':!bench/results.txt' && git diff --cached --quiet || echo "+dirty")
log ""
log "== $(date -u +%Y-%m-%dT%H:%MZ) commit $(git rev-parse --short HEAD)$dirty: bleve vs Xapian, top-$K over $N STS-B dev queries, mixed-20m one shard bigrams, $ROUNDS interleaved rounds${NOTE:+ ($NOTE)}${BEFORE:+; before: $BEFORE}"
bench_knobs DATA WORK ROUNDS N PROFILE FORCE_BUILD BEFORE NOTE | tee -a "$RES"
info=$("$PY" bench/xapian.py info)
log "$(head -1 <<<"$info"); load $(cut -d' ' -f1-3 /proc/loadavg)"
log "threads: bleve GOMAXPROCS=1 (one shard: one search goroutine); $(tail -1 <<<"$info" | sed 's/^xapian: /Xapian /')"
log "bleve: $(go list -m -f '{{.Path}} {{.Version}}' github.com/blevesearch/bleve/v2), TF-IDF (sqrt tf, 1/sqrt(length) norm, idf 1+ln(N/(df+1)), coord); index_MiB=$(du -sb "$IDX/index" | awk '{printf "%.1f", $1/1048576}')"

bin/retrievalbench terms -index "$IDX/index" -queries "$STS" -n "$N" -out "$TERMS" | tee -a "$RES"
sum=$(sha256sum "$TERMS/chunks.tsv.gz" | cut -c1-64)
if [ "${FORCE_BUILD:-0}" != 1 ] && [ -d "$DB" ] && [ -f "$DB.ids" ] && [ "$(cat "$DB.terms-sha256" 2>/dev/null)" = "$sum" ]; then
  log "xapian build: reused $DB, built from the same terms ($(cat "$DB.build")); index_MiB=$(du -sb "$DB" | awk '{printf "%.1f", $1/1048576}')"
else
  rm -f "$DB.terms-sha256"
  "$PY" bench/xapian.py build "$TERMS" "$DB" | tee "$DB.build" | tee -a "$RES"
  echo "$sum" >"$DB.terms-sha256"
fi

raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
for r in $(seq "$ROUNDS"); do
  bids=() nids=() mids=()
  if [ "$r" = 1 ]; then
    bids=(-ids "$WORK/x20-top-bleve.tsv.gz" -ids_k "$TOPK")
    nids=(--ids "$WORK/x20-top-ntn.tsv.gz" --ids-k "$TOPK")
    mids=(--ids "$WORK/x20-top-bm25.tsv.gz" --ids-k "$TOPK")
  fi
  GOMAXPROCS=1 bin/retrievalbench latency -index "$IDX/index" -queries "$STS" -n "$N" -k "$K" "${bids[@]}" |
    sed 's/^latency /bleve /' >>"$raw"
  if [ -n "${BEFORE:-}" ]; then
    GOMAXPROCS=1 "$BEFORE" latency -index "$IDX/index" -queries "$STS" -n "$N" -k "$K" |
      sed 's/^latency /before /' >>"$raw"
  fi
  "$PY" bench/xapian.py search "$DB" "$TERMS/queries.tsv.gz" --weight ntn --k "$K" "${nids[@]}" >>"$raw"
  "$PY" bench/xapian.py search "$DB" "$TERMS/queries.tsv.gz" --weight ntn --exact --k "$K" >>"$raw"
  "$PY" bench/xapian.py search "$DB" "$TERMS/queries.tsv.gz" --weight bm25 --k "$K" "${mids[@]}" >>"$raw"
  echo "round $r of $ROUNDS done" >&2
done
log "-- raw, in the order run"
tee -a "$RES" <"$raw"
log "-- summary: min / median / max over the rounds"
awk '
  { side = $1 == "bleve" || $1 == "before" ? $1 : $1 " " $2; sub(/weight=/, "", side)
    for (i = 2; i <= NF; i++) if (split($i, kv, "=") == 2 && kv[1] ~ /^(p50|p95|qps|mean_hits|read_p50|read_p95)$/) {
      v = kv[2]; sub(/ms$/, "", v); key = sprintf("%-18s %-9s", side, kv[1])
      if (!(key in cnt)) order[++nk] = key; vals[key, ++cnt[key]] = v + 0 } }
  END {
    for (j = 1; j <= nk; j++) {
      key = order[j]; n = cnt[key]
      for (p = 1; p <= n; p++) s[p] = vals[key, p]
      for (p = 1; p <= n; p++) for (q = p + 1; q <= n; q++) if (s[q] < s[p]) { t = s[p]; s[p] = s[q]; s[q] = t }
      printf "%s %10.1f %10.1f %10.1f\n", key, s[1], (n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2), s[n]
    }
  }' "$raw" | tee -a "$RES"
log "-- top-$TOPK overlap per query (|A ∩ B| / $TOPK; fewer hits: / their number)"
"$PY" bench/xapian.py overlap "$WORK/x20-top-bleve.tsv.gz" "$WORK/x20-top-ntn.tsv.gz" --k "$TOPK" --names bleve,xapian-ntn | tee -a "$RES"
"$PY" bench/xapian.py overlap "$WORK/x20-top-bleve.tsv.gz" "$WORK/x20-top-bm25.tsv.gz" --k "$TOPK" --names bleve,xapian-bm25 | tee -a "$RES"
"$PY" bench/xapian.py overlap "$WORK/x20-top-ntn.tsv.gz" "$WORK/x20-top-bm25.tsv.gz" --k "$TOPK" --names xapian-ntn,xapian-bm25 | tee -a "$RES"

log "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ "${PROFILE:-0}" = 1 ]; then
  prof=$WORK/x20-bleve.pprof
  GOMAXPROCS=1 bin/retrievalbench latency -index "$IDX/index" -queries "$STS" -n "$N" -k "$K" -cpuprofile "$prof" |
    sed 's/^latency /bleve profiled /' | tee -a "$RES"
  log "-- bleve CPU profile ($prof), top 20 by flat time"
  go tool pprof -top -nodecount=20 bin/retrievalbench "$prof" 2>/dev/null | sed -n '/^Showing\|flat%/,$p' | tee -a "$RES"
  log "-- the same, top 40 by cumulative time"
  go tool pprof -top -cum -nodecount=40 bin/retrievalbench "$prof" 2>/dev/null | sed -n '/flat%/,$p' | tee -a "$RES"
fi
