package contrast

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/internal/vecmath"
	"github.com/ctxsim/ctxsim/scoring/nn"
)

// bags holds tokenized sentences: sentence k's rows and weights are
// rows[off[k]:off[k+1]] and weights[off[k]:off[k+1]].
type bags struct {
	rows    []int32
	weights []float32
	off     []int
}

func (b *bags) add(v *Vocab, s string) {
	if len(b.off) == 0 {
		b.off = append(b.off, 0)
	}
	b.rows, b.weights = v.Bag(s, b.rows, b.weights)
	b.off = append(b.off, len(b.rows))
}

func (b *bags) bag(k int32) ([]int32, []float32) {
	lo, hi := b.off[k], b.off[k+1]
	return b.rows[lo:hi], b.weights[lo:hi]
}

// slotSet is the training examples: every sentence with at least one
// sentence on each side in its document, with its context's extent.
type slotSet struct {
	sent   []int32 // the slot's sentence
	lo, hi []int32 // context sentences are [lo, sent) and (sent, hi)
	// docs[i] is the first slot of document i (slots of a document are
	// consecutive); docs ends with the number of slots.
	docs []int32
}

// tokenize builds the bags of every sentence of docs and the slots.
func tokenize(v *Vocab, docs []examples.Doc, window int) (*bags, *slotSet) {
	b := &bags{}
	s := &slotSet{}
	k := int32(0)
	for _, d := range docs {
		n := int32(len(d.Sentences))
		for _, t := range d.Sentences {
			b.add(v, t)
		}
		s.docs = append(s.docs, int32(len(s.sent)))
		for i := int32(1); i+1 < n; i++ {
			s.sent = append(s.sent, k+i)
			s.lo = append(s.lo, k+max(0, i-int32(window)))
			s.hi = append(s.hi, k+min(n, i+1+int32(window)))
		}
		k += n
	}
	s.docs = append(s.docs, int32(len(s.sent)))
	return b, s
}

// order returns an epoch's order of the slots: a random permutation, or
// with cfg.DocGroup > 1 a random order of groups of up to DocGroup slots of
// one document, 2*Window+1 slots apart within a group (so no slot's
// context holds another's sentence or context sentence), each group kept
// together. A group is cut in two only where it meets the edge of a batch.
func (s *slotSet) order(rng *rand.Rand, group, window int) []int {
	n := len(s.sent)
	if group <= 1 {
		return rng.Perm(n)
	}
	stride := 2*window + 1
	var groups [][]int
	for d := 0; d+1 < len(s.docs); d++ {
		lo, hi := int(s.docs[d]), int(s.docs[d+1])
		for o := 0; o < stride && lo+o < hi; o++ {
			var g []int
			for i := lo + o; i < hi; i += stride {
				g = append(g, i)
				if len(g) == group {
					groups, g = append(groups, g), nil
				}
			}
			if len(g) > 0 {
				groups = append(groups, g)
			}
		}
	}
	out := make([]int, 0, n)
	for _, gi := range rng.Perm(len(groups)) {
		out = append(out, groups[gi]...)
	}
	return out
}

// BuildVocab counts the words of the documents' sentences and builds the
// vocabulary of cfg.
func BuildVocab(cfg Config, docs []examples.Doc) (*Vocab, error) {
	c := NewVocabCounter(cfg.Stem)
	for _, d := range docs {
		for _, s := range d.Sentences {
			c.Add(s)
		}
	}
	return c.Build(cfg.Vocab, cfg.Buckets, max(cfg.MinCount, 1))
}

// Progress is reported after every logging interval of training.
type Progress struct {
	Step, Steps int
	Examples    int64
	// Loss is the mean training loss since the last report.
	Loss    float64
	Elapsed time.Duration
}

// TrainOptions are the settings of a training run that do not change its
// result: threads and progress reports.
type TrainOptions struct {
	// Threads is the number of goroutines a step uses (and GEMM threads);
	// 0 means 1. The trained weights do not depend on it.
	Threads int
	// Every is the number of steps between progress reports (0: 100).
	Every int
	// Progress, when set, receives the reports.
	Progress func(Progress)
	// Eval, when set, is called with the model every EvalEvery steps and
	// after the last one; what it returns is recorded in the Curve.
	Eval      func(*Model) any
	EvalEvery int
}

