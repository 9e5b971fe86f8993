package disc

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/nn"
)

// wordTok maps words to ids by hashing, for tests.
type wordTok struct{ vocab int }

func (w wordTok) Encode(s string) []int32 {
	var out []int32
	for _, f := range strings.Fields(s) {
		h := fnv.New32a()
		h.Write([]byte(f))
		out = append(out, int32(1+h.Sum32()%uint32(w.vocab-1)))
	}
	return out
}

func tinyConfig(head string) Config {
	return Config{Vocab: 50, EmbedDim: 4, Hidden: 3, HeadHidden: 5, Head: head, MaxTokens: 8, Window: 2}
}

func tinyExamples() []examples.Coherence {
	return []examples.Coherence{
		{Context: examples.Context{Left: []string{"a b c", "d e"}, Right: []string{"f g h i"}}, S: "j k", Label: 1},
		{Context: examples.Context{Left: []string{"d e"}, Right: []string{"a b", "c"}}, S: "l m n", Label: 0, Kind: examples.Random},
		{Context: examples.Context{Left: []string{"o"}, Right: []string{"p q r"}}, S: "a b c", Label: 0, Kind: examples.SameDoc},
	}
}

// loss returns the model's mean BCE on exs, without training.
func loss(m *Model, exs []examples.Coherence) float64 {
	b := m.newBatch(wordTok{m.Cfg.Vocab}, exs)
	logits, _, _ := m.forward(b)
	l, _, _ := nn.SigmoidBCE(logits, b.labels)
	return float64(l)
}

// TestGradients checks the analytic gradient of the whole model (head,
// context averaging, mean pooling, encoder, embeddings) against central
// differences, for both heads.
func TestGradients(t *testing.T) {
	for _, head := range []string{HeadInteraction, HeadLinear} {
		t.Run(head, func(t *testing.T) {
			m, err := New(tinyConfig(head), 3)
			if err != nil {
				t.Fatal(err)
			}
			// Larger embeddings so gradients are well above float32 noise.
			for i := range m.Emb.Weight.Value.Data {
				m.Emb.Weight.Value.Data[i] *= 10
			}
			exs := tinyExamples()
			b := m.newBatch(wordTok{m.Cfg.Vocab}, exs)
			logits, ec, hc := m.forward(b)
			_, _, bce := nn.SigmoidBCE(logits, b.labels)
			dl, ds, dr := m.headBackward(hc, bce.Backward(1))
			dv := nn.NewTensor(len(b.seqs), m.VecDim())
			scatter(dv, dl, b.left)
			scatter(dv, ds, b.sent)
			scatter(dv, dr, b.right)
			m.encodeBackward(ec, dv)

			r := rand.New(rand.NewSource(1))
			base := loss(m, exs)
			checked, kinks := 0, 0
			for _, p := range m.Params() {
				for trial := 0; trial < 6; trial++ {
					i := r.Intn(len(p.Value.Data))
					if p == m.Emb.Weight && i < m.Cfg.EmbedDim {
						continue // padding row
					}
					const eps = 1e-3
					orig := p.Value.Data[i]
					p.Value.Data[i] = orig + eps
					up := loss(m, exs)
					p.Value.Data[i] = orig - eps
					down := loss(m, exs)
					p.Value.Data[i] = orig
					// A ReLU or |x| kink inside [-eps, eps] makes the two
					// one-sided slopes disagree: no derivative to compare.
					fwd, bwd := (up-base)/eps, (base-down)/eps
					if math.Abs(fwd-bwd) > 1e-3+0.1*math.Max(math.Abs(fwd), math.Abs(bwd)) {
						kinks++
						continue
					}
					num := (up - down) / (2 * eps)
					got := float64(p.Grad.Data[i])
					if math.Abs(num-got) > 2e-3+0.05*math.Abs(num) {
						t.Errorf("%s[%d]: analytic %.6f, numeric %.6f", p.Name, i, got, num)
					}
					checked++
				}
			}
			if checked < 20 || kinks > checked/5 {
				t.Fatalf("%d gradient entries checked, %d skipped at kinks", checked, kinks)
			}
		})
	}
}

