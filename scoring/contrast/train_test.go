package contrast

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/scoring/examples"
)

// toyDocs is a small corpus whose documents each keep to one topic.
func toyDocs(n int) []examples.Doc {
	topics := [][]string{
		{"ship", "sea", "sail", "harbour", "wind", "crew"},
		{"court", "judge", "law", "trial", "jury", "verdict"},
		{"kernel", "module", "driver", "memory", "boot", "config"},
		{"bread", "flour", "oven", "bake", "dough", "yeast"},
	}
	var docs []examples.Doc
	for i := range n {
		t := topics[i%len(topics)]
		d := examples.Doc{ID: fmt.Sprintf("d%d", i)}
		for j := range 8 {
			d.Sentences = append(d.Sentences, fmt.Sprintf("the %s and the %s by the %s", t[(i+j)%6], t[(i+2*j+1)%6], t[(3*i+j+2)%6]))
		}
		docs = append(docs, d)
	}
	return docs
}

func toyConfig() Config {
	c := DefaultConfig()
	c.Dim, c.Vocab, c.Buckets, c.MinCount, c.Batch = 8, 50, 4, 1, 6
	c.Temperature = 0.5
	return c
}

// TestGradient compares the analytic gradient of the batch loss with
// central finite differences, for both tables, both loss directions.
func TestGradient(t *testing.T) {
	for _, sym := range []bool{false, true} {
		t.Run(fmt.Sprintf("symmetric=%v", sym), func(t *testing.T) {
			cfg := toyConfig()
			cfg.Symmetric = sym
			docs := toyDocs(4)
			v, err := BuildVocab(cfg, docs)
			if err != nil {
				t.Fatal(err)
			}
			m, err := newModel(cfg, v)
			if err != nil {
				t.Fatal(err)
			}
			b, slots := tokenize(v, docs, cfg.Window)
			tr := newTrainer(m, b, slots, TrainOptions{})
			batch := []int{0, 3, 7, 11, 15, 20}
			tr.step = 0
			tr.grad(batch)
			loss := func() float64 {
				saveS, saveC := tr.gS, tr.gC
				tr.gS, tr.gC = make([]float32, len(saveS)), make([]float32, len(saveC))
				tr.step++
				l := tr.grad(batch)
				tr.gS, tr.gC = saveS, saveC
				return l
			}
			const h = 1e-2
			checked := 0
			for _, tab := range []struct {
				name string
				w, g []float32
			}{{"sent", m.Sent, tr.gS}, {"ctx", m.Ctx, tr.gC}} {
				for i := range tab.w {
					if tab.g[i] == 0 && i%7 != 0 {
						continue
					}
					old := tab.w[i]
					tab.w[i] = old + h
					lp := loss()
					tab.w[i] = old - h
					lm := loss()
					tab.w[i] = old
					num := (lp - lm) / (2 * h)
					an := float64(tab.g[i])
					if math.Abs(num-an) > 2e-3+2e-2*math.Abs(num) {
						t.Errorf("%s[%d]: analytic %g, numeric %g", tab.name, i, an, num)
					}
					checked++
				}
			}
			if checked < 50 {
				t.Fatalf("only %d entries checked", checked)
			}
		})
	}
}

