package method

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// A VectorScorer caches one vector per stored sentence (the coherence
// model's BiLSTM vector, the contrastive model's context-table sum) and
// scores contexts from those vectors. The vectors of a whole corpus can be
// computed once, stored (bin/encode), and loaded into every worker instead
// of being computed again in each one.
type VectorScorer interface {
	Scorer
	// VectorKey names the vectors: the term and a hash of everything they
	// depend on (the model's checksum, bundle.Saved.ModelSHA256, which
	// covers its config, vocabulary and weights, and, for subword models,
	// the tokenizer), so vectors stored under one key suit any model
	// directory holding the same model, and no other. It is empty when the
	// model was not loaded from files (it has no checksum).
	VectorKey() string
	// VectorDim is the length of each vector.
	VectorDim() int
	// SentenceVectors computes the vectors of texts exactly as the scorer
	// does for the sentences it caches, whatever the batch.
	SentenceVectors(texts []string) [][]float32
	// SetVectors installs vs[i] as the vector of stored sentence ks[i]. The
	// scorer keeps the slices; callers must not change them.
	SetVectors(ks []int32, vs [][]float32)
}

// vectorKey hashes the identity parts of a model's sentence vectors into
// the key "<term>-<32 hex digits>".
func vectorKey(term string, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%s\n", p)
	}
	return term + "-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// VectorScorers returns the engine's scorers that cache per-sentence
// vectors under a key.
func (e *Engine) VectorScorers() []VectorScorer {
	var out []VectorScorer
	for _, s := range e.scorers {
		if v, ok := s.(VectorScorer); ok && v.VectorKey() != "" {
			out = append(out, v)
		}
	}
	return out
}

// VectorScorers returns the vector scorers of the loaded models (those with
// a key: models loaded from files), apart from any corpus: to compute
// vectors, or to name the tables that hold them.
func (m *Models) VectorScorers() ([]VectorScorer, error) {
	e, err := m.Engine(NewStore())
	if err != nil {
		return nil, err
	}
	return e.VectorScorers(), nil
}

// SentenceIndex returns the store index of the sentence with the given ID.
func (st *Store) SentenceIndex(id string) (int32, bool) {
	k, ok := st.sentIdx[id]
	return k, ok
}

// VectorKey implements VectorScorer.
func (d *DiscScorer) VectorKey() string { return d.Key }

// VectorDim implements VectorScorer.
func (d *DiscScorer) VectorDim() int { return d.Model.VecDim() }

// discBatch is the batch in which the coherence model encodes sentences.
const discBatch = 256

// SentenceVectors implements VectorScorer: the BiLSTM's sentence vectors
// (a sentence's vector does not depend on its batch).
func (d *DiscScorer) SentenceVectors(texts []string) [][]float32 {
	out := make([][]float32, 0, len(texts))
	seqs := make([][]int32, 0, discBatch)
	for b := 0; b < len(texts); b += discBatch {
		seqs = seqs[:0]
		for _, s := range texts[b:min(b+discBatch, len(texts))] {
			seqs = append(seqs, d.tokens.Tok.Encode(s))
		}
		out = append(out, d.Model.Encode(seqs)...)
	}
	return out
}

// SetVectors implements VectorScorer.
func (d *DiscScorer) SetVectors(ks []int32, vs [][]float32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, k := range ks {
		d.vecs[k] = vs[i]
	}
}

// VectorKey implements VectorScorer.
func (c *CtxScorer) VectorKey() string { return c.Key }

// VectorDim implements VectorScorer.
func (c *CtxScorer) VectorDim() int { return c.Model.Dim() }

// SentenceVectors implements VectorScorer: the context-table sums.
func (c *CtxScorer) SentenceVectors(texts []string) [][]float32 {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = c.Model.ContextSum(s)
	}
	return out
}

// SetVectors implements VectorScorer.
func (c *CtxScorer) SetVectors(ks []int32, vs [][]float32) {
	for i, k := range ks {
		c.setSum(k, vs[i])
	}
}
