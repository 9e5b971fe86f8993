package surrogate

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/ctxsim/ctxsim/scoring/nn"
)

// Objective names.
const (
	ObjectiveL2          = "l2"
	ObjectiveContrastive = "contrastive"
	ObjectiveMultiSim    = "multisim"
	ObjectiveRank        = "rank"
	ObjectivePearson     = "pearson"
)

// ObjectiveConfig selects and parameterises a training objective. Start
// from DefaultObjective: zero is a meaningful value for several fields.
type ObjectiveConfig struct {
	// Name is ObjectiveL2, ObjectivePearson, ObjectiveContrastive,
	// ObjectiveMultiSim or ObjectiveRank.
	Name string `json:"name"`

	// Threshold splits labels into positives (label >= Threshold) and
	// negatives, for the contrastive and multisim objectives.
	Threshold float64 `json:"threshold"`
	// TopQuantile, when positive, replaces Threshold by a per-batch
	// threshold: the label of the ⌈TopQuantile·n⌉-th highest-labelled pair
	// of the batch, so that (ties aside) the top TopQuantile fraction of
	// each batch are positives.
	TopQuantile float64 `json:"top_quantile,omitempty"`

	// Tau is the temperature of the contrastive objective.
	Tau float64 `json:"tau,omitempty"`

	// Alpha, Beta and Lambda are the multi-similarity constants: the
	// positive and negative scales and the similarity margin.
	Alpha  float64 `json:"alpha,omitempty"`
	Beta   float64 `json:"beta,omitempty"`
	Lambda float64 `json:"lambda,omitempty"`
	// InBatchWeight is the multisim weight of an in-batch negative (an
	// anchor with a sentence of another pair, which has no label). Zero
	// restricts multisim to the labelled pairs.
	InBatchWeight float64 `json:"in_batch_weight,omitempty"`

	// Scale multiplies the differences of cosines in the rank objective.
	Scale float64 `json:"scale,omitempty"`
}

// HasPositives reports whether the objective splits its pairs into
// positives and negatives by a threshold (contrastive and multisim); l2,
// pearson and rank use the labels themselves.
func (c ObjectiveConfig) HasPositives() bool {
	return c.Name == ObjectiveContrastive || c.Name == ObjectiveMultiSim
}

// DefaultObjective returns the configuration of the named objective with
// its defaults: threshold 0.5, τ = 0.05 for contrastive, and α = 2, β = 50,
// λ = 0.5 and in-batch weight 1 for multisim, and scale 20 for rank.
func DefaultObjective(name string) ObjectiveConfig {
	c := ObjectiveConfig{Name: name}
	switch name {
	case ObjectiveContrastive:
		c.Threshold, c.Tau = 0.5, 0.05
	case ObjectiveMultiSim:
		c.Threshold, c.Alpha, c.Beta, c.Lambda, c.InBatchWeight = 0.5, 2, 50, 0.5, 1
	case ObjectiveRank:
		c.Scale = 20
	}
	return c
}

// Validate checks the configuration.
func (c ObjectiveConfig) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("surrogate: objective %q: %s", c.Name, fmt.Sprintf(format, args...))
	}
	switch c.Name {
	case ObjectiveL2, ObjectivePearson:
		return nil
	case ObjectiveRank:
		if !(c.Scale > 0) || math.IsInf(c.Scale, 0) {
			return bad("scale %v must be positive", c.Scale)
		}
		return nil
	case ObjectiveContrastive:
		if !(c.Tau > 0) || math.IsInf(c.Tau, 0) {
			return bad("tau %v must be positive", c.Tau)
		}
	case ObjectiveMultiSim:
		if !(c.Alpha > 0) || !(c.Beta > 0) || math.IsInf(c.Alpha, 0) || math.IsInf(c.Beta, 0) {
			return bad("alpha %v and beta %v must be positive", c.Alpha, c.Beta)
		}
		if !(c.Lambda >= -1 && c.Lambda <= 1) {
			return bad("lambda %v outside [-1, 1]", c.Lambda)
		}
		if !(c.InBatchWeight >= 0) || math.IsInf(c.InBatchWeight, 0) {
			return bad("in_batch_weight %v must be non-negative", c.InBatchWeight)
		}
	default:
		return fmt.Errorf("surrogate: unknown objective %q (want %q, %q, %q, %q or %q)", c.Name,
			ObjectiveL2, ObjectivePearson, ObjectiveRank, ObjectiveContrastive, ObjectiveMultiSim)
	}
	if !(c.Threshold >= -1 && c.Threshold <= 1) {
		return bad("threshold %v outside [-1, 1]", c.Threshold)
	}
	if !(c.TopQuantile >= 0 && c.TopQuantile <= 1) {
		return bad("top_quantile %v outside [0, 1]", c.TopQuantile)
	}
	return nil
}

