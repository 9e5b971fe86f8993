#!/usr/bin/env bash
# Model benchmarks side by side in one run: the Go network core with
# OpenBLAS (-tags openblas, as the machine picks its kernels; needs
# libopenblas-dev), with the pure-Go GEMM (the default build), and the
# PyTorch CPU reference, all on one thread.
# Appends to bench/results.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
RES=bench/results.txt
log() { echo "$*" | tee -a "$RES"; }
log ""
log "== $(date -u +%Y-%m-%dT%H:%MZ) commit $(git rev-parse --short HEAD): models, one thread${NOTE:+ ($NOTE)}"
pat='Gemm/square(512|1024)|BiLSTMForward|EncDecScore'
log "-- openblas (cgo, -tags openblas)"
go test -tags openblas -run '^$' -bench "$pat" -benchtime 3x ./scoring/nn | grep -E '^Benchmark' | tee -a "$RES"
go test -tags openblas -run '^$' -bench . -benchtime 3x ./scoring/disc ./scoring/gen | grep -E '^Benchmark' | tee -a "$RES"
log "-- pure Go (the default build)"
go test -run '^$' -bench "$pat" -benchtime 3x ./scoring/nn | grep -E '^Benchmark' | tee -a "$RES"
go test -run '^$' -bench . -benchtime 3x ./scoring/disc ./scoring/gen | grep -E '^Benchmark' | tee -a "$RES"
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  log "-- PyTorch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)') (../shared/bench/torch_reference.py)"
  /usr/bin/python3 ../shared/bench/torch_reference.py | tee -a "$RES"
  /usr/bin/python3 bench/torch_head.py | tee -a "$RES"
else
  log "-- PyTorch not installed (apt-get install python3-torch)"
fi
