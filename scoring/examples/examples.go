// Package examples builds the training examples of the contextual models
// from a corpus's documents, deterministically under a seed:
//
//   - coherence examples for the discriminative model (Eq. 1): a context
//     (left and right sentences of a chunk slot) with its true centre
//     sentence (label 1), or with the centre replaced (label 0) by a
//     sentence of the same document (half of the negatives) or a random
//     corpus sentence (the other half);
//   - infilling examples for the generative model (Eq. 2): one of the three
//     segments (sentence, left context, right context) is the target and the
//     other two are the source.
//
// Documents are split into training and held-out sets by a hash of their
// IDs, so held-out metrics are measured on documents never trained on.
package examples

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand"
)

// Doc is a document as the models see it: its ID and its sentences in order.
type Doc struct {
	ID        string
	Sentences []string
}

// NegKind tells how a coherence example was made.
type NegKind uint8

const (
	// Positive: the true centre sentence.
	Positive NegKind = iota
	// SameDoc: the centre replaced by another sentence of the same document.
	SameDoc
	// Random: the centre replaced by a sentence of another document.
	Random
)

// String names the kind.
func (k NegKind) String() string {
	switch k {
	case Positive:
		return "positive"
	case SameDoc:
		return "same_doc"
	case Random:
		return "random"
	}
	return "unknown"
}

// Context is a slot of a chunk: up to Window sentences on each side.
type Context struct {
	Left  []string
	Right []string
}

// Coherence is one example of the discriminative model.
type Coherence struct {
	Context
	S     string
	Label float32
	Kind  NegKind
}

// Config configures example generation.
type Config struct {
	// Window is the most context sentences taken on each side of the slot
	// (the chunk size is 6, so at most 5 on one side); 0 means 2.
	Window int
	// HeldOut is the fraction of documents held out; 0 means 0.02.
	HeldOut float64
	// Seed makes generation deterministic.
	Seed int64
}

func (c Config) window() int {
	if c.Window <= 0 {
		return 2
	}
	return c.Window
}

func (c Config) heldOut() float64 {
	if c.HeldOut <= 0 {
		return 0.02
	}
	return c.HeldOut
}

// IsHeldOut reports whether the document with this ID is held out, given
// the held-out fraction. The choice depends only on the ID.
func IsHeldOut(docID string, frac float64) bool {
	h := sha256.Sum256([]byte("heldout\x00" + docID))
	return float64(binary.LittleEndian.Uint64(h[:8])%1_000_000) < frac*1_000_000
}

// Split divides docs into training and held-out documents.
func Split(docs []Doc, cfg Config) (train, heldOut []Doc) {
	for _, d := range docs {
		if IsHeldOut(d.ID, cfg.heldOut()) {
			heldOut = append(heldOut, d)
		} else {
			train = append(train, d)
		}
	}
	return train, heldOut
}

// ContextAt returns the context of slot i of doc: up to window sentences on
// each side.
func ContextAt(d Doc, i, window int) Context {
	lo := max(0, i-window)
	hi := min(len(d.Sentences), i+1+window)
	return Context{Left: d.Sentences[lo:i], Right: d.Sentences[i+1 : hi]}
}

// CoherenceExamples returns, for each slot of each document with at least
// one sentence on each side, one positive example and one negative,
// alternating same-document and random negatives. Documents with fewer than
// three sentences give none. Order and content depend only on docs and
// cfg.Seed.
func CoherenceExamples(docs []Doc, cfg Config) []Coherence {
	r := rand.New(rand.NewSource(cfg.Seed))
	w := cfg.window()
	var total int
	for _, d := range docs {
		total += len(d.Sentences)
	}
	var out []Coherence
	neg := 0
	for di, d := range docs {
		n := len(d.Sentences)
		if n < 3 {
			continue
		}
		for i := 1; i < n-1; i++ {
			ctx := ContextAt(d, i, w)
			out = append(out, Coherence{Context: ctx, S: d.Sentences[i], Label: 1, Kind: Positive})
			kind := SameDoc
			if neg%2 == 1 || n < 4 {
				kind = Random
			}
			neg++
			var s string
			switch kind {
			case SameDoc:
				// Any sentence of the document other than the slot and its
				// immediate neighbours, which would be too easy to tell apart
				// from nothing, or could even fit.
				for {
					j := r.Intn(n)
					if j < i-1 || j > i+1 || n < 5 {
						if j != i {
							s = d.Sentences[j]
							break
						}
					}
				}
			case Random:
				s = randomSentence(r, docs, di, total)
			}
			out = append(out, Coherence{Context: ctx, S: s, Label: 0, Kind: kind})
		}
	}
	return out
}

// randomSentence draws a sentence uniformly from the documents other than
// docs[skip].
func randomSentence(r *rand.Rand, docs []Doc, skip, total int) string {
	for {
		k := r.Intn(total)
		for di, d := range docs {
			if k < len(d.Sentences) {
				if di == skip && len(docs) > 1 {
					break
				}
				return d.Sentences[k]
			}
			k -= len(d.Sentences)
		}
	}
}

// Direction names the segment an infilling example generates.
type Direction uint8

const (
	// ToSentence: generate s from c_<i and c_>i.
	ToSentence Direction = iota
	// ToLeft: generate c_<i from s and c_>i.
	ToLeft
	// ToRight: generate c_>i from c_<i and s.
	ToRight
)

// String names the direction.
func (d Direction) String() string {
	return [...]string{"to_s", "to_left", "to_right"}[d]
}

// Infill is one example of the generative model: the three segments of a
// slot and the direction to generate.
type Infill struct {
	Context
	S   string
	Dir Direction
}

// InfillExamples returns, for each slot with context on both sides, one
// example per direction.
func InfillExamples(docs []Doc, cfg Config) []Infill {
	w := cfg.window()
	var out []Infill
	for _, d := range docs {
		for i := 1; i < len(d.Sentences)-1; i++ {
			ctx := ContextAt(d, i, w)
			for _, dir := range []Direction{ToSentence, ToLeft, ToRight} {
				out = append(out, Infill{Context: ctx, S: d.Sentences[i], Dir: dir})
			}
		}
	}
	return out
}