// Objective is a training loss on the sentence embeddings of a batch of
// labelled pairs.
//
// Loss returns the loss of the n = len(labels) pairs whose embeddings are
// the rows of a and b, (n, dim) row-major matrices. When da and db are not
// nil it also writes the gradient of the loss with respect to a and b into
// them (n×dim values each, overwritten). An Objective keeps scratch memory
// between calls and is not safe for concurrent use.
type Objective interface {
	Loss(a, b []float32, labels []float32, dim int, da, db []float32) float64
}

// NewObjective returns the objective described by c.
func NewObjective(c ObjectiveConfig) (Objective, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	switch c.Name {
	case ObjectiveL2:
		return &l2Objective{}, nil
	case ObjectivePearson:
		return &pearsonObjective{}, nil
	case ObjectiveRank:
		return &rankObjective{scale: c.Scale}, nil
	case ObjectiveContrastive:
		return &contrastiveObjective{cfg: c}, nil
	default:
		return &multiSimObjective{cfg: c}, nil
	}
}

// pairBatch holds the unit-normalised embeddings of a batch, their
// similarity matrix S = Â·B̂ᵀ and the gradient G = ∂L/∂S.
type pairBatch struct {
	n, dim   int
	ah, bh   []float32 // normalised rows
	ra, rb   []float64 // reciprocal norms (0 for a zero row)
	s, g     []float32 // n×n
	dah, dbh []float32 // ∂L/∂Â, ∂L/∂B̂
	sorted   []float32 // scratch for the quantile threshold
}

// load normalises the rows of a and b.
func (p *pairBatch) load(a, b []float32, n, dim int) {
	if len(a) < n*dim || len(b) < n*dim {
		panic(fmt.Sprintf("surrogate: objective: %d and %d values for %d pairs of dim %d", len(a), len(b), n, dim))
	}
	p.n, p.dim = n, dim
	p.ah, p.bh = grow(p.ah, n*dim), grow(p.bh, n*dim)
	p.ra, p.rb = grow(p.ra, n), grow(p.rb, n)
	normalise(p.ah, p.ra, a, n, dim)
	normalise(p.bh, p.rb, b, n, dim)
}

func normalise(dst []float32, rinv []float64, x []float32, n, dim int) {
	for i := range n {
		xi := x[i*dim : (i+1)*dim]
		var ss float64
		for _, v := range xi {
			ss += float64(v) * float64(v)
		}
		r := 0.0
		if ss > 0 {
			r = 1 / math.Sqrt(ss)
		}
		rinv[i] = r
		di := dst[i*dim : (i+1)*dim]
		for j, v := range xi {
			di[j] = float32(float64(v) * r)
		}
	}
}

// matrix computes S and clears G.
func (p *pairBatch) matrix() {
	n, d := p.n, p.dim
	p.s, p.g = grow(p.s, n*n), grow(p.g, n*n)
	nn.Gemm(false, true, n, n, d, 1, p.ah, d, p.bh, d, 0, p.s, n)
	clear(p.g)
}

// backMatrix turns G into ∂L/∂Â = G·B̂ and ∂L/∂B̂ = Gᵀ·Â, then into the
// gradients with respect to the unnormalised rows.
func (p *pairBatch) backMatrix(da, db []float32) {
	n, d := p.n, p.dim
	p.dah, p.dbh = grow(p.dah, n*d), grow(p.dbh, n*d)
	nn.Gemm(false, false, n, d, n, 1, p.g, n, p.bh, d, 0, p.dah, d)
	nn.Gemm(true, false, n, d, n, 1, p.g, n, p.ah, d, 0, p.dbh, d)
	unnormalise(da, p.dah, p.ah, p.ra, n, d)
	unnormalise(db, p.dbh, p.bh, p.rb, n, d)
}

// unnormalise maps the gradient dh with respect to x̂ = x/|x| to the
// gradient with respect to x: (dh − (x̂·dh) x̂) / |x|, row by row.
func unnormalise(dx, dh, h []float32, rinv []float64, n, dim int) {
	for i := range n {
		hi, gi, di := h[i*dim:(i+1)*dim], dh[i*dim:(i+1)*dim], dx[i*dim:(i+1)*dim]
		r := rinv[i]
		if r == 0 {
			clear(di)
			continue
		}
		var dot float64
		for j, v := range hi {
			dot += float64(v) * float64(gi[j])
		}
		for j, v := range hi {
			di[j] = float32((float64(gi[j]) - dot*float64(v)) * r)
		}
	}
}

