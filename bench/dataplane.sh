#!/usr/bin/env bash
# The harvest's data plane at scale: the whole harvest graph (sentence
# filter, retrieval, pair sampler, both CoGroupByKey joins, the labeler,
# the Parquet sink, the summary) on Prism over every sentence of mixed-2m,
# with the lexical labeler (--labeler=lexical: the TF-IDF cosine, no
# context sets, no models), so that labeling is not the bottleneck.
#
# Each point of POINTS is a pair quota; the run's peak RSS is sampled every
# 2 s, a heap profile near the peak (CTXSIM_HEAPPROFILE) says how much of
# the heap Prism's engine holds, and DuckDB counts the Parquet rows
# written. One line per point goes to bench/results.txt, under a header
# with the CPU, the kernel and the thread count.
#
# The quotas are mostly random pairs with --pair_neighbours=$NEIGHBOURS:
# linked pairs come from chunks several sentences retrieved, and their
# number grows with the square of the sentences per chunk (harvest/
# pair_links), not with the pairs kept; LINKS=1 adds the runs that measure
# that volume at the default neighbourhood on samples of the corpus.
#
# WAVES=N runs each point as bin/harvest --waves=N: N pipelines in turn,
# each holding the pairs of about 1/N of the sentences, so that the peak is
# set by a wave's pairs rather than the run's.
#
#   bench/dataplane.sh                       # the 0.95M and 2.92M points (about 20 min)
#   POINTS="near:3,random:97" GOMEMLIMIT=21GiB bench/dataplane.sh   # 10M in one pipeline: does not fit 24 GB on Prism
#   POINTS="near:3,random:97" WAVES=8 GOMEMLIMIT=8GiB bench/dataplane.sh   # 10M in eight waves
#
# LABELER=aligned (or hybrid, ensemble) runs a labeler that builds context sets (at the
# default preset, the contrastive model of MODEL, trained by
# `bin/train --models=ctx` on mixed-20m into out/bench/models when MODEL is
# not given); CORPUS and IDX choose another corpus and where its index
# goes, SAMPLE the fraction of its sentences, and EXTRA adds flags:
#
#   LABELER=aligned CORPUS=../shared/data/corpus/mixed-20m.jsonl.gz IDX=out/bench/m20 SAMPLE=0.025 \
#     POINTS="near:8,mid:24,random:24" NEIGHBOURS=50 WAVES=8 GOMEMLIMIT=7GiB bench/dataplane.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/knobs.sh
POINTS=${POINTS:-"near:3,random:7 near:3,random:27"}
NEIGHBOURS=${NEIGHBOURS:-1}
# Prism holds every element in flight; without a limit the garbage
# collector lets RSS run about 3x above the heap in use.
export GOMEMLIMIT=${GOMEMLIMIT:-16GiB}
LINKS=${LINKS:-0}
WAVES=${WAVES:-1}
CORPUS=${CORPUS:-../shared/data/corpus/mixed-2m.jsonl.gz}
C=$CORPUS
IDX=${IDX:-out/bench/m2}
LABELER=${LABELER:-lexical}
SAMPLE=${SAMPLE:-1}
EXTRA=${EXTRA:-}
MODEL=${MODEL:-}
RES=${RES:-bench/results.txt}
mkdir -p out/bench
make -s bin/index bin/harvest tools/duckdb/node_modules
[ -f $IDX/index/ctxsim-index.json ] ||
  bin/index --input=$C --output=$IDX --shards=1 --parquet_shards=2
if [ "$LABELER" != lexical ] && [ -z "$MODEL" ]; then
  MODEL=out/bench/models
  make -s bin/train
  [ -f $MODEL/ctx.json ] || bin/train --input=../shared/data/corpus/mixed-20m.jsonl.gz --output=$MODEL --models=ctx
fi
echo "" >> "$RES"
echo "== $(date -u +%Y-%m-%dT%H:%MZ) commit $(git rev-parse --short HEAD): data plane on $(basename $C .jsonl.gz) (sample $SAMPLE), $LABELER labeler, $WAVES wave(s)${GOMEMLIMIT:+, GOMEMLIMIT=$GOMEMLIMIT}${NOTE:+ ($NOTE)}" | tee -a "$RES"
bench_knobs POINTS NEIGHBOURS LINKS WAVES CORPUS IDX LABELER SAMPLE EXTRA MODEL RES GOMEMLIMIT NOTE | tee -a "$RES"
echo "cpu: $(bench/cpu.sh) ($(nproc) threads, all used by Prism); kernel $(uname -r)" | tee -a "$RES"

