package surrogate

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ctxsim/ctxsim/scoring/stats"
)

// checkGrads compares the analytic gradient grad of loss with respect to
// value with central finite differences at every entry (or maxChecks
// sampled ones). Tolerances suit float32 values and float64 losses: the
// gradients must agree to 1e-2 in relative L2 norm, and every entry to 2e-2
// relative plus 2e-3 of the largest gradient magnitude plus 1e-5.
func checkGrads(t *testing.T, name string, loss func() float64, value, grad []float32, eps float32, maxChecks int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(99, 7))
	idx := rng.Perm(len(value))
	if len(idx) > maxChecks {
		idx = idx[:maxChecks]
	}
	var maxAbs float64
	for _, g := range grad {
		maxAbs = max(maxAbs, math.Abs(float64(g)))
	}
	if maxAbs == 0 {
		t.Errorf("%s: gradient is identically zero", name)
	}
	var diff2, norm2 float64
	for _, i := range idx {
		orig := value[i]
		value[i] = orig + eps
		lp := loss()
		value[i] = orig - eps
		lm := loss()
		value[i] = orig
		num := (lp - lm) / (float64(orig+eps) - float64(orig-eps))
		ana := float64(grad[i])
		d := math.Abs(num - ana)
		diff2 += d * d
		norm2 += num*num + ana*ana
		if d > 2e-2*max(math.Abs(num), math.Abs(ana))+2e-3*maxAbs+1e-5 {
			t.Errorf("%s[%d]: analytic %.6g, numeric %.6g", name, i, ana, num)
		}
	}
	if norm2 > 0 {
		if rel := math.Sqrt(diff2 / norm2); rel > 1e-2 {
			t.Errorf("%s: relative gradient error %.3g over %d entries", name, rel, len(idx))
		}
	}
}

// testBatch returns n pairs of dim-wide embeddings, half of them close
// (b = a + noise) so that similarities cover [-1, 1], and labels spread
// over [-1, 1] with some at the extremes.
func testBatch(seed uint64, n, dim int) (a, b, labels []float32) {
	rng := rand.New(rand.NewPCG(seed, 3))
	a, b, labels = make([]float32, n*dim), make([]float32, n*dim), make([]float32, n)
	for i := range n {
		for j := range dim {
			x := rng.NormFloat64()
			y := rng.NormFloat64()
			if i%2 == 0 {
				y = x + 0.6*y
			}
			a[i*dim+j], b[i*dim+j] = float32(x), float32(y)
		}
		labels[i] = float32(2*rng.Float64() - 1)
	}
	labels[0], labels[1] = 1, -1
	labels[2] = 0.9
	return a, b, labels
}

func objectiveCases() map[string]ObjectiveConfig {
	cq := DefaultObjective(ObjectiveContrastive)
	cq.TopQuantile = 0.3
	ct := DefaultObjective(ObjectiveContrastive)
	ct.Tau = 0.5
	mq := DefaultObjective(ObjectiveMultiSim)
	mq.TopQuantile = 0.5
	ml := DefaultObjective(ObjectiveMultiSim)
	ml.InBatchWeight = 0
	ms := DefaultObjective(ObjectiveMultiSim)
	ms.Beta, ms.Lambda = 10, 0.2
	return map[string]ObjectiveConfig{
		"l2":                    DefaultObjective(ObjectiveL2),
		"pearson":               DefaultObjective(ObjectivePearson),
		"rank":                  DefaultObjective(ObjectiveRank),
		"rank/scale1":           {Name: ObjectiveRank, Scale: 1},
		"contrastive":           DefaultObjective(ObjectiveContrastive),
		"contrastive/quantile":  cq,
		"contrastive/tau0.5":    ct,
		"multisim":              DefaultObjective(ObjectiveMultiSim),
		"multisim/quantile":     mq,
		"multisim/labelledonly": ml,
		"multisim/beta10":       ms,
	}
}

func TestObjectiveGradients(t *testing.T) {
	const n, dim = 7, 8
	for name, oc := range objectiveCases() {
		t.Run(name, func(t *testing.T) {
			obj, err := NewObjective(oc)
			if err != nil {
				t.Fatal(err)
			}
			a, b, labels := testBatch(1, n, dim)
			da, db := make([]float32, n*dim), make([]float32, n*dim)
			got := obj.Loss(a, b, labels, dim, da, db)
			if want := referenceLoss(oc, a, b, labels, dim); math.Abs(got-want) > 1e-5*max(1, math.Abs(want)) {
				t.Errorf("loss %.9g, reference %.9g", got, want)
			}
			loss := func() float64 { return obj.Loss(a, b, labels, dim, nil, nil) }
			checkGrads(t, "a", loss, a, da, 1e-3, 1000)
			checkGrads(t, "b", loss, b, db, 1e-3, 1000)
		})
	}
}

