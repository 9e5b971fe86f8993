package nn

import (
	"math/bits"
	"sync"
)

// Large tensors are recycled through per-size-class free lists: fresh
// memory costs page faults and zeroing that, for the sizes used by the
// models, are a large fraction of a forward pass. Buffers of at least
// poolMin elements get a power-of-two capacity and return to the free list
// through Release. Unlike a sync.Pool, the lists survive garbage
// collections; they hold at most poolMaxBytes in total.
const (
	poolMin      = 1 << 12
	poolMaxBytes = 1 << 30
)

var pool struct {
	sync.Mutex
	free  [64][][]float32
	bytes int
}

// getBuf returns a slice of length n, zeroed if zero is set.
func getBuf(n int, zero bool) []float32 {
	if n < poolMin {
		return make([]float32, n)
	}
	c := bits.Len(uint(n - 1))
	pool.Lock()
	if l := len(pool.free[c]); l > 0 {
		b := pool.free[c][l-1]
		pool.free[c][l-1] = nil
		pool.free[c] = pool.free[c][:l-1]
		pool.bytes -= 4 * cap(b)
		pool.Unlock()
		b = b[:n]
		if zero {
			clear(b)
		}
		return b
	}
	pool.Unlock()
	return make([]float32, n, 1<<c)
}

// putBuf hands b back to its free list. Only buffers with a power-of-two
// capacity of at least poolMin are kept, and only while the lists hold
// less than poolMaxBytes.
func putBuf(b []float32) {
	c := cap(b)
	if c < poolMin || c&(c-1) != 0 {
		return
	}
	pool.Lock()
	defer pool.Unlock()
	if pool.bytes+4*c > poolMaxBytes {
		return
	}
	pool.bytes += 4 * c
	k := bits.Len(uint(c - 1))
	pool.free[k] = append(pool.free[k], b[:c])
}

// FreePooled drops every buffer kept for reuse by Tensor.Release, so that
// the garbage collector can reclaim them.
func FreePooled() {
	pool.Lock()
	defer pool.Unlock()
	for i := range pool.free {
		pool.free[i] = nil
	}
	pool.bytes = 0
}

// newTensorUninit returns a tensor whose contents are unspecified, for
// outputs that are fully overwritten.
func newTensorUninit(shape ...int) *Tensor {
	return &Tensor{Shape: append([]int(nil), shape...), Data: getBuf(shapeSize(shape), false)}
}

// Release hands t's storage back for reuse by later allocations of this
// package. It is optional (unreleased tensors are garbage collected) but
// saves page faults and zeroing in loops. After Release, neither t nor any
// tensor sharing its data (a Reshape view, a cache holding it) may be used.
// Releasing the same storage twice corrupts later results.
func (t *Tensor) Release() {
	if t == nil {
		return
	}
	putBuf(t.Data)
	t.Data = nil
}

// releaseAll releases every non-nil tensor.
func releaseAll(ts ...*Tensor) {
	for _, t := range ts {
		t.Release()
	}
}
