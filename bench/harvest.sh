#!/usr/bin/env bash
# Harvest cost on mixed-2m: the harvest job at the demo preset and at the
# paper's settings, with the models in $MODEL, timed by CPU seconds (user +
# system) so that pairs per core-hour do not depend on how many cores the
# run had. Appends one line per preset and pair quota to bench/results.txt.
#
# QUOTAS lists pair quotas (pairs each sentence owns per stratum, default
# "1"): the same sentences' context sets are built at each, so the lines
# show how the cost per pair falls as more pairs share each set. The
# block starts with the CPU, the kernel and the thread count. The corpus's
# sentence vectors are encoded once (bin/encode) and loaded by every run.
#
#   MODEL=out/train/mixed-20m bench/harvest.sh
#   PRESETS=paper:0.0002 QUOTAS="1 4" MODEL=out/cost/models bench/harvest.sh
#
# FLAGS adds harvest flags to every run and TAG names its output
# directories apart (out/bench/harvest-<preset>-q<quota><TAG>), e.g.
#
#   PRESETS=paper:0.00025 QUOTAS=8 MODEL=out/cost/models FLAGS=--gen_precision=bf16 TAG=-bf16 bench/harvest.sh
#
# and go run ./bench/harvestcmp compares two runs' labels.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/knobs.sh
MODEL=${MODEL:-out/train/mixed-20m}
PRESETS=${PRESETS:-"demo:0.002 paper:0.0001"}
QUOTAS=${QUOTAS:-1}
FLAGS=${FLAGS:-}
TAG=${TAG:-}
C=../shared/data/corpus/mixed-2m.jsonl.gz
RES=bench/results.txt
make -s build
[ -f out/bench/m2/index/ctxsim-index.json ] ||
  bin/index --input=$C --output=out/bench/m2 --shards=1 --parquet_shards=2
# The corpus sentences' coherence vectors are stored once per model
# (bin/encode keeps a table already complete), so no run spends its CPU on
# encoding the corpus (DESIGN: stored vectors; labels unchanged).
bin/encode --corpus=out/bench/m2 --model="$MODEL" > out/bench/m2-encode.log 2>&1 ||
  { tail -5 out/bench/m2-encode.log; exit 1; }
echo "" >> "$RES"
echo "== $(date -u +%Y-%m-%dT%H:%MZ) commit $(git rev-parse --short HEAD): harvest cost on mixed-2m, models $MODEL${FLAGS:+, flags $FLAGS}${NOTE:+ ($NOTE)}" | tee -a "$RES"
bench_knobs MODEL PRESETS QUOTAS FLAGS TAG NOTE | tee -a "$RES"
echo "cpu: $(bench/cpu.sh) ($(nproc) threads, all used by Prism); kernel $(uname -r); matrix multiply: the default (--blas=go)" | tee -a "$RES"
for ps in $PRESETS; do
 for q in $QUOTAS; do
  preset=${ps%%:*} sample=${ps##*:}
  out=out/bench/harvest-$preset-q$q$TAG
  /usr/bin/time -f "%U %S %e %M" -o /tmp/harvest-time bin/harvest --corpus=out/bench/m2 --model="$MODEL" \
    --output="$out" --preset="$preset" --sample="$sample" --print=0 \
    --pair_quota="near:$q,mid:$q,far:$q,random:$q" $FLAGS > "$out.log" 2>&1
  read -r user sys wall rss < /tmp/harvest-time
  python3 - "$out/summary.json" "$preset" "$sample" "$user" "$sys" "$wall" "$q" "$rss" <<'PY' | tee -a bench/results.txt
import json, sys
s = json.load(open(sys.argv[1]))
preset, sample = sys.argv[2], sys.argv[3]
user, sysc, wall = map(float, sys.argv[4:7])
quota, rss = sys.argv[7], int(sys.argv[8])
cpu = user + sysc
pairs = s["pairs_labeled"]
c = s["counters"]
st = s["stage_seconds"]
print(f"harvest preset={preset} sample={sample} quota={quota} sentences={s['context_sets']} pairs={pairs} "
      f"mean_set_size={s['mean_set_size']:.1f} gen_evals_per_pair={s['gen_evals_per_pair']:.0f} "
      f"(context_sets {s['gen_evals']['context_sets']}, labels {s['gen_evals']['labels']}) "
      f"corpus_sentences_encoded={c.get('harvest/sentences_encoded', 0)} "
      f"stage_s=context_sets:{st['context_sets']:.0f},labels:{st['labels']:.0f} "
      f"wall_s={wall:.0f} cpu_s={cpu:.0f} pairs_per_core_hour={pairs / (cpu / 3600):.0f} "
      f"cpu_s_per_pair={cpu / pairs:.2f} core_hours_per_100M_pairs={1e8 / (pairs / (cpu / 3600)):.3g} "
      f"label_cache_hits={c.get('harvest/cache_hits_labels', 0)} peak_rss_mib={rss / 1024:.0f}")
PY
 done
done