// referenceLoss computes each objective from its definition in float64,
// one cosine at a time.
func referenceLoss(oc ObjectiveConfig, a, b, labels []float32, dim int) float64 {
	n := len(labels)
	cos := func(i, j int) float64 { return Cosine(a[i*dim:(i+1)*dim], b[j*dim:(j+1)*dim]) }
	thr := oc.Threshold
	if oc.TopQuantile > 0 {
		// The ⌈q·n⌉-th highest label.
		k := int(math.Ceil(oc.TopQuantile * float64(n)))
		for _, y := range labels {
			above := 0
			for _, z := range labels {
				if z > y {
					above++
				}
			}
			atLeast := 0
			for _, z := range labels {
				if z >= y {
					atLeast++
				}
			}
			if above < k && atLeast >= k {
				thr = float64(y)
			}
		}
	}
	switch oc.Name {
	case ObjectiveL2:
		var s float64
		for i := range n {
			r := cos(i, i) - float64(labels[i])
			s += r * r
		}
		return s / float64(n)
	case ObjectivePearson:
		c, y := make([]float64, n), make([]float64, n)
		for i := range n {
			c[i], y[i] = cos(i, i), float64(labels[i])
		}
		return 1 - stats.Pearson(c, y)
	case ObjectiveRank:
		sum := 1.0
		for i := range n {
			for j := range n {
				if labels[i] > labels[j] {
					sum += math.Exp(oc.Scale * (cos(j, j) - cos(i, i)))
				}
			}
		}
		return math.Log(sum)
	case ObjectiveContrastive:
		var s float64
		pos := 0
		for i := range n {
			if float64(labels[i]) < thr {
				continue
			}
			pos++
			var zr, zc float64
			for j := range n {
				zr += math.Exp(cos(i, j) / oc.Tau)
				zc += math.Exp(cos(j, i) / oc.Tau)
			}
			s += -math.Log(math.Exp(cos(i, i)/oc.Tau)/zr) - math.Log(math.Exp(cos(i, i)/oc.Tau)/zc)
		}
		if pos == 0 {
			return 0
		}
		return s / float64(2*pos)
	default:
		var s float64
		for i := range n {
			for dir := range 2 {
				var sp, sn float64
				for k := range n {
					c := cos(i, k)
					if dir == 1 {
						c = cos(k, i)
					}
					switch {
					case k != i:
						sn += oc.InBatchWeight * math.Exp(oc.Beta*(c-oc.Lambda))
					case float64(labels[i]) >= thr:
						sp += localityWeight(float64(labels[i]), thr) * math.Exp(-oc.Alpha*(c-oc.Lambda))
					default:
						sn += localityWeight(float64(labels[i]), thr) * math.Exp(oc.Beta*(c-oc.Lambda))
					}
				}
				s += math.Log(1+sp)/oc.Alpha + math.Log(1+sn)/oc.Beta
			}
		}
		return s / float64(2*n)
	}
}

func TestLocalityWeight(t *testing.T) {
	for _, c := range []struct{ y, t, want float64 }{
		{1, 0.5, 1}, {0.5, 0.5, 0}, {0.75, 0.5, 0.5}, {-1, 0.5, 1}, {-0.25, 0.5, 0.5}, {0, 0, 0}, {1, 1, 1},
	} {
		if got := localityWeight(c.y, c.t); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("localityWeight(%v, %v) = %v, want %v", c.y, c.t, got, c.want)
		}
	}
}

func TestObjectiveEdgeCases(t *testing.T) {
	const dim = 4
	for name, oc := range objectiveCases() {
		obj, err := NewObjective(oc)
		if err != nil {
			t.Fatal(err)
		}
		if l := obj.Loss(nil, nil, nil, dim, nil, nil); l != 0 {
			t.Errorf("%s: empty batch loss %v", name, l)
		}
		// A zero embedding has cosine 0 and no gradient; nothing is NaN.
		a := []float32{0, 0, 0, 0, 1, 2, 3, 4}
		b := []float32{1, 0, 0, 0, 1, 2, 3, 5}
		da, db := make([]float32, 8), make([]float32, 8)
		l := obj.Loss(a, b, []float32{0.9, 0.7}, dim, da, db)
		if math.IsNaN(l) || math.IsInf(l, 0) {
			t.Errorf("%s: loss %v with a zero embedding", name, l)
		}
		for i, g := range append(da, db...) {
			if math.IsNaN(float64(g)) || (i < dim && g != 0) {
				t.Errorf("%s: gradient[%d] = %v", name, i, g)
			}
		}
	}
	// No positives: the contrastive loss is zero with zero gradients.
	obj, _ := NewObjective(DefaultObjective(ObjectiveContrastive))
	a, b, _ := testBatch(2, 3, dim)
	da := []float32{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}
	db := append([]float32(nil), da...)
	if l := obj.Loss(a, b, []float32{0.1, -0.2, 0.4}, dim, da, db); l != 0 || da[0] != 0 || db[11] != 0 {
		t.Errorf("no positives: loss %v, gradients %v %v", l, da, db)
	}
}

