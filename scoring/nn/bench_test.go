package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkBiLSTMForward measures the BiLSTM's inference path (Infer, which
// gives Forward's outputs without the training cache) at hidden 300, batch
// 64, 25 steps: sentences/s and the matrix-multiply rate.
func BenchmarkBiLSTMForward(b *testing.B) {
	const vocab, hidden, batch, steps = 30000, 300, 64, 25
	for _, dim := range []int{256, 128} {
		b.Run(fmt.Sprintf("emb%d", dim), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(13, 13))
			emb := NewEmbedding("emb", vocab, dim, 0, rng)
			l := NewBiLSTM("bilstm", dim, hidden, rng)
			ids := make([]int, batch*steps)
			for i := range ids {
				ids[i] = 1 + rng.IntN(vocab-1)
			}
			b.ResetTimer()
			for b.Loop() {
				x := emb.Forward(ids).Reshape(batch, steps, dim)
				// Inference, as the sentence encoder runs it (disc.Encode)
				// and as the PyTorch reference runs under inference_mode.
				o := l.Infer(x, nil)
				// Recycle the buffers, as a scoring loop would.
				releaseAll(x, o.Out, o.HFwd, o.CFwd, o.HBwd, o.CBwd)
			}
			b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "sentences/s")
			// Matrix-multiply work: per token and direction, the input
			// projection (dim -> 4H) and the recurrent one (H -> 4H).
			flops := float64(batch*steps) * 2 * 2 * 4 * hidden * float64(dim+hidden)
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// encDec is a post-LayerNorm encoder-decoder Transformer (as
// torch.nn.Transformer with norm_first=false) assembled from the layers.
type encDec struct {
	srcEmb, tgtEmb *Embedding
	enc            []encLayer
	dec            []decLayer
	encNorm        *LayerNorm
	decNorm        *LayerNorm
	out            *Linear
}

type encLayer struct {
	att      *MultiHeadAttention
	ff       *FeedForward
	ln1, ln2 *LayerNorm
}

type decLayer struct {
	self, cross   *MultiHeadAttention
	ff            *FeedForward
	ln1, ln2, ln3 *LayerNorm
}

func newEncDec(vocab, d, heads, ff, layers int, rng *rand.Rand) *encDec {
	m := &encDec{
		srcEmb:  NewEmbedding("src", vocab, d, 0, rng),
		tgtEmb:  NewEmbedding("tgt", vocab, d, 0, rng),
		encNorm: NewLayerNorm("enc.norm", d),
		decNorm: NewLayerNorm("dec.norm", d),
		out:     NewLinear("out", d, vocab, true, rng),
	}
	for i := 0; i < layers; i++ {
		p := fmt.Sprintf("enc.%d", i)
		m.enc = append(m.enc, encLayer{
			att: NewMultiHeadAttention(p+".att", d, heads, rng),
			ff:  NewFeedForward(p+".ff", d, ff, ReLU, rng),
			ln1: NewLayerNorm(p+".ln1", d), ln2: NewLayerNorm(p+".ln2", d),
		})
		p = fmt.Sprintf("dec.%d", i)
		m.dec = append(m.dec, decLayer{
			self:  NewMultiHeadAttention(p+".self", d, heads, rng),
			cross: NewMultiHeadAttention(p+".cross", d, heads, rng),
			ff:    NewFeedForward(p+".ff", d, ff, ReLU, rng),
			ln1:   NewLayerNorm(p+".ln1", d), ln2: NewLayerNorm(p+".ln2", d), ln3: NewLayerNorm(p+".ln3", d),
		})
	}
	return m
}

// pack packs every linear layer's weights (Linear.Pack).
func (m *encDec) pack() {
	ls := []*Linear{m.out}
	for _, l := range m.enc {
		ls = append(ls, l.att.Q, l.att.K, l.att.V, l.att.O, l.ff.L1, l.ff.L2)
	}
	for _, l := range m.dec {
		for _, a := range []*MultiHeadAttention{l.self, l.cross} {
			ls = append(ls, a.Q, a.K, a.V, a.O)
		}
		ls = append(ls, l.ff.L1, l.ff.L2)
	}
	for _, l := range ls {
		l.Pack()
	}
}

// addNorm returns LayerNorm(x + y), releasing x, y and the cache.
func addNorm(ln *LayerNorm, x, y *Tensor) *Tensor {
	y.AddInPlace(x)
	out := ln.Apply(y)
	releaseAll(x, y)
	return out
}

// score returns log p(tgt | src) per sequence, summed over the target
// tokens (padding id 0 is ignored).
func (m *encDec) score(src, tgt []int, srcLens []int, batch, ts, tt int) []float64 {
	d := m.srcEmb.Dim()
	scale := float32(math.Sqrt(float64(d)))
	srcPad := PadMask(srcLens, ts)
	x := m.srcEmb.Forward(src).Reshape(batch, ts, d)
	scal(scale, x.Data)
	for _, l := range m.enc {
		a := l.att.Apply(x, x, srcPad, false)
		x = addNorm(l.ln1, x, a)
		f, fc := l.ff.Forward(x)
		fc.Release()
		x = addNorm(l.ln2, x, f)
	}
	mem := m.encNorm.Apply(x)
	x.Release()
	y := m.tgtEmb.Forward(tgt).Reshape(batch, tt, d)
	scal(scale, y.Data)
	for _, l := range m.dec {
		a := l.self.Apply(y, y, nil, true)
		y = addNorm(l.ln1, y, a)
		c := l.cross.Apply(y, mem, srcPad, false)
		y = addNorm(l.ln2, y, c)
		f, fc := l.ff.Forward(y)
		fc.Release()
		y = addNorm(l.ln3, y, f)
	}
	mem.Release()
	h := m.decNorm.Apply(y)
	y.Release()
	logits := m.out.Forward(h)
	h.Release()
	_, logp, _ := SoftmaxCrossEntropy(logits, tgt, 0)
	logits.Release()
	seq := make([]float64, batch)
	for i, lp := range logp {
		seq[i/tt] += float64(lp)
	}
	return seq
}

func BenchmarkEncDecScore(b *testing.B) {
	const vocab, d, heads, ff, layers, batch, ts, tt = 16000, 256, 4, 1024, 2, 64, 60, 25
	rng := rand.New(rand.NewPCG(14, 14))
	m := newEncDec(vocab, d, heads, ff, layers, rng)
	src, tgt := make([]int, batch*ts), make([]int, batch*tt)
	for i := range src {
		src[i] = 1 + rng.IntN(vocab-1)
	}
	for i := range tgt {
		tgt[i] = 1 + rng.IntN(vocab-1)
	}
	srcLens := make([]int, batch)
	for i := range srcLens {
		srcLens[i] = ts
	}
	// Weights packed once for inference, as the generative model does, and
	// one untimed call first, as the PyTorch reference times it.
	m.pack()
	m.score(src, tgt, srcLens, batch, ts, tt)
	b.ResetTimer()
	for b.Loop() {
		seq := m.score(src, tgt, srcLens, batch, ts, tt)
		if math.IsNaN(seq[0]) {
			b.Fatal("NaN score")
		}
	}
	b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "sequences/s")
	b.ReportMetric(encDecFLOPs(vocab, d, ff, layers, ts, tt)*float64(batch*b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// encDecFLOPs is the matrix-multiply work of scoring one sequence: per
// source token and encoder layer the Q, K, V, O projections, attention
// scores and mixing, and the feed-forward; per target token and decoder
// layer the same for self-attention, the cross-attention's Q and O and its
// attention over the source, and the feed-forward; the cross-attention's K
// and V over the source; and the output projection of every target token.
func encDecFLOPs(vocab, d, ff, layers, ts, tt int) float64 {
	D, F, S, T, V, L := float64(d), float64(ff), float64(ts), float64(tt), float64(vocab), float64(layers)
	enc := S * L * (8*D*D + 4*S*D + 4*D*F)
	dec := T * L * (8*D*D + 4*T*D + 4*D*D + 4*S*D + 4*D*F)
	crossKV := S * L * 4 * D * D
	return enc + dec + crossKV + T*2*D*V
}
