package disc

import (
	"math/rand"
	"testing"
)

// BenchmarkEncode measures sentence encoding at the default size (hidden
// 300, embeddings 256), batch 64, 25 tokens: sentences/s on one thread.
func BenchmarkEncode(b *testing.B) {
	m, err := New(DefaultConfig(12000), 1)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewSource(1))
	seqs := make([][]int32, 64)
	for i := range seqs {
		seqs[i] = make([]int32, 25)
		for t := range seqs[i] {
			seqs[i][t] = int32(1 + r.Intn(11999))
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Encode(seqs)
	}
	b.ReportMetric(float64(64*b.N)/b.Elapsed().Seconds(), "sentences/s")
}

// BenchmarkHead measures scoring (context, sentence) pairs from cached
// vectors with each head, 1024 pairs per call: pairs/s on one thread.
func BenchmarkHead(b *testing.B) {
	for _, head := range []string{HeadInteraction, HeadLinear} {
		b.Run(head, func(b *testing.B) {
			cfg := DefaultConfig(12000)
			cfg.Head = head
			m, err := New(cfg, 1)
			if err != nil {
				b.Fatal(err)
			}
			const n = 1024
			d := m.VecDim()
			r := rand.New(rand.NewSource(2))
			vec := func() []float32 {
				v := make([]float32, n*d)
				for i := range v {
					v[i] = r.Float32() - 0.5
				}
				return v
			}
			l, s, rr := vec(), vec(), vec()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.Logits(l, s, rr)
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "pairs/s")
		})
	}
}
