#!/usr/bin/env bash
# Stored sentence vectors against vectors computed in the harvest workers.
# On CORPUS (default mixed-20m): index it once, time bin/encode for the
# models in MODEL (a model directory with the coherence model), then run
# the same harvest twice, with --vectors=none and with the stored vectors,
# and compare their pairs and context sets row by row (bench/harvestcmp).
# Appends a block to bench/results.txt: the CPU, kernel and thread count;
# encode's wall and CPU seconds, peak RSS and bytes stored; and for each
# harvest its wall and CPU seconds, corpus sentences encoded, peak RSS and
# CPU seconds per labeled pair.
#
#   MODEL=out/vb/models PRESET=paper SAMPLE=0.0002 EXTRA=--lambda=disc:1 bench/vectors.sh
#   MODEL=out/vb/models PRESET=paper_small SAMPLE=0.00005 bench/vectors.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/knobs.sh
: "${MODEL:?set MODEL to a model directory from bin/train --models=...,disc}"
CORPUS=${CORPUS:-../shared/data/corpus/mixed-20m.jsonl.gz}
OUT=${OUT:-out/bench/vectors}
PRESET=${PRESET:-paper_small}
SAMPLE=${SAMPLE:-0.0002}
EXTRA=${EXTRA:-}
RES=bench/results.txt
make -s build
go build -o bin/harvestcmp ./bench/harvestcmp
mkdir -p "$OUT"
idx=$OUT/corpus
[ -f "$idx/index/ctxsim-index.json" ] ||
  bin/index --input="$CORPUS" --output="$idx" --shards=2 --parquet_shards=4 > "$OUT/index.log" 2>&1

timed() { # timed NAME CMD...: runs CMD, leaves "user sys wall maxrss_kib" in $OUT/NAME.time
  local name=$1; shift
  /usr/bin/time -f "%U %S %e %M" -o "$OUT/$name.time" "$@" > "$OUT/$name.log" 2>&1
}

{
  echo ""
  echo "== $(date -u +%Y-%m-%dT%H:%MZ) commit $(git rev-parse --short HEAD): stored sentence vectors, corpus $(basename "$CORPUS"), models $MODEL, harvest --preset=$PRESET --sample=$SAMPLE $EXTRA"
  bench_knobs CORPUS OUT PRESET SAMPLE EXTRA MODEL REENCODE
  echo "cpu: $(bench/cpu.sh) ($(nproc) threads, all used by Prism); kernel $(uname -r); matrix multiply: --blas=go"
} | tee -a "$RES"

# The vectors are encoded once per index (REENCODE=1 encodes them again).
if [ -n "${REENCODE:-}" ] || [ ! -d "$idx/vectors" ]; then
  rm -rf "$idx/vectors"
  timed encode bin/encode --corpus="$idx" --model="$MODEL" --parquet_shards=4
  read -r u s w m < "$OUT/encode.time"
  rows=$(awk '$1=="parquetio/rows_read"{print $2}' "$OUT/encode.log")
  bytes=$(du -sb "$idx/vectors" | cut -f1)
  echo "encode sentences=$rows tables=$(ls "$idx/vectors" | tr '\n' ',' | sed 's/,$//') bytes=$bytes wall_s=$w cpu_s=$(python3 -c "print(round($u+$s))") peak_rss_mib=$((m / 1024))" | tee -a "$RES"
else
  echo "encode: the vectors in $idx/vectors were kept from an earlier run" | tee -a "$RES"
fi

for mode in none stored; do
  vec=--vectors=none
  [ "$mode" = stored ] && vec=--vectors="$idx/vectors"
  rm -rf "$OUT/harvest-$mode"
  # shellcheck disable=SC2086
  timed "harvest-$mode" bin/harvest --corpus="$idx" --model="$MODEL" --output="$OUT/harvest-$mode" \
    --preset="$PRESET" --sample="$SAMPLE" --print=0 "$vec" $EXTRA
  python3 - "$OUT/harvest-$mode/summary.json" "$mode" $(cat "$OUT/harvest-$mode.time") <<'PY' | tee -a "$RES"
import json, sys
s = json.load(open(sys.argv[1]))
mode = sys.argv[2]
user, sysc, wall, rss = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
cpu = user + sysc
c, st = s["counters"], s["stage_seconds"]
print(f"harvest vectors={mode} sentences={s['context_sets']} pairs={s['pairs_labeled']} "
      f"sentences_encoded={c.get('harvest/sentences_encoded', 0)} "
      f"stage_s=context_sets:{st['context_sets']:.0f},labels:{st['labels']:.0f} "
      f"wall_s={wall:.0f} cpu_s={cpu:.0f} cpu_s_per_pair={cpu / s['pairs_labeled']:.3g} peak_rss_mib={rss // 1024}")
PY
done
bin/harvestcmp -a "$OUT/harvest-none" -b "$OUT/harvest-stored" | tee -a "$RES"
