package surrogate

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/scoring/disc"
	"github.com/ctxsim/ctxsim/scoring/nn"
)

func testDisc(t testing.TB, vocab, embed, hidden int, seed uint64) *disc.Model {
	t.Helper()
	m, err := disc.New(disc.Config{Vocab: vocab, EmbedDim: embed, Hidden: hidden, Head: disc.HeadLinear,
		MaxTokens: 16, Window: 1}, seed)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestBiLSTMGradient checks the gradient of each objective through the
// BiLSTM encoder, in its embeddings and LSTM weights, against finite
// differences.
func TestBiLSTMGradient(t *testing.T) {
	const vocab = 12
	// Token 0 is the coherence model's padding row.
	batch := gradientBatch(rand.New(rand.NewPCG(3, 3)), 5, 1, vocab)
	for name, oc := range objectiveCases() {
		t.Run(name, func(t *testing.T) {
			m := testDisc(t, vocab, 4, 3, 5)
			// Larger embeddings than the model's default, so the gradient
			// is well above float32 noise.
			for i := range m.Emb.Weight.Value.Data {
				m.Emb.Weight.Value.Data[i] *= 10
			}
			b := &BiLSTM{M: m}
			net := &bilstmNet{BiLSTM: b, params: m.EncoderParams(), opt: nn.NewAdam(0.01), lr0: 0.01}
			tr, err := newTrainer(net, oc)
			if err != nil {
				t.Fatal(err)
			}
			tr.gradient(batch)
			obj, _ := NewObjective(oc)
			loss := func() float64 { return batchLoss(obj, b, batch) }
			for _, p := range m.EncoderParams() {
				checkGrads(t, p.Name, loss, p.Value.Data, slices.Clone(p.Grad.Data), 1e-3, 60)
			}
		})
	}
}

// TestTrainBiLSTM trains the BiLSTM on the synthetic topic task: dev
// Spearman rises well above the start, the head is left alone, and the
// same seed gives the same weights.
func TestTrainBiLSTM(t *testing.T) {
	train, dev := synthPairs(1, 600), synthPairs(2, 200)
	cfg := synthConfig(ObjectiveL2)
	cfg.Epochs, cfg.LR = 4, 0.01
	m := testDisc(t, synthVocab, 16, 16, 9)
	head := slices.Clone(m.H1.W.Value.Data)
	b, curve, err := TrainBiLSTM(m, cfg, train, dev)
	if err != nil {
		t.Fatal(err)
	}
	last := curve.Epochs[len(curve.Epochs)-1]
	t.Logf("dev Spearman %.3f -> %.3f, dev loss %.4f -> %.4f", curve.Init.Spearman, last.Dev.Spearman, curve.Init.Loss, last.Dev.Loss)
	if !(last.Dev.Spearman > curve.Init.Spearman+0.3) || !(last.Dev.Loss < curve.Init.Loss) {
		t.Errorf("dev Spearman %.3f -> %.3f, loss %.4f -> %.4f", curve.Init.Spearman, last.Dev.Spearman, curve.Init.Loss, last.Dev.Loss)
	}
	if !slices.Equal(head, m.H1.W.Value.Data) {
		t.Error("training the encoder changed the coherence head")
	}
	if sp, _ := Correlation(b, dev); sp != last.Dev.Spearman {
		t.Errorf("Correlation %v, curve %v", sp, last.Dev.Spearman)
	}
	m2 := testDisc(t, synthVocab, 16, 16, 9)
	cfg.Epochs = 4
	b2, _, err := TrainBiLSTM(m2, cfg, train, dev)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.M.Emb.Weight.Value.Data, b2.M.Emb.Weight.Value.Data) {
		t.Error("same seed and data, different weights")
	}
	if _, _, err := TrainBiLSTM(nil, cfg, train, dev); err == nil {
		t.Error("no model: no error")
	}
	anchored := cfg
	anchored.Anchor = 1
	if _, _, err := TrainBiLSTM(testDisc(t, synthVocab, 4, 4, 1), anchored, train, nil); err == nil || !strings.Contains(err.Error(), "anchor") {
		t.Errorf("an anchor: %v, want it refused", err)
	}
	bad := slices.Clone(train)
	bad[0].A = []int{synthVocab}
	if _, _, err := TrainBiLSTM(testDisc(t, synthVocab, 4, 4, 1), cfg, bad, nil); err == nil {
		t.Error("a token outside the vocabulary: no error")
	}
}