// TestLinearHeadIsSeparable shows why the head needs interaction terms: with
// a linear head, the difference between two sentences' logits is the same
// in every context, so contexts rank identically for every sentence.
func TestLinearHeadIsSeparable(t *testing.T) {
	spread := func(head string) float64 {
		m, _ := New(Config{Vocab: 50, EmbedDim: 8, Hidden: 6, HeadHidden: 8, Head: head, MaxTokens: 8, Window: 2}, 5)
		tok := wordTok{50}
		vec := m.Encode([][]int32{tok.Encode("a b c"), tok.Encode("x y"), tok.Encode("q r s t"), tok.Encode("u v")})
		s1, s2 := vec[0], vec[1]
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, ctx := range [][2][]float32{{vec[2], vec[3]}, {vec[3], vec[2]}, {vec[0], vec[3]}, {vec[1], vec[1]}} {
			a := m.Logits(ctx[0], s1, ctx[1])[0]
			b := m.Logits(ctx[0], s2, ctx[1])[0]
			lo, hi = math.Min(lo, float64(a-b)), math.Max(hi, float64(a-b))
		}
		return hi - lo
	}
	if s := spread(HeadLinear); s > 1e-5 {
		t.Fatalf("linear head: logit difference varies by %g across contexts; expected separable", s)
	}
	if s := spread(HeadInteraction); s < 1e-4 {
		t.Fatalf("interaction head: logit difference constant (%g) across contexts", s)
	}
}

// topicDocs makes documents whose sentences share a topic word, so that
// coherence is learnable: a sentence fits a context of its own topic.
func topicDocs(n int, r *rand.Rand) []examples.Doc {
	var docs []examples.Doc
	for i := 0; i < n; i++ {
		topic := fmt.Sprintf("topic%d", i%12)
		d := examples.Doc{ID: fmt.Sprint(i)}
		for j := 0; j < 6; j++ {
			words := []string{topic}
			for k := 0; k < 3; k++ {
				words = append(words, fmt.Sprintf("w%d", r.Intn(30)))
			}
			r.Shuffle(len(words), func(a, b int) { words[a], words[b] = words[b], words[a] })
			d.Sentences = append(d.Sentences, strings.Join(words, " "))
		}
		docs = append(docs, d)
	}
	return docs
}

func TestLearnsCoherence(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	train := examples.CoherenceExamples(topicDocs(300, r), examples.Config{Seed: 1})
	test := examples.CoherenceExamples(topicDocs(60, r), examples.Config{Seed: 2})
	// Same-document negatives share the topic: only random ones are
	// learnable here.
	var trainR, testR []examples.Coherence
	for _, set := range []struct {
		in  []examples.Coherence
		out *[]examples.Coherence
	}{{train, &trainR}, {test, &testR}} {
		for _, e := range set.in {
			if e.Kind != examples.SameDoc {
				*set.out = append(*set.out, e)
			}
		}
	}
	m, err := New(Config{Vocab: 64, EmbedDim: 16, Hidden: 16, HeadHidden: 16, Head: HeadInteraction, MaxTokens: 8, Window: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	tok := wordTok{64}
	tr := NewTrainer(m, tok, 0.01)
	before := m.Evaluate(tok, testR, 64)
	for epoch := 0; epoch < 4; epoch++ {
		for i := 0; i+32 <= len(trainR); i += 32 {
			tr.Step(trainR[i : i+32])
		}
	}
	after := m.Evaluate(tok, testR, 64)
	if after.AUCRandom < 0.9 || after.Loss >= before.Loss {
		t.Fatalf("did not learn: before %+v, after %+v", before, after)
	}
}

func TestAccAUC(t *testing.T) {
	scores := []float32{0.9, 0.8, -0.1, 0.3, -0.5, -0.7}
	labels := []float32{1, 1, 1, 0, 0, 0}
	kinds := []examples.NegKind{0, 0, 0, examples.SameDoc, examples.Random, examples.Random}
	acc, auc := accAUC(scores, labels, kinds, nil)
	// Correct: 0.9, 0.8, -0.5, -0.7 -> 4/6. Pairs: 9 pos×neg, one wrong (-0.1 < 0.3).
	if math.Abs(acc-4.0/6) > 1e-9 || math.Abs(auc-8.0/9) > 1e-9 {
		t.Fatalf("acc %v auc %v", acc, auc)
	}
	rnd := examples.Random
	if _, auc := accAUC(scores, labels, kinds, &rnd); auc != 1 {
		t.Fatalf("random-only auc %v", auc)
	}
}

func TestSaveLoad(t *testing.T) {
	m, _ := New(tinyConfig(HeadInteraction), 9)
	dir := t.TempDir()
	if err := m.Save(dir, "tokfp", map[string]any{"steps": 1}); err != nil {
		t.Fatal(err)
	}
	m2, saved, err := Load(dir, "tokfp")
	if err != nil {
		t.Fatal(err)
	}
	if saved.Config != m.Cfg || loss(m2, tinyExamples()) != loss(m, tinyExamples()) {
		t.Fatal("loaded model differs")
	}
	if _, _, err := Load(dir, "other"); err == nil || !strings.Contains(err.Error(), "tokenizer") {
		t.Fatalf("tokenizer mismatch: %v", err)
	}
	w := dir + "/" + WeightsFile
	data, _ := os.ReadFile(w)
	os.WriteFile(w, data[:len(data)-10], 0o644)
	if _, _, err := Load(dir, "tokfp"); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("truncated weights: %v", err)
	}
	os.WriteFile(dir+"/"+ConfigFile, []byte("{"), 0o644)
	if _, _, err := Load(dir, "tokfp"); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("corrupt config: %v", err)
	}
}

