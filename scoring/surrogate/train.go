package surrogate

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ctxsim/ctxsim/scoring/nn"
	"github.com/ctxsim/ctxsim/scoring/stats"
)

// Pair is a labelled sentence pair: token IDs of both sentences and the
// harvested similarity label in [-1, 1].
type Pair struct {
	A, B  []int
	Label float32
}

// TrainConfig configures Train.
type TrainConfig struct {
	Model     Config          `json:"model"`
	Objective ObjectiveConfig `json:"objective"`
	Epochs    int             `json:"epochs"`
	BatchSize int             `json:"batch_size"`
	LR        float64         `json:"lr"`
	// Seed draws the initial embeddings and the order of the pairs in every
	// epoch.
	Seed uint64 `json:"seed"`
	// InitTable, if set, is the initial (Model.Vocab, Model.Dim) embedding
	// table, copied, in place of random draws; InitSource names where it
	// came from.
	InitTable  []float32 `json:"-"`
	InitSource string    `json:"init_source,omitempty"`
	// InitWeights are the token weights of a weighted model (Model.Cfg
	// .Weighted), copied; nil gives every token weight 1.
	InitWeights []float32 `json:"-"`
	// Anchor, if positive, holds the mean encoder's table near where it
	// started (L2-SP): every step adds Anchor·(E − E₀) to the gradient of
	// each row its batch touches, the gradient of Anchor/2·‖E − E₀‖² over
	// those rows. The reported losses are the objective's alone.
	Anchor float64 `json:"anchor,omitempty"`
	// WeightLR, if positive, also trains a weighted model's token weights
	// (Model.Cfg.Weighted): each weight w is learned as log w, by its own
	// lazy Adam at this rate, so that it stays positive and moves by
	// ratios. A weight of zero stays zero. 0 keeps the weights fixed.
	WeightLR float64 `json:"weight_lr,omitempty"`
	// Interpolate, if positive and not 1, moves the trained mean encoder
	// along the line from its start in weight space (WiSE-FT, Wortsman et
	// al., 2022): the returned table is start + Interpolate · (trained −
	// start), back towards the start below 1, beyond the trained table
	// above it (at most 2). Since a sentence vector is linear in the
	// table, that is, for fixed weights, the same mix of every sentence's
	// start and trained vectors. Trained token weights move the same way
	// in log space (w₀·(w/w₀)^Interpolate), so they stay positive. 0 or 1
	// returns the trained model as it is.
	Interpolate float64 `json:"interpolate,omitempty"`
	// Decay makes every learning rate of the run (LR and WeightLR) fall
	// linearly over the run's steps, from its full value at the first step
	// to 1/steps of it at the last, instead of staying constant. With lazy
	// Adam every row a batch touches moves by about the learning rate
	// whatever its gradient, so a constant rate leaves the last batches'
	// noise in the table; decay averages it out.
	Decay bool `json:"decay,omitempty"`
	// Progress, if set, is called after every epoch.
	Progress func(EpochStats) `json:"-"`
}

// DefaultTrainConfig returns the L2 objective with batches of 128 pairs,
// Adam at learning rate 0.001 and 5 epochs over a model of DefaultConfig.
// The rate suits large label sets; small ones train faster with a larger
// rate (0.01 converges in a few epochs on a few thousand pairs).
func DefaultTrainConfig(vocab int) TrainConfig {
	return TrainConfig{Model: DefaultConfig(vocab), Objective: DefaultObjective(ObjectiveL2),
		Epochs: 5, BatchSize: 128, LR: 0.001, Seed: 1}
}

// Validate checks the configuration.
func (c TrainConfig) Validate() error {
	if err := c.Model.Validate(); err != nil {
		return err
	}
	if err := c.checkInitTable(); err != nil {
		return err
	}
	if c.WeightLR > 0 && !c.Model.Weighted {
		return errors.New("surrogate: weight_lr trains token weights, and the model has none (Config.Weighted is false)")
	}
	return c.validateRun()
}

