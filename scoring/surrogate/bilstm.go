package surrogate

import (
	"errors"

	"github.com/ctxsim/ctxsim/scoring/disc"
	"github.com/ctxsim/ctxsim/scoring/nn"
)

// BiLSTM is the coherence model's sentence encoder (subword embeddings, a
// bidirectional LSTM, and the mean of its outputs over the tokens) used as a
// surrogate. It is slower than the averaged-subword Model by the cost of the
// LSTM, and starts from what the coherence model learned.
type BiLSTM struct {
	// M is the coherence model; only its embeddings and encoder are used
	// and trained, its head is kept as it was.
	M *disc.Model
}

// Dim returns the width of a sentence embedding (twice the LSTM's).
func (b *BiLSTM) Dim() int { return b.M.VecDim() }

// EncodeBatch encodes sents into the rows of a (len(sents), Dim) row-major
// matrix, reusing dst's memory when it is large enough, and returns it.
// Sentences longer than the coherence model's MaxTokens are truncated.
func (b *BiLSTM) EncodeBatch(sents [][]int, dst []float32) []float32 {
	d := b.Dim()
	dst = grow(dst, len(sents)*d)
	const chunk = 256 // bounds the padded batch
	for lo := 0; lo < len(sents); lo += chunk {
		hi := min(lo+chunk, len(sents))
		for i, v := range b.M.Encode(IDs[int32](sents[lo:hi])) {
			copy(dst[(lo+i)*d:(lo+i+1)*d], v)
		}
	}
	return dst
}

// bilstmNet trains a BiLSTM with Adam on dense gradients, clipped to a
// global norm of 5 as the coherence model's own training is.
type bilstmNet struct {
	*BiLSTM
	params []*nn.Param
	opt    *nn.Adam
	lr0    float64 // the configured rate scaleLR scales
	ca, cb *disc.EncCache
	ta, tb *nn.Tensor
}

func (n *bilstmNet) forward(sa, sb [][]int) (ea, eb []float32) {
	n.ta, n.ca = n.M.EncodeTrain(IDs[int32](sa))
	n.tb, n.cb = n.M.EncodeTrain(IDs[int32](sb))
	return n.ta.Data, n.tb.Data
}

func (n *bilstmNet) backward(da, db []float32) {
	nn.ZeroGrad(n.params)
	d := n.Dim()
	n.M.EncodeBackward(n.ca, nn.FromData(da[:len(n.ta.Data)], len(n.ta.Data)/d, d))
	n.M.EncodeBackward(n.cb, nn.FromData(db[:len(n.tb.Data)], len(n.tb.Data)/d, d))
}

func (n *bilstmNet) apply() { n.opt.Step(n.params) }

func (n *bilstmNet) scaleLR(f float64) { n.opt.LR = n.lr0 * f }

// TrainBiLSTM fine-tunes the encoder of the coherence model m, in place, on
// pairs with cfg's objective, epochs, batch size, learning rate and seed
// (cfg.Model and the initial table are not used: the start is m; an
// anchor is refused), and
// returns it with its learning curve, as Train does for the averaged
// encoder.
func TrainBiLSTM(m *disc.Model, cfg TrainConfig, pairs, dev []Pair) (*BiLSTM, Curve, error) {
	if m == nil {
		return nil, Curve{}, errors.New("surrogate: no coherence model to start the BiLSTM from")
	}
	if err := cfg.validateRun(); err != nil {
		return nil, Curve{}, err
	}
	if cfg.Anchor > 0 {
		return nil, Curve{}, errors.New("surrogate: the anchor holds the averaged encoder's table; the BiLSTM has none")
	}
	if err := checkData(pairs, dev, m.Cfg.Vocab); err != nil {
		return nil, Curve{}, err
	}
	opt := nn.NewAdam(cfg.LR)
	opt.ClipNorm = 5
	b := &BiLSTM{M: m}
	curve, err := run(&bilstmNet{BiLSTM: b, params: m.EncoderParams(), opt: opt, lr0: cfg.LR}, cfg, pairs, dev)
	if err != nil {
		return nil, Curve{}, err
	}
	return b, curve, nil
}
