#!/usr/bin/env bash
# Model benchmarks side by side in one run: the Go network core with
# OpenBLAS (-tags openblas, as the machine picks its kernels; needs
# libopenblas-dev), with the pure-Go GEMM (the default build), and the
# PyTorch CPU reference, all truly on one thread: Go benchmarks run with
# -cpu 1 (GOMAXPROCS=1; nn's GEMM and OpenBLAS use one thread by default),
# and the PyTorch scripts pin every BLAS pool before torch loads.
#
# The three sides are interleaved ROUNDS times (default 3), so that a busy
# spell of a shared machine falls on all of them; the summary gives each
# figure's minimum, median and maximum over the rounds. Every block starts
# with the CPU, the kernel and the thread counts.
# Appends to bench/results.txt. SHARED (default ../shared, the checkout's
# sibling) is the shared folder that holds bench/torch_reference.py.
#
# On a machine without Go, BIN names a folder of test binaries built
# beforehand on one with it, and the Go side runs them (the OpenBLAS side
# is skipped); PY names the Python that has torch (default /usr/bin/python3):
#
#   for p in nn disc gen; do CGO_ENABLED=0 go test -c -o bin/bench/$p.test ./scoring/$p; done
#   BIN=bin/bench PY=python3 COMMIT=$(git rev-parse --short HEAD) bench/models.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/knobs.sh
RES=${RES:-bench/results.txt}
ROUNDS=${ROUNDS:-3}
SHARED=${SHARED:-../shared}
BIN=${BIN:-}
PY=${PY:-/usr/bin/python3}
[ -z "$BIN" ] || BIN=$(cd "$BIN" && pwd)
COMMIT=${COMMIT:-$(git rev-parse --short HEAD)}
log() { echo "$*" | tee -a "$RES"; }
log ""
log "== $(date -u +%Y-%m-%dT%H:%MZ) commit $COMMIT: models, one thread, $ROUNDS interleaved rounds${NOTE:+ ($NOTE)}"
bench_knobs RES ROUNDS SHARED BIN PY COMMIT NOTE | tee -a "$RES"
log "cpu: $(bench/cpu.sh) ($(nproc) threads available); kernel $(uname -r)"
log "threads: Go -cpu 1 (GOMAXPROCS=1), nn GEMM 1, OpenBLAS 1; PyTorch set_num_threads(1) with OPENBLAS/OMP/MKL_NUM_THREADS=1"
# The short benchmarks (a 1024³ product, a BiLSTM batch: tens of
# milliseconds) run 10 times, as the PyTorch script times 20 and 10 calls
# after a warm-up one: at 3 iterations the BiLSTM figure read about 7%
# below the one at 40 of the same binary. A scoring call takes about 0.4 s:
# 3 of them, as PyTorch's 5.
short='Gemm/square(512|1024)|BiLSTMForward'
torch=false
if "$PY" -c 'import torch' 2>/dev/null; then
  torch=true
  log "pytorch: $("$PY" -c 'import re, torch; print(torch.__version__, torch.__config__.parallel_info().splitlines()[0], ", ".join(re.findall(r"BLAS_INFO=\w+", torch.__config__.show())))')"
else
  log "pytorch: not installed (apt-get install python3-torch); its side is skipped"
fi
openblas=false
if [ -n "$BIN" ]; then
  log "go: test binaries from $BIN (the OpenBLAS side is skipped)"
elif go test -tags openblas -run '^$' -bench NONE ./scoring/nn >/dev/null 2>&1; then openblas=true; else
  log "openblas: the cgo build failed (apt-get install libopenblas-dev); its side is skipped"
fi

raw=$(mktemp)
trap 'rm -f "$raw" "$raw.peak"' EXIT
# The core's multiply-add instruction rates (bench/peak.c), so that the
# GEMM figures below read as a share of the machine's limit; needs gcc.
if command -v gcc >/dev/null && gcc -O2 -march=native -o "$raw.peak" bench/peak.c 2>/dev/null; then
  log "instruction peak, one core (GFLOP/s; bench/peak.c): $("$raw.peak" 2>/dev/null | paste -sd, - | sed 's/,/, /g')"
else
  log "instruction peak: not measured (bench/peak.c needs gcc)"
