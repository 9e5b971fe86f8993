#!/usr/bin/env bash
# Label quality, end to end, in one command:
#
#   bench/labels.sh CORPUS STS_FILE...
#
# Indexes CORPUS and trains the default labeler's model on it (or reuses
# both from an earlier run with the same corpus), then for each STS file
# (score<TAB>s1<TAB>s2 with a header) prints one table, Spearman x100 on all
# its pairs: the unigram TF-IDF cosine (the bar), its stemmed variant, the
# contrastive model's own sentence-vector cosine, Origin (Eq. 4 alone) over
# retrieved contexts, over random contexts, the hybrid labeler, and a
# surrogate trained only on pairs harvested from CORPUS (with its learning
# curve; the setting chosen on the train files on 2026-11-29: the labels'
# alignment part pushed a quarter away from the student's start,
# --label=align:1.25,embed:-0.25, 6 epochs at lr 0.003, --anchor=1e-7). With PAPER=1 it also trains the paper's coherence and infilling
# models (PAPER_STEPS steps each) and adds Origin with the paper's four terms
# on PAPER_PAIRS pairs of each file.
#
# Settings were chosen on STS-B train; report on other files. Everything is
# appended to bench/results.txt with the time of each step.
#
# Environment: OUT (default out/labels), THREADS (training threads, default
# all), HARVEST_SAMPLE (fraction of corpus sentences per harvest, default
# 0.003), HARVEST_WINDOWS (harvests over consecutive, disjoint windows of
# that size, whose pairs train the surrogate together, default 6: a
# harvest's memory grows with its pairs, and one of about 18K pairs fits
# this machine), HARVEST_PRESET (default small), SIZES (surrogate
# learning-curve sizes, default 1000,3000,10000,30000,100000,0), PAPER,
# PAPER_STEPS (default 3000), PAPER_PAIRS (default 150).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/knobs.sh
if [ $# -lt 2 ]; then
  echo "usage: bench/labels.sh CORPUS STS_FILE..." >&2
  exit 2
fi
CORPUS=$1
shift
OUT=${OUT:-out/labels}
HARVEST_SAMPLE=${HARVEST_SAMPLE:-0.003}
HARVEST_WINDOWS=${HARVEST_WINDOWS:-6}
HARVEST_PRESET=${HARVEST_PRESET:-small}
SIZES=${SIZES:-1000,3000,10000,30000,100000,0}
PAPER=${PAPER:-0}
PAPER_STEPS=${PAPER_STEPS:-3000}
PAPER_PAIRS=${PAPER_PAIRS:-150}
RES=bench/results.txt
name=$(basename "$CORPUS" | sed 's/\..*//')
dir=$OUT/$name
mkdir -p "$dir"
log() { echo "$*" | tee -a "$dir/labels.log"; }
step() { # step NAME command...: runs and times a step
  local t0=$SECONDS
  log "-- $1: ${*:2}"
  "${@:2}" > "$dir/$1.log" 2>&1 || { tail -20 "$dir/$1.log"; exit 1; }
  log "   $1 took $((SECONDS - t0)) s"
}
start=$SECONDS
: > "$dir/labels.log"
log "== $(date -u +%Y-%m-%dT%H:%MZ) commit $(git rev-parse --short HEAD): bench/labels.sh $CORPUS $*"
bench_knobs OUT HARVEST_SAMPLE HARVEST_WINDOWS HARVEST_PRESET SIZES PAPER PAPER_STEPS PAPER_PAIRS THREADS | tee -a "$dir/labels.log"
log "CPU: $(bench/cpu.sh), $(nproc) threads; kernel $(uname -r)"
make -s build

# The corpus index and tables, and the default labeler's model.
if [ ! -f "$dir/corpus/index/ctxsim-index.json" ]; then
  step index bin/index --input="$CORPUS" --output="$dir/corpus" --shards=2
fi
if [ ! -f "$dir/models/ctx.json" ]; then
  step train bin/train --input="$CORPUS" --output="$dir/models" --models=ctx ${THREADS:+--threads=$THREADS}
  grep -E '^ctx' "$dir/train.log" | tee -a "$dir/labels.log"
fi
if [ "$PAPER" = 1 ] && [ ! -f "$dir/models-paper/gen.json" ]; then
  # The paper's two models, one job each, side by side.
  step train-paper bash -c "bin/train --input='$CORPUS' --output='$dir/models-paper' --models=disc --preset=base \
      --disc_steps=$PAPER_STEPS > '$dir/train-disc.log' 2>&1 &
    bin/train --input='$CORPUS' --output='$dir/models-paper' --models=gen --preset=base --gen_steps=$PAPER_STEPS \
      > '$dir/train-gen.log' 2>&1; wait"
fi

# Harvested pairs for the surrogate: the default labeler on samples of the
# corpus's sentences (disjoint windows of their ID hashes), two pairs per
# stratum per sentence.
pairs=""
for w in $(seq 0 $((HARVEST_WINDOWS - 1))); do
  h=$dir/harvest-$w
  from=$(awk -v w="$w" -v r="$HARVEST_SAMPLE" 'BEGIN { printf "%.6f", w * r }')
  if [ ! -f "$h/summary.json" ]; then
    step "harvest-$w" /usr/bin/time -f 'harvest-'"$w"': %e s wall, %U+%S s CPU, %M KB peak memory' \
      bin/harvest --corpus="$dir/corpus" --model="$dir/models" --output="$h" \
      --preset="$HARVEST_PRESET" --sample="$HARVEST_SAMPLE" --sample_from="$from" \
      --pair_quota=near:2,mid:2,far:2,random:2 --print=5
    grep -E '^harvest: [0-9]+ pairs|^harvest-[0-9]+: .* peak memory' "$dir/harvest-$w.log" | tee -a "$dir/labels.log"
  fi
  pairs=${pairs:+$pairs,}$h/pairs
done

for sts in "$@"; do
  s=$(basename "$sts" .tsv)
  ev=$dir/eval-$s
  step "evaluate-$s" bin/evaluate --sts="$sts" --index="$dir/corpus/index" --chunks="$dir/corpus/chunks/*.parquet" \
    --model="$dir/models" --output="$ev" --preset=default --variants=origin,random_contexts,pearson,cosine,ensemble
  origins=$ev
  if [ "$PAPER" = 1 ]; then
    step "evaluate-paper-$s" bin/evaluate --sts="$sts" --index="$dir/corpus/index" \
      --chunks="$dir/corpus/chunks/*.parquet" --model="$dir/models-paper" --output="$ev-paper" --preset=paper_demo \
      --pairs="$PAPER_PAIRS" --variants=origin,random_contexts
  fi
  sur=$dir/surrogate-$s
  step "surrogate-$s" bin/surrogate --pairs="$pairs" --model="$dir/models" --output="$sur" \
    --sts="$sts" --chunks="$dir/corpus/chunks/*.parquet" --objective=l2 --init=ctx --max_pairs="$SIZES" \
    --label=align:1.25,embed:-0.25 --epochs=6 --lr=0.003 --anchor=0.0000001 --origin="$origins"
  step "surrogate-random-$s" bin/surrogate --pairs="$pairs" --model="$dir/models" \
    --output="$sur-random" --sts="$sts" --chunks="$dir/corpus/chunks/*.parquet" --objective=l2 --init=random \
    --max_pairs="$SIZES" --epochs=5 --lr=0.01
  {
    echo ""
    echo "## $sts: Spearman x100, all pairs"
    sed -n '/^variant/,/^evaluate: done/p' "$dir/evaluate-$s.log"
    if [ "$PAPER" = 1 ]; then
      echo "paper's four terms (models trained $PAPER_STEPS steps), $PAPER_PAIRS pairs spread over the file:"
      sed -n '/^variant/,/^evaluate: done/p' "$dir/evaluate-paper-$s.log"
    fi
    echo "surrogate (mean encoder from the contrastive model's table, l2 on the labels' alignment part pushed from the start, anchored):"
    sed -n '/^encoder/,$p' "$dir/surrogate-$s.log"
    echo "surrogate (mean encoder from random vectors, l2 on the harvested labels):"
    sed -n '/^encoder/,$p' "$dir/surrogate-random-$s.log"
  } | tee -a "$dir/labels.log"
done
log "total $((SECONDS - start)) s"
cat "$dir/labels.log" >> "$RES"
