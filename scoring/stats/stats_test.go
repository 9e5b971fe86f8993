package stats

import (
	"math"
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