// CurvePoint is one measurement of the learning curve.
type CurvePoint struct {
	Step     int     `json:"step"`
	Examples int64   `json:"examples"`
	Seconds  float64 `json:"seconds"`
	// TrainLoss is the mean InfoNCE loss since the previous point.
	TrainLoss float64 `json:"train_loss"`
	HeldOut   any     `json:"held_out,omitempty"`
}

// Train builds the vocabulary from docs and trains a model on their slots.
// It returns the learning curve (with opt.Eval's measurements).
func Train(cfg Config, docs []examples.Doc, opt TrainOptions) (*Model, []CurvePoint, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	v, err := BuildVocab(cfg, docs)
	if err != nil {
		return nil, nil, err
	}
	m, err := newModel(cfg, v)
	if err != nil {
		return nil, nil, err
	}
	b, slots := tokenize(v, docs, cfg.Window)
	if len(slots.sent) < cfg.Batch {
		return nil, nil, fmt.Errorf("contrast: %d training slots (sentences with a neighbour on each side), fewer than one batch of %d",
			len(slots.sent), cfg.Batch)
	}
	t := newTrainer(m, b, slots, opt)
	return m, t.run(), nil
}

// trainer holds the state of one training run.
type trainer struct {
	m     *Model
	b     *bags
	slots *slotSet
	opt   TrainOptions
	th    int

	// per-batch buffers
	f, g, df, dg []float32
	nf, ng       []float32
	logits, dl   []float32
	tr           []float32
	// gradients and Adam moments of both tables, and touched rows
	gS, gC         []float32
	mS, vS, mC, vC []float32
	stamp          []int32
	touched        []int32
	step           int
}

func newTrainer(m *Model, b *bags, slots *slotSet, opt TrainOptions) *trainer {
	B, d := m.Cfg.Batch, m.Cfg.Dim
	n := len(m.Sent)
	th := max(opt.Threads, 1)
	return &trainer{m: m, b: b, slots: slots, opt: opt, th: th,
		f: make([]float32, B*d), g: make([]float32, B*d), df: make([]float32, B*d), dg: make([]float32, B*d),
		nf: make([]float32, B), ng: make([]float32, B), logits: make([]float32, B*B), dl: make([]float32, B*B), tr: make([]float32, B*B),
		gS: make([]float32, n), gC: make([]float32, n), mS: make([]float32, n), vS: make([]float32, n),
		mC: make([]float32, n), vC: make([]float32, n), stamp: make([]int32, 2*m.Vocab.Rows())}
}

// parallel runs fn(lo, hi) over [0, n) split into th parts.
func (t *trainer) parallel(n int, fn func(lo, hi int)) {
	if t.th == 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for p := range t.th {
		lo, hi := p*n/t.th, (p+1)*n/t.th
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}

func (t *trainer) run() []CurvePoint {
	cfg := t.m.Cfg
	nn.SetThreads(t.th)
	defer nn.SetThreads(1)
	nEx := len(t.slots.sent)
	perEpoch := nEx / cfg.Batch
	steps := int(math.Round(cfg.Epochs * float64(perEpoch)))
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6f726472)) // "ordr"
	order := t.slots.order(rng, cfg.DocGroup, cfg.Window)
	pos := 0
	every := t.opt.Every
	if every <= 0 {
		every = 100
	}
	start := time.Now()
	var lossSum, evalLoss float64
	var lossN, evalN int
	var curve []CurvePoint
	evalEvery := t.opt.EvalEvery
	if evalEvery <= 0 {
		evalEvery = max(1, steps/10)
	}
	if t.opt.Eval != nil {
		curve = append(curve, CurvePoint{HeldOut: t.opt.Eval(t.m)})
	}
	batch := make([]int, cfg.Batch)
	for t.step = 0; t.step < steps; t.step++ {
		if pos+cfg.Batch > nEx {
			order = t.slots.order(rng, cfg.DocGroup, cfg.Window)
			pos = 0
		}
		copy(batch, order[pos:pos+cfg.Batch])
		pos += cfg.Batch
		lr := schedule(cfg, t.step, steps)
		loss := t.trainStep(batch, lr)
		lossSum += loss
		lossN++
		evalLoss += loss
		evalN++
		if t.opt.Eval != nil && ((t.step+1)%evalEvery == 0 || t.step+1 == steps) {
			curve = append(curve, CurvePoint{Step: t.step + 1, Examples: int64(t.step+1) * int64(cfg.Batch),
				Seconds: time.Since(start).Seconds(), TrainLoss: evalLoss / float64(evalN), HeldOut: t.opt.Eval(t.m)})
			evalLoss, evalN = 0, 0
		}
		if t.opt.Progress != nil && ((t.step+1)%every == 0 || t.step+1 == steps) {
			t.opt.Progress(Progress{Step: t.step + 1, Steps: steps, Examples: int64(t.step+1) * int64(cfg.Batch),
				Loss: lossSum / float64(lossN), Elapsed: time.Since(start)})
			lossSum, lossN = 0, 0
		}
	}
	return curve
}

