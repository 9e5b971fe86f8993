package surrogate

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/ctxsim/ctxsim/scoring/harvest"
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
	if err := c.Objective.Validate(); err != nil {
		return err
	}
	if c.InitTable != nil && len(c.InitTable) != c.Model.Vocab*c.Model.Dim {
		return fmt.Errorf("surrogate: initial table of %d values, want %d×%d", len(c.InitTable), c.Model.Vocab, c.Model.Dim)
	}
	if c.Epochs < 0 || c.BatchSize < 1 || !(c.LR > 0) || math.IsInf(c.LR, 0) {
		return fmt.Errorf("surrogate: invalid training config: epochs %d, batch size %d, lr %v", c.Epochs, c.BatchSize, c.LR)
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
	if len(pairs) == 0 {
		return nil, Curve{}, errors.New("surrogate: no training pairs")
	}
	if err := ValidatePairs(pairs, cfg.Model.Vocab); err != nil {
		return nil, Curve{}, err
	}
	if err := ValidatePairs(dev, cfg.Model.Vocab); err != nil {
		return nil, Curve{}, fmt.Errorf("dev: %w", err)
	}
	m, err := New(cfg.Model, cfg.Seed)
	if err != nil {
		return nil, Curve{}, err
	}
	if cfg.InitTable != nil {
		copy(m.Emb.Value.Data, cfg.InitTable)
	}
	t, err := newTrainer(m, cfg.Objective, cfg.LR)
	if err != nil {
		return nil, Curve{}, err
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
	for epoch := 1; epoch <= cfg.Epochs; epoch++ {
		start := time.Now()
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var sum float64
		for lo := 0; lo < len(order); lo += cfg.BatchSize {
			batch = batch[:0]
			for _, k := range order[lo:min(lo+cfg.BatchSize, len(order))] {
				batch = append(batch, pairs[k])
			}
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
	return m, curve, nil
}

// trainer holds the optimiser and the reusable buffers of a training run.
type trainer struct {
	m      *Model
	obj    Objective
	opt    *SparseAdam
	grad   *SparseGrad
	sa, sb [][]int
	labels []float32
	ea, eb []float32
	da, db []float32
}

func newTrainer(m *Model, oc ObjectiveConfig, lr float64) (*trainer, error) {
	obj, err := NewObjective(oc)
	if err != nil {
		return nil, err
	}
	return &trainer{m: m, obj: obj, opt: NewSparseAdam(lr), grad: NewSparseGrad(m.Cfg.Vocab, m.Cfg.Dim)}, nil
}

// load gathers the sentences and labels of batch and encodes them.
func (t *trainer) load(batch []Pair) {
	t.sa, t.sb, t.labels = t.sa[:0], t.sb[:0], t.labels[:0]
	for _, p := range batch {
		t.sa = append(t.sa, p.A)
		t.sb = append(t.sb, p.B)
		t.labels = append(t.labels, p.Label)
	}
	t.ea = t.m.EncodeBatch(t.sa, t.ea)
	t.eb = t.m.EncodeBatch(t.sb, t.eb)
}

// gradient computes the loss of batch and leaves the gradient of the
// embedding table in t.grad.
func (t *trainer) gradient(batch []Pair) float64 {
	t.load(batch)
	n := len(batch) * t.m.Cfg.Dim
	t.da, t.db = grow(t.da, n), grow(t.db, n)
	loss := t.obj.Loss(t.ea, t.eb, t.labels, t.m.Cfg.Dim, t.da, t.db)
	t.grad.Reset()
	t.m.Backward(t.sa, t.da, t.grad)
	t.m.Backward(t.sb, t.db, t.grad)
	return loss
}

// step makes one optimiser update on batch and returns its loss before the
// update.
func (t *trainer) step(batch []Pair) float64 {
	loss := t.gradient(batch)
	t.opt.Step(t.m.Emb, t.grad)
	return loss
}

func (t *trainer) devStats(dev []Pair, batchSize int) *DevStats {
	var loss float64
	for lo := 0; lo < len(dev); lo += batchSize {
		b := dev[lo:min(lo+batchSize, len(dev))]
		t.load(b)
		loss += t.obj.Loss(t.ea, t.eb, t.labels, t.m.Cfg.Dim, nil, nil) * float64(len(b))
	}
	sp, pe := t.m.Correlation(dev)
	return &DevStats{Loss: loss / float64(len(dev)), Spearman: sp, Pearson: pe}
}

// Correlation returns the Spearman and Pearson correlations between the
// model's cosine and the label over pairs (NaN for fewer than two pairs or
// constant values).
func (m *Model) Correlation(pairs []Pair) (spearman, pearson float64) {
	cos, labels := make([]float64, len(pairs)), make([]float64, len(pairs))
	buf := make([]float32, 2*m.Cfg.Dim)
	ea, eb := buf[:m.Cfg.Dim], buf[m.Cfg.Dim:]
	for i, p := range pairs {
		m.EncodeInto(ea, p.A)
		m.EncodeInto(eb, p.B)
		cos[i], labels[i] = Cosine(ea, eb), float64(p.Label)
	}
	if len(pairs) < 2 {
		return math.NaN(), math.NaN()
	}
	return harvest.Spearman(cos, labels), harvest.Pearson(cos, labels)
}