# run NAME ARGS...: one harvest, its RSS sampled, then its line.
run() {
  local name=$1; shift
  local out=out/bench/dataplane-$name
  rm -rf "$out" "$out.rss" "$out.anon"
  CTXSIM_HEAPPROFILE="$out.heap" CTXSIM_CPUPROFILE="$out.prof" /usr/bin/time -f "%U %S %e %M" -o "$out.time" \
    bin/harvest --corpus=$IDX --output="$out" --labeler="$LABELER" ${MODEL:+--model=$MODEL} --sample="$SAMPLE" \
    --print=0 --parquet_shards=8 --waves="$WAVES" $EXTRA "$@" \
    > "$out.log" 2>&1 &
  local tpid=$! pid=""
  while kill -0 $tpid 2>/dev/null; do
    [ -n "$pid" ] || pid=$(pgrep -P $tpid | head -1 || true)
    [ -z "$pid" ] || echo "$(date +%s) $(awk '/VmRSS/{print $2}' /proc/$pid/status 2>/dev/null)" >> "$out.rss"
    # The anonymous part of it (heap, stacks), without mapped files'
    # pages (--map_vectors), which the kernel can drop.
    [ -z "$pid" ] || echo "$(date +%s) $(awk '/RssAnon/{print $2}' /proc/$pid/status 2>/dev/null)" >> "$out.anon"
    sleep 2
  done
  wait $tpid || { echo "harvest $name failed: $out.log" | tee -a "$RES"; tail -5 "$out.log"; return 1; }
  local rows
  rows=$(node tools/duckdb/read.mjs "$out/pairs/*.parquet" | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"])')
  read -r user sys wall rss < "$out.time"
  python3 - "$out/summary.json" "$name" "$user" "$sys" "$wall" "$rss" "$rows" "$out.rss" "$out.heap" "$out.log" "$out.anon" <<'PY' | tee -a "$RES"
import json, subprocess, sys
s = json.load(open(sys.argv[1]))
name = sys.argv[2]
user, sysc, wall = map(float, sys.argv[3:6])
rss, rows = int(sys.argv[6]), int(sys.argv[7])
samples = [l.split() for l in open(sys.argv[8]) if len(l.split()) == 2]
c = s["counters"]
pairs = s["pairs_labeled"]
# The heap in use near the peak, and the part of it under Prism's engine
# (cumulative, so what the engine's functions allocated and still hold).
top = subprocess.run(["go", "tool", "pprof", "-top", "-cum", "-sample_index=inuse_space", "bin/harvest", sys.argv[9]],
                     capture_output=True, text=True).stdout
unit = {"B": 1 / 2**20, "kB": 1 / 1024, "MB": 1, "GB": 1024}
def mib(v):
    n = v.rstrip("BkMG")
    return float(n) * unit[v[len(n):]]
heap = prism = 0.0
for line in top.splitlines():
    if "% of " in line and " total" in line:
        heap = mib(line.split("% of ")[1].split()[0])
    f = line.split()
    if len(f) >= 6 and f[5].endswith("internal.executePipeline.func2"):
        prism = mib(f[3])
print(f"dataplane {name} waves={s.get('waves', 1)} sentences={c.get('harvest/sentences_kept', 0)} pair_links={c.get('harvest/pair_links', 0)} "
      f"pairs_distinct={c.get('harvest/pairs_distinct', 0)} pairs={pairs} parquet_rows_duckdb={rows} "
      f"wall_s={wall:.0f} cpu_s={user + sysc:.0f} pairs_per_s={pairs / wall:.0f} cpu_us_per_pair={1e6 * (user + sysc) / pairs:.0f} "
      f"peak_rss_mib={rss / 1024:.0f} heap_at_peak_mib={heap:.0f} prism_engine_mib={prism:.0f} "
      f"rss_bytes_per_pair={rss * 1024 / pairs:.0f} rss_samples={len(samples)} "
      f"peak_anon_mib={max([int(b) for a, b in (l.split() for l in open(sys.argv[11]) if len(l.split()) == 2) if b.isdigit()] or [0]) / 1024:.0f}")
# Where the time went: the stages' wall milliseconds summed over bundles.
stages = {k.split("stage_ms_")[1]: v for k, v in c.items() if "/stage_ms_" in k}
print(f"dataplane {name} stage_ms " + " ".join(f"{k}={v}" for k, v in sorted(stages.items())) +
      f" context_sets={c.get('harvest/context_sets', 0)} ctx_pairs_context_sets={c.get('harvest/ctx_pairs_context_sets', 0)} "
      f"ctx_pairs_labels={c.get('harvest/ctx_pairs_labels', 0)}")
# The RSS curve: the largest sample in each tenth of the run, GiB.
t = [(int(a), int(b)) for a, b in samples if b.isdigit()]
if t:
    t0, span = t[0][0], max(t[-1][0] - t[0][0], 1)
    curve = []
    for k in range(10):
        seg = [r for when, r in t if k * span / 10 <= when - t0 <= (k + 1) * span / 10]
        curve.append(f"{max(seg) / 2**20:.1f}" if seg else "-")
    print(f"dataplane {name} rss_curve_gib (max per tenth of {span} s): {' '.join(curve)}")
    # Per wave: its pairs, its end (seconds since the start) and the
    # largest RSS sample while it ran.
    import re
    prev = 0
    for line in open(sys.argv[10]):
        m = re.match(r"harvest wave (\d+) of (\d+): (\d+) pairs labeled .*, (?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)? since the start", line)
        if not m:
            continue
        end = int(m[4] or 0) * 3600 + int(m[5] or 0) * 60 + int(m[6] or 0)
        seg = [r for when, r in t if prev <= when - t0 <= end]
        print(f"dataplane {name} wave {m[1]}/{m[2]} pairs={m[3]} seconds={end - prev} ends_s={end} "
              f"peak_rss_gib={max(seg) / 2**20 if seg else 0:.1f}")
        prev = end
PY
}

for q in $POINTS; do
  run "q-${q//[:,]/-}" --pair_neighbours="$NEIGHBOURS" --pair_quota="$q"
done
if [ "$LINKS" = 1 ]; then
  for sample in 0.01 0.03; do
    run "links-$sample" --sample=$sample --pair_quota=near:3,mid:3,far:3,random:3
  done
fi
