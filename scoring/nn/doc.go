// Package nn is a small, exact, CPU-only neural-network core in float32.
//
// It provides dense row-major tensors, a single matrix-multiply entry point
// (Gemm) backed by OpenBLAS when cgo is enabled and by a pure-Go blocked
// kernel otherwise, and the layers needed by the ctxsim models: Embedding,
// Linear, LSTM and BiLSTM, LayerNorm, multi-head attention, a position-wise
// feed-forward block, softmax and sigmoid cross-entropy losses, the Adam
// optimiser with global gradient-norm clipping, and safetensors
// serialisation of named parameters.
//
// There is no autograd graph. Every layer has an explicit Forward method that
// returns its outputs together with a cache, and a Backward method that takes
// the cache and the gradients of the outputs, accumulates the gradients of
// the layer's parameters into Param.Grad and returns the gradients of the
// inputs. Callers chain Backward calls in the reverse order of the Forward
// calls.
//
// Batched sequence tensors are laid out as (batch, time, dim) with the time
// axis padded to the longest sequence; rows of a (batch, time, dim) tensor
// are also addressed as a (batch*time, dim) matrix.
//
// # Backends
//
// The default build (no C library needed, cgo on or off) uses
// internal/gogemm, a blocked algorithm with AVX-512 or AVX2+FMA
// micro-kernels in Go assembly on amd64 and a portable scalar kernel
// elsewhere. A cgo build with the build tag openblas (go build -tags
// openblas; Debian package libopenblas-dev) links OpenBLAS as well and uses
// it by default, single-threaded unless SetThreads says otherwise;
// SetBackend("go") selects the pure-Go kernel there too. Backend names the implementation in use.
// Linear.ForwardFill and Linear.ForwardCat, which take an input that is
// not stored, run on the pure-Go kernel with either backend. Element-wise
// activations and softmax use AVX-512 assembly from internal/vecmath where
// available. GODEBUG=cpu.avx512f=off (or cpu.all=off) disables the
// assembly paths, for testing.
//
// # Memory
//
// Large tensors come from free lists of power-of-two-sized buffers. Calling
// Release on tensors and caches that are no longer needed lets later
// passes reuse their memory instead of faulting in fresh pages; it is
// optional, and FreePooled empties the lists.
//
// The package is not safe for concurrent use of a single layer or Param from
// several goroutines; distinct models may run concurrently.
package nn
