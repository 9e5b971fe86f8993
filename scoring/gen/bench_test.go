package gen

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/nn"
	"github.com/ctxsim/ctxsim/scoring/tokenizer"
)

// BenchmarkScore scores batches of 64 ToSentence requests with sources of
// about 60 tokens and targets of about 25 at the default configuration:
// "distinct" with 64 different contexts, "shared" with 8 contexts whose
// sources are encoded once each, "mixed" with 64 different contexts and
// targets of 7 to 41 tokens. On a CPU with AVX512_BF16 the same
// batches are scored in bfloat16 too (the -bf16 lines).
func BenchmarkScore(b *testing.B) {
	m, err := New(DefaultConfig(benchVocab), 10)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(11, 11))
	d, s, x := distinct(r), shared(r), mixed(r)
	b.Run("distinct", func(b *testing.B) { benchScore(b, m, d) })
	b.Run("shared", func(b *testing.B) { benchScore(b, m, s) })
	b.Run("mixed", func(b *testing.B) { benchScore(b, m, x) })
	if !nn.HasBF16() {
		return
	}
	m16, _ := New(DefaultConfig(benchVocab), 10)
	if err := m16.SetPrecision(PrecisionBF16); err != nil {
		b.Fatal(err)
	}
	b.Run("distinct-bf16", func(b *testing.B) { benchScore(b, m16, d) })
	b.Run("shared-bf16", func(b *testing.B) { benchScore(b, m16, s) })
	b.Run("mixed-bf16", func(b *testing.B) { benchScore(b, m16, x) })
}

const benchVocab, benchBatch = 12000, 64

func sent(r *rand.Rand, n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(tokenizer.NumSpecial + r.IntN(benchVocab-tokenizer.NumSpecial))
	}
	return s
}

// distinct is a batch of requests with different contexts.
func distinct(r *rand.Rand) []Request {
	reqs := make([]Request, benchBatch)
	for i := range reqs {
		// Sources of 4 + 26..30 + 26..30 tokens, targets of 22..26 + <eos>.
		reqs[i] = Request{
			Left:  [][]int32{sent(r, 12+r.IntN(3)), sent(r, 14+r.IntN(3))},
			S:     sent(r, 22+r.IntN(5)),
			Right: [][]int32{sent(r, 14+r.IntN(3)), sent(r, 12+r.IntN(3))},
			Dir:   examples.ToSentence,
		}
	}
	return reqs
}

// mixed is a batch with different contexts whose targets range from 6 to
// 40 tokens, as the neighbouring sentences of a harvest's contexts do.
func mixed(r *rand.Rand) []Request {
	reqs := distinct(r)
	for i := range reqs {
		reqs[i].S = sent(r, 6+r.IntN(35))
	}
	return reqs
}

// shared is 64 requests over 8 contexts, 8 candidate sentences each: the
// shape of ranking candidates against a context.
func shared(r *rand.Rand) []Request {
	reqs := distinct(r)
	for i := range reqs {
		reqs[i].Left, reqs[i].Right = reqs[i%8].Left, reqs[i%8].Right
	}
	return reqs
}

func benchScore(b *testing.B, m *Model, reqs []Request) {
	// One untimed call first (it packs the weights once per model and
	// fills the buffer pools), as the PyTorch reference times its model.
	m.Score(reqs)
	for b.Loop() {
		s := m.Score(reqs)
		if math.IsNaN(float64(s[0])) {
			b.Fatal("NaN score")
		}
	}
	b.ReportMetric(float64(len(reqs)*b.N)/b.Elapsed().Seconds(), "sequences/s")
}
