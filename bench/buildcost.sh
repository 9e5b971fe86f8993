#!/usr/bin/env bash
# What `make build` costs from a cold build cache: wall and CPU time, the
# peak memory of every compile and link (each tool run under /usr/bin/time
# through -toolexec), the largest of them, the binaries' sizes and the
# build cache's. The module cache is the machine's (downloads are not
# timed). BEFORE=<commit> first builds that commit (git archive into a
# temporary directory) the same way, for a side-by-side block.
#
#   bench/buildcost.sh                     # the work tree
#   BEFORE=9d6e970 bench/buildcost.sh      # that commit, then the work tree
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/knobs.sh
BEFORE=${BEFORE:-}
RES=${RES:-bench/results.txt}
NOTE=${NOTE:-}
work=$(mktemp -d /tmp/ctxsim-buildcost-XXXXXX)
trap 'rm -rf "$work"' EXIT
cat > "$work/texec" <<'SH'
#!/bin/sh
tool=$(basename "$1"); pkg=""; prev=""
for a in "$@"; do [ "$prev" = "-p" ] && pkg=$a; prev=$a; done
exec /usr/bin/time -a -o "$TEXEC_LOG" -f "%M %U %S $tool $pkg" "$@"
SH
chmod +x "$work/texec"

# cost NAME DIR: a cold `make build` in DIR, one line of figures.
cost() {
  local name=$1 dir=$2 cache="$work/cache-$1" log="$work/tools-$1.log"
  GOCACHE="$cache" TEXEC_LOG="$log" GOFLAGS="${GOFLAGS:-} -toolexec=$work/texec" \
    /usr/bin/time -f "%e %U %S" -o "$work/time-$1" make -s -C "$dir" build > "$work/make-$1.log" 2>&1 ||
    { tail -20 "$work/make-$1.log"; return 1; }
  read -r wall user sys < "$work/time-$1"
  local peak top bins cachemb
  peak=$(sort -n "$log" | tail -1 | awk '{printf "%d", $1 / 1024}')
  top=$(sort -n "$log" | tail -3 | awk '{printf "%s %s %d MiB; ", $4, $5, $1 / 1024}')
  bins=$(cd "$dir/bin" && for b in *; do printf '%s=%d ' "$b" $(( $(stat -c %s "$b") / 1000000 )); done)
  cachemb=$(du -sm "$cache" | cut -f1)
  echo "buildcost $name wall_s=${wall%.*} cpu_s=$(python3 -c "print(round($user + $sys))") peak_tool_rss_mib=$peak" \
    "tools_run=$(wc -l < "$log") bin_mb_total=$(du -sm "$dir/bin" | cut -f1) build_cache_mb=$cachemb" | tee -a "$RES"
  echo "buildcost $name largest: ${top% }" | tee -a "$RES"
  echo "buildcost $name binaries_mb: ${bins% }" | tee -a "$RES"
}

echo "" >> "$RES"
echo "== $(date -u +%Y-%m-%dT%H:%MZ) commit $(git rev-parse --short HEAD): cold make build${BEFORE:+, $BEFORE then the work tree}${NOTE:+ ($NOTE)}" | tee -a "$RES"
bench_knobs BEFORE RES NOTE GOFLAGS | tee -a "$RES"
echo "cpu: $(bench/cpu.sh) ($(nproc) threads); kernel $(uname -r); $(go version | cut -d' ' -f3); GOFLAGS=${GOFLAGS:-}; load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$RES"
if [ -n "$BEFORE" ]; then
  mkdir "$work/before"
  git archive "$BEFORE" | tar -x -C "$work/before"
  cost "before-$BEFORE" "$work/before"
fi
mkdir "$work/after"
git ls-files -z | tar --null -T - -c | tar -x -C "$work/after"
cost "work-tree" "$work/after"
