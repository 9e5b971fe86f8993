package surrogate

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/scoring/nn"
)

func testModel(t testing.TB, vocab, dim int, seed uint64) *Model {
	t.Helper()
	m, err := New(Config{Vocab: vocab, Dim: dim, InitStd: 0.5}, seed)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// dense returns g as a (vocab, dim) matrix.
func dense(g *SparseGrad, vocab, dim int) []float32 {
	out := make([]float32, vocab*dim)
	for _, id := range g.Rows() {
		copy(out[id*dim:(id+1)*dim], g.Row(id))
	}
	return out
}

func TestEncode(t *testing.T) {
	m := testModel(t, 5, 3, 1)
	copy(m.Emb.Value.Data, []float32{0, 0, 0, 1, 2, 3, 3, 2, 1, 9, 9, 9, -1, 0, 1})
	got := m.Encode([]int{1, 2, 2, 4})
	want := []float32{(1 + 3 + 3 - 1) / 4.0, (2 + 2 + 2 + 0) / 4.0, (3 + 1 + 1 + 1) / 4.0}
	if !slices.Equal(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
	if got := m.Encode(nil); !slices.Equal(got, []float32{0, 0, 0}) {
		t.Errorf("empty sentence = %v", got)
	}
	batch := m.EncodeBatch([][]int{{1}, {1, 2, 2, 4}, {}}, nil)
	if !slices.Equal(batch[3:6], want) || !slices.Equal(batch[:3], []float32{1, 2, 3}) || !slices.Equal(batch[6:], []float32{0, 0, 0}) {
		t.Errorf("EncodeBatch = %v", batch)
	}
	if err := m.CheckIDs([]int{0, 4, 5}); err == nil || !strings.Contains(err.Error(), "id 5") {
		t.Errorf("CheckIDs: %v", err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "outside [0, 5)") {
			t.Errorf("out-of-range id: panic %v", r)
		}
	}()
	m.Encode([]int{-1})
}

func TestEncoderGradient(t *testing.T) {
	const vocab, dim = 9, 6
	m := testModel(t, vocab, dim, 2)
	sents := [][]int{{1, 2, 3}, {3, 3, 7}, {}, {8}, {2, 5, 1, 1, 6}}
	rng := rand.New(rand.NewPCG(5, 5))
	r := make([]float32, len(sents)*dim)
	for i := range r {
		r[i] = float32(rng.NormFloat64())
	}
	g := NewSparseGrad(vocab, dim)
	m.Backward(sents, r, g)
	if got := g.Rows(); !slices.Equal(got, []int{1, 2, 3, 7, 8, 5, 6}) {
		t.Errorf("touched rows %v", got)
	}
	if g.Row(0) != nil || g.Row(4) != nil {
		t.Error("untouched rows have a gradient")
	}
	loss := func() float64 {
		var s float64
		for i, v := range m.EncodeBatch(sents, nil) {
			s += float64(v) * float64(r[i])
		}
		return s
	}
	grad := dense(g, vocab, dim)
	checkGrads(t, "emb", loss, m.Emb.Value.Data, grad, 1e-2, 1000)
	// Reset keeps nothing.
	g.Reset()
	if len(g.Rows()) != 0 || g.Row(1) != nil {
		t.Error("Reset left rows behind")
	}
	m.Backward(sents[3:4], r[3*dim:4*dim], g)
	if !slices.Equal(g.Row(8), r[3*dim:4*dim]) || len(g.Rows()) != 1 {
		t.Errorf("after Reset: rows %v, row 8 = %v", g.Rows(), g.Row(8))
	}
}

// TestTrainerGradient checks the whole training gradient, from the table
// through the encoder and each objective, against finite differences.
func TestTrainerGradient(t *testing.T) {
	const vocab, dim = 12, 5
	batch := gradientBatch(rand.New(rand.NewPCG(8, 8)), 6, 0, vocab)
	for name, oc := range objectiveCases() {
		t.Run(name, func(t *testing.T) {
			m := testModel(t, vocab, dim, 3)
			net := newMeanNet(m, 0.01)
			tr, err := newTrainer(net, oc)
			if err != nil {
				t.Fatal(err)
			}
			tr.gradient(batch)
			grad := dense(net.grad, vocab, dim)
			obj, _ := NewObjective(oc)
			loss := func() float64 { return batchLoss(obj, m, batch) }
			checkGrads(t, "emb", loss, m.Emb.Value.Data, grad, 1e-3, 1000)
		})
	}
}

// gradientBatch returns n pairs of 1 to 4 random tokens from [lo, vocab),
// every other one with the first sentence repeated in the second, and two
// labels above the default threshold, so that every objective has
// positives and negatives.
func gradientBatch(rng *rand.Rand, n, lo, vocab int) []Pair {
	var batch []Pair
	for i := range n {
		p := Pair{Label: float32(2*rng.Float64() - 1)}
		for range 1 + rng.IntN(4) {
			p.A = append(p.A, lo+rng.IntN(vocab-lo))
			p.B = append(p.B, lo+rng.IntN(vocab-lo))
		}
		if i%2 == 0 {
			p.B = append(p.B, p.A...)
		}
		batch = append(batch, p)
	}
	batch[0].Label, batch[1].Label = 0.95, 0.8
	return batch
}

// batchLoss is obj's loss on batch under enc, without gradients.
func batchLoss(obj Objective, enc Encoder, batch []Pair) float64 {
	var a, b [][]int
	var y []float32
	for _, p := range batch {
		a, b, y = append(a, p.A), append(b, p.B), append(y, p.Label)
	}
	return obj.Loss(enc.EncodeBatch(a, nil), enc.EncodeBatch(b, nil), y, enc.Dim(), nil, nil)
}

// TestSparseAdamMatchesDense checks that lazy Adam is Adam when every row
// receives a gradient, and leaves untouched rows alone.
func TestSparseAdamMatchesDense(t *testing.T) {
	const vocab, dim = 4, 3
	m := testModel(t, vocab, dim, 4)
	ref := nn.NewParam("emb.weight", vocab, dim)
	copy(ref.Value.Data, m.Emb.Value.Data)
	dadam, sadam := nn.NewAdam(0.05), NewSparseAdam(0.05)
	g := NewSparseGrad(vocab, dim)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		g.Reset()
		ref.Grad.Zero()
		for _, id := range []int{2, 0, 1, 3} {
			row := g.acc(id)
			for j := range row {
				row[j] = float32(rng.NormFloat64())
			}
			copy(ref.Grad.Data[id*dim:(id+1)*dim], row)
		}
		sadam.Step(m.Emb, g)
		dadam.Step([]*nn.Param{ref})
	}
	for i, v := range m.Emb.Value.Data {
		if math.Abs(float64(v-ref.Value.Data[i])) > 1e-6 {
			t.Fatalf("weight %d: sparse %v, dense %v", i, v, ref.Value.Data[i])
		}
	}
	before := slices.Clone(m.Emb.Value.Data)
	g.Reset()
	copy(g.acc(1), []float32{1, -1, 0.5})
	sadam.Step(m.Emb, g)
	for i := range before {
		if changed := before[i] != m.Emb.Value.Data[i]; changed != (i/dim == 1) {
			t.Errorf("weight %d changed: %v", i, changed)
		}
	}
}

func TestNewDeterministic(t *testing.T) {
	a, b, c := testModel(t, 50, 7, 11), testModel(t, 50, 7, 11), testModel(t, 50, 7, 12)
	if !slices.Equal(a.Emb.Value.Data, b.Emb.Value.Data) {
		t.Error("same seed, different weights")
	}
	if slices.Equal(a.Emb.Value.Data, c.Emb.Value.Data) {
		t.Error("different seeds, same weights")
	}
	for _, cfg := range []Config{{Vocab: 0, Dim: 3, InitStd: 1}, {Vocab: 3, Dim: 0, InitStd: 1},
		{Vocab: 3, Dim: 3}, {Vocab: MaxVocab, Dim: MaxDim, InitStd: 1}, {Vocab: 3, Dim: 3, InitStd: math.Inf(1)}} {
		if _, err := New(cfg, 1); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

// TestWeightedEncoder checks a weighted model: the weighted mean, its
// gradient against finite differences, and a save/load round trip of the
// weights.
func TestWeightedEncoder(t *testing.T) {
	const vocab, dim = 6, 4
	cfg := Config{Vocab: vocab, Dim: dim, InitStd: 0.5, Weighted: true}
	weights := []float32{0, 1, 2, 0.5, 3, 1}
	m, err := TrainConfig{Model: cfg, Seed: 3, InitWeights: weights}.Initial()
	if err != nil {
		t.Fatal(err)
	}
	e := m.Emb.Value.Data
	got := m.Encode([]int{1, 2, 2})
	for j := range dim {
		want := (1*e[1*dim+j] + 2*e[2*dim+j] + 2*e[2*dim+j]) / 5
		if math.Abs(float64(got[j]-want)) > 1e-6 {
			t.Fatalf("weighted mean %v, want %v at %d", got[j], want, j)
		}
	}
	if z := m.Encode([]int{0, 0}); !slices.Equal(z, make([]float32, dim)) {
		t.Fatalf("tokens of weight 0 give %v", z)
	}
	sents := [][]int{{1, 2, 3}, {4, 4, 0}, {5}}
	rng := rand.New(rand.NewPCG(6, 6))
	r := make([]float32, len(sents)*dim)
	for i := range r {
		r[i] = float32(rng.NormFloat64())
	}
	g := NewSparseGrad(vocab, dim)
	m.Backward(sents, r, g)
	loss := func() float64 {
		var s float64
		for i, v := range m.EncodeBatch(sents, nil) {
			s += float64(v) * float64(r[i])
		}
		return s
	}
	checkGrads(t, "emb", loss, m.Emb.Value.Data, dense(g, vocab, dim), 1e-2, 1000)
	// The same linear loss in the logarithms of the weights (a loss of
	// cosines alone has dE ⊥ E, and would not check the mean's term).
	gw := NewSparseGrad(vocab, 1)
	m.BackwardLogWeights(sents, m.EncodeBatch(sents, nil), r, gw)
	if gw.Row(0) != nil {
		t.Fatal("a token of weight zero received a log-weight gradient")
	}
	lw := make([]float32, vocab-1)
	for i := range lw {
		lw[i] = float32(math.Log(float64(weights[i+1])))
	}
	wloss := func() float64 {
		for i, x := range lw {
			m.Weights.Value.Data[i+1] = float32(math.Exp(float64(x)))
		}
		return loss()
	}
	checkGrads(t, "log_weight", wloss, lw, dense(gw, vocab, 1)[1:], 1e-2, 1000)
	copy(m.Weights.Value.Data, weights)
	dir := t.TempDir()
	if err := m.Save(dir, "tok", nil); err != nil {
		t.Fatal(err)
	}
	back, _, err := Load(dir, "tok")
	if err != nil {
		t.Fatal(err)
	}
	if !back.Cfg.Weighted || !slices.Equal(back.Weights.Value.Data, weights) || !slices.Equal(back.Encode([]int{1, 2, 2}), got) {
		t.Fatal("weights lost in a save/load round trip")
	}
	if _, err := (TrainConfig{Model: Config{Vocab: vocab, Dim: dim, InitStd: 0.5}, InitWeights: weights}).Initial(); err == nil {
		t.Fatal("weights accepted for an unweighted model")
	}
}

// TestLogWeightGradient checks the gradient in the logarithms of a weighted
// model's token weights, through the encoder and each objective, against
// finite differences, and that tokens of weight zero receive none.
func TestLogWeightGradient(t *testing.T) {
	const vocab, dim = 12, 5
	batch := gradientBatch(rand.New(rand.NewPCG(9, 9)), 6, 0, vocab)
	batch[2].A = append(batch[2].A, 0) // token 0 weighs zero
	for name, oc := range objectiveCases() {
		t.Run(name, func(t *testing.T) {
			cfg := Config{Vocab: vocab, Dim: dim, InitStd: 0.5, Weighted: true}
			weights := make([]float32, vocab)
			for i := 1; i < vocab; i++ {
				weights[i] = 0.5 + float32(i)/4
			}
			m, err := TrainConfig{Model: cfg, Seed: 3, InitWeights: weights}.Initial()
			if err != nil {
				t.Fatal(err)
			}
			net := newMeanNet(m, 0.01)
			net.trainWeights(0.01)
			tr, err := newTrainer(net, oc)
			if err != nil {
				t.Fatal(err)
			}
			tr.gradient(batch)
			if net.wgrad.Row(0) != nil {
				t.Fatal("a token of weight zero received a gradient")
			}
			lw := slices.Clone(net.logW.Value.Data[1:])
			grad := dense(net.wgrad, vocab, 1)[1:]
			obj, _ := NewObjective(oc)
			loss := func() float64 {
				for i, x := range lw {
					m.Weights.Value.Data[i+1] = float32(math.Exp(float64(x)))
				}
				return batchLoss(obj, m, batch)
			}
			checkGrads(t, "log_weight", loss, lw, grad, 1e-2, 1000)
		})
	}
}

// TestTrainWeights checks that WeightLR moves the weights of the tokens the
// pairs hold, keeps them positive, leaves zero weights and absent tokens
// alone, and is refused for an unweighted model.
func TestTrainWeights(t *testing.T) {
	const vocab, dim = 10, 4
	rng := rand.New(rand.NewPCG(4, 4))
	var pairs []Pair
	for range 64 {
		p := Pair{Label: float32(rng.Float64())}
		for range 3 {
			p.A = append(p.A, rng.IntN(8)) // tokens 8 and 9 never appear
			p.B = append(p.B, rng.IntN(8))
		}
		pairs = append(pairs, p)
	}
	weights := []float32{0, 1, 2, 3, 1, 2, 3, 1, 2, 3}
	cfg := TrainConfig{Model: Config{Vocab: vocab, Dim: dim, InitStd: 0.5, Weighted: true}, Objective: DefaultObjective(ObjectiveL2),
		Epochs: 3, BatchSize: 16, LR: 0.01, Seed: 1, InitWeights: weights, WeightLR: 0.05}
	m, _, err := Train(cfg, pairs, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := m.Weights.Value.Data
	if w[0] != 0 || w[8] != 2 || w[9] != 3 {
		t.Errorf("weights that no gradient reaches moved: %v", w)
	}
	for id := 1; id < 8; id++ {
		if w[id] == weights[id] || !(w[id] > 0) {
			t.Errorf("token %d: weight %v (started at %v)", id, w[id], weights[id])
		}
	}
	cfg.WeightLR = 0
	fixed, _, err := Train(cfg, pairs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fixed.Weights.Value.Data, weights) {
		t.Error("weights moved without WeightLR")
	}
	cfg.WeightLR, cfg.Model.Weighted, cfg.InitWeights = 0.05, false, nil
	if _, _, err := Train(cfg, pairs, nil); err == nil || !strings.Contains(err.Error(), "weight_lr") {
		t.Errorf("WeightLR on an unweighted model: %v", err)
	}
	cfg.Model.Weighted, cfg.WeightLR = true, math.Inf(1)
	if _, _, err := Train(cfg, pairs, nil); err == nil {
		t.Error("infinite WeightLR accepted")
	}
}

// TestInterpolate checks that Interpolate returns start + a·(trained −
// start) for the table and the token weights, that its sentence vectors
// are then the same mix of the start's and the trained model's (fixed
// weights), and that values outside [0, 1] are refused.
func TestInterpolate(t *testing.T) {
	const vocab, dim = 10, 4
	rng := rand.New(rand.NewPCG(7, 7))
	var pairs, dev []Pair
	for i := range 80 {
		p := Pair{Label: float32(rng.Float64())}
		for range 3 {
			p.A = append(p.A, 1+rng.IntN(vocab-1))
			p.B = append(p.B, 1+rng.IntN(vocab-1))
		}
		if i%4 == 0 {
			dev = append(dev, p)
		} else {
			pairs = append(pairs, p)
		}
	}
	weights := []float32{0, 1, 2, 3, 1, 2, 3, 1, 2, 3}
	cfg := TrainConfig{Model: Config{Vocab: vocab, Dim: dim, InitStd: 0.5, Weighted: true}, Objective: DefaultObjective(ObjectiveL2),
		Epochs: 2, BatchSize: 16, LR: 0.05, Seed: 1, InitWeights: weights}
	start, err := cfg.Initial()
	if err != nil {
		t.Fatal(err)
	}
	trained, full, err := Train(cfg, pairs, dev)
	if err != nil {
		t.Fatal(err)
	}
	if full.Interpolated != nil {
		t.Error("an uninterpolated run reports interpolated dev metrics")
	}
	cfg.Interpolate = 0.25
	mixed, curve, err := Train(cfg, pairs, dev)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range mixed.Emb.Value.Data {
		want := start.Emb.Value.Data[i] + 0.25*(trained.Emb.Value.Data[i]-start.Emb.Value.Data[i])
		if math.Abs(float64(v-want)) > 1e-6 {
			t.Fatalf("table value %d: %v, want %v", i, v, want)
		}
	}
	s := []int{1, 4, 4, 7}
	e0, e1, em := start.Encode(s), trained.Encode(s), mixed.Encode(s)
	for k := range em {
		if want := e0[k] + 0.25*(e1[k]-e0[k]); math.Abs(float64(em[k]-want)) > 1e-6 {
			t.Fatalf("sentence vector %d: %v, want %v", k, em[k], want)
		}
	}
	if curve.Interpolated == nil || curve.Interpolated.Spearman == curve.Epochs[len(curve.Epochs)-1].Dev.Spearman && curve.Interpolated.Loss == curve.Epochs[len(curve.Epochs)-1].Dev.Loss {
		t.Errorf("interpolated dev metrics %+v, last epoch's %+v", curve.Interpolated, curve.Epochs[len(curve.Epochs)-1].Dev)
	}
	cfg.Interpolate = 1.5
	beyond, _, err := Train(cfg, pairs, dev)
	if err != nil {
		t.Fatal(err)
	}
	if i := 5; math.Abs(float64(beyond.Emb.Value.Data[i]-(start.Emb.Value.Data[i]+1.5*(trained.Emb.Value.Data[i]-start.Emb.Value.Data[i])))) > 1e-6 {
		t.Errorf("interpolate 1.5: table value %d is %v", i, beyond.Emb.Value.Data[i])
	}
	// Learned token weights move in log space and stay positive.
	cfg.WeightLR = 0.5
	cfg.Interpolate = 1
	wt, _, err := Train(cfg, pairs, dev)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Interpolate = 2
	w2, _, err := Train(cfg, pairs, dev)
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for i, w := range w2.Weights.Value.Data {
		w0, w1 := weights[i], wt.Weights.Value.Data[i]
		want := w1
		if w0 > 0 {
			want = w0 * (w1 / w0) * (w1 / w0)
		}
		if w1 != w0 {
			moved++
		}
		if math.Abs(float64(w-want)) > 1e-4*float64(want) || (w0 > 0) != (w > 0) {
			t.Errorf("interpolate 2: weight %d is %v, want %v (start %v, trained %v)", i, w, want, w0, w1)
		}
	}
	if moved == 0 {
		t.Error("no weight was learned")
	}
	cfg.WeightLR = 0
	for _, a := range []float64{-0.1, 2.5, math.NaN()} {
		cfg.Interpolate = a
		if _, _, err := Train(cfg, pairs, dev); err == nil || !strings.Contains(err.Error(), "interpolate") {
			t.Errorf("interpolate %v: %v", a, err)
		}
	}
}

// lrLog wraps a meanNet and records the rate scales run asks for, and the
// rates its optimisers then hold.
type lrLog struct {
	*meanNet
	scales, lrs, wlrs []float64
}

func (l *lrLog) scaleLR(f float64) {
	l.meanNet.scaleLR(f)
	l.scales = append(l.scales, f)
	l.lrs = append(l.lrs, l.opt.LR)
	l.wlrs = append(l.wlrs, l.wopt.LR)
}

// TestDecay checks that Decay scales every learning rate by 1 - k/steps at
// step k (full at the first step, 1/steps at the last), that without it the
// rates are never touched, and that it changes what Train returns.
func TestDecay(t *testing.T) {
	const vocab, dim = 10, 4
	rng := rand.New(rand.NewPCG(6, 6))
	var pairs []Pair
	for range 40 { // 3 batches of 16 a epoch (16, 16, 8)
		p := Pair{Label: float32(rng.Float64())}
		for range 3 {
			p.A = append(p.A, rng.IntN(vocab))
			p.B = append(p.B, rng.IntN(vocab))
		}
		pairs = append(pairs, p)
	}
	weights := []float32{1, 1, 2, 3, 1, 2, 3, 1, 2, 3}
	cfg := TrainConfig{Model: Config{Vocab: vocab, Dim: dim, InitStd: 0.5, Weighted: true}, Objective: DefaultObjective(ObjectiveL2),
		Epochs: 3, BatchSize: 16, LR: 0.01, Seed: 1, InitWeights: weights, WeightLR: 0.05, Decay: true}
	newNet := func() *lrLog {
		m, err := cfg.Initial()
		if err != nil {
			t.Fatal(err)
		}
		n := newMeanNet(m, cfg.LR)
		n.trainWeights(cfg.WeightLR)
		return &lrLog{meanNet: n}
	}
	net := newNet()
	if _, err := run(net, cfg, pairs, nil); err != nil {
		t.Fatal(err)
	}
	const steps = 9
	if len(net.scales) != steps {
		t.Fatalf("%d rate changes, want one before each of %d steps", len(net.scales), steps)
	}
	for k, f := range net.scales {
		want := 1 - float64(k)/steps
		if math.Abs(f-want) > 1e-12 || math.Abs(net.lrs[k]-cfg.LR*want) > 1e-12 || math.Abs(net.wlrs[k]-cfg.WeightLR*want) > 1e-12 {
			t.Errorf("step %d: scale %v, lr %v, weight lr %v; want scale %v", k, f, net.lrs[k], net.wlrs[k], want)
		}
	}
	cfg.Decay = false
	net = newNet()
	if _, err := run(net, cfg, pairs, nil); err != nil {
		t.Fatal(err)
	}
	if len(net.scales) != 0 || net.opt.LR != cfg.LR || net.wopt.LR != cfg.WeightLR {
		t.Errorf("without Decay: scales %v, lr %v, weight lr %v", net.scales, net.opt.LR, net.wopt.LR)
	}
	constant, _, err := Train(cfg, pairs, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Decay = true
	decayed, _, err := Train(cfg, pairs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(constant.Emb.Value.Data, decayed.Emb.Value.Data) {
		t.Error("Decay left the trained table as a constant rate leaves it")
	}
}
