package contrast

import (
	"math"
	"testing"
)

// alignModel is a model of width 2 over the words cat, kitten, car and sat,
// with one bucket for every other word, and hand-set tables: cat and kitten
// at cosine 0.8, car opposite cat, sat orthogonal to both.
func alignModel(t *testing.T) *Model {
	t.Helper()
	c := NewVocabCounter(false)
	for _, s := range []string{"cat sat", "kitten sat", "car sat", "cat car kitten"} {
		c.Add(s)
	}
	v, err := c.Build(4, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := toyConfig()
	cfg.Dim = 2
	m, err := newModel(cfg, v)
	if err != nil {
		t.Fatal(err)
	}
	vec := map[string][2]float32{"cat": {1, 0}, "kitten": {0.8, 0.6}, "car": {-1, 0}, "sat": {0, 1}}
	for w, x := range vec {
		r := v.Row(w)
		if int(r) >= len(v.Words) {
			t.Fatalf("%s has no row of its own", w)
		}
		// The word vector is the sum of the two tables' rows.
		copy(m.Sent[2*r:2*r+2], []float32{x[0] / 2, x[1] / 2})
		copy(m.Ctx[2*r:2*r+2], []float32{x[0] / 2, x[1] / 2})
	}
	return m
}

func TestAlignSimilarity(t *testing.T) {
	m := alignModel(t)
	w := func(s string) float64 { return float64(m.Vocab.Weights[m.Vocab.Row(s)]) }
	f1 := func(p, q float64) float64 { return 2 * p * q / (p + q) }
	// "cat sat" and "kitten sat": each side matches sat exactly and its
	// other word at 0.8.
	p := (0.8*w("cat") + w("sat")) / (w("cat") + w("sat"))
	q := (0.8*w("kitten") + w("sat")) / (w("kitten") + w("sat"))
	for _, c := range []struct {
		a, b string
		want float64
	}{
		{"cat sat", "cat sat", 1},
		{"zebra sat", "zebra sat", 1},
		{"cat sat", "kitten sat", f1(p, q)},
		{"kitten sat", "cat sat", f1(p, q)},
		// Opposite words count as no match, not as a penalty.
		{"cat", "car", 0},
		// Two words sharing the only bucket are not the same word.
		{"zebra", "quokka", 0},
		{"cat", "", 0},
		{"", "", 0},
	} {
		if got := m.AlignSimilarity(c.a, c.b); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("AlignSimilarity(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	// A sentence with an extra unmatched word is less similar than one
	// without it.
	if a, b := m.AlignSimilarity("cat sat", "cat sat zebra"), m.AlignSimilarity("cat sat", "cat sat"); !(a < b) {
		t.Errorf("an unmatched word does not lower the similarity: %v vs %v", a, b)
	}
}

// BenchmarkAlignSimilarity times one pair of 12- and 15-word sentences at
// the default width (256), all words in the vocabulary.
func BenchmarkAlignSimilarity(b *testing.B) {
	c := NewVocabCounter(true)
	a := "the old harbour master watched the ships sail out past the grey stone pier"
	s := "a man stands on the pier and looks at boats leaving the harbour in the rain"
	c.Add(a)
	c.Add(s)
	v, err := c.Build(100, 16, 1)
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Vocab, cfg.Buckets, cfg.Stem = 100, 16, true
	m, err := newModel(cfg, v)
	if err != nil {
		b.Fatal(err)
	}
	m.AlignSimilarity(a, s) // builds the word table
	b.ResetTimer()
	for b.Loop() {
		m.AlignSimilarity(a, s)
	}
}
