package gen

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/ctxsim/ctxsim/scoring/nn"
)

const (
	// ScoreBatch is the number of requests Score runs through the network
	// at once.
	ScoreBatch = 64
	// scoreWindow is the number of requests laid out and sorted by length
	// at a time, bounding memory for long request lists.
	scoreWindow = 64 * ScoreBatch
	// logitRows is the number of target rows whose logits are computed at
	// once, bounding the (rows, vocab) buffer.
	logitRows = 256
)

// Precisions of Score's linear layers (SetPrecision).
const (
	// PrecisionFP32 is float32 throughout, the default.
	PrecisionFP32 = "fp32"
	// PrecisionBF16 rounds the inputs and weights of every linear layer
	// (the attention projections, the feed-forward layers and the output
	// projection, nearly all of the arithmetic) to bfloat16 and sums their
	// products in float32 (nn.Linear.PackBF16); attention, softmax and
	// LayerNorm stay float32. It needs a CPU with AVX512_BF16.
	PrecisionBF16 = "bf16"
)

// CheckPrecision returns an error unless SetPrecision(p) would succeed.
func CheckPrecision(p string) error {
	switch p {
	case "", PrecisionFP32:
		return nil
	case PrecisionBF16:
		if !nn.HasBF16() {
			return fmt.Errorf("gen: precision %q needs a CPU with AVX512_BF16, which this one lacks; use %q", p, PrecisionFP32)
		}
		return nil
	}
	return fmt.Errorf("gen: precision %q, want %q or %q", p, PrecisionFP32, PrecisionBF16)
}

// SetPrecision chooses the arithmetic of Score (PrecisionFP32, the
// default when p is empty, or PrecisionBF16). Scores in bfloat16 differ from
// float32 ones by the operands' rounding. It must not be called while
// Score runs.
func (m *Model) SetPrecision(p string) error {
	if err := CheckPrecision(p); err != nil {
		return err
	}
	m.packing.SetBF16(p == PrecisionBF16, m.linears)
	return nil
}

// Precision returns the arithmetic of Score's linear layers.
func (m *Model) Precision() string {
	if m.packing.BF16() {
		return PrecisionBF16
	}
	return PrecisionFP32
}

// Score returns, for each request, the mean log-probability per target
// token (<eos> included) of the requested segment given the other two:
// (1/|x|) log p(x | source). Requests are sorted by source length and
// content and cut into batches of ScoreBatch, which limits source padding
// and lets requests with the same source (ToSentence requests for many
// sentences in one context) share one encoder pass; logits are computed
// for the target tokens only. The result does not depend on the grouping.
// Score panics on a token id outside the vocabulary.
func (m *Model) Score(reqs []Request) []float32 {
	out := make([]float32, len(reqs))
	m.logLik(reqs, ScoreBatch, func(i int, sum float64, n int) {
		out[i] = float32(sum / float64(n))
	})
	return out
}

// logLik computes the summed log-probability of the target of every
// request, in batches of up to batchSize requests of similar length, and
// reports each through emit with the number of target tokens.
//
// The linear layers' weights are packed for inference on the first call
// (see pack).
func (m *Model) logLik(reqs []Request, batchSize int, emit func(i int, sum float64, n int)) {
	m.pack()
	batchSize = max(batchSize, 1)
	order := make([]int, 0, min(len(reqs), scoreWindow))
	seqs := make([]seq, min(len(reqs), scoreWindow))
	group := make([]seq, 0, batchSize)
	sums := make([]float64, batchSize)
	for w := 0; w < len(reqs); w += scoreWindow {
		end := min(w+scoreWindow, len(reqs))
		order = order[:0]
		for i := w; i < end; i++ {
			seqs[i-w] = m.layout(&reqs[i])
			order = append(order, i-w)
		}
		slices.SortStableFunc(order, func(a, b int) int {
			qa, qb := &seqs[a], &seqs[b]
			if c := cmp.Compare(len(qa.src), len(qb.src)); c != 0 {
				return c
			}
			if c := slices.Compare(qa.src, qb.src); c != 0 {
				return c
			}
			return cmp.Compare(len(qa.tgt), len(qb.tgt))
		})
		for s := 0; s < len(order); s += batchSize {
			idx := order[s:min(s+batchSize, len(order))]
			group = group[:0]
			for _, i := range idx {
				group = append(group, seqs[i])
			}
			b := newBatch(group, true)
			m.batchLogLik(b, sums[:len(idx)])
			for k, i := range idx {
				emit(w+i, sums[k], len(seqs[i].tgt))
			}
		}
	}
}

// batchLogLik sets sums[i] to log p(target | source) of request i of b,
// without keeping anything for backward.
func (m *Model) batchLogLik(b *batch, sums []float64) {
	clear(sums)
	d := m.Cfg.Dim
	h, _ := m.forward(b, false)
	defer h.Release()
	for r := 0; r < len(b.rows); r += logitRows {
		e := min(r+logitRows, len(b.rows))
		logits := m.out.Forward(nn.FromData(h.Data[r*d:e*d], e-r, d))
		_, logp, _ := nn.SoftmaxCrossEntropy(logits, b.tgt[r:e], -1)
		logits.Release()
		for k, lp := range logp {
			sums[b.owner[r+k]] += float64(lp)
		}
	}
}
