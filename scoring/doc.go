// Package scoring holds the contextual models and the method's arithmetic,
// in subpackages, none of which imports Beam:
//
//   - tokenizer: the byte-level BPE tokenizer of the paper's two models;
//   - nn: the network core (layers, Adam, safetensors, GEMM in pure Go or on
//     OpenBLAS);
//   - examples: training examples and true-context ranking tasks from
//     documents;
//   - contrast: the contrastive context model (sentence and context
//     encoders over IDF-weighted word embeddings, InfoNCE);
//   - disc: the discriminative coherence model of Eq. 1;
//   - gen: the infilling encoder-decoder behind the generative terms of
//     Eq. 3;
//   - bundle: saving and loading a model's config and weights together;
//   - lexical: word tokenization, Porter stems and TF-IDF;
//   - method: candidates, Eq. 3 through pluggable scorers, C_s, Eq. 4 and
//     the labelers;
//   - surrogate: the fast sentence encoders trained on the labels;
//   - stats: Spearman and Pearson correlations.
package scoring
