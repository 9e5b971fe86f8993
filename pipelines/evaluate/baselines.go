package main

import (
	"github.com/ctxsim/ctxsim/pipelines/internal/sts"
	hv "github.com/ctxsim/ctxsim/scoring/harvest"
)

// newTFIDF counts the unigram document frequencies over the corpus chunks,
// splitting each stored sentence into words once.
func newTFIDF(st *hv.Store) *sts.TFIDF {
	t := &sts.TFIDF{DF: map[string]int{}, N: float64(st.Len())}
	sentWords := make([][]string, st.Sentences())
	for k := range sentWords {
		sentWords[k] = sts.Words(st.Text(int32(k)))
	}
	seen := map[string]bool{}
	for i := range st.Len() {
		clear(seen)
		for _, k := range st.ChunkSentences(st.ChunkIDAt(i)) {
			for _, w := range sentWords[k] {
				if !seen[w] {
					seen[w] = true
					t.DF[w]++
				}
			}
		}
	}
	return t
}

// meanWordVectors is the cosine of the IDF-weighted means of the coherence
// model's subword embeddings; a subword is weighted by the IDF of the
// word it came from.
func meanWordVectors(m *hv.Models, t *sts.TFIDF, a, b string) float64 {
	emb := m.Disc.Emb.Weight.Value
	d := emb.Cols()
	mean := func(s string) []float64 {
		v := make([]float64, d)
		for _, w := range sts.Words(s) {
			wt := max(t.IDF(w), 0)
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