func TestClone(t *testing.T) {
	m, err := New(tinyConfig(HeadInteraction), 3)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Clone()
	for i, p := range c.Params() {
		q := m.Params()[i]
		if p.Name != q.Name || !slices.Equal(p.Value.Data, q.Value.Data) {
			t.Fatalf("%s: the clone differs", p.Name)
		}
	}
	c.Emb.Weight.Value.Data[5]++
	if c.Emb.Weight.Value.Data[5] == m.Emb.Weight.Value.Data[5] {
		t.Fatal("the clone shares memory with the model")
	}
}

// headInputs returns n random (l, s, r) rows of width d, with exact zeros
// of both signs and equal entries planted so that |l-s| and |s-r| meet 0
// and -0.
func headInputs(r *rand.Rand, n, d int) (l, s, rr []float32) {
	vec := func() []float32 {
		v := make([]float32, n*d)
		for i := range v {
			v[i] = r.Float32() - 0.5
		}
		return v
	}
	l, s, rr = vec(), vec(), vec()
	negZero := float32(math.Copysign(0, -1))
	for k := 0; k < n*d; k += 7 {
		switch k % 4 {
		case 0:
			l[k], s[k] = negZero, 0
		case 1:
			s[k], rr[k] = negZero, 0
		case 2:
			l[k] = s[k]
		case 3:
			rr[k] = s[k]
		}
	}
	return l, s, rr
}

// TestLogitsIsHeadForward checks that Logits, the inference path, gives
// the logits of headForward, the training forward pass, under the "go"
// backend bit for bit, with both heads, small and default widths and
// several thread counts; and the same bits under every backend of the
// build (it runs on the pure-Go kernel), which puts it within float
// rounding of headForward under OpenBLAS: the largest difference is logged.
func TestLogitsIsHeadForward(t *testing.T) {
	backends := []string{"go"}
	if nn.CheckBackend("openblas") == nil {
		backends = []string{"openblas", "go"}
	}
	defer nn.SetBackend(backends[0])
	defer nn.SetThreads(nn.Threads())
	for _, backend := range backends {
		for _, head := range []string{HeadInteraction, HeadLinear} {
			var maxDiff, maxAbs float64
			for _, cfg := range []Config{tinyConfig(head), DefaultConfig(100)} {
				cfg.Head = head
				m, err := New(cfg, 4)
				if err != nil {
					t.Fatal(err)
				}
				r := rand.New(rand.NewSource(5))
				for _, p := range m.Params() {
					if strings.HasSuffix(p.Name, ".bias") {
						for i := range p.Value.Data {
							p.Value.Data[i] = r.Float32() - 0.5
						}
					}
				}
				for _, threads := range []int{1, 2} {
					nn.SetThreads(threads)
					for _, n := range []int{0, 1, 7, 33, 300} {
						d := m.VecDim()
						l, s, rr := headInputs(r, n, d)
						forward := func(backend string) []float32 {
							if err := nn.SetBackend(backend); err != nil {
								t.Fatal(err)
							}
							out, _ := m.headForward(nn.FromData(l, n, d), nn.FromData(s, n, d), nn.FromData(rr, n, d))
							return out.Data
						}
						want, ref := forward("go"), forward(backend)
						got := m.Logits(l, s, rr)
						for i, w := range want {
							diff := math.Abs(float64(got[i] - ref[i]))
							maxDiff, maxAbs = math.Max(maxDiff, diff), math.Max(maxAbs, math.Abs(float64(w)))
							if math.Float32bits(got[i]) != math.Float32bits(w) || diff > 1e-5*(1+math.Abs(float64(ref[i]))) {
								t.Fatalf("%s %s d=%d threads %d n=%d: logit %d = %v, headForward %v (%v under go)", backend, head, d, threads, n, i, got[i], ref[i], w)
							}
						}
					}
				}
			}
			t.Logf("%s (%s): largest difference from headForward %g, on logits up to %.3g in size", head, nn.Backend(), maxDiff, maxAbs)
		}
	}
}

