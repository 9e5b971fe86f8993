package nn

import (
	"fmt"
	"math/rand/v2"
)

// Embedding maps integer token ids to rows of a (vocab, dim) table.
type Embedding struct {
	// Weight is the (vocab, dim) table, named "<name>.weight".
	Weight *Param
	// PadID is a token id whose row is kept at zero and never receives a
	// gradient; a negative PadID disables padding.
	PadID int
}

// NewEmbedding returns an embedding table with entries drawn from N(0, 1),
// except the PadID row (if any) which is zero.
func NewEmbedding(name string, vocab, dim, padID int, rng *rand.Rand) *Embedding {
	e := &Embedding{Weight: NewParam(name+".weight", vocab, dim), PadID: padID}
	fillNormal(rng, e.Weight.Value.Data, 1)
	if padID >= 0 && padID < vocab {
		clear(e.row(e.Weight.Value, padID))
	}
	return e
}

// Params returns the trainable parameters.
func (e *Embedding) Params() []*Param { return []*Param{e.Weight} }

// Dim returns the embedding width.
func (e *Embedding) Dim() int { return e.Weight.Value.Shape[1] }

// Vocab returns the number of rows of the table.
func (e *Embedding) Vocab() int { return e.Weight.Value.Shape[0] }

func (e *Embedding) row(t *Tensor, id int) []float32 {
	d := e.Dim()
	return t.Data[id*d : (id+1)*d]
}

// Forward looks up ids and returns a (len(ids), dim) tensor; reshape it to
// (batch, time, dim) as needed. The ids themselves are the cache for
// Backward. It panics on an id outside [0, vocab).
func (e *Embedding) Forward(ids []int) *Tensor {
	d := e.Dim()
	out := newTensorUninit(len(ids), d)
	for i, id := range ids {
		if id < 0 || id >= e.Vocab() {
			panic(fmt.Sprintf("nn: Embedding: id %d out of range [0, %d)", id, e.Vocab()))
		}
		copy(out.Data[i*d:(i+1)*d], e.row(e.Weight.Value, id))
	}
	return out
}

// Backward scatter-adds the rows of dy (len(ids), dim) into the gradient
// of the table, skipping PadID.
func (e *Embedding) Backward(ids []int, dy *Tensor) {
	d := e.Dim()
	if dy.Size() != len(ids)*d {
		panic(fmt.Sprintf("nn: Embedding.Backward: gradient shape %v for %d ids of dim %d", dy.Shape, len(ids), d))
	}
	for i, id := range ids {
		if id == e.PadID {
			continue
		}
		axpy(1, dy.Data[i*d:(i+1)*d], e.row(e.Weight.Grad, id))
	}
}
