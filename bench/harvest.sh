#!/usr/bin/env bash
# Harvest cost on mixed-2m: the harvest job at the demo preset and at the
# paper's settings, with the models in $MODEL, timed by CPU seconds (user +
# system) so that pairs per core-hour do not depend on how many cores the
# run had. Appends one line per preset to bench/results.txt.
#
#   MODEL=out/train/mixed-20m bench/harvest.sh
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${MODEL:-out/train/mixed-20m}
PRESETS=${PRESETS:-"demo:0.002 paper:0.0001"}
C=../shared/data/corpus/mixed-2m.jsonl.gz
RES=bench/results.txt
make -s build
[ -f out/bench/m2/index/ctxsim-index.json ] ||
  bin/index --input=$C --output=out/bench/m2 --shards=1 --parquet_shards=2
echo "" >> "$RES"
echo "== $(date -u +%Y-%m-%dT%H:%MZ) commit $(git rev-parse --short HEAD): harvest cost on mixed-2m, models $MODEL${NOTE:+ ($NOTE)}" | tee -a "$RES"
for ps in $PRESETS; do
  preset=${ps%%:*} sample=${ps##*:}
  out=out/bench/harvest-$preset
  /usr/bin/time -f "%U %S %e" -o /tmp/harvest-time bin/harvest --corpus=out/bench/m2 --model="$MODEL" \
    --output="$out" --preset="$preset" --sample="$sample" --print=0 > "$out.log" 2>&1
  read -r user sys wall < /tmp/harvest-time
  python3 - "$out/summary.json" "$preset" "$sample" "$user" "$sys" "$wall" <<'PY' | tee -a bench/results.txt
import json, sys
s = json.load(open(sys.argv[1]))
preset, sample = sys.argv[2], sys.argv[3]
user, sysc, wall = map(float, sys.argv[4:7])
cpu = user + sysc
pairs = s["pairs_labeled"]
c = s["counters"]
st = s["stage_seconds"]
print(f"harvest preset={preset} sample={sample} sentences={s['context_sets']} pairs={pairs} "
      f"mean_set_size={s['mean_set_size']:.1f} gen_evals_per_pair={s['gen_evals_per_pair']:.0f} "
      f"(context_sets {s['gen_evals']['context_sets']}, labels {s['gen_evals']['labels']}) "
      f"corpus_sentences_encoded={c.get('harvest/sentences_encoded', 0)} "
      f"stage_s=context_sets:{st['context_sets']:.0f},labels:{st['labels']:.0f} "
      f"wall_s={wall:.0f} cpu_s={cpu:.0f} pairs_per_core_hour={pairs / (cpu / 3600):.0f} "
      f"core_hours_per_100M_pairs={1e8 / (pairs / (cpu / 3600)):.3g}")
PY
done
