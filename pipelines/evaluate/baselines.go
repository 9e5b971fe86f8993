package main

import (
	"math"
	"strings"
	"unicode"

	hv "github.com/ctxsim/ctxsim/scoring/harvest"
)

// tfidf is the unigram TF-IDF baseline: IDF = log(N / (1 + df)) with df
// counted over the corpus chunks.
type tfidf struct {
	df map[string]int
	n  float64
}

func newTFIDF(st *hv.Store) *tfidf {
	t := &tfidf{df: map[string]int{}, n: float64(st.Len())}
	sentWords := make([][]string, st.Sentences())
	for k := range sentWords {
		sentWords[k] = words(st.Text(int32(k)))
	}
	seen := map[string]bool{}
	for i := range st.Len() {
		clear(seen)
		for _, k := range st.ChunkSentences(st.ChunkIDAt(i)) {
			for _, w := range sentWords[k] {
				if !seen[w] {
					seen[w] = true
					t.df[w]++
				}
			}
		}
	}
	return t
}

func (t *tfidf) idf(w string) float64 { return math.Log(t.n / float64(1+t.df[w])) }

func (t *tfidf) vec(s string) map[string]float64 {
	v := map[string]float64{}
	for _, w := range words(s) {
		v[w] += t.idf(w)
	}
	return v
}

func (t *tfidf) cosine(a, b string) float64 {
	va, vb := t.vec(a), t.vec(b)
	var ab, aa, bb float64
	for w, x := range va {
		ab += x * vb[w]
		aa += x * x
	}
	for _, y := range vb {
		bb += y * y
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// meanWordVectors is the cosine of the IDF-weighted means of the coherence
// model's subword embeddings; a subword is weighted by the IDF of the
// word it came from.
func meanWordVectors(m *hv.Models, t *tfidf, a, b string) float64 {
	emb := m.Disc.Emb.Weight.Value
	d := emb.Cols()
	mean := func(s string) []float64 {
		v := make([]float64, d)
		for _, w := range words(s) {
			wt := max(t.idf(w), 0)
			for _, id := range m.Tok.Encode(w) {
				row := emb.Data[int(id)*d : int(id+1)*d]
				for j, x := range row {
					v[j] += wt * float64(x)
				}
			}
		}
		return v
	}
	return hv.Similarity(mean(a), mean(b), "cosine")
}

// words splits s into lowercased runs of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
