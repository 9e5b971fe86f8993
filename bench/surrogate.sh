#!/usr/bin/env bash
# Surrogate learning curve: bin/surrogate on the pairs of a harvest ($PAIRS),
# every objective at each training-set size ($SIZES), on STS-B dev beside the
# TF-IDF and mean-word-vector baselines, the untrained encoder, and Origin's
# rows from a bin/evaluate run on the same STS pairs ($ORIGIN, optional).
# Appends the table and the learning curve to bench/results.txt.
#
#   PAIRS=out/bench/harvest-lc/pairs ORIGIN=out/bench/origin-demo-0 bench/surrogate.sh
#   ENCODER=bilstm OBJECTIVES=l2,multisim SIZES=1000,0 EPOCHS=2 LR=0.0005 bench/surrogate.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/knobs.sh
MODEL=${MODEL:-out/train/mixed-20m}
PAIRS=${PAIRS:-out/bench/harvest-lc/pairs}
CHUNKS=${CHUNKS:-out/bench/m2/chunks/*.parquet}
SIZES=${SIZES:-1000,3000,10000,0}
OBJECTIVES=${OBJECTIVES:-l2,contrastive,multisim}
ENCODER=${ENCODER:-mean}
INIT=${INIT:-random}
EPOCHS=${EPOCHS:-5}
LR=${LR:-0.01}
STS_PAIRS=${STS_PAIRS:-0}
RES=bench/results.txt
make -s build
[ "$ENCODER" = mean ] || INIT=""
out=${OUT:-out/bench/surrogate-$ENCODER${INIT:+-$INIT}}
args=(--pairs="$PAIRS" --model="$MODEL" --sts=../shared/data/eval/stsb-dev.tsv --sts_pairs="$STS_PAIRS"
  --chunks="$CHUNKS" --output="$out" --objective="$OBJECTIVES" --max_pairs="$SIZES" --epochs="$EPOCHS" --lr="$LR"
  --encoder="$ENCODER")
[ -z "$INIT" ] || args+=(--init="$INIT")
[ -z "${ORIGIN:-}" ] || args+=(--origin="$ORIGIN")
bin/surrogate "${args[@]}" | tee "$out.log"
{
  echo ""
  echo "== $(date -u +%Y-%m-%dT%H:%MZ) commit $(git rev-parse --short HEAD): surrogate learning curve, encoder $ENCODER${INIT:+, init $INIT}, pairs $PAIRS, models $MODEL${NOTE:+ ($NOTE)}"
  bench_knobs MODEL PAIRS CHUNKS SIZES OBJECTIVES ENCODER INIT EPOCHS LR STS_PAIRS OUT ORIGIN NOTE
  echo "bin/surrogate ${args[*]}"
  grep '^surrogate: [0-9]' "$out.log" || true
  sed -n '/^encoder /,$p' "$out.log"
} >> "$RES"