fi
# gotest runs go test, or with BIN the package's test binary from its
# folder (as go test does), with the same flags.
gotest() { # tags..., then flags and packages
  if [ -z "$BIN" ]; then go test "$@"; return; fi
  local flags=() pkgs=() a
  for a in "$@"; do
    case $a in
      ./scoring/*) pkgs+=("$a") ;;
      -tags) echo "gotest: no build tags with BIN" >&2; return 1 ;;
      -*) flags+=("-test.${a#-}") ;;
      *) flags+=("$a") ;;
    esac
  done
  for a in "${pkgs[@]}"; do (cd "$a" && "$BIN/$(basename "$a").test" "${flags[@]}"); done
}
gobench() { # side, tags...
  local side=$1; shift
  gotest "$@" -cpu 1 -run '^$' -bench "$short" -benchtime 10x ./scoring/nn | grep -E '^Benchmark' | sed "s/^/$side /"
  gotest "$@" -cpu 1 -run '^$' -bench EncDecScore -benchtime 3x ./scoring/nn | grep -E '^Benchmark' | sed "s/^/$side /"
  gotest "$@" -cpu 1 -run '^$' -bench 'Encode|Score' -benchtime 3x ./scoring/disc ./scoring/gen | grep -E '^Benchmark' | sed "s/^/$side /"
  # A linear-head call takes about a millisecond: three of them are all
  # noise on a busy machine, so the heads run for 2 s each, as
  # bench/torch_head.py runs its heads.
  gotest "$@" -cpu 1 -run '^$' -bench Head -benchtime 2s ./scoring/disc | grep -E '^Benchmark' | sed "s/^/$side /"
}
for r in $(seq "$ROUNDS"); do
  if $openblas; then gobench openblas -tags openblas >>"$raw"; fi
  gobench go >>"$raw"
  if $torch; then
    { "$PY" "$SHARED/bench/torch_reference.py"; "$PY" bench/torch_head.py; } | sed 's/^/pytorch /' >>"$raw"
  fi
  echo "round $r of $ROUNDS done" >&2
done
log "-- raw, in the order run"
tee -a "$RES" <"$raw"
log "-- summary: min / median / max over the rounds"
# Go lines: "side BenchmarkName-1 N ns/op value unit ..."; PyTorch lines:
# "pytorch name: value unit". Each (side, name, unit) is one figure.
awk '
  $2 ~ /^Benchmark/ { for (i = 4; i < NF; i += 2) add($1 " " $2, $(i+1), $i); next }
  $1 == "pytorch" { split($0, a, ": "); n = split(a[2], v, " "); add(a[1], v[2], v[1]) }
  function add(k, unit, x,   key) { key = k " [" unit "]"; if (!(key in cnt)) order[++nk] = key; vals[key, ++cnt[key]] = x }
  END {
    for (j = 1; j <= nk; j++) {
      key = order[j]; n = cnt[key]
      for (p = 1; p <= n; p++) s[p] = vals[key, p] + 0
      for (p = 1; p <= n; p++) for (q = p + 1; q <= n; q++) if (s[q] < s[p]) { t = s[p]; s[p] = s[q]; s[q] = t }
      printf "%-70s %12.4g %12.4g %12.4g\n", key, s[1], (n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2), s[n]
    }
  }' "$raw" | tee -a "$RES" | tee "$raw.summary"
# The scoring bars, from the medians: the encoder-decoder's GFLOP/s as a
# share of the same side's GEMM rate at 1024³, and its sequences/s against
# PyTorch's on the same network.
log "-- bars (medians): encoder-decoder scoring as a share of the GEMM rate, and against PyTorch"
python3 - "$raw.summary" <<'PY' | tee -a "$RES"
import re, sys
med = {}
for line in open(sys.argv[1]):
    m = re.match(r"(.*\])\s+(\S+)\s+(\S+)\s+(\S+)$", line.rstrip())
    if m:
        med[m.group(1)] = float(m.group(3))
torch = next((v for k, v in med.items() if k.startswith("pytorch seq2seq") and k.endswith("[sequences/s]")), None)
for side in ("go", "openblas"):
    gf = med.get(f"{side} BenchmarkEncDecScore [GFLOP/s]")
    seq = med.get(f"{side} BenchmarkEncDecScore [sequences/s]")
    gemm = [v for k, v in med.items() if k.startswith(f"{side} BenchmarkGemm/square1024/Gemm/") and k.endswith("[GFLOP/s]")]
    if gf is None or not gemm:
        continue
    line = f"{side}: {gf:.1f} GFLOP/s = {100 * gf / gemm[0]:.0f}% of its GEMM rate ({gemm[0]:.1f})"
    if torch:
        line += f"; {seq:.1f} sequences/s = {seq / torch:.2f}x PyTorch ({torch:.1f})"
    print(line)
# The generative model's own scoring, float32 and bfloat16 (--gen_precision),
# on the same batches. gen.Score's vocabulary (12,000) is not that of the
# PyTorch reference network (16,000), so it is compared with itself only.
for side in ("go", "openblas"):
    f32 = med.get(f"{side} BenchmarkScore/distinct [sequences/s]")
    b16 = med.get(f"{side} BenchmarkScore/distinct-bf16 [sequences/s]")
    if f32 and b16:
        print(f"{side} gen.Score distinct: bf16 {b16:.1f} sequences/s = {b16 / f32:.2f}x its fp32 ({f32:.1f})")
PY
rm -f "$raw.summary"