// threshold returns the batch's positive threshold for c.
func (p *pairBatch) threshold(c ObjectiveConfig, labels []float32) float64 {
	if c.TopQuantile <= 0 || len(labels) == 0 {
		return c.Threshold
	}
	p.sorted = append(p.sorted[:0], labels...)
	slices.Sort(p.sorted)
	k := int(math.Ceil(c.TopQuantile * float64(len(labels))))
	k = min(max(k, 1), len(labels))
	return float64(p.sorted[len(labels)-k])
}

// l2Objective is the mean squared error between cosine and label.
type l2Objective struct {
	p  pairBatch
	dc []float64
}

func (o *l2Objective) Loss(a, b []float32, labels []float32, dim int, da, db []float32) float64 {
	n := len(labels)
	if n == 0 {
		return 0
	}
	p := &o.p
	p.load(a, b, n, dim)
	o.dc = grow(o.dc, n)
	var loss float64
	for i := range n {
		r := p.pairCosine(i) - float64(labels[i])
		loss += r * r
		o.dc[i] = 2 * r / float64(n)
	}
	if da != nil && db != nil {
		p.pairGrads(o.dc, da, db)
	}
	return loss / float64(n)
}

// pearsonObjective is one minus the Pearson correlation, over the batch,
// between the pairs' cosines and their labels:
//
//	L = 1 − Σ (c_i − c̄)(y_i − ȳ) / (‖c − c̄‖ ‖y − ȳ‖).
//
// Unlike l2 it does not ask the cosines to take the labels' values, only
// to follow them linearly, so labels that sit higher or spread narrower
// than the student's cosines do not pull every sentence vector towards a
// common direction to close the gap. (On the default labels of the
// 91M-word model the alignment part averages 0.19 on random pairs, with
// a standard deviation of 0.055, where the contrastive model's cosine
// averages 0.05 with 0.12.) A batch whose labels or cosines do not vary
// has no correlation: its loss is 0, with no gradient.
type pearsonObjective struct {
	p     pairBatch
	c, dc []float64
}

func (o *pearsonObjective) Loss(a, b []float32, labels []float32, dim int, da, db []float32) float64 {
	n := len(labels)
	if n == 0 {
		return 0
	}
	p := &o.p
	p.load(a, b, n, dim)
	o.c, o.dc = grow(o.c, n), grow(o.dc, n)
	var cm, ym float64
	for i := range n {
		o.c[i] = p.pairCosine(i)
		cm += o.c[i]
		ym += float64(labels[i])
	}
	cm /= float64(n)
	ym /= float64(n)
	var sxy, sxx, syy float64
	for i := range n {
		x, y := o.c[i]-cm, float64(labels[i])-ym
		sxy += x * y
		sxx += x * x
		syy += y * y
	}
	if !(sxx > 1e-24) || !(syy > 1e-24) {
		if da != nil && db != nil {
			clear(da[:n*dim])
			clear(db[:n*dim])
		}
		return 0
	}
	nx, ny := math.Sqrt(sxx), math.Sqrt(syy)
	r := sxy / (nx * ny)
	if da != nil && db != nil {
		// ∂r/∂c_i = (y_i − ȳ)/(‖x‖‖y‖) − r (c_i − c̄)/‖x‖²; the means'
		// own derivatives sum to zero against centred vectors.
		for i := range n {
			o.dc[i] = -((float64(labels[i])-ym)/(nx*ny) - r*(o.c[i]-cm)/sxx)
		}
		p.pairGrads(o.dc, da, db)
	}
	return 1 - r
}

// pairCosine returns the cosine of pair i, Â_i·B̂_i.
func (p *pairBatch) pairCosine(i int) float64 {
	d := p.dim
	ai, bi := p.ah[i*d:(i+1)*d], p.bh[i*d:(i+1)*d]
	var c float64
	for j, v := range ai {
		c += float64(v) * float64(bi[j])
	}
	return c
}

