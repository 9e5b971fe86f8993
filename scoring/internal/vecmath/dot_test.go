package vecmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotSameBitsEverywhere checks that Dot gives the portable loop's bits
// (what a CPU without the assembly computes) for lengths around every
// boundary of the lanes, and that it is the dot product within rounding.
func TestDotSameBitsEverywhere(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 31, 32, 33, 63, 64, 100, 255, 256, 257, 300, 1024} {
		for trial := range 20 {
			a, b := make([]float32, n), make([]float32, n+trial%3)
			for i := range a {
				a[i] = float32(r.NormFloat64())
			}
			for i := range b {
				b[i] = float32(r.NormFloat64() * 1e3)
			}
			got := Dot(a, b)
			v := n &^ 31
			want := float32(0)
			if v > 0 {
				want = dot32(a[:v], b[:v])
			}
			for i := v; i < n; i++ {
				want += float32(a[i] * b[i])
			}
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("n=%d trial %d: Dot %v (bits %08x), portable loop %v (bits %08x)", n, trial, got, math.Float32bits(got), want, math.Float32bits(want))
			}
			var exact, mag float64
			for i := range a {
				exact += float64(a[i]) * float64(b[i])
				mag += math.Abs(float64(a[i]) * float64(b[i]))
			}
			if d := math.Abs(float64(got) - exact); d > 1e-5*mag+1e-30 {
				t.Fatalf("n=%d: Dot %v, exact %v (off by %g, magnitude %g)", n, got, exact, d, mag)
			}
		}
	}
}

// BenchmarkDot times one 256-wide dot product, the width of the contrastive
// model's vectors, with the kernel Dot picks and with the portable loop.
func BenchmarkDot(b *testing.B) {
	x, y := make([]float32, 256), make([]float32, 256)
	for i := range x {
		x[i], y[i] = float32(i%7)-3, float32(i%5)-2
	}
	var sink float32
	b.Run("dot", func(b *testing.B) {
		for b.Loop() {
			sink += Dot(x, y)
		}
	})
	b.Run("portable", func(b *testing.B) {
		for b.Loop() {
			sink += dot32(x, y)
		}
	})
	_ = sink
}

// TestAddToSameBitsEverywhere checks that AddTo gives each element the one
// float32 sum a plain loop gives, for lengths around the kernel's width,
// and leaves the values past len(dst) of x alone.
func TestAddToSameBitsEverywhere(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 31, 32, 33, 64, 100, 256, 257, 1024} {
		dst, x := make([]float32, n), make([]float32, n+2)
		for i := range dst {
			dst[i] = float32(r.NormFloat64() * 1e3)
		}
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		want := make([]float32, n)
		for i := range want {
			want[i] = dst[i] + x[i]
		}
		AddTo(dst, x)
		for i := range want {
			if math.Float32bits(dst[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d element %d: %v, want %v", n, i, dst[i], want[i])
			}
		}
	}
}

// BenchmarkAddTo times adding one 256-wide vector into another, the sum
// of a context's sentences, with the kernel and with the plain loop.
func BenchmarkAddTo(b *testing.B) {
	x, y := make([]float32, 256), make([]float32, 256)
	for i := range x {
		y[i] = float32(i%5) - 2
	}
	b.Run("add", func(b *testing.B) {
		for b.Loop() {
			AddTo(x, y)
		}
	})
	b.Run("portable", func(b *testing.B) {
		for b.Loop() {
			for i := range x {
				x[i] += y[i]
			}
		}
	})
}

// Prefetch reads nothing a caller sees and writes nothing: every length,
// including those that end inside a cache line, leaves x as it was.
func TestPrefetchChangesNothing(t *testing.T) {
	for n := range 70 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i)
		}
		Prefetch(x)
		Prefetch(x[:n/2])
		for i := range x {
			if x[i] != float32(i) {
				t.Fatalf("len %d: x[%d] = %v after Prefetch", n, i, x[i])
			}
		}
	}
}
