package disc

import (
	"sort"

	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/nn"
)

// Tokenizer turns text into token ids.
type Tokenizer interface {
	Encode(text string) []int32
}

// batch is a set of examples with their distinct sentences encoded once.
type batch struct {
	seqs              [][]int32 // distinct sentences, tokenized
	left, sent, right [][]int   // per example: indices into seqs
	labels            []float32
	kinds             []examples.NegKind
}

// newBatch gathers the distinct sentences of exs (each context side cut to
// the model's window).
func (m *Model) newBatch(tok Tokenizer, exs []examples.Coherence) *batch {
	b := &batch{}
	index := map[string]int{}
	id := func(s string) int {
		if i, ok := index[s]; ok {
			return i
		}
		index[s] = len(b.seqs)
		b.seqs = append(b.seqs, tok.Encode(s))
		return len(b.seqs) - 1
	}
	w := m.Cfg.Window
	for _, e := range exs {
		left := e.Left[max(0, len(e.Left)-w):]
		right := e.Right[:min(w, len(e.Right))]
		var li, ri []int
		for _, s := range left {
			li = append(li, id(s))
		}
		for _, s := range right {
			ri = append(ri, id(s))
		}
		b.left = append(b.left, li)
		b.right = append(b.right, ri)
		b.sent = append(b.sent, []int{id(e.S)})
		b.labels = append(b.labels, e.Label)
		b.kinds = append(b.kinds, e.Kind)
	}
	return b
}

// gather averages rows of v (an (n, d) tensor) per index list.
func gather(v *nn.Tensor, idx [][]int) *nn.Tensor {
	d := v.Cols()
	out := nn.NewTensor(len(idx), d)
	for i, list := range idx {
		row := out.Data[i*d : (i+1)*d]
		for _, k := range list {
			src := v.Data[k*d : (k+1)*d]
			for j := range row {
				row[j] += src[j]
			}
		}
		if len(list) > 1 {
			inv := 1 / float32(len(list))
			for j := range row {
				row[j] *= inv
			}
		}
	}
	return out
}

// scatter adds the rows of g, divided by each list's length, into dv.
func scatter(dv, g *nn.Tensor, idx [][]int) {
	d := dv.Cols()
	for i, list := range idx {
		if len(list) == 0 {
			continue
		}
		inv := 1 / float32(len(list))
		src := g.Data[i*d : (i+1)*d]
		for _, k := range list {
			dst := dv.Data[k*d : (k+1)*d]
			for j := range dst {
				dst[j] += src[j] * inv
			}
		}
	}
}

// forward returns the logits of a batch and, when train is set, what
// backward needs.
func (m *Model) forward(b *batch) (*nn.Tensor, *EncCache, *headCache) {
	v, ec := m.encode(b.seqs)
	logits, hc := m.headForward(gather(v, b.left), gather(v, b.sent), gather(v, b.right))
	return logits, ec, hc
}

// Trainer trains a Model with Adam on binary cross-entropy.
type Trainer struct {
	M   *Model
	Tok Tokenizer
	Opt *nn.Adam
}

// NewTrainer returns a trainer with learning rate lr and gradient clipping.
func NewTrainer(m *Model, tok Tokenizer, lr float64) *Trainer {
	opt := nn.NewAdam(lr)
	opt.ClipNorm = 5
	return &Trainer{M: m, Tok: tok, Opt: opt}
}

// Step trains on one batch of examples and returns its mean loss.
func (t *Trainer) Step(exs []examples.Coherence) float32 {
	m := t.M
	m.unpack()
	b := m.newBatch(t.Tok, exs)
	logits, ec, hc := m.forward(b)
	loss, _, bce := nn.SigmoidBCE(logits, b.labels)
	dl, ds, dr := m.headBackward(hc, bce.Backward(1))
	dv := nn.NewTensor(len(b.seqs), m.VecDim())
	scatter(dv, dl, b.left)
	scatter(dv, ds, b.sent)
	scatter(dv, dr, b.right)
	m.encodeBackward(ec, dv)
	params := m.Params()
	t.Opt.Step(params)
	nn.ZeroGrad(params)
	return loss
}

// Metrics are held-out results of the coherence model.
type Metrics struct {
	Examples int     `json:"examples"`
	Loss     float64 `json:"loss"`
	Accuracy float64 `json:"accuracy"`
	AUC      float64 `json:"auc"`
	// Per kind of negative: positives against same-document negatives,
	// and against random negatives.
	AccuracySameDoc float64 `json:"accuracy_same_doc"`
	AUCSameDoc      float64 `json:"auc_same_doc"`
	AccuracyRandom  float64 `json:"accuracy_random"`
	AUCRandom       float64 `json:"auc_random"`
}

// Evaluate scores exs in batches of batchSize and returns the metrics.
func (m *Model) Evaluate(tok Tokenizer, exs []examples.Coherence, batchSize int) Metrics {
	var scores []float32
	var labels []float32
	var kinds []examples.NegKind
	var loss float64
	for i := 0; i < len(exs); i += batchSize {
		b := m.newBatch(tok, exs[i:min(i+batchSize, len(exs))])
		logits, _, _ := m.forward(b)
		l, _, _ := nn.SigmoidBCE(logits, b.labels)
		loss += float64(l) * float64(len(b.labels))
		scores = append(scores, logits.Data...)
		labels = append(labels, b.labels...)
		kinds = append(kinds, b.kinds...)
	}
	met := Metrics{Examples: len(exs)}
	if len(exs) == 0 {
		return met
	}
	met.Loss = loss / float64(len(exs))
	met.Accuracy, met.AUC = accAUC(scores, labels, kinds, nil)
	same := examples.SameDoc
	met.AccuracySameDoc, met.AUCSameDoc = accAUC(scores, labels, kinds, &same)
	rnd := examples.Random
	met.AccuracyRandom, met.AUCRandom = accAUC(scores, labels, kinds, &rnd)
	return met
}

// accAUC returns accuracy (threshold 0 on the logit) and ROC-AUC over the
// positives and the negatives of kind (all negatives when kind is nil).
func accAUC(scores, labels []float32, kinds []examples.NegKind, kind *examples.NegKind) (acc, auc float64) {
	type sl struct {
		s   float32
		pos bool
	}
	var xs []sl
	correct := 0
	for i, s := range scores {
		pos := labels[i] > 0.5
		if !pos && kind != nil && kinds[i] != *kind {
			continue
		}
		xs = append(xs, sl{s, pos})
		if (s > 0) == pos {
			correct++
		}
	}
	if len(xs) == 0 {
		return 0, 0
	}
	acc = float64(correct) / float64(len(xs))
	// AUC by the rank-sum statistic, ties counted half.
	sort.Slice(xs, func(i, j int) bool { return xs[i].s < xs[j].s })
	var npos, nneg, rankSum float64
	for i := 0; i < len(xs); {
		j := i
		for j < len(xs) && xs[j].s == xs[i].s {
			j++
		}
		avg := float64(i+j+1) / 2 // mean of 1-based ranks i+1..j
		for k := i; k < j; k++ {
			if xs[k].pos {
				rankSum += avg
				npos++
			} else {
				nneg++
			}
		}
		i = j
	}
	if npos == 0 || nneg == 0 {
		return acc, 0
	}
	auc = (rankSum - npos*(npos+1)/2) / (npos * nneg)
	return acc, auc
}