func (c TrainConfig) checkInitTable() error {
	if c.InitTable != nil && len(c.InitTable) != c.Model.Vocab*c.Model.Dim {
		return fmt.Errorf("surrogate: initial table of %d values, want %d×%d", len(c.InitTable), c.Model.Vocab, c.Model.Dim)
	}
	if c.InitWeights != nil && (!c.Model.Weighted || len(c.InitWeights) != c.Model.Vocab) {
		return fmt.Errorf("surrogate: %d token weights for a model of %d tokens (weighted: %v)", len(c.InitWeights), c.Model.Vocab, c.Model.Weighted)
	}
	for i, w := range c.InitWeights {
		if !(w >= 0) || math.IsInf(float64(w), 0) {
			return fmt.Errorf("surrogate: token %d has weight %v", i, w)
		}
	}
	return nil
}

// Initial returns the averaged-subword model that Train starts from: random
// draws from c.Seed, or a copy of c.InitTable.
func (c TrainConfig) Initial() (*Model, error) {
	if err := c.checkInitTable(); err != nil {
		return nil, err
	}
	m, err := New(c.Model, c.Seed)
	if err != nil {
		return nil, err
	}
	if c.InitTable != nil {
		copy(m.Emb.Value.Data, c.InitTable)
	}
	if c.InitWeights != nil {
		copy(m.Weights.Value.Data, c.InitWeights)
	}
	return m, nil
}

// validateRun checks the settings of a training run that do not depend on
// the encoder.
func (c TrainConfig) validateRun() error {
	if err := c.Objective.Validate(); err != nil {
		return err
	}
	if c.Epochs < 0 || c.BatchSize < 1 || !(c.LR > 0) || math.IsInf(c.LR, 0) {
		return fmt.Errorf("surrogate: invalid training config: epochs %d, batch size %d, lr %v", c.Epochs, c.BatchSize, c.LR)
	}
	if !(c.Anchor >= 0) || math.IsInf(c.Anchor, 0) {
		return fmt.Errorf("surrogate: anchor %v must be zero or positive and finite", c.Anchor)
	}
	if !(c.Interpolate >= 0 && c.Interpolate <= 2) {
		return fmt.Errorf("surrogate: interpolate %v must lie in [0, 2]", c.Interpolate)
	}
	if !(c.WeightLR >= 0) || math.IsInf(c.WeightLR, 0) {
		return fmt.Errorf("surrogate: weight_lr %v must be zero or positive and finite", c.WeightLR)
	}
	return nil
}

// DevStats are the metrics of a model on dev pairs.
type DevStats struct {
	// Loss is the training objective on the dev pairs, in batches of the
	// training batch size in their given order.
	Loss float64 `json:"loss"`
	// Spearman and Pearson are the correlations of the model's cosine with
	// the label; NaN when either is constant.
	Spearman float64 `json:"spearman"`
	Pearson  float64 `json:"pearson"`
}

// EpochStats is one point of the learning curve.
type EpochStats struct {
	Epoch int `json:"epoch"`
	// TrainLoss is the mean objective over the epoch's batches, weighted by
	// batch size, each measured before its update.
	TrainLoss float64 `json:"train_loss"`
	// Dev is nil when Train was given no dev pairs.
	Dev     *DevStats `json:"dev,omitempty"`
	Seconds float64   `json:"seconds"`
}

// Curve is the learning curve of a training run.
type Curve struct {
	// Init holds the dev metrics of the initial model (nil without dev
	// pairs).
	Init   *DevStats    `json:"init,omitempty"`
	Epochs []EpochStats `json:"epochs"`
	// Interpolated holds the dev metrics of the returned model when
	// TrainConfig.Interpolate moved it along the line from its start.
	Interpolated *DevStats `json:"interpolated,omitempty"`
}

// ValidatePairs returns an error naming the first pair with an empty
// sentence, a token ID outside [0, vocab) or a label outside [-1, 1].
func ValidatePairs(pairs []Pair, vocab int) error {
	for i, p := range pairs {
		for side, s := range [2][]int{p.A, p.B} {
			if len(s) == 0 {
				return fmt.Errorf("surrogate: pair %d: sentence %d is empty", i, side+1)
			}
			for _, id := range s {
				if uint(id) >= uint(vocab) {
					return fmt.Errorf("surrogate: pair %d: sentence %d has token id %d outside [0, %d)", i, side+1, id, vocab)
				}
			}
		}
		if !(p.Label >= -1 && p.Label <= 1) {
			return fmt.Errorf("surrogate: pair %d: label %v outside [-1, 1]", i, p.Label)
		}
	}
	return nil
}

