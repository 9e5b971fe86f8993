#!/usr/bin/env bash
# A harvest on the local Flink cluster (deploy/flink/flink.sh) against the
# same harvest on Prism, and the same harvest with a worker lost midway.
#
#   bench/flink.sh compare        # Prism, then Flink: rows, labels, wall, CPU per pair, RSS per worker pool
#   bench/flink.sh fault pool|tm|net
#       # the Flink harvest again, with worker pool 1 killed (SIGKILL, with
#       # its SDK workers), task manager 1 killed, or task manager 1's host
#       # cut off from the job manager's for HEARTBEAT_S+15 s, once
#       # AFTER_JOBS of the run's Flink jobs have finished and the next has
#       # run DELAY_S seconds; then the cluster is started again, the same
#       # command rerun, and its output compared with compare's Flink run
#   bench/flink.sh parts          # peak RSS per worker pool at --corpus_parts 1, 2 and 4
#
# Knobs: CORPUS and MODEL (an index output and a model directory, absolute
# paths outside /tmp), OUT (default out/bench-flink), PRESET (demo),
# SAMPLE (0.2), WAVES (2), PARTS (2), PARQUET_SHARDS (2), AFTER_JOBS (3),
# DELAY_S (5), HEARTBEAT_S (30, the cluster's heartbeat timeout); the
# cluster's own knobs (CTXSIM_FLINK_*) are flink.sh's. The cluster must be
# up (make flink-up) before compare and parts.
set -euo pipefail
cd "$(dirname "$0")/.."

: "${CORPUS:?CORPUS: an index output directory (absolute path)}"
: "${MODEL:?MODEL: a model directory (absolute path)}"
OUT="${OUT:-$PWD/out/bench-flink}"
PRESET="${PRESET:-demo}"
SAMPLE="${SAMPLE:-0.2}"
WAVES="${WAVES:-2}"
PARTS="${PARTS:-2}"
PARQUET_SHARDS="${PARQUET_SHARDS:-2}"
AFTER_JOBS="${AFTER_JOBS:-3}"
DELAY_S="${DELAY_S:-5}"
HEARTBEAT_S="${HEARTBEAT_S:-30}"
home="${CTXSIM_FLINK_HOME:-$PWD/out/flink}"
name="${CTXSIM_FLINK_NAME:-cxfl}"
net="${CTXSIM_FLINK_NET:-10.231.77}"
rest="http://$net.10:8081"
mkdir -p "$OUT"

echo "# $(date -u +%Y-%m-%dT%H:%MZ) bench/flink.sh $*"
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
echo "# corpus=$CORPUS model=$MODEL preset=$PRESET sample=$SAMPLE waves=$WAVES corpus_parts=$PARTS parquet_shards=$PARQUET_SHARDS"

harvest_args() { # output-dir
  echo --corpus="$CORPUS" --model="$MODEL" --output="$1" --preset="$PRESET" --sample="$SAMPLE" \
    --waves="$WAVES" --corpus_parts="$PARTS" --parquet_shards="$PARQUET_SHARDS" --print=0
}

pairs_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pairs"])' "$1/summary.json"; }

# timed runs a command, its output in $1.log, and sets wall and cpu (the
# command's own user+system seconds).
timed() {
  local log="$1"
  shift
  local t
  t="$(mktemp)"
  /usr/bin/time -f '%e %U %S' -o "$t" "$@" >"$log" 2>&1 || {
    rc=$?
    rm -f "$t"
    return $rc
  }
  read -r wall user sys <"$t"
  rm -f "$t"
  cpu="$(echo "$user + $sys" | bc)"
}

flink_run() { # output-dir
  python3 bench/flinkwatch.py "$home" "$1.watch.json" &
  local watch=$!
  sleep 0.5
  local rc=0
  timed "$1" bin/harvest $(harvest_args "$1") $(deploy/flink/flink.sh env) || rc=$?
  kill -TERM "$watch"
  wait "$watch" || true
  return $rc
}

compare() {
  rm -rf "$OUT/prism" "$OUT/flink"
  timed "$OUT/prism" bin/harvest $(harvest_args "$OUT/prism")
  local pw=$wall pc=$cpu pn
  pn="$(pairs_of "$OUT/prism")"
  flink_run "$OUT/flink"
  local fw=$wall fc fn
  fc="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cpu_s"])' "$OUT/flink.watch.json")"
  fc="$(echo "$fc + $cpu" | bc)"
  fn="$(pairs_of "$OUT/flink")"
  echo "prism: $pn pairs, wall ${pw}s, cpu ${pc}s, $(echo "scale=5; $pc / $pn" | bc) cpu s/pair"
  echo "flink: $fn pairs, wall ${fw}s, cpu ${fc}s (submitter ${cpu}s + cluster), $(echo "scale=5; $fc / $fn" | bc) cpu s/pair"
  echo "flink/prism: wall $(echo "scale=2; $fw / $pw" | bc)x, cpu per pair $(echo "scale=2; ($fc / $fn) / ($pc / $pn)" | bc)x"
  python3 - "$OUT/flink.watch.json" <<'EOF'
