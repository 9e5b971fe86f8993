#!/usr/bin/env bash
# Prints the CPU a benchmark ran on, for the first lines of its block: the
# model name, and then its family, model and stepping with the vector
# extensions the kernels pick from. Virtual machines often report only
# "AMD EPYC", which names several generations with different vector units
# (on AMD, family 25 is Zen 3 or Zen 4, whose AVX-512 splits each 512-bit
# operation in two; family 26 is Zen 5), so the name alone does not say
# which CPU a figure is from.
f=/proc/cpuinfo
field() { grep -m1 "^$1[[:space:]]*:" "$f" | cut -d: -f2- | sed 's/^ *//'; }
name=$(field 'model name')
simd=$(field flags | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|avx512_bf16|avx512_fp16|avx_vnni|amx_bf16|amx_tile)$' | tr '\n' ' ' | sed 's/ $//')
printf '%s (family %s model %s stepping %s; %s)\n' "${name:-unknown}" "$(field 'cpu family')" "$(field model)" "$(field stepping)" "${simd:-no AVX}"