// pairGrads writes into da and db the gradients with respect to the
// unnormalised rows of a loss whose derivative by pair i's cosine is dc[i].
func (p *pairBatch) pairGrads(dc []float64, da, db []float32) {
	n, d := p.n, p.dim
	p.dah, p.dbh = grow(p.dah, n*d), grow(p.dbh, n*d)
	for i := range n {
		ai, bi := p.ah[i*d:(i+1)*d], p.bh[i*d:(i+1)*d]
		gai, gbi := p.dah[i*d:(i+1)*d], p.dbh[i*d:(i+1)*d]
		g := float32(dc[i])
		for j := range ai {
			gai[j] = g * bi[j]
			gbi[j] = g * ai[j]
		}
	}
	unnormalise(da, p.dah, p.ah, p.ra, n, d)
	unnormalise(db, p.dbh, p.bh, p.rb, n, d)
}

// rankObjective is a pairwise ranking loss on the pairs' cosines, in the
// style of CoSENT: with c_i the cosine of pair i and s the scale,
//
//	L = log(1 + Σ_{y_i > y_j} e^{s(c_j − c_i)}),
//
// over every ordered couple of pairs of the batch whose labels differ.
// Only the order of the labels matters, not their scale, so it fits
// labels whose range depends on the labeler and an evaluation by rank
// correlation. Couples with equal labels add nothing.
type rankObjective struct {
	scale float64
	p     pairBatch
	c, dc []float64
	ord   []int
	z     []float64 // s(c_j − c_i) of each couple, in eachCouple's order
}

func (o *rankObjective) Loss(a, b []float32, labels []float32, dim int, da, db []float32) float64 {
	n := len(labels)
	if n == 0 {
		return 0
	}
	p := &o.p
	p.load(a, b, n, dim)
	o.c, o.dc, o.ord = grow(o.c, n), grow(o.dc, n), grow(o.ord, n)
	for i := range n {
		o.c[i] = p.pairCosine(i)
		o.ord[i] = i
	}
	// With the pairs in decreasing label order, pair i outranks exactly the
	// pairs after it whose label is smaller.
	slices.SortStableFunc(o.ord, func(x, y int) int { return cmp.Compare(labels[y], labels[x]) })
	s, c := o.scale, o.c
	o.z = o.z[:0]
	maxZ := 0.0 // the 1 inside the log is e^0
	o.eachCouple(labels, func(i, j int) {
		z := s * (c[j] - c[i])
		o.z = append(o.z, z)
		maxZ = max(maxZ, z)
	})
	sum := math.Exp(-maxZ)
	for k, z := range o.z {
		o.z[k] = math.Exp(z - maxZ)
		sum += o.z[k]
	}
	if da != nil && db != nil {
		clear(o.dc)
		k := 0
		o.eachCouple(labels, func(i, j int) {
			w := s * o.z[k] / sum
			k++
			o.dc[j] += w
			o.dc[i] -= w
		})
		p.pairGrads(o.dc, da, db)
	}
	return maxZ + math.Log(sum)
}

// eachCouple calls f(i, j) for every couple of pairs with label i above
// label j, always in the same order; o.ord holds the pairs in decreasing
// label order.
func (o *rankObjective) eachCouple(labels []float32, f func(i, j int)) {
	ord := o.ord
	for x, i := range ord {
		for _, j := range ord[x+1:] {
			if labels[i] > labels[j] {
				f(i, j)
			}
		}
	}
}

// contrastiveObjective is the symmetric in-batch InfoNCE loss over the
// positive pairs.
type contrastiveObjective struct {
	cfg ObjectiveConfig
	p   pairBatch
	row []float64
}

func (o *contrastiveObjective) Loss(a, b []float32, labels []float32, dim int, da, db []float32) float64 {
	n := len(labels)
	p := &o.p
	grad := da != nil && db != nil
	if grad {
		clear(da[:n*dim])
		clear(db[:n*dim])
	}
	if n == 0 {
		return 0
	}
	thr := p.threshold(o.cfg, labels)
	pos := 0
	for _, y := range labels {
		if float64(y) >= thr {
			pos++
		}
	}
	if pos == 0 {
		return 0
	}
	p.load(a, b, n, dim)
	p.matrix()
	o.row = grow(o.row, n)
	invTau := 1 / o.cfg.Tau
	scale := 1 / float64(2*pos)
	var loss float64
	for i, y := range labels {
		if float64(y) < thr {
			continue
		}
		// Row i (a_i against every b_j), then column i (b_i against every a_j).
		loss += o.direction(i, i*n, 1, invTau, scale, grad)
		loss += o.direction(i, i, n, invTau, scale, grad)
	}
	if grad {
		p.backMatrix(da, db)
	}
	return loss * scale
}