// schedule is the learning rate at step: a linear warm-up, then a linear
// decay to zero.
func schedule(cfg Config, step, steps int) float64 {
	if step < cfg.WarmupSteps {
		return cfg.LR * float64(step+1) / float64(cfg.WarmupSteps)
	}
	rest := max(steps-cfg.WarmupSteps, 1)
	return cfg.LR * max(0, 1-float64(step-cfg.WarmupSteps)/float64(rest))
}

// trainStep runs one batch and returns its loss.
func (t *trainer) trainStep(batch []int, lr float64) float64 {
	loss := t.grad(batch)
	t.adam(lr)
	return loss
}

// grad computes the loss of a batch and accumulates its gradient into gS
// and gC, listing the rows it touched.
func (t *trainer) grad(batch []int) float64 {
	m := t.m
	B, d := len(batch), m.Cfg.Dim
	scale := m.Scale()
	// Forward: the two encoders.
	t.parallel(B, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			f := t.f[i*d : (i+1)*d]
			g := t.g[i*d : (i+1)*d]
			clear(f)
			clear(g)
			ex := batch[i]
			k := t.slots.sent[ex]
			rows, w := t.b.bag(k)
			addBag(f, m.Sent, rows, w)
			for j := t.slots.lo[ex]; j < t.slots.hi[ex]; j++ {
				if j != k {
					rows, w := t.b.bag(j)
					addBag(g, m.Ctx, rows, w)
				}
			}
			t.nf[i] = Normalize(f)
			t.ng[i] = Normalize(g)
		}
	})
	// logits[i][j] = f_i·g_j / τ
	nn.Gemm(false, true, B, B, d, scale, t.f, d, t.g, d, 0, t.logits, B)
	loss := softmaxGrad(t.logits, t.dl, t.tr, B, m.Cfg.Symmetric)
	// dF = dL G / τ, dG = dLᵀ F / τ
	nn.Gemm(false, false, B, d, B, scale, t.dl, B, t.g, d, 0, t.df, d)
	nn.Gemm(true, false, B, d, B, scale, t.dl, B, t.f, d, 0, t.dg, d)
	t.parallel(B, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			unnormalize(t.df[i*d:(i+1)*d], t.f[i*d:(i+1)*d], t.nf[i])
			unnormalize(t.dg[i*d:(i+1)*d], t.g[i*d:(i+1)*d], t.ng[i])
		}
	})
	// Rows touched by the batch (sentence table: rows; context table:
	// rows + Rows()).
	t.touched = t.touched[:0]
	mark := int32(t.step + 1)
	rowsN := int32(m.Vocab.Rows())
	for _, ex := range batch {
		k := t.slots.sent[ex]
		rows, _ := t.b.bag(k)
		for _, r := range rows {
			if t.stamp[r] != mark {
				t.stamp[r] = mark
				t.touched = append(t.touched, r)
			}
		}
		for j := t.slots.lo[ex]; j < t.slots.hi[ex]; j++ {
			if j == k {
				continue
			}
			rows, _ := t.b.bag(j)
			for _, r := range rows {
				if t.stamp[r+rowsN] != mark {
					t.stamp[r+rowsN] = mark
					t.touched = append(t.touched, r+rowsN)
				}
			}
		}
	}
	// Scatter the gradients into the tables' rows, each goroutine owning a
	// range of columns, so the sums run in the same order whatever the
	// number of goroutines.
	t.parallel(d, func(c0, c1 int) {
		for i, ex := range batch {
			k := t.slots.sent[ex]
			dfi := t.df[i*d : (i+1)*d]
			rows, w := t.b.bag(k)
			for n, r := range rows {
				axpy(w[n], dfi[c0:c1], t.gS[int(r)*d+c0:int(r)*d+c1])
			}
			dgi := t.dg[i*d : (i+1)*d]
			for j := t.slots.lo[ex]; j < t.slots.hi[ex]; j++ {
				if j == k {
					continue
				}
				rows, w := t.b.bag(j)
				for n, r := range rows {
					axpy(w[n], dgi[c0:c1], t.gC[int(r)*d+c0:int(r)*d+c1])
				}
			}
		}
	})
	return loss
}