import json, sys
w = json.load(open(sys.argv[1]))
for name, g in w["groups"].items():
    print(f"  {name}: peak RSS {g['peak_rss_mib']} MiB (largest process {g['peak_process_rss_mib']} MiB), cpu {g['cpu_s']} s")
EOF
  go run ./bench/harvestcmp -a "$OUT/prism" -b "$OUT/flink"
}

jobs_finished() {
  curl -s "$rest/jobs/overview" | python3 -c '
import json, sys
jobs = json.load(sys.stdin)["jobs"]
print(sum(j["state"] == "FINISHED" for j in jobs), max([j["duration"] for j in jobs if j["state"] == "RUNNING"] or [-1]))'
}

fault() {
  local mode="$1" dir="$OUT/fault-$1"
  [ -d "$OUT/flink" ] || {
    echo "run bench/flink.sh compare first (its Flink run is the uninterrupted one)" >&2
    exit 2
  }
  deploy/flink/flink.sh down >/dev/null 2>&1 || true
  deploy/flink/flink.sh up >/dev/null
  rm -rf "$dir"
  local base
  base="$(jobs_finished | cut -d' ' -f1)"
  (bin/harvest $(harvest_args "$dir") $(deploy/flink/flink.sh env) >"$dir.log" 2>&1; echo $? >"$dir.rc") &
  local run=$!
  while kill -0 "$run" 2>/dev/null; do
    read -r done running_ms < <(jobs_finished)
    if [ "$((done - base))" -ge "$AFTER_JOBS" ] && [ "$running_ms" -ge "$((DELAY_S * 1000))" ]; then
      break
    fi
    sleep 0.5
  done
  echo "fault $mode after $((done - base)) finished jobs, the next running for ${running_ms} ms, at $(date -u +%T)"
  case "$mode" in
    pool) kill -KILL -- "-$(cat "$home/pids/workerpool1")" ;;
    tm) kill -KILL "$(cat "$home/pids/taskmanager1")" ;;
    net)
      ip -n "$name-tm1" route add blackhole "$net.10/32"
      ip -n "$name-jm" route add blackhole "$net.11/32"
      sleep "$((HEARTBEAT_S + 15))"
      ip -n "$name-tm1" route del blackhole "$net.10/32"
      ip -n "$name-jm" route del blackhole "$net.11/32"
      ;;
    *)
      echo "fault: pool, tm or net" >&2
      exit 2
      ;;
  esac
  wait "$run" || true
  echo "rc $(cat "$dir.rc"); first error line: $(grep -m1 '^error:' "$dir.log" | cut -c1-300 || echo none)"
  echo "committed: $(cd "$dir" 2>/dev/null && ls -d pairs context_sets export summary.json 2>/dev/null | tr '\n' ' ' || echo nothing)"
  echo "left for the rerun: $(ls "$dir/_waves" 2>/dev/null | tr '\n' ' ' || echo nothing)"
  if [ "$(cat "$dir.rc")" != 0 ]; then
    deploy/flink/flink.sh down >/dev/null 2>&1 || true
    deploy/flink/flink.sh up >/dev/null
    local rc=0
    bin/harvest $(harvest_args "$dir") $(deploy/flink/flink.sh env) >"$dir.rerun.log" 2>&1 || rc=$?
    echo "rerun rc $rc: $(grep -m1 -i 'resum' "$dir.rerun.log" | cut -c1-200 || true)"
  fi
  go run ./bench/harvestcmp -a "$OUT/flink" -b "$dir"
}

parts() {
  local p
  for p in 1 2 4; do
    rm -rf "$OUT/parts-$p"
    PARTS=$p flink_run "$OUT/parts-$p"
    python3 - "$OUT/parts-$p.watch.json" "$p" "$wall" <<'EOF'
import json, sys
w = json.load(open(sys.argv[1]))
pools = {k: v for k, v in w["groups"].items() if k.startswith("workerpool")}
print(f"corpus_parts {sys.argv[2]}: wall {sys.argv[3]} s; " + "; ".join(
    f"{k} peak RSS {v['peak_rss_mib']} MiB (largest process {v['peak_process_rss_mib']} MiB)" for k, v in pools.items()))
EOF
  done
}

case "${1:-}" in
  compare) compare ;;
  fault) fault "${2:-}" ;;
  parts) parts ;;
  *)
    echo "usage: bench/flink.sh compare | fault pool|tm|net | parts" >&2
    exit 2
    ;;
esac
