#!/usr/bin/env bash
# Label quality: bin/evaluate on STS-B dev against the mixed-20m index with
# the models in $MODEL, every ablation and both baselines in one run.
# Appends the table to bench/results.txt.
#
#   MODEL=out/train/mixed-20m PAIRS=200 bench/origin.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/knobs.sh
MODEL=${MODEL:-out/train/mixed-20m}
PAIRS=${PAIRS:-0}
PRESET=${PRESET:-small}
INDEX=${INDEX:-out/bench/uni4}
VARIANTS=${VARIANTS:-origin,pearson,no_disc,no_left_right,disc_only,random_contexts,no_diversity,set_20,signal_200}
RES=bench/results.txt
make -s build
[ -f $INDEX/index/ctxsim-index.json ] ||
  bin/index --input=../shared/data/corpus/mixed-20m.jsonl.gz --output=$INDEX --shards=4
out=out/bench/origin-$PRESET-$PAIRS
bin/evaluate --sts=../shared/data/eval/stsb-dev.tsv --index=$INDEX/index --chunks="$INDEX/chunks/*.parquet" \
  --model="$MODEL" --output="$out" --preset="$PRESET" --pairs="$PAIRS" --variants="$VARIANTS" ${EXTRA:-} | tee "$out.log"
{
  echo ""
  echo "== $(date -u +%Y-%m-%dT%H:%MZ) commit $(git rev-parse --short HEAD): Origin on STS-B dev, index $INDEX, models $MODEL, preset $PRESET, pairs $PAIRS ${EXTRA:-}${NOTE:+ ($NOTE)}"
  bench_knobs MODEL PAIRS PRESET INDEX VARIANTS EXTRA NOTE
  sed -n '/^variant/,/^evaluate: done/p' "$out.log"
} >> "$RES"
