package surrogate

import (
	"math"
	"strings"
	"testing"
)

// angles returns unit vectors at the given angles in degrees.
func angles(deg ...float64) [][]float32 {
	out := make([][]float32, len(deg))
	for i, d := range deg {
		r := d * math.Pi / 180
		out[i] = []float32{float32(math.Cos(r)), float32(math.Sin(r))}
	}
	return out
}

func TestEvalRank(t *testing.T) {
	// Sentences at 0°, 10°, 20°, 90°, 100° and 180°.
	emb := angles(0, 10, 20, 90, 100, 180)
	pairs := []GoldPair{
		{0, 2, 5}, {3, 4, 4.5}, // the top quarter of 8 pairs: positives
		{0, 1, 1}, {1, 5, 2}, {2, 3, 0}, {4, 5, 3}, {0, 5, 0.5}, {1, 3, 1.5},
	}
	// From 0° the partner at 20° is behind 10°: rank 2, and likewise from
	// 20° the partner at 0° is behind 10°; 90° and 100° are each other's
	// nearest: rank 1 twice.
	want := RankResult{MRR: (0.5 + 0.5 + 1 + 1) / 4, Hits1: 0.5, Hits3: 1, Threshold: 4.5, Positives: 2, Queries: 4}
	got, err := EvalRank(emb, pairs)
	if err != nil || got != want {
		t.Fatalf("EvalRank = %+v, %v; want %+v", got, err, want)
	}
	// The same through a similarity function, scaled (rank is invariant).
	got, err = EvalRankFunc(len(emb), func(i, j int) float64 { return 3 * Cosine(emb[i], emb[j]) }, pairs)
	if err != nil || got != want {
		t.Fatalf("EvalRankFunc = %+v, %v; want %+v", got, err, want)
	}
	// Scaling a vector does not change cosine ranks.
	emb[4][0], emb[4][1] = 7*emb[4][0], 7*emb[4][1]
	if got, _ := EvalRank(emb, pairs); got != want {
		t.Errorf("scaled embedding: %+v", got)
	}
}

func TestEvalRankTiesAndSkips(t *testing.T) {
	// Constant embeddings: every candidate ties with the partner, and ties
	// count against it, so the partner ranks last of the 5 candidates.
	same := [][]float32{{1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}}
	pairs := []GoldPair{{0, 1, 5}, {2, 3, 1}, {3, 4, 1}, {4, 5, 1}}
	got, err := EvalRank(same, pairs)
	if want := (RankResult{MRR: 0.2, Threshold: 5, Positives: 1, Queries: 2}); err != nil || got != want {
		t.Errorf("constant embeddings: %+v, %v; want %+v", got, err, want)
	}
	// Ties at the boundary are all positives; a pair of one sentence with
	// itself is skipped.
	pairs = []GoldPair{{0, 1, 5}, {2, 2, 5}, {3, 4, 5}, {4, 5, 1}, {1, 2, 0}}
	sim := func(i, j int) float64 {
		if i+j == 1 || i+j == 7 {
			return 1
		}
		return 0
	}
	got, err = EvalRankFunc(6, sim, pairs)
	if want := (RankResult{MRR: 1, Hits1: 1, Hits3: 1, Threshold: 5, Positives: 3, Queries: 4, Skipped: 1}); err != nil || got != want {
		t.Errorf("ties and skips: %+v, %v; want %+v", got, err, want)
	}
	// A NaN similarity ranks lowest: the partners rank last of 2.
	nan := func(i, j int) float64 { return math.NaN() }
	got, err = EvalRankFunc(3, nan, []GoldPair{{0, 1, 1}})
	if want := (RankResult{MRR: 0.5, Hits3: 1, Threshold: 1, Positives: 1, Queries: 2}); err != nil || got != want {
		t.Errorf("NaN similarities: %+v, %v; want %+v", got, err, want)
	}
}

func TestEvalRankErrors(t *testing.T) {
	emb := angles(0, 10, 20)
	for _, c := range []struct {
		emb   [][]float32
		pairs []GoldPair
		want  string
	}{
		{emb[:1], []GoldPair{{0, 0, 1}}, "at least 2"},
		{emb, nil, "no gold pairs"},
		{emb, []GoldPair{{0, 3, 1}}, "pair 0 (0, 3) indexes outside [0, 3)"},
		{emb, []GoldPair{{0, 1, math.NaN()}}, "NaN score"},
		{[][]float32{{1, 0}, {1}}, []GoldPair{{0, 1, 1}}, "embedding 1 has 1 values"},
	} {
		if _, err := EvalRank(c.emb, c.pairs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("EvalRank(%v, %v): %v, want %q", c.emb, c.pairs, err, c.want)
		}
	}
}