// TestTrainLearnsTopics trains on the toy corpus and checks that a
// sentence then prefers contexts of its own topic over the others'.
func TestTrainLearnsTopics(t *testing.T) {
	cfg := toyConfig()
	cfg.Dim, cfg.Batch, cfg.Epochs, cfg.LR, cfg.WarmupSteps = 16, 16, 40, 0.05, 5
	docs := toyDocs(40)
	m, _, err := Train(cfg, docs, TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := m.SentenceVec("the sea and the wind by the crew")
	same := m.Score(f, m.ContextVec([]string{"the sail and the harbour by the ship"}, []string{"the crew and the sea"}))
	other := m.Score(f, m.ContextVec([]string{"the judge and the jury by the law"}, []string{"the trial and the verdict"}))
	if !(same > other+1) {
		t.Fatalf("own-topic context scores %.3f, other topic %.3f", same, other)
	}
	if n := m.VocabWords(); n == 0 || n != len(m.Vocab.Words) || n+m.Vocab.Buckets != m.Vocab.Rows() {
		t.Fatalf("VocabWords %d, vocabulary %d words + %d buckets", n, len(m.Vocab.Words), m.Vocab.Buckets)
	}
	// Deterministic: the same inputs give the same tables, whatever the
	// number of threads.
	m2, _, err := Train(cfg, docs, TrainOptions{Threads: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Sent {
		if m.Sent[i] != m2.Sent[i] || m.Ctx[i] != m2.Ctx[i] {
			t.Fatalf("weights differ at %d between 1 and 3 threads", i)
		}
	}
}

// TestSaveLoad round-trips a model through ctx.json and ctx.safetensors,
// and refuses a corrupt weights file.
func TestSaveLoad(t *testing.T) {
	cfg := toyConfig()
	cfg.Epochs, cfg.Stem = 2, true
	var evals int
	m, curve, err := Train(cfg, toyDocs(8), TrainOptions{EvalEvery: 3, Eval: func(*Model) any { evals++; return evals }})
	if err != nil {
		t.Fatal(err)
	}
	if len(curve) < 3 || curve[0].Step != 0 || curve[len(curve)-1].HeldOut != evals || evals != len(curve) {
		t.Fatalf("curve %+v after %d evaluations", curve, evals)
	}
	dir := t.TempDir()
	if err := m.Save(dir, map[string]any{"note": "x"}); err != nil {
		t.Fatal(err)
	}
	got, saved, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Info["note"] != "x" || !got.Vocab.Stem || got.Cfg != m.Cfg {
		t.Fatalf("loaded %+v, info %v", got.Cfg, saved.Info)
	}
	s := "the sea and the wind by the crew"
	if a, b := m.SentenceVec(s), got.SentenceVec(s); Dot(a, b) < 0.99999 {
		t.Fatal("the loaded model encodes differently")
	}
	w := filepath.Join(dir, "ctx.safetensors")
	data, _ := os.ReadFile(w)
	data[len(data)-1] ^= 0x40
	os.WriteFile(w, data, 0o644)
	if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("corrupt weights: %v", err)
	}
	if _, _, err := Load(t.TempDir()); err == nil {
		t.Fatal("an empty directory loaded")
	}
}

func TestVocab(t *testing.T) {
	c := NewVocabCounter(false)
	for _, s := range []string{"the cat sat", "the dog sat", "the cat ran", "a bird"} {
		c.Add(s)
	}
	v, err := c.Build(2, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	// the (3 sentences), then cat and sat (2 each, ties by word): size 2.
	if len(v.Words) != 2 || v.Words[0] != "the" || v.Words[1] != "cat" || v.Rows() != 6 {
		t.Fatalf("words %v rows %d", v.Words, v.Rows())
	}
	if v.Row("the") != 0 || v.Row("cat") != 1 || v.Row("zebra") < 2 || v.Row("zebra") >= 6 || v.Row("zebra") != v.Row("zebra") {
		t.Fatal("rows")
	}
	// IDF: log((n+1)/(df+1)); "the" is in 3 of 4 sentences.
	if w := v.Weights[0]; math.Abs(float64(w)-math.Log(5.0/4)) > 1e-6 {
		t.Fatalf("weight of the: %v", w)
	}
	if v.Weights[5] != float32(math.Log(5.0/2)) {
		t.Fatalf("bucket weight %v", v.Weights[5])
	}
	rows, ws := v.Bag("The cat, the CAT!", nil, nil)
	if len(rows) != 4 || rows[0] != 0 || rows[1] != 1 || len(ws) != 4 {
		t.Fatalf("bag %v %v", rows, ws)
	}
	if _, err := c.Build(2, 0, 1); err == nil {
		t.Fatal("no buckets accepted")
	}
	st := NewVocabCounter(true)
	st.Add("running dogs")
	sv, _ := st.Build(10, 1, 1)
	if r, _ := sv.Bag("dog runs", nil, nil); len(r) != 2 || r[0] == r[1] || r[0] != sv.Row("dog") {
		t.Fatalf("stemmed bag %v of %v", r, sv.Words)
	}
}

func TestAccessors(t *testing.T) {
	c := NewVocabCounter(false)
	for _, s := range []string{"the cat sat", "the dog sat"} {
		c.Add(s)
	}
	v, err := c.Build(3, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := toyConfig()
	m, err := newModel(cfg, v)
	if err != nil {
		t.Fatal(err)
	}
	table, dim := m.SentenceEmbeddings()
	if dim != cfg.Dim || len(table) != v.Rows()*dim || &table[0] != &m.Sent[0] {
		t.Fatalf("SentenceEmbeddings: %d values at width %d, want the sentence table (%d rows of %d)", len(table), dim, v.Rows(), cfg.Dim)
	}
	if m.Vocabulary() != v {
		t.Fatal("Vocabulary is not the model's vocabulary")
	}
	// WordEmbeddings: a new table, each row the unit sum of the two
	// tables' rows, equal to the alignment's word vectors on the words.
	words, wd := m.WordEmbeddings()
	if wd != cfg.Dim || len(words) != len(m.Sent) || &words[0] == &m.Sent[0] {
		t.Fatalf("WordEmbeddings: %d values at width %d", len(words), wd)
	}
	m.Sent[0] = 0.5 // zero the sum of one row: it must stay zero
	m.Ctx[0] = -0.5
	for k := 1; k < cfg.Dim; k++ {
		m.Sent[k], m.Ctx[k] = 0.25, -0.25
	}
	words, _ = m.WordEmbeddings()
	align := m.wordTable()
	for r := 0; r < v.Rows(); r++ {
		row := words[r*wd : (r+1)*wd]
		var ss, want float64
		for k, x := range row {
			ss += float64(x) * float64(x)
			s := float64(m.Sent[r*wd+k] + m.Ctx[r*wd+k])
			want += s * float64(x)
		}
		if r == 0 {
			if ss != 0 {
				t.Fatalf("row 0 sums to zero but its word vector has norm² %v", ss)
			}
			continue
		}
		if math.Abs(ss-1) > 1e-5 || want <= 0 {
			t.Fatalf("row %d: norm² %v, dot with the tables' sum %v", r, ss, want)
		}
		if r < len(v.Words) && r > 0 {
			for k := range row {
				if math.Abs(float64(row[k]-align[r*wd+k])) > 1e-6 {
					t.Fatalf("row %d differs from the alignment's word vector", r)
				}
			}
		}
	}
}

// With DocGroup, an epoch's order is a permutation of the slots in which
// each run of up to DocGroup slots comes from one document, 2*Window+1
// slots apart; without it, a plain permutation.
func TestSlotOrderGroupsDocuments(t *testing.T) {
	// Three documents of 30, 7 and 12 slots.
	s := &slotSet{docs: []int32{0, 30, 37, 49}}
	s.sent = make([]int32, 49)
	docOf := func(i int) int {
		for d := 0; d+1 < len(s.docs); d++ {
			if i < int(s.docs[d+1]) {
				return d
			}
		}
		return -1
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const group, window = 4, 2
	o := s.order(rng, group, window)
	seen := make([]bool, 49)
	for _, i := range o {
		if seen[i] {
			t.Fatalf("slot %d twice in %v", i, o)
		}
		seen[i] = true
	}
	if len(o) != 49 {
		t.Fatalf("%d slots in the order, want 49", len(o))
	}
	// Cut the order into its groups: a group continues while the next slot
	// is of the same document and 5 slots on.
	runs, longest := 0, 0
	for i := 0; i < len(o); {
		j := i + 1
		for j < len(o) && docOf(o[j]) == docOf(o[i]) && o[j] == o[j-1]+2*window+1 && j-i < group {
			j++
		}
		runs++
		longest = max(longest, j-i)
		i = j
	}
	// 30 slots in 5 strides of 6 (groups 4+2), 7 in 5 (1,1,1,1,1 and one of 2:
	// offsets 0 and 1 hold 2), 12 in 5 strides of 3 or 2: at most 10+7+5
	// groups, and the longest is a full group.
	if longest != group || runs > 22 {
		t.Fatalf("order %v: %d runs, longest %d", o, runs, longest)
	}
	if p := s.order(rand.New(rand.NewPCG(1, 2)), 0, window); !slices.Equal(p, rand.New(rand.NewPCG(1, 2)).Perm(49)) {
		t.Fatalf("without DocGroup the order is not rng.Perm: %v", p)
	}
}