// direction adds the cross-entropy of the positive S[i*n+i] among the
// similarities S[start+j*step], j in [0, n) (row i or column i of S), and
// its gradient (times scale) to G.
func (o *contrastiveObjective) direction(i, start, step int, invTau, scale float64, grad bool) float64 {
	s, g, z, n := o.p.s, o.p.g, o.row, o.p.n
	maxZ := math.Inf(-1)
	for j := range n {
		z[j] = float64(s[start+j*step]) * invTau
		maxZ = max(maxZ, z[j])
	}
	var sum float64
	for j := range n {
		z[j] = math.Exp(z[j] - maxZ)
		sum += z[j]
	}
	loss := math.Log(sum) + maxZ - float64(s[start+i*step])*invTau
	if grad {
		for j := range n {
			d := z[j] / sum
			if j == i {
				d--
			}
			g[start+j*step] += float32(d * invTau * scale)
		}
	}
	return loss
}

// multiSimObjective is the locality-weighted multi-similarity loss.
//
// Each sentence of the batch is an anchor in turn: a_i against the b's
// (row i of S) and b_i against the a's (column i). The anchor's labelled
// partner is a positive when its label y reaches the threshold t and a
// negative otherwise; the sentences of the other pairs are negatives. With
// P and N the anchor's positives and negatives,
//
//	L = 1/α·log(1 + Σ_P w·e^{−α(S−λ)}) + 1/β·log(1 + Σ_N w·e^{β(S−λ)}),
//
// averaged over the 2n anchors. A labelled pair's weight is its locality
// weight, the distance of its label from the threshold normalised by the
// room on that side,
//
//	w = (y − t)/(1 − t) for y >= t,  w = (t − y)/(1 + t) for y < t,
//
// so pairs with extreme labels (confident positives or negatives) weigh 1
// and pairs next to the threshold, whose side is uncertain, weigh nearly 0.
// An in-batch negative weighs InBatchWeight. Weighting inside the sums
// scales both a pair's share of the loss and its gradient, which is
// −w·e^{−α(S−λ)}/(1 + Σ_P ...) for a positive and w·e^{β(S−λ)}/(1 + Σ_N ...)
// for a negative.
type multiSimObjective struct {
	cfg ObjectiveConfig
	p   pairBatch
	e   []float64
	w   []float64
	pos []bool
}

// localityWeight returns the weight of a pair with label y at threshold t.
func localityWeight(y, t float64) float64 {
	room := 1 + t
	if y >= t {
		room = 1 - t
	}
	if room < 1e-6 {
		return 1
	}
	return min(math.Abs(y-t)/room, 1)
}

func (o *multiSimObjective) Loss(a, b []float32, labels []float32, dim int, da, db []float32) float64 {
	n := len(labels)
	if n == 0 {
		return 0
	}
	p := &o.p
	thr := p.threshold(o.cfg, labels)
	o.w, o.pos, o.e = grow(o.w, n), grow(o.pos, n), grow(o.e, n)
	for i, y := range labels {
		o.pos[i] = float64(y) >= thr
		o.w[i] = localityWeight(float64(y), thr)
	}
	p.load(a, b, n, dim)
	p.matrix()
	grad := da != nil && db != nil
	scale := 1 / float64(2*n)
	var loss float64
	for i := range n {
		loss += o.anchor(i, i*n, 1, scale, grad)
		loss += o.anchor(i, i, n, scale, grad)
	}
	if grad {
		p.backMatrix(da, db)
	}
	return loss * scale
}

// anchor adds the loss of anchor i, whose similarities are S[start+k*step]
// for k in [0, n), and its gradient (times scale) to G.
func (o *multiSimObjective) anchor(i, start, step int, scale float64, grad bool) float64 {
	c := o.cfg
	s, g, e := o.p.s, o.p.g, o.e
	n := o.p.n
	var sumP, sumN float64
	for k := range n {
		w, pos := c.InBatchWeight, false
		if k == i {
			w, pos = o.w[i], o.pos[i]
		}
		if w == 0 {
			e[k] = 0
			continue
		}
		sk := float64(s[start+k*step])
		if pos {
			e[k] = w * math.Exp(-c.Alpha*(sk-c.Lambda))
			sumP += e[k]
		} else {
			e[k] = w * math.Exp(c.Beta*(sk-c.Lambda))
			sumN += e[k]
		}
	}
	if grad {
		for k := range n {
			if e[k] == 0 {
				continue
			}
			if k == i && o.pos[i] {
				g[start+k*step] -= float32(scale * e[k] / (1 + sumP))
			} else {
				g[start+k*step] += float32(scale * e[k] / (1 + sumN))
			}
		}
	}
	return math.Log1p(sumP)/c.Alpha + math.Log1p(sumN)/c.Beta
}