// checkData checks the training and dev pairs of a run over a vocabulary
// of vocab token IDs: there must be training pairs, and every pair must
// pass ValidatePairs.
func checkData(pairs, dev []Pair, vocab int) error {
	if len(pairs) == 0 {
		return errors.New("surrogate: no training pairs")
	}
	if err := ValidatePairs(pairs, vocab); err != nil {
		return err
	}
	if err := ValidatePairs(dev, vocab); err != nil {
		return fmt.Errorf("dev: %w", err)
	}
	return nil
}

// IDs converts token-ID lists between the tokenizer's int32 and the
// encoders' int.
func IDs[U, T int | int32](xs [][]T) [][]U {
	out := make([][]U, len(xs))
	for i, x := range xs {
		out[i] = make([]U, len(x))
		for j, v := range x {
			out[i][j] = U(v)
		}
	}
	return out
}

// Train trains a surrogate encoder on pairs with minibatch lazy Adam and
// returns it with its learning curve; dev pairs (optional) are evaluated
// before training and after every epoch. Every epoch visits the pairs in a
// fresh order drawn from cfg.Seed, in batches of cfg.BatchSize (the last
// one smaller). Training runs in the calling goroutine and is
// deterministic: the same config and data give bit-identical weights.
func Train(cfg TrainConfig, pairs, dev []Pair) (*Model, Curve, error) {
	if err := cfg.Validate(); err != nil {
		return nil, Curve{}, err
	}
	if err := checkData(pairs, dev, cfg.Model.Vocab); err != nil {
		return nil, Curve{}, err
	}
	m, err := cfg.Initial()
	if err != nil {
		return nil, Curve{}, err
	}
	net := newMeanNet(m, cfg.LR)
	if cfg.Anchor > 0 {
		net.anchor, net.start = float32(cfg.Anchor), slices.Clone(m.Emb.Value.Data)
	}
	if cfg.WeightLR > 0 {
		net.trainWeights(cfg.WeightLR)
	}
	// The start Interpolate measures from: the table (the anchor's copy
	// when there is one) and the token weights.
	var e0, w0 []float32
	moveAway := cfg.Interpolate > 0 && cfg.Interpolate != 1
	if moveAway {
		if e0 = net.start; e0 == nil {
			e0 = slices.Clone(m.Emb.Value.Data)
		}
		if m.Weights != nil {
			w0 = slices.Clone(m.Weights.Value.Data)
		}
	}
	curve, err := run(net, cfg, pairs, dev)
	if err != nil {
		return nil, Curve{}, err
	}
	if moveAway {
		interpolate(m, e0, w0, float32(cfg.Interpolate))
		if len(dev) > 0 && len(curve.Epochs) > 0 {
			t, err := newTrainer(net, cfg.Objective)
			if err != nil {
				return nil, Curve{}, err
			}
			curve.Interpolated = t.devStats(dev, cfg.BatchSize)
		}
	}
	return m, curve, nil
}

// interpolate sets m's table to e0 + a·(table − e0), and its token weights
// to w0·(w/w0)^a (zero weights stay zero).
func interpolate(m *Model, e0, w0 []float32, a float32) {
	x := m.Emb.Value.Data
	for i, v := range x {
		x[i] = e0[i] + a*(v-e0[i])
	}
	if m.Weights == nil {
		return
	}
	w := m.Weights.Value.Data
	for i, v := range w {
		if v != w0[i] && w0[i] > 0 {
			w[i] = w0[i] * float32(math.Pow(float64(v/w0[i]), float64(a)))
		}
	}
}

