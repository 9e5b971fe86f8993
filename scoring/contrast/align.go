package contrast

import (
	"sync"
)

// AlignSimilarity compares two sentences word by word: each token of one
// sentence is matched with the most similar token of the other, and the
// IDF-weighted means of those best matches, taken both ways, are combined
// as an F1 score (their harmonic mean). Two tokens are similar by the
// cosine of their word vectors, the sum of the sentence and context
// tables' rows, clipped at zero; the same token is 1, and a token without a
// row of its own (one sharing a hashed bucket) matches only itself.
//
// Unlike f(a)·f(b), which sums each sentence into one vector before
// comparing, alignment keeps every word: "a man plays a guitar" and "a
// woman plays a violin" are half-aligned word for word, whereas their sums
// may point anywhere. It is the most accurate of the similarities measured
// on STS-B train and SICK-R train (bench/results.txt).
func (m *Model) AlignSimilarity(a, b string) float64 {
	ta, tb := m.alignTokens(a), m.alignTokens(b)
	if len(ta.rows) == 0 || len(tb.rows) == 0 {
		return 0
	}
	// The best match of each token of a in b (bestA) and of b in a
	// (bestB), from one pass over the token pairs.
	table := m.wordTable()
	d := m.Cfg.Dim
	words := int32(len(m.Vocab.Words))
	bestA := make([]float32, len(ta.rows))
	bestB := make([]float32, len(tb.rows))
	for i, x := range ta.words {
		rx := ta.rows[i]
		for j, y := range tb.words {
			var v float32
			switch ry := tb.rows[j]; {
			case x == y:
				v = 1
			case rx >= words || ry >= words:
				continue // a hashed bucket: only the same token matches
			default:
				v = Dot(table[int(rx)*d:int(rx)*d+d], table[int(ry)*d:int(ry)*d+d])
			}
			bestA[i] = max(bestA[i], v)
			bestB[j] = max(bestB[j], v)
		}
	}
	p, q := weightedMean(bestA, ta.w), weightedMean(bestB, tb.w)
	if p+q <= 0 {
		return 0
	}
	return 2 * p * q / (p + q)
}

// alignToks are a sentence's tokens with their rows and IDF weights.
type alignToks struct {
	words []string
	rows  []int32
	w     []float32
}

func (m *Model) alignTokens(s string) alignToks {
	var t alignToks
	for _, x := range m.Vocab.Tokens(s) {
		r := m.Vocab.Row(x)
		t.words = append(t.words, x)
		t.rows = append(t.rows, r)
		t.w = append(t.w, m.Vocab.Weights[r])
	}
	return t
}

// weightedMean is Σ w_i x_i / Σ w_i, 0 when the weights sum to 0.
func weightedMean(x, w []float32) float64 {
	var num, den float64
	for i, v := range x {
		num += float64(w[i]) * float64(v)
		den += float64(w[i])
	}
	if den == 0 {
		return 0
	}
	return num / den
}

// wordTable returns the unit word vectors of the vocabulary's words (the
// normalised sums of the two tables' rows), built on first use.
func (m *Model) wordTable() []float32 {
	m.wordOnce.Do(func() { m.words = m.unitSums(len(m.Vocab.Words)) })
	return m.words
}

// unitSums returns a new table of the first rows rows of the sentence and
// context tables added, each row scaled to unit length (a zero row stays
// zero).
func (m *Model) unitSums(rows int) []float32 {
	d := m.Cfg.Dim
	t := make([]float32, rows*d)
	for i := range t {
		t[i] = m.Sent[i] + m.Ctx[i]
	}
	for r := range rows {
		Normalize(t[r*d : r*d+d])
	}
	return t
}

// wordState is the lazily built word table; a Model's zero value works.
type wordState struct {
	wordOnce sync.Once
	words    []float32
}
