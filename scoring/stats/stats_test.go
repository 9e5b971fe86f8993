package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSpearman(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5}
	if got := Spearman(x, []float64{10, 20, 30, 40, 1000}); math.Abs(got-1) > 1e-12 {
		t.Fatal(got)
	}
	if got := Spearman(x, []float64{5, 4, 3, 2, 1}); math.Abs(got+1) > 1e-12 {
		t.Fatal(got)
	}
	// Ties: ranks 1.5, 1.5, 3 against 1, 2, 3 → r = 0.866.
	if got := Spearman([]float64{1, 1, 2}, []float64{1, 2, 3}); math.Abs(got-math.Sqrt(3)/2) > 1e-12 {
		t.Fatal(got)
	}
	if !math.IsNaN(Spearman([]float64{1, 1}, []float64{1, 2})) {
		t.Fatal("constant input")
	}
}

func TestKthLargest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 1 + r.IntN(200)
		x := make([]float32, n)
		for i := range x {
			if trial%3 == 0 {
				x[i] = float32(r.IntN(5)) // many equal values
			} else {
				x[i] = r.Float32()*2 - 1
			}
		}
		sorted := slices.Clone(x)
		slices.Sort(sorted)
		k := 1 + r.IntN(n)
		if got, want := KthLargest(slices.Clone(x), k), sorted[n-k]; got != want {
			t.Fatalf("trial %d: %d-th largest of %d values is %v, want %v", trial, k, n, got, want)
		}
	}
}
