package surrogate

import (
	"math/rand/v2"
	"testing"
)

// benchSentences returns n sentences of length tokens drawn from vocab.
func benchSentences(n, length, vocab int, seed uint64) [][]int {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([][]int, n)
	for i := range out {
		out[i] = make([]int, length)
		for j := range out[i] {
			out[i][j] = rng.IntN(vocab)
		}
	}
	return out
}

// BenchmarkEncode encodes batches of 256 sentences of 20 tokens with a
// 16K-token vocabulary and dim 300, in one goroutine.
func BenchmarkEncode(b *testing.B) {
	const vocab, dim, batch, length = 16000, 300, 256, 20
	m, err := New(Config{Vocab: vocab, Dim: dim, InitStd: 0.1}, 1)
	if err != nil {
		b.Fatal(err)
	}
	sents := benchSentences(batch, length, vocab, 2)
	out := m.EncodeBatch(sents, nil)
	b.ResetTimer()
	for b.Loop() {
		out = m.EncodeBatch(sents, out)
	}
	b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "sentences/s")
}

// BenchmarkTrainStep measures one training step (encode, objective,
// backward, lazy Adam) on 128 pairs of 20-token sentences, dim 300, in one
// goroutine.
func BenchmarkTrainStep(b *testing.B) {
	const vocab, dim, batch, length = 16000, 300, 128, 20
	for _, name := range []string{ObjectiveL2, ObjectiveContrastive, ObjectiveMultiSim} {
		b.Run(name, func(b *testing.B) {
			m, err := New(Config{Vocab: vocab, Dim: dim, InitStd: 0.1}, 1)
			if err != nil {
				b.Fatal(err)
			}
			tr, err := newTrainer(newMeanNet(m, 0.001), DefaultObjective(name))
			if err != nil {
				b.Fatal(err)
			}
			a, c := benchSentences(batch, length, vocab, 3), benchSentences(batch, length, vocab, 4)
			rng := rand.New(rand.NewPCG(5, 5))
			pairs := make([]Pair, batch)
			for i := range pairs {
				pairs[i] = Pair{A: a[i], B: c[i], Label: float32(2*rng.Float64() - 1)}
			}
			tr.step(pairs)
			b.ResetTimer()
			for b.Loop() {
				tr.step(pairs)
			}
			b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "pairs/s")
		})
	}
}
