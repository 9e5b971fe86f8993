package gen

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/nn"
	"github.com/ctxsim/ctxsim/scoring/tokenizer"
)

// wordTok maps words to non-special ids by hashing, for tests.
type wordTok struct{ vocab int }

func (w wordTok) Encode(s string) []int32 {
	var out []int32
	for _, f := range strings.Fields(s) {
		h := fnv.New32a()
		h.Write([]byte(f))
		out = append(out, int32(tokenizer.NumSpecial+h.Sum32()%uint32(w.vocab-tokenizer.NumSpecial)))
	}
	return out
}

func tinyConfig() Config {
	return Config{Vocab: 30, Dim: 8, Heads: 2, FF: 16, EncLayers: 1, DecLayers: 1,
		MaxSrc: 24, MaxTgt: 10, MaxSegments: 5}
}

func tinyExamples() []examples.Infill {
	ctx := examples.Context{Left: []string{"a b c", "d e"}, Right: []string{"f g h i"}}
	return []examples.Infill{
		{Context: ctx, S: "j k", Dir: examples.ToSentence},
		{Context: ctx, S: "l m n o", Dir: examples.ToLeft},
		{Context: examples.Context{Left: []string{"o"}, Right: []string{"p q", "r"}}, S: "a b c", Dir: examples.ToRight},
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig(12000).Validate(); err != nil {
		t.Fatal(err)
	}
	if err := tinyConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, mod := range []func(*Config){
		func(c *Config) { c.Vocab = 5 },
		func(c *Config) { c.Heads = 3 },
		func(c *Config) { c.EncLayers = 0 },
		func(c *Config) { c.MaxSrc = 5 },
		func(c *Config) { c.MaxTgt = 1 },
		func(c *Config) { c.MaxSegments = 4 },
	} {
		c := tinyConfig()
		mod(&c)
		if _, err := New(c, 1); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}

func TestLayout(t *testing.T) {
	cfg := tinyConfig()
	cfg.MaxSrc, cfg.MaxTgt, cfg.Vocab = 10, 4, 40
	m, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Tokens 10.. are words; left sentences {10 11} {12 13 14}, s {20 21
	// 22}, right {30 31} {32}.
	r := Request{Left: [][]int32{{10, 11}, {12, 13, 14}}, S: []int32{20, 21, 22}, Right: [][]int32{{30, 31}, {32}}}
	tests := []struct {
		dir           examples.Direction
		src, seg, tgt []int
	}{
		// Budget 6 split 3+3: left keeps its end, right its start.
		{examples.ToSentence,
			[]int{toSID, 12, 13, 14, sepID, maskID, sepID, 30, 31, 32},
			[]int{0, 1, 1, 1, 0, 0, 0, 2, 2, 4},
			[]int{20, 21, 22, eosID}},
		// Left target keeps its last MaxTgt-1 tokens.
		{examples.ToLeft,
			[]int{toLID, maskID, sepID, 20, 21, 22, sepID, 30, 31, 32},
			[]int{0, 0, 0, 0, 0, 0, 0, 2, 2, 4},
			[]int{12, 13, 14, eosID}},
		// Left and s share 6: left 3 (its end), s 3.
		{examples.ToRight,
			[]int{toRID, 12, 13, 14, sepID, 20, 21, 22, sepID, maskID},
			[]int{0, 1, 1, 1, 0, 0, 0, 0, 0, 0},
			[]int{30, 31, 32, eosID}},
	}
	for _, tc := range tests {
		r.Dir = tc.dir
		q := m.layout(&r)
		if !slices.Equal(q.src, tc.src) || !slices.Equal(q.seg, tc.seg) || !slices.Equal(q.tgt, tc.tgt) {
			t.Errorf("%v: got src %v seg %v tgt %v, want %v %v %v", tc.dir, q.src, q.seg, q.tgt, tc.src, tc.seg, tc.tgt)
		}
	}
	// Unequal lengths: a short side leaves its share to the other.
	if a, b := share(2, 20, 10); a != 2 || b != 8 {
		t.Errorf("share(2, 20, 10) = %d, %d", a, b)
	}
	if a, b := share(20, 20, 10); a != 5 || b != 5 {
		t.Errorf("share(20, 20, 10) = %d, %d", a, b)
	}
	// Distant sentences share the last segment row of their side.
	if g := m.segID(5, false); g != 3 {
		t.Errorf("segID(5, left) = %d, want 3", g)
	}
	b := newBatch([]seq{m.layout(&r), {src: []int{toSID}, seg: []int{0}, tgt: []int{eosID}}}, false)
	if b.ts != 10 || b.tt != 4 || len(b.rows) != 5 || b.dec[0] != bosID || b.dec[1] != 30 || b.dec[4] != bosID || b.dec[5] != padID {
		t.Errorf("batch: ts %d tt %d rows %v dec %v", b.ts, b.tt, b.rows, b.dec)
	}
}

// TestGradients checks the analytic gradient of the whole model (output
// projection tied with the embeddings, decoder and encoder stacks,
// position and segment embeddings) against central differences on a
// sample of every parameter.
func TestGradients(t *testing.T) {
	m, err := New(tinyConfig(), 3)
	if err != nil {
		t.Fatal(err)
	}
	// Larger weights than at initialisation, so that gradients are well
	// above float32 noise.
	for _, p := range m.Params() {
		for i := range p.Value.Data {
			p.Value.Data[i] *= 1.5
		}
	}
	b := m.batchOf(wordTok{m.Cfg.Vocab}, tinyExamples())
	base := float64(m.loss(b, true))
	r := rand.New(rand.NewPCG(1, 2))
	checked, kinks := 0, 0
	for _, p := range m.Params() {
		for trial := 0; trial < 4; trial++ {
			i := r.IntN(len(p.Value.Data))
			const eps = 2e-3
			orig := p.Value.Data[i]
			p.Value.Data[i] = orig + eps
			up := float64(m.loss(b, false))
			p.Value.Data[i] = orig - eps
			down := float64(m.loss(b, false))
			p.Value.Data[i] = orig
			fwd, bwd := (up-base)/eps, (base-down)/eps
			if math.Abs(fwd-bwd) > 1e-3+0.1*math.Max(math.Abs(fwd), math.Abs(bwd)) {
				kinks++
				continue
			}
			num := (up - down) / (2 * eps)
			got := float64(p.Grad.Data[i])
			if math.Abs(num-got) > 1e-3+0.05*math.Abs(num) {
				t.Errorf("%s[%d]: analytic %.6f, numeric %.6f", p.Name, i, got, num)
			}
			checked++
		}
	}
	t.Logf("%d gradient entries checked, %d skipped at kinks", checked, kinks)
	if n := 4 * len(m.Params()); checked < n*4/5 {
		t.Fatalf("%d of %d gradient entries checked, %d skipped", checked, n, kinks)
	}
}

// TestScoreMatchesLoss checks that Score is minus the training loss of the
// same single example, and that it does not depend on batching or on
// padding from longer requests.
func TestScoreMatchesLoss(t *testing.T) {
	m, err := New(tinyConfig(), 4)
	if err != nil {
		t.Fatal(err)
	}
	tok := wordTok{m.Cfg.Vocab}
	exs := tinyExamples()
	exs = append(exs, examples.Infill{
		Context: examples.Context{Left: []string{"u v w x y z a b c d e f g h"}, Right: []string{"q r s t u v w x y z a b"}},
		S:       "a b c d e f g h i j k l m n", Dir: examples.ToSentence})
	reqs := make([]Request, len(exs))
	alone := make([]float32, len(exs))
	for i, e := range exs {
		reqs[i] = NewRequest(tok, e.Context, e.S, e.Dir)
		alone[i] = m.Score(reqs[i : i+1])[0]
		loss := m.loss(m.batchOf(tok, exs[i:i+1]), false)
		if d := math.Abs(float64(alone[i] + loss)); d > 1e-5 {
			t.Errorf("example %d: score %v, loss %v", i, alone[i], loss)
		}
		if alone[i] >= 0 {
			t.Errorf("example %d: score %v not negative", i, alone[i])
		}
	}
	together := m.Score(reqs)
	var one []float32
	m.logLik(reqs, 1, func(i int, sum float64, n int) { one = append(one, float32(sum/float64(n))) })
	for i := range reqs {
		if d := math.Abs(float64(together[i] - alone[i])); d > 1e-4 {
			t.Errorf("example %d: alone %v, in a padded batch %v", i, alone[i], together[i])
		}
	}
	if len(one) != len(reqs) {
		t.Fatalf("logLik emitted %d results for %d requests", len(one), len(reqs))
	}
}

// copyExamples makes a toy infilling task: the sentence repeats the last
// word of the left context and the first word of the right context.
func copyExamples(n int, r *rand.Rand) []examples.Infill {
	words := []string{"w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9"}
	w := func() string { return words[r.IntN(len(words))] }
	out := make([]examples.Infill, n)
	for i := range out {
		a, b := w(), w()
		out[i] = examples.Infill{
			Context: examples.Context{Left: []string{w() + " " + a}, Right: []string{b + " " + w()}},
			S:       a + " " + b, Dir: examples.ToSentence,
		}
	}
	return out
}

func TestLearnsCopyTask(t *testing.T) {
	cfg := Config{Vocab: 40, Dim: 16, Heads: 2, FF: 32, EncLayers: 1, DecLayers: 1,
		MaxSrc: 16, MaxTgt: 8, MaxSegments: 5}
	m, err := New(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	tok := wordTok{cfg.Vocab}
	r := rand.New(rand.NewPCG(6, 6))
	held := copyExamples(64, r)
	before := m.Evaluate(tok, held, 32)
	tr := NewTrainer(m, tok, 1e-2)
	for range 250 {
		tr.Step(copyExamples(16, r))
	}
	after := m.Evaluate(tok, held, 32)
	t.Logf("held-out NLL per token %.3f -> %.3f", before.All.NLL, after.All.NLL)
	// Chance over the ten words and <eos> is log 11 ≈ 2.4; copying the two
	// words makes the loss near zero.
	if after.All.NLL > 0.5 || after.All.NLL > before.All.NLL/4 {
		t.Errorf("NLL per token %.3f -> %.3f, want below 0.5", before.All.NLL, after.All.NLL)
	}
	if after.ToSentence.Examples != 64 || after.ToSentence.Tokens != 3*64 || after.ToLeft.Examples != 0 {
		t.Errorf("metrics %+v", after)
	}
	if math.Abs(after.ToSentence.Perplexity-math.Exp(after.ToSentence.NLL)) > 1e-9 {
		t.Errorf("perplexity %v for NLL %v", after.ToSentence.Perplexity, after.ToSentence.NLL)
	}
}

func TestEvaluateDirections(t *testing.T) {
	m, _ := New(tinyConfig(), 7)
	met := m.Evaluate(wordTok{30}, tinyExamples(), 2)
	for _, dm := range []DirMetrics{met.ToSentence, met.ToLeft, met.ToRight} {
		if dm.Examples != 1 || dm.Tokens < 2 || dm.Perplexity <= 1 {
			t.Errorf("direction metrics %+v", dm)
		}
	}
	if met.All.Examples != 3 || met.All.Tokens != met.ToSentence.Tokens+met.ToLeft.Tokens+met.ToRight.Tokens {
		t.Errorf("overall metrics %+v", met.All)
	}
}

// TestSharedSources checks that requests with the same source are encoded
// once and scored as if alone.
func TestSharedSources(t *testing.T) {
	m, _ := New(tinyConfig(), 12)
	tok := wordTok{m.Cfg.Vocab}
	ctx := examples.Context{Left: []string{"a b c"}, Right: []string{"d e"}}
	var reqs []Request
	for _, s := range []string{"f g", "h", "i j k l", "m n o"} {
		reqs = append(reqs, NewRequest(tok, ctx, s, examples.ToSentence))
	}
	reqs = append(reqs, NewRequest(tok, ctx, "f g", examples.ToLeft))
	seqs := make([]seq, len(reqs))
	for i := range reqs {
		seqs[i] = m.layout(&reqs[i])
	}
	if b := newBatch(seqs, true); b.nu != 2 || b.uniq[3] != 0 || b.uniq[4] != 1 {
		t.Errorf("%d distinct sources, uniq %v; want 2", b.nu, b.uniq)
	}
	together := m.Score(reqs)
	for i := range reqs {
		alone := m.Score(reqs[i : i+1])[0]
		if d := math.Abs(float64(alone - together[i])); d > 1e-4 {
			t.Errorf("request %d: alone %v, with shared sources %v", i, alone, together[i])
		}
	}
}

// TestScoreFollowsTraining checks that the weights Score packs for
// inference are dropped when a training step changes them: a model scored,
// trained one step and scored again gives, bit for bit, the scores of a
// model that was never scored and holds the same weights.
func TestScoreFollowsTraining(t *testing.T) {
	m, err := New(tinyConfig(), 5)
	if err != nil {
		t.Fatal(err)
	}
	tok := wordTok{m.Cfg.Vocab}
	exs := tinyExamples()
	reqs := make([]Request, len(exs))
	for i, ex := range exs {
		reqs[i] = NewRequest(tok, ex.Context, ex.S, ex.Dir)
	}
	before := m.Score(reqs)
	if goKernel := strings.HasPrefix(nn.Backend(), "go/"); m.out.Packed() != goKernel {
		t.Fatalf("after Score the output projection is packed: %v, under %s", m.out.Packed(), nn.Backend())
	}
	NewTrainer(m, tok, 1e-2).Step(exs)
	got := m.Score(reqs)
	fresh, err := New(tinyConfig(), 6)
	if err != nil {
		t.Fatal(err)
	}
	ps := m.Params()
	for i, p := range fresh.Params() {
		copy(p.Value.Data, ps[i].Value.Data)
	}
	want := fresh.Score(reqs)
	changed := false
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("request %d: %v after the step, %v from the same weights", i, got[i], want[i])
		}
		changed = changed || got[i] != before[i]
	}
	if !changed {
		t.Fatal("the training step changed no score")
	}
}

// TestScoreBF16 checks the bfloat16 precision: scores near the float32
// ones but not the same bits, and float32 again, bit for bit, after
// switching back.
func TestScoreBF16(t *testing.T) {
	cfg := Config{Vocab: 300, Dim: 64, Heads: 4, FF: 128, EncLayers: 2, DecLayers: 2,
		MaxSrc: 40, MaxTgt: 16, MaxSegments: 5}
	m, err := New(cfg, 21)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetPrecision("fp16"); err == nil {
		t.Error("precision fp16 accepted")
	}
	tok := wordTok{cfg.Vocab}
	r := rand.New(rand.NewPCG(8, 8))
	var reqs []Request
	for _, e := range copyExamples(40, r) {
		for _, dir := range []examples.Direction{examples.ToSentence, examples.ToLeft, examples.ToRight} {
			reqs = append(reqs, NewRequest(tok, e.Context, e.S, dir))
		}
	}
	fp32 := m.Score(reqs)
	if err := m.SetPrecision(PrecisionBF16); err != nil {
		if nn.HasBF16() {
			t.Fatal(err)
		}
		t.Skipf("no AVX512_BF16: %v", err)
	}
	if m.Precision() != PrecisionBF16 {
		t.Fatalf("precision %q", m.Precision())
	}
	bf16 := m.Score(reqs)
	var maxDiff float64
	same := 0
	for i := range reqs {
		d := math.Abs(float64(bf16[i] - fp32[i]))
		maxDiff = max(maxDiff, d)
		if bf16[i] == fp32[i] {
			same++
		}
	}
	t.Logf("%d scores, mean log-probability per token: largest bf16 change %.4f, %d unchanged", len(reqs), maxDiff, same)
	if maxDiff > 0.05 || same == len(reqs) {
		t.Errorf("bf16 scores differ from fp32 by up to %v (%d of %d unchanged)", maxDiff, same, len(reqs))
	}
	if err := m.SetPrecision(""); err != nil {
		t.Fatal(err)
	}
	again := m.Score(reqs)
	for i := range reqs {
		if math.Float32bits(again[i]) != math.Float32bits(fp32[i]) {
			t.Fatalf("request %d: fp32 score %v after bf16, %v before", i, again[i], fp32[i])
		}
	}
}
