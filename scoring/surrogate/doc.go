// Package surrogate trains fast sentence encoders on harvested
// sentence-pair labels (Sun et al., TACL 2022, Sec. 3.4).
//
// A harvested label is the cosine of the context-score vectors of two
// sentences, a number in [-1, 1]. A surrogate is a Siamese encoder whose
// cosine between sentence embeddings is trained to agree with those labels,
// so that the expensive contextual similarity can be replaced by a dot
// product at scale.
//
// # Encoder
//
// The encoder is Paragram-SP style (Wieting et al., 2016): a table of
// subword embeddings, and a sentence embedding that is the mean of the
// embeddings of its tokens. Sentences are given as token IDs (from
// scoring/tokenizer), so the package depends on the tokenizer only through
// the vocabulary size. The gradient of a batch touches only the rows of its
// tokens; it is kept sparse (SparseGrad) and applied with a lazy Adam
// (SparseAdam) that updates only those rows.
//
// # Objectives
//
// Five objectives map a batch of pair embeddings (e1, e2) with labels y to
// a loss and its gradient with respect to the embeddings:
//
//   - "l2", the paper's objective: the mean over pairs of
//     (cos(e1, e2) − y)².
//   - "pearson": one minus the Pearson correlation, over the batch, of the
//     pairs' cosines with their labels; it learns the labels up to an
//     increasing affine map, so the cosines need not take the labels'
//     values.
//   - "rank", a pairwise ranking loss in the style of CoSENT:
//     log(1 + Σ e^{s(c_j − c_i)}) over the couples of pairs of the batch
//     with y_i > y_j, c the pairs' cosines; it learns the labels' order
//     only, whatever their scale.
//   - "contrastive", an InfoNCE loss in the style of CLSR: pairs whose label
//     reaches a threshold are positives, and for a positive (a, b) every
//     other second sentence of the batch is a negative; the loss is
//     −log softmax(cos/τ) of the positive over its row, averaged over both
//     directions (a against all b's, b against all a's).
//   - "multisim", the multi-similarity loss (Wang et al., 2019) with
//     locality weights in the style of SentPWNet: for each anchor, its
//     labelled partner is a positive or a negative according to the
//     threshold, the other sentences of the batch are negatives, and every
//     pair's exponential term is scaled by a weight; see ObjectiveConfig.
//
// Every objective's gradient is checked against finite differences in the
// tests.
//
// # Training and evaluation
//
// Train runs minibatch Adam over a fixed-seed shuffle and returns the model
// and its learning curve (training loss, and the Spearman and Pearson
// correlations of cosine with label on dev pairs, per epoch). Training is
// deterministic: the same config, seed and data give identical weights.
// TrainConfig.Anchor holds the averaged encoder's table near its start
// (L2-SP), so that many pairs do not carry the words they hold away from
// the geometry the rest of the vocabulary keeps.
// Save and Load store a model as safetensors weights plus a JSON config
// (package bundle), refusing corrupt or mismatched files.
//
// EvalRank implements EvalRank (Wang et al., 2022): the top quarter of gold
// pairs by score are positives, and each sentence of a positive pair is
// ranked, by cosine to its partner, among all distinct sentences of the
// evaluation file. It takes embeddings (or a similarity function), so any
// encoder can be ranked.
package surrogate