// TestPearsonIgnoresLabelScale: the pearson loss is the same for labels
// under any increasing affine map, its gradient too, and a batch of equal
// labels gives it nothing to learn.
func TestPearsonIgnoresLabelScale(t *testing.T) {
	const n, dim = 9, 5
	obj, err := NewObjective(DefaultObjective(ObjectivePearson))
	if err != nil {
		t.Fatal(err)
	}
	a, b, labels := testBatch(3, n, dim)
	da, db := make([]float32, n*dim), make([]float32, n*dim)
	l := obj.Loss(a, b, labels, dim, da, db)
	if !(l > 0 && l < 2) {
		t.Fatalf("loss %v outside (0, 2)", l)
	}
	moved := make([]float32, n)
	for i, y := range labels {
		moved[i] = 0.25*y + 0.6
	}
	da2, db2 := make([]float32, n*dim), make([]float32, n*dim)
	if l2 := obj.Loss(a, b, moved, dim, da2, db2); math.Abs(l2-l) > 1e-6 {
		t.Errorf("loss %v after an affine map of the labels, %v before", l2, l)
	}
	for i := range da {
		if math.Abs(float64(da[i]-da2[i])) > 1e-4 || math.Abs(float64(db[i]-db2[i])) > 1e-4 {
			t.Fatalf("gradient[%d] moved with the labels' scale: %v %v against %v %v", i, da2[i], db2[i], da[i], db[i])
		}
	}
	flat := slices.Repeat([]float32{0.4}, n)
	if l := obj.Loss(a, b, flat, dim, da, db); l != 0 || slices.ContainsFunc(append(da, db...), func(g float32) bool { return g != 0 }) {
		t.Errorf("equal labels: loss %v, gradients not all zero", l)
	}
}

// TestRankUsesOrderOnly: the rank loss depends on the labels' order, not
// their values, and equal labels give it nothing to learn.
func TestRankUsesOrderOnly(t *testing.T) {
	const n, dim = 9, 5
	obj, err := NewObjective(DefaultObjective(ObjectiveRank))
	if err != nil {
		t.Fatal(err)
	}
	a, b, labels := testBatch(4, n, dim)
	squashed := make([]float32, n)
	for i, y := range labels {
		squashed[i] = float32(math.Tanh(3*float64(y)) / 10) // monotone: same order
	}
	l1 := obj.Loss(a, b, labels, dim, nil, nil)
	l2 := obj.Loss(a, b, squashed, dim, nil, nil)
	if l1 <= 0 || math.Abs(l1-l2) > 1e-9*l1 {
		t.Errorf("loss %v with the labels, %v with a monotone map of them", l1, l2)
	}
	same := make([]float32, n)
	da, db := make([]float32, n*dim), make([]float32, n*dim)
	for i := range da {
		da[i], db[i] = 9, 9
	}
	if l := obj.Loss(a, b, same, dim, da, db); l != 0 || slices.ContainsFunc(append(da, db...), func(g float32) bool { return g != 0 }) {
		t.Errorf("equal labels: loss %v, gradients not all zero", l)
	}
}

func TestObjectiveValidate(t *testing.T) {
	bad := []ObjectiveConfig{
		{Name: "cosine"},
		{Name: ObjectiveContrastive, Threshold: 0.5},
		{Name: ObjectiveMultiSim, Alpha: 2, Beta: 0, Lambda: 0.5},
		{Name: ObjectiveMultiSim, Alpha: 2, Beta: 50, Lambda: 2},
		{Name: ObjectiveMultiSim, Alpha: 2, Beta: 50, InBatchWeight: -1},
		{Name: ObjectiveContrastive, Tau: 0.05, Threshold: 1.5},
		{Name: ObjectiveContrastive, Tau: 0.05, TopQuantile: 2},
		{Name: ObjectiveRank},
		{Name: ObjectiveRank, Scale: math.Inf(1)},
	}
	for _, c := range bad {
		if _, err := NewObjective(c); err == nil {
			t.Errorf("NewObjective(%+v) succeeded", c)
		}
	}
	for _, name := range []string{ObjectiveL2, ObjectivePearson, ObjectiveRank, ObjectiveContrastive, ObjectiveMultiSim} {
		if _, err := NewObjective(DefaultObjective(name)); err != nil {
			t.Errorf("default %s: %v", name, err)
		}
	}
}
