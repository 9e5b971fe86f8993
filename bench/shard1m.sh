#!/usr/bin/env bash
# Top-20,000 latency on one shard of about a million chunks: mixed-20m's
# chunks table indexed three times over into one shard (retrievalbench
# build; the copies' IDs are suffixed, so every chunk has two twins tied
# with it in score), queried with the 1,000 STS-B dev sentences on one
# thread (GOMAXPROCS=1), ROUNDS interleaved rounds of each retrievalbench
# binary in BINS (default: the current build), and near-duplicate recall on
# the same shard. Appends a block to bench/results.txt.
#
#   bench/shard1m.sh
#   BINS="/tmp/rb-before bin/retrievalbench" ROUNDS=3 bench/shard1m.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/knobs.sh
DATA=${DATA:-../shared/data}
WORK=${WORK:-out/bench/shard1m}
REPEAT=${REPEAT:-3}
ROUNDS=${ROUNDS:-3}
RES=bench/results.txt
make -s build
go build -o bin/retrievalbench ./bench/retrievalbench
BINS=${BINS:-bin/retrievalbench}
mkdir -p "$WORK"
[ -f "$WORK/corpus/chunks/_manifest.json" ] ||
  bin/index --input="$DATA/corpus/mixed-20m.jsonl.gz" --output="$WORK/corpus" --shards=1 --unigrams=false > "$WORK/index.log" 2>&1
[ -f "$WORK/x$REPEAT/ctxsim-index.json" ] ||
  bin/retrievalbench build -chunks "$WORK/corpus/chunks/*.parquet" -repeat "$REPEAT" -out "$WORK/x$REPEAT" | tee "$WORK/build.txt"
{
  echo ""
  echo "== $(date -u +%Y-%m-%dT%H:%MZ) commit $(git rev-parse --short HEAD): one shard of mixed-20m x$REPEAT, $(cat "$WORK/build.txt"), index $(du -sLm "$WORK/x$REPEAT" | cut -f1) MiB"
  bench_knobs DATA WORK REPEAT ROUNDS BINS
  echo "cpu: $(bench/cpu.sh) ($(nproc) threads; queries on one: GOMAXPROCS=1); kernel $(uname -r)"
} | tee -a "$RES"
for r in $(seq "$ROUNDS"); do
  for b in $BINS; do
    echo "round $r $b: $(GOMAXPROCS=1 "$b" latency -index "$WORK/x$REPEAT" -queries "$DATA/eval/stsb-dev.tsv" -n 1000 -k 20000)" | tee -a "$RES"
  done
done
GOMAXPROCS=1 bin/retrievalbench neardup -index "$WORK/x$REPEAT" -sentences "$WORK/corpus/sentences/*.parquet" -n 2000 | tee -a "$RES"