// run trains net on pairs as Train describes and returns the learning
// curve.
func run(net trainNet, cfg TrainConfig, pairs, dev []Pair) (Curve, error) {
	t, err := newTrainer(net, cfg.Objective)
	if err != nil {
		return Curve{}, err
	}
	var curve Curve
	if len(dev) > 0 {
		curve.Init = t.devStats(dev, cfg.BatchSize)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6f72646572)) // "order"
	order := make([]int, len(pairs))
	for i := range order {
		order[i] = i
	}
	batch := make([]Pair, 0, cfg.BatchSize)
	steps := cfg.Epochs * ((len(pairs) + cfg.BatchSize - 1) / cfg.BatchSize)
	step := 0
	for epoch := 1; epoch <= cfg.Epochs; epoch++ {
		start := time.Now()
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var sum float64
		for lo := 0; lo < len(order); lo += cfg.BatchSize {
			batch = batch[:0]
			for _, k := range order[lo:min(lo+cfg.BatchSize, len(order))] {
				batch = append(batch, pairs[k])
			}
			if cfg.Decay {
				net.scaleLR(1 - float64(step)/float64(steps))
			}
			step++
			sum += t.step(batch) * float64(len(batch))
		}
		st := EpochStats{Epoch: epoch, TrainLoss: sum / float64(len(pairs))}
		if len(dev) > 0 {
			st.Dev = t.devStats(dev, cfg.BatchSize)
		}
		st.Seconds = time.Since(start).Seconds()
		curve.Epochs = append(curve.Epochs, st)
		if cfg.Progress != nil {
			cfg.Progress(st)
		}
	}
	return curve, nil
}

// Encoder is a trained sentence encoder.
type Encoder interface {
	// Dim is the width of a sentence embedding.
	Dim() int
	// EncodeBatch encodes sents (token IDs) into the rows of a
	// (len(sents), Dim) row-major matrix, reusing dst's memory when it is
	// large enough.
	EncodeBatch(sents [][]int, dst []float32) []float32
}

// trainNet is an encoder with its optimiser: forward encodes the two sides
// of a batch for training, backward sets the parameter gradients to the
// back-propagation of the loss gradients da and db in those embeddings,
// and apply makes one optimiser step from them.
type trainNet interface {
	Encoder
	forward(sa, sb [][]int) (ea, eb []float32)
	backward(da, db []float32)
	apply()
	// scaleLR sets every learning rate of the net to f times its
	// configured value.
	scaleLR(f float64)
}

// meanNet trains a Model with lazy Adam on sparse gradients; with anchor
// above 0, each touched row is also pulled towards its start.
type meanNet struct {
	*Model
	opt    *SparseAdam
	grad   *SparseGrad
	sa, sb [][]int
	ea, eb []float32
	anchor float32
	start  []float32
	// With trained token weights: their logarithms (the parameter the
	// optimiser moves), its gradient and its optimiser.
	logW  *nn.Param
	wgrad *SparseGrad
	wopt  *SparseAdam
	// lr0 and wlr0 are the configured rates scaleLR scales.
	lr0, wlr0 float64
}

func (n *meanNet) scaleLR(f float64) {
	n.opt.LR = n.lr0 * f
	if n.wopt != nil {
		n.wopt.LR = n.wlr0 * f
	}
}

// trainWeights makes n train the model's token weights at rate lr.
func (n *meanNet) trainWeights(lr float64) {
	w := n.Weights.Value.Data
	lw := make([]float32, len(w))
	for i, x := range w {
		lw[i] = float32(math.Log(float64(x))) // -Inf for a zero weight, which is never moved
	}
	n.logW = &nn.Param{Name: "emb.log_token_weight", Value: nn.FromData(lw, len(lw), 1)}
	n.wgrad, n.wopt, n.wlr0 = NewSparseGrad(len(w), 1), NewSparseAdam(lr), lr
}

func newMeanNet(m *Model, lr float64) *meanNet {
	return &meanNet{Model: m, opt: NewSparseAdam(lr), grad: NewSparseGrad(m.Cfg.Vocab, m.Cfg.Dim), lr0: lr}
}

func (n *meanNet) forward(sa, sb [][]int) (ea, eb []float32) {
	n.sa, n.sb = sa, sb
	n.ea, n.eb = n.EncodeBatch(sa, n.ea), n.EncodeBatch(sb, n.eb)
	return n.ea, n.eb
}

