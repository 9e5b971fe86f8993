package nn

import (
	"math/rand/v2"
	"testing"
	"time"
)

// orderTask generates sequences over tokens 3..9 in which tokens 1 (A) and
// 2 (B) each occur once; the label is whether A comes before B. Token 0 is
// padding.
func orderTask(rng *rand.Rand, batch, maxLen int) (ids []int, lengths []int, labels []float32) {
	ids = make([]int, batch*maxLen)
	lengths = make([]int, batch)
	labels = make([]float32, batch)
	for b := 0; b < batch; b++ {
		n := 4 + rng.IntN(maxLen-3)
		lengths[b] = n
		for t := 0; t < n; t++ {
			ids[b*maxLen+t] = 3 + rng.IntN(7)
		}
		pa := rng.IntN(n)
		pb := rng.IntN(n - 1)
		if pb >= pa {
			pb++
		}
		ids[b*maxLen+pa], ids[b*maxLen+pb] = 1, 2
		if pa < pb {
			labels[b] = 1
		}
	}
	return ids, lengths, labels
}

// classifier is a BiLSTM over embeddings with a linear head on the
// concatenated final states.
type classifier struct {
	emb  *Embedding
	lstm *BiLSTM
	head *Linear
}

func (c *classifier) params() []*Param {
	return append(append(c.emb.Params(), c.lstm.Params()...), c.head.Params()...)
}

func (c *classifier) forward(ids, lengths []int, batch, maxLen int) (logits, feat *Tensor, o *BiLSTMOutput, cache *BiLSTMCache) {
	x := c.emb.Forward(ids).Reshape(batch, maxLen, c.emb.Dim())
	o, cache = c.lstm.Forward(x, lengths)
	h := c.lstm.Hidden()
	feat = NewTensor(batch, 2*h)
	for b := 0; b < batch; b++ {
		copy(feat.Data[b*2*h:b*2*h+h], o.HFwd.Data[b*h:(b+1)*h])
		copy(feat.Data[b*2*h+h:(b+1)*2*h], o.HBwd.Data[b*h:(b+1)*h])
	}
	return c.head.Forward(feat), feat, o, cache
}

func TestBiLSTMLearnsOrderTask(t *testing.T) {
	start := time.Now()
	rng := rand.New(rand.NewPCG(12, 12))
	const vocab, dim, hidden, batch, maxLen = 10, 16, 24, 32, 12
	c := &classifier{
		emb:  NewEmbedding("emb", vocab, dim, 0, rng),
		lstm: NewBiLSTM("bilstm", dim, hidden, rng),
		head: NewLinear("head", 2*hidden, 1, true, rng),
	}
	params := c.params()
	opt := NewAdam(0.01)
	opt.ClipNorm = 5
	for step := 0; step < 400; step++ {
		ids, lengths, labels := orderTask(rng, batch, maxLen)
		ZeroGrad(params)
		logits, feat, _, cache := c.forward(ids, lengths, batch, maxLen)
		_, _, bce := SigmoidBCE(logits, labels)
		dFeat := c.head.Backward(feat, bce.Backward(1))
		dhF, dhB := NewTensor(batch, hidden), NewTensor(batch, hidden)
		for b := 0; b < batch; b++ {
			copy(dhF.Data[b*hidden:(b+1)*hidden], dFeat.Data[b*2*hidden:b*2*hidden+hidden])
			copy(dhB.Data[b*hidden:(b+1)*hidden], dFeat.Data[b*2*hidden+hidden:(b+1)*2*hidden])
		}
		dx := c.lstm.Backward(cache, BiLSTMGrads{HFwd: dhF, HBwd: dhB})
		c.emb.Backward(ids, dx.Reshape(batch*maxLen, dim))
		opt.Step(params)
	}
	evalRng := rand.New(rand.NewPCG(77, 77))
	const evalBatch = 1000
	ids, lengths, labels := orderTask(evalRng, evalBatch, maxLen)
	logits, _, _, _ := c.forward(ids, lengths, evalBatch, maxLen)
	correct := 0
	for b, y := range labels {
		if (logits.Data[b] > 0) == (y == 1) {
			correct++
		}
	}
	acc := float64(correct) / evalBatch
	t.Logf("accuracy %.3f after %v", acc, time.Since(start))
	if acc < 0.95 {
		t.Fatalf("accuracy %.3f, want > 0.95", acc)
	}
}