// unnormalize turns the gradient dy of y = x/|x| (y given, norm |x|) into
// the gradient of x, in place.
func unnormalize(dy, y []float32, norm float32) {
	if norm == 0 {
		clear(dy)
		return
	}
	p := Dot(y, dy)
	inv := 1 / norm
	for i := range dy {
		dy[i] = (dy[i] - p*y[i]) * inv
	}
}

// softmaxGrad computes the InfoNCE loss of the B×B logits whose diagonal
// holds the positives (rows: each sentence picks its context; with
// symmetric, also columns: each context picks its sentence), averaged over
// the batch, and writes its gradient with respect to the logits into dl.
// tr is scratch space of B×B values.
func softmaxGrad(logits, dl, tr []float32, B int, symmetric bool) float64 {
	w := float32(1) / float32(B)
	if symmetric {
		w /= 2
	}
	loss := rowSoftmaxGrad(logits, dl, B, w)
	if !symmetric {
		return loss
	}
	// Columns: the same on the transpose, added back transposed.
	transpose(tr, logits, B)
	loss += rowSoftmaxGrad(tr, tr, B, w)
	for i := range B {
		row := dl[i*B : (i+1)*B]
		for j := range row {
			row[j] += tr[j*B+i]
		}
	}
	return loss
}

// rowSoftmaxGrad writes into dl (which may be logits) w times the gradient
// of the cross-entropy of each row's softmax with the diagonal as target,
// and returns w times the summed loss.
func rowSoftmaxGrad(logits, dl []float32, B int, w float32) float64 {
	var loss float64
	for i := range B {
		row := logits[i*B : (i+1)*B]
		out := dl[i*B : (i+1)*B]
		mx := vecmath.Max(row)
		pos := row[i]
		copy(out, row)
		z := vecmath.ExpShiftInPlace(out, mx)
		loss += float64(w) * (math.Log(float64(z)) + float64(mx) - float64(pos))
		sc := w / z
		for j := range out {
			out[j] *= sc
		}
		out[i] -= w
	}
	return loss
}

// transpose writes the transpose of the n×n matrix a into dst, in blocks.
func transpose(dst, a []float32, n int) {
	const blk = 32
	for i0 := 0; i0 < n; i0 += blk {
		for j0 := 0; j0 < n; j0 += blk {
			for i := i0; i < min(i0+blk, n); i++ {
				for j := j0; j < min(j0+blk, n); j++ {
					dst[j*n+i] = a[i*n+j]
				}
			}
		}
	}
}

// adam applies one lazy Adam update to the touched rows and clears their
// gradients.
func (t *trainer) adam(lr float64) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	step := float64(t.step + 1)
	a := float32(lr / (1 - math.Pow(b1, step)))
	c2 := float32(1 / math.Sqrt(1-math.Pow(b2, step)))
	d := t.m.Cfg.Dim
	rowsN := int32(t.m.Vocab.Rows())
	t.parallel(len(t.touched), func(lo, hi int) {
		for _, r := range t.touched[lo:hi] {
			w, g, m, v := t.m.Sent, t.gS, t.mS, t.vS
			if r >= rowsN {
				r -= rowsN
				w, g, m, v = t.m.Ctx, t.gC, t.mC, t.vC
			}
			o := int(r) * d
			wr, gr, mr, vr := w[o:o+d:o+d], g[o:o+d:o+d], m[o:o+d:o+d], v[o:o+d:o+d]
			for j, gj := range gr {
				mj := b1*mr[j] + (1-b1)*gj
				vj := b2*vr[j] + (1-b2)*gj*gj
				mr[j], vr[j] = mj, vj
				wr[j] -= a * mj / (float32(math.Sqrt(float64(vj)))*c2 + eps)
			}
			clear(gr)
		}
	})
}
