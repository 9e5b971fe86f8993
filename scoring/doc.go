// Package scoring holds the contextual models, in subpackages: tokenizer
// (byte-level BPE), nn (the network core: layers, Adam, safetensors, GEMM on
// OpenBLAS or pure Go), examples (training examples from documents) and disc
// (the discriminative coherence model of Eq. 1). None of them imports Beam.
package scoring
