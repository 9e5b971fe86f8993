#!/usr/bin/env bash
# Refresh cost on mixed-2m: a first version on a base corpus (the documents
# of mixed-2m less the 1/11 with the lowest ID hashes), then a refresh after those
# documents (10% of the base) are added back, against a full run on the final corpus. Timed by
# CPU seconds (user + system); appends the comparison to bench/results.txt.
#
#   MODEL=out/train/mixed-20m SAMPLE=0.001 bench/refresh.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/knobs.sh
MODEL=${MODEL:-out/train/mixed-20m}
SAMPLE=${SAMPLE:-0.001}
PRESET=${PRESET:-demo}
W=out/bench/refresh
RES=bench/results.txt
make -s build
go build -o bin/refreshcmp ./bench/refreshcmp
rm -rf $W && mkdir -p $W
exec > >(tee $W/report.txt) 2>&1
python3 - ../shared/data/corpus/mixed-2m.jsonl.gz $W <<'PY'
import gzip, hashlib, json, sys
src, out = sys.argv[1], sys.argv[2]
lines = gzip.open(src, "rt").readlines()
key = lambda l: hashlib.sha256(json.loads(l)["doc_id"].encode()).hexdigest()
held = set(sorted(lines, key=key)[: round(len(lines) / 11)])
with gzip.open(out + "/base.jsonl.gz", "wt") as b, gzip.open(out + "/final.jsonl.gz", "wt") as a:
    for l in lines:
        a.write(l)
        if l not in held:
            b.write(l)
n, h = len(lines), len(held)
print(f"mixed-2m: {n} documents; base holds {n - h}; the refresh adds {h} ({100 * h / (n - h):.1f}% of the base)")
PY
args="--model=$MODEL --preset=$PRESET --sample=$SAMPLE --shards=2 --parquet_shards=2"
t() { /usr/bin/time -f "%U %S %e" -o $W/$1.time "${@:2}" > $W/$1.log 2>&1; read -r u s e < $W/$1.time; echo "$1 cpu_s=$(python3 -c "print(round($u+$s))") wall_s=${e%.*}"; }
t base bin/refresh --input=$W/base.jsonl.gz --root=$W/root $args
t refresh bin/refresh --input=$W/final.jsonl.gz --root=$W/root $args
t full bin/refresh --input=$W/final.jsonl.gz --root=$W/full $args
t rerun bin/refresh --input=$W/final.jsonl.gz --root=$W/root $args
grep -q "nothing to do" $W/rerun.log && echo "rerun: nothing to do (CURRENT.json stays at $(python3 -c "import json;print(json.load(open('$W/root/CURRENT.json'))['version'])"))"
bin/refreshcmp --parent=$W/root/versions/v000001 --refresh=$W/root/versions/v000002 --full=$W/full/versions/v000001
python3 - $W <<'PY'
import json, sys
w = sys.argv[1]
def load(p): return json.load(open(p))
def cpu(name):
    u, s, e = open(f"{w}/{name}.time").read().split()
    return float(u) + float(s)
r, f = load(f"{w}/root/versions/v000002/MANIFEST.json"), load(f"{w}/full/versions/v000001/MANIFEST.json")
rs, fs = load(f"{w}/root/versions/v000002/harvest/summary.json"), load(f"{w}/full/versions/v000001/harvest/summary.json")
print(f"refresh: chunks +{r['chunks_added']} -{r['chunks_removed']} of {r['chunks']}; index fingerprint {'equals' if r['index_fingerprint'] == f['index_fingerprint'] else 'DIFFERS from'} the full run's")
print(f"refresh: sets computed {rs['context_sets_computed']} reused {rs['context_sets_reused']}; pairs labeled {rs['pairs_labeled']} copied {rs['labels_copied']}; gen evals {rs['gen_evals']}")
print(f"full:    sets computed {fs['context_sets_computed']}; pairs labeled {fs['pairs_labeled']}; gen evals {fs['gen_evals']}")
print(f"ratio refresh/full: cpu {cpu('refresh') / cpu('full'):.3f}, gen evals {rs['gen_evals'] / max(fs['gen_evals'], 1):.3f}, "
      f"stage seconds ingest {r['seconds']['ingest']:.0f}/{f['seconds']['ingest']:.0f} index {r['seconds']['index']:.0f}/{f['seconds']['index']:.0f} harvest {r['seconds']['harvest']:.0f}/{f['seconds']['harvest']:.0f}")
PY
{
  echo ""
  echo "== $(date -u +%Y-%m-%dT%H:%MZ) commit $(git rev-parse --short HEAD): refresh of mixed-2m against a full run, models $MODEL, preset $PRESET, sample $SAMPLE"
  bench_knobs MODEL SAMPLE PRESET
  cat $W/report.txt
} >> "$RES"