func (n *meanNet) backward(da, db []float32) {
	n.grad.Reset()
	n.Backward(n.sa, da, n.grad)
	n.Backward(n.sb, db, n.grad)
	if n.logW != nil {
		n.wgrad.Reset()
		n.BackwardLogWeights(n.sa, n.ea, da, n.wgrad)
		n.BackwardLogWeights(n.sb, n.eb, db, n.wgrad)
	}
	if n.anchor > 0 {
		d := n.Cfg.Dim
		for _, id := range n.grad.Rows() {
			g, e, e0 := n.grad.Row(id), n.Emb.Value.Data[id*d:(id+1)*d], n.start[id*d:(id+1)*d]
			for k := range g {
				g[k] += n.anchor * (e[k] - e0[k])
			}
		}
	}
}

func (n *meanNet) apply() {
	n.opt.Step(n.Emb, n.grad)
	if n.logW == nil {
		return
	}
	n.wopt.Step(n.logW, n.wgrad)
	w, lw := n.Weights.Value.Data, n.logW.Value.Data
	for _, id := range n.wgrad.Rows() {
		w[id] = float32(math.Exp(float64(lw[id])))
	}
}

// trainer holds the objective and the reusable buffers of a training run.
type trainer struct {
	net    trainNet
	obj    Objective
	sa, sb [][]int
	labels []float32
	da, db []float32
}

func newTrainer(net trainNet, oc ObjectiveConfig) (*trainer, error) {
	obj, err := NewObjective(oc)
	if err != nil {
		return nil, err
	}
	return &trainer{net: net, obj: obj}, nil
}

// gather collects the sentences and labels of batch.
func (t *trainer) gather(batch []Pair) {
	t.sa, t.sb, t.labels = t.sa[:0], t.sb[:0], t.labels[:0]
	for _, p := range batch {
		t.sa = append(t.sa, p.A)
		t.sb = append(t.sb, p.B)
		t.labels = append(t.labels, p.Label)
	}
}

// gradient computes the loss of batch and leaves its gradient in the
// network's parameter gradients.
func (t *trainer) gradient(batch []Pair) float64 {
	t.gather(batch)
	ea, eb := t.net.forward(t.sa, t.sb)
	n := len(batch) * t.net.Dim()
	t.da, t.db = grow(t.da, n), grow(t.db, n)
	loss := t.obj.Loss(ea, eb, t.labels, t.net.Dim(), t.da, t.db)
	t.net.backward(t.da, t.db)
	return loss
}

// step makes one optimiser update on batch and returns its loss before the
// update.
func (t *trainer) step(batch []Pair) float64 {
	loss := t.gradient(batch)
	t.net.apply()
	return loss
}

func (t *trainer) devStats(dev []Pair, batchSize int) *DevStats {
	var loss float64
	var ea, eb []float32
	for lo := 0; lo < len(dev); lo += batchSize {
		b := dev[lo:min(lo+batchSize, len(dev))]
		t.gather(b)
		ea, eb = t.net.EncodeBatch(t.sa, ea), t.net.EncodeBatch(t.sb, eb)
		loss += t.obj.Loss(ea, eb, t.labels, t.net.Dim(), nil, nil) * float64(len(b))
	}
	sp, pe := Correlation(t.net, dev)
	return &DevStats{Loss: loss / float64(len(dev)), Spearman: sp, Pearson: pe}
}

// Correlation returns the Spearman and Pearson correlations between the
// model's cosine and the label over pairs (NaN for fewer than two pairs or
// constant values).
func (m *Model) Correlation(pairs []Pair) (spearman, pearson float64) { return Correlation(m, pairs) }

// Correlation returns the Spearman and Pearson correlations between enc's
// cosine and the label over pairs (NaN for fewer than two pairs or
// constant values).
func Correlation(enc Encoder, pairs []Pair) (spearman, pearson float64) {
	cos, labels := make([]float64, len(pairs)), make([]float64, len(pairs))
	d := enc.Dim()
	var buf []float32
	for i, p := range pairs {
		buf = enc.EncodeBatch([][]int{p.A, p.B}, buf)
		cos[i], labels[i] = Cosine(buf[:d], buf[d:2*d]), float64(p.Label)
	}
	if len(pairs) < 2 {
		return math.NaN(), math.NaN()
	}
	return stats.Spearman(cos, labels), stats.Pearson(cos, labels)
}
