package nn

import (
	"fmt"
	"math"

	"github.com/ctxsim/ctxsim/scoring/internal/vecmath"
)

// CrossEntropyCache holds what CrossEntropyCache.Backward needs from
// SoftmaxCrossEntropy.
type CrossEntropyCache struct {
	logits  *Tensor
	targets []int
	ignore  int
	lse     []float32 // log-sum-exp per row
	count   int       // rows not ignored
}

// SoftmaxCrossEntropy treats each row of logits (rows, classes) as
// unnormalised log-probabilities and targets[r] as the class of row r. Rows
// whose target equals ignoreIndex (padding) are skipped. It returns the mean
// negative log-likelihood over the remaining rows (zero if none), the
// log-probability log p(targets[r] | row r) of every row (zero for ignored
// rows), and the cache for Backward. It panics on a target outside
// [0, classes) that is not ignoreIndex.
func SoftmaxCrossEntropy(logits *Tensor, targets []int, ignoreIndex int) (loss float32, logp []float32, cache *CrossEntropyCache) {
	nr, nc := logits.Rows(), logits.Cols()
	if len(targets) != nr {
		panic(fmt.Sprintf("nn: SoftmaxCrossEntropy: %d targets for %d rows", len(targets), nr))
	}
	cache = &CrossEntropyCache{logits: logits, targets: targets, ignore: ignoreIndex, lse: make([]float32, nr)}
	logp = make([]float32, nr)
	var total float64
	for r := 0; r < nr; r++ {
		tgt := targets[r]
		if tgt == ignoreIndex {
			continue
		}
		if tgt < 0 || tgt >= nc {
			panic(fmt.Sprintf("nn: SoftmaxCrossEntropy: target %d outside [0, %d)", tgt, nc))
		}
		row := logits.Data[r*nc : (r+1)*nc]
		lse := logSumExp(row)
		cache.lse[r] = lse
		lp := row[tgt] - lse
		logp[r] = lp
		total -= float64(lp)
		cache.count++
	}
	if cache.count > 0 {
		loss = float32(total / float64(cache.count))
	}
	return loss, logp, cache
}

// logSumExp returns log Σ exp(row[j]) computed stably.
func logSumExp(row []float32) float32 {
	mx := vecmath.Max(row)
	if math.IsInf(float64(mx), 0) {
		return mx
	}
	return mx + float32(math.Log(float64(vecmath.SumExp(row, mx))))
}

// LogSoftmax returns the row-wise log-softmax of x (rows, classes).
func LogSoftmax(x *Tensor) *Tensor {
	out := NewTensor(x.Shape...)
	nc := x.Cols()
	for r := 0; r < x.Rows(); r++ {
		row := x.Data[r*nc : (r+1)*nc]
		lse := logSumExp(row)
		o := out.Data[r*nc : (r+1)*nc]
		for j, v := range row {
			o[j] = v - lse
		}
	}
	return out
}

// Backward returns the gradient of dLoss·loss with respect to the logits:
// (softmax - onehot) · dLoss / count for kept rows, zero for ignored rows.
func (c *CrossEntropyCache) Backward(dLoss float32) *Tensor {
	nr, nc := c.logits.Rows(), c.logits.Cols()
	d := NewTensor(c.logits.Shape...)
	if c.count == 0 {
		return d
	}
	s := dLoss / float32(c.count)
	for r := 0; r < nr; r++ {
		tgt := c.targets[r]
		if tgt == c.ignore {
			continue
		}
		row := c.logits.Data[r*nc : (r+1)*nc]
		dr := d.Data[r*nc : (r+1)*nc]
		copy(dr, row)
		vecmath.ExpShiftInPlace(dr, c.lse[r])
		scal(s, dr)
		dr[tgt] -= s
	}
	return d
}

// BCECache holds what BCECache.Backward needs from SigmoidBCE.
type BCECache struct {
	logits *Tensor
	probs  []float32
	target []float32
}

// SigmoidBCE is the binary cross-entropy of sigmoid(logits) against
// targets in [0, 1], one per element of logits. It returns the mean loss,
// the probabilities sigmoid(logits) and the cache for Backward. The loss is
// computed stably as max(x, 0) - x·y + log(1 + e^-|x|).
func SigmoidBCE(logits *Tensor, targets []float32) (loss float32, probs []float32, cache *BCECache) {
	n := logits.Size()
	if len(targets) != n {
		panic(fmt.Sprintf("nn: SigmoidBCE: %d targets for %d logits", len(targets), n))
	}
	probs = make([]float32, n)
	var total float64
	for i, x := range logits.Data {
		y := float64(targets[i])
		xf := float64(x)
		total += max(xf, 0) - xf*y + math.Log1p(math.Exp(-math.Abs(xf)))
		probs[i] = vecmath.Sigmoid(x)
	}
	if n > 0 {
		loss = float32(total / float64(n))
	}
	return loss, probs, &BCECache{logits: logits, probs: probs, target: targets}
}

// Backward returns the gradient of dLoss·loss with respect to the logits,
// (sigmoid(x) - y) · dLoss / n.
func (c *BCECache) Backward(dLoss float32) *Tensor {
	d := NewTensor(c.logits.Shape...)
	n := float32(len(c.probs))
	for i, p := range c.probs {
		d.Data[i] = (p - c.target[i]) * dLoss / n
	}
	return d
}
