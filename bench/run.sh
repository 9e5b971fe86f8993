#!/usr/bin/env bash
# Benchmarks of the foundation: sentence splitting, indexing mixed-20m,
# top-20,000 query latency with 1 and 4 shards, near-duplicate recall, and
# the unigram option. Appends to bench/results.txt. Needs ../shared/data.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/knobs.sh
DATA=${DATA:-../shared/data}
WORK=${WORK:-out/bench}
RES=bench/results.txt
CORPUS=$DATA/corpus/mixed-20m.jsonl.gz
STS=$DATA/eval/stsb-dev.tsv
[ -f "$CORPUS" ] || { echo "bench: $CORPUS not found" >&2; exit 1; }
mkdir -p "$WORK"
make build
go build -o bin/retrievalbench ./bench/retrievalbench

log() { echo "$*" | tee -a "$RES"; }
log ""
log "== $(date -u +%Y-%m-%dT%H:%MZ) commit $(git rev-parse --short HEAD) on $(nproc) cores"
bench_knobs DATA WORK | tee -a "$RES"

# 1. Sentence splitting (first 20 MB of mixed-20m paragraphs).
go test -run '^$' -bench 'Split' -benchtime 3x ./retrieval/corpus | grep -E '^Benchmark' | tee -a "$RES"
go test -run '^$' -bench 'ShardWriter' -benchtime 2x ./retrieval | grep -E '^Benchmark' | tee -a "$RES"

# 2. Indexing mixed-20m: whole index job (ingest, index, Parquet tables).
index_job() { # name shards extra-flags...
  local name=$1 shards=$2; shift 2
  rm -rf "$WORK/$name"
  local t0=$(date +%s.%N)
  bin/index --input="$CORPUS" --output="$WORK/$name" --shards="$shards" "$@" > "$WORK/$name.log"
  local t1=$(date +%s.%N)
  local chunks=$(awk '$1=="index/chunks_indexed"{print $2}' "$WORK/$name.log")
  local bytes=$(du -sb "$WORK/$name/index" | cut -f1)
  log "$(awk -v n="$name" -v s="$shards" -v c="$chunks" -v a="$t0" -v b="$t1" -v z="$bytes" \
    'BEGIN{printf "index %s shards=%d chunks=%d job_seconds=%.1f chunks_per_s=%.0f index_MiB=%.1f", n, s, c, b-a, c/(b-a), z/1048576}')"
}
index_job bi4 4 --unigrams=false
index_job bi1 1 --unigrams=false
index_job uni4 4 --unigrams

# 3. Top-20,000 latency over 1,000 STS-B dev sentences.
for name in bi1 bi4 uni4; do
  bin/retrievalbench latency -index "$WORK/$name/index" -queries "$STS" -n 1000 -k 20000 | tee -a "$RES"
done

# 4. Near-duplicate recall: two words changed, original chunk in the top 10.
for name in bi4 uni4; do
  bin/retrievalbench neardup -index "$WORK/$name/index" -sentences "$WORK/$name/sentences/*.parquet" -n 2000 | tee -a "$RES"
done
