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
// model's subword embeddings.
func meanWordVectors(m *hv.Models, t *sts.TFIDF, a, b string) float64 {
	emb := m.Disc.Emb.Weight.Value
	return hv.Similarity(t.MeanWordVector(emb.Data, emb.Cols(), m.Tok.Encode, a),
		t.MeanWordVector(emb.Data, emb.Cols(), m.Tok.Encode, b), "cosine")
}
