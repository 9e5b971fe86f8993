// Package stats holds the correlations the project reports labels by:
// Spearman (the STS benchmarks' measure) and Pearson; and the order
// statistic that retrieval's cut and the rerank's bound share.
package stats

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// KthLargest returns the k-th largest of xs (1 ≤ k ≤ len(xs)), reordering
// xs: quickselect with the median of three as pivot, and a sort for short
// ranges. xs must hold no NaN.
func KthLargest[T cmp.Ordered](xs []T, k int) T {
	lo, hi := 0, len(xs)-1
	want := k - 1 // index of the answer in descending order
	for hi-lo > 16 {
		mid := lo + (hi-lo)/2
		a, b, c := xs[lo], xs[mid], xs[hi]
		pivot := max(min(a, b), min(max(a, b), c))
		// Three-way partition, descending: [lo,i) > pivot, [i,j) == pivot,
		// (g,hi] < pivot.
		i, j, g := lo, lo, hi
		for j <= g {
			switch x := xs[j]; {
			case x > pivot:
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j++
			case x < pivot:
				xs[j], xs[g] = xs[g], xs[j]
				g--
			default:
				j++
			}
		}
		switch {
		case want < i:
			hi = i - 1
		case want < j:
			return pivot
		default:
			lo = j
		}
	}
	part := xs[lo : hi+1]
	slices.SortFunc(part, func(a, b T) int { return cmp.Compare(b, a) })
	return part[want-lo]
}

// Spearman is the rank correlation of x and y: the Pearson correlation of
// their ranks, ties given their average rank. It is NaN when either is
// constant or shorter than 2.
func Spearman(x, y []float64) float64 {
	if len(x) != len(y) || len(x) < 2 {
		return math.NaN()
	}
	return Pearson(ranks(x), ranks(y))
}

func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && x[idx[j]] == x[idx[i]] {
			j++
		}
		for k := i; k < j; k++ {
			r[idx[k]] = float64(i+j-1)/2 + 1
		}
		i = j
	}
	return r
}

// Pearson is the linear correlation of x and y.
func Pearson(x, y []float64) float64 {
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(y))
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}