// TestLogitsConcurrent scores from several goroutines at once, on one
// model, and checks every result against a sequential run (and, under
// -race, that the shared scratch memory is not shared).
func TestLogitsConcurrent(t *testing.T) {
	for _, head := range []string{HeadInteraction, HeadLinear} {
		cfg := DefaultConfig(100)
		cfg.Head = head
		m, err := New(cfg, 6)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewSource(7))
		type job struct{ l, s, r, want []float32 }
		jobs := make([]job, 6)
		for i := range jobs {
			l, s, rr := headInputs(r, 20+17*i, m.VecDim())
			jobs[i] = job{l, s, rr, m.Logits(l, s, rr)}
		}
		errs := make(chan string, len(jobs))
		var wg sync.WaitGroup
		for _, j := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for rep := 0; rep < 3; rep++ {
					if got := m.Logits(j.l, j.s, j.r); !slices.Equal(got, j.want) {
						errs <- fmt.Sprintf("%s: %d pairs: concurrent logits differ from sequential ones", head, len(j.want))
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	}
}

// TestEncodeReusesBuffers checks that Encode, which hands its buffers back
// for reuse, gives the vectors of EncodeTrain, and the same vectors
// whatever ran before it.
func TestEncodeReusesBuffers(t *testing.T) {
	m, err := New(DefaultConfig(50), 3)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(2))
	batch := func(n, maxLen int) [][]int32 {
		out := make([][]int32, n)
		for i := range out {
			out[i] = make([]int32, 1+r.Intn(maxLen))
			for j := range out[i] {
				out[i][j] = int32(1 + r.Intn(49))
			}
		}
		return out
	}
	a := batch(20, 30)
	first := m.Encode(a)
	// Encode runs the encoder's inference path: the vectors of the
	// training path, bit for bit.
	v, c := m.EncodeTrain(a)
	for i := range first {
		row := v.Data[i*m.VecDim() : (i+1)*m.VecDim()]
		for j := range row {
			if math.Float32bits(row[j]) != math.Float32bits(first[i][j]) {
				t.Fatalf("sentence %d: Encode [%d] = %v, EncodeTrain %v", i, j, first[i][j], row[j])
			}
		}
	}
	c.release()
	for range 3 {
		m.Encode(batch(40, 60)) // larger buffers, other contents
		again := m.Encode(a)
		for i := range first {
			if !slices.Equal(first[i], again[i]) {
				t.Fatalf("sentence %d: vector changed after other batches", i)
			}
		}
	}
}

// Logits packs the hidden layer's weights once; a training step must drop
// that copy, so that training after Logits follows the same weights as
// training without it, and Logits after a step uses the new weights
// (those a fresh clone of the model, never packed, uses).
func TestLogitsFollowTraining(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	train := examples.CoherenceExamples(topicDocs(40, r), examples.Config{Seed: 1})
	m, err := New(Config{Vocab: 64, EmbedDim: 16, Hidden: 16, HeadHidden: 16, Head: HeadInteraction, MaxTokens: 8, Window: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref := m.Clone()
	const n = 7
	d := m.VecDim()
	vec := func() []float32 {
		v := make([]float32, n*d)
		for i := range v {
			v[i] = r.Float32() - 0.5
		}
		return v
	}
	l, s, rr := vec(), vec(), vec()
	tr, trRef := NewTrainer(m, wordTok{64}, 0.05), NewTrainer(ref, wordTok{64}, 0.05)
	for step := range 3 {
		before := m.Logits(l, s, rr)
		for _, batch := range [][]examples.Coherence{train[:32], train[32:64]} {
			tr.Step(batch)
			trRef.Step(batch)
		}
		for i, p := range m.Params() {
			if !reflect.DeepEqual(p.Value.Data, ref.Params()[i].Value.Data) {
				t.Fatalf("step %d: %s differs from training without Logits", step, p.Name)
			}
		}
		got, want := m.Logits(l, s, rr), m.Clone().Logits(l, s, rr)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d: Logits %v after training, a fresh copy of the model %v", step, got, want)
		}
		if reflect.DeepEqual(got, before) {
			t.Fatalf("step %d: the steps changed no logit", step)
		}
	}
}
