package surrogate

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// EvalRankPositiveFraction is the fraction of gold pairs, by score, that
// EvalRank takes as positives.
const EvalRankPositiveFraction = 0.25

// GoldPair is a pair of sentences of an evaluation file, given as indices
// into its list of distinct sentences, with a gold similarity score.
type GoldPair struct {
	A, B  int
	Score float64
}

// RankResult is the outcome of EvalRank.
type RankResult struct {
	// MRR is the mean reciprocal rank of the partners; Hits1 and Hits3 the
	// fractions ranked first and in the top three.
	MRR   float64 `json:"mrr"`
	Hits1 float64 `json:"hits1"`
	Hits3 float64 `json:"hits3"`
	// Threshold is the lowest gold score of a positive pair.
	Threshold float64 `json:"threshold"`
	// Positives counts the positive pairs ranked, Queries the rankings (two
	// per positive pair), Skipped the positive pairs whose two sides are the
	// same sentence.
	Positives int `json:"positives"`
	Queries   int `json:"queries"`
	Skipped   int `json:"skipped"`
}

// EvalRank ranks sentence embeddings by cosine, following EvalRank (Wang
// et al., 2022). emb holds one vector per distinct sentence of the
// evaluation file (the background); pairs index into it. See EvalRankFunc.
func EvalRank(emb [][]float32, pairs []GoldPair) (RankResult, error) {
	if len(emb) > 0 {
		d := len(emb[0])
		for i, e := range emb {
			if len(e) != d {
				return RankResult{}, fmt.Errorf("surrogate: EvalRank: embedding %d has %d values, embedding 0 has %d", i, len(e), d)
			}
		}
	}
	unit := make([][]float64, len(emb))
	for i, e := range emb {
		var ss float64
		for _, v := range e {
			ss += float64(v) * float64(v)
		}
		u := make([]float64, len(e))
		if ss > 0 {
			r := 1 / math.Sqrt(ss)
			for j, v := range e {
				u[j] = float64(v) * r
			}
		}
		unit[i] = u
	}
	sim := func(i, j int) float64 {
		var s float64
		uj := unit[j]
		for k, v := range unit[i] {
			s += v * uj[k]
		}
		return s
	}
	return EvalRankFunc(len(emb), sim, pairs)
}

// EvalRankFunc computes EvalRank over n distinct sentences whose pairwise
// similarity is sim (any encoder: cosine of dense or sparse vectors).
//
// The positives are the pairs whose gold score is at least that of the
// ⌈n/4⌉-th highest-scored pair (EvalRankPositiveFraction; ties at the
// boundary are all included). For a positive pair (a, b), b is ranked
// among all n sentences except a by sim(a, ·), and likewise a by sim(b, ·).
// The rank of the partner p is 1 plus the number of other candidates c with
// sim(a, c) >= sim(a, p): ties count against the partner, so an encoder that
// gives everything the same score ranks last; a NaN similarity counts as
// the lowest. Other positives of a are
// ordinary candidates. A positive pair whose sides are the same sentence
// cannot be ranked and is skipped.
func EvalRankFunc(n int, sim func(i, j int) float64, pairs []GoldPair) (RankResult, error) {
	if n < 2 {
		return RankResult{}, fmt.Errorf("surrogate: EvalRank: %d sentences, need at least 2", n)
	}
	if len(pairs) == 0 {
		return RankResult{}, errors.New("surrogate: EvalRank: no gold pairs")
	}
	scores := make([]float64, len(pairs))
	for i, p := range pairs {
		if p.A < 0 || p.A >= n || p.B < 0 || p.B >= n {
			return RankResult{}, fmt.Errorf("surrogate: EvalRank: pair %d (%d, %d) indexes outside [0, %d)", i, p.A, p.B, n)
		}
		if math.IsNaN(p.Score) {
			return RankResult{}, fmt.Errorf("surrogate: EvalRank: pair %d has a NaN score", i)
		}
		scores[i] = p.Score
	}
	slices.SortFunc(scores, func(x, y float64) int { return cmp.Compare(y, x) })
	k := int(math.Ceil(EvalRankPositiveFraction * float64(len(pairs))))
	res := RankResult{Threshold: scores[max(k, 1)-1]}

	// Group the queries by query sentence so that each similarity row is
	// computed once.
	partners := map[int][]int{}
	for _, p := range pairs {
		if p.Score < res.Threshold {
			continue
		}
		res.Positives++
		if p.A == p.B {
			res.Skipped++
			continue
		}
		partners[p.A] = append(partners[p.A], p.B)
		partners[p.B] = append(partners[p.B], p.A)
	}
	queries := make([]int, 0, len(partners))
	for q := range partners {
		queries = append(queries, q)
	}
	slices.Sort(queries)
	row := make([]float64, n)
	var rr float64
	for _, q := range queries {
		for c := range n {
			if c != q {
				row[c] = sim(q, c)
				if math.IsNaN(row[c]) {
					row[c] = math.Inf(-1)
				}
			}
		}
		for _, p := range partners[q] {
			rank := 1
			for c := range n {
				if c != q && c != p && row[c] >= row[p] {
					rank++
				}
			}
			res.Queries++
			rr += 1 / float64(rank)
			if rank <= 1 {
				res.Hits1++
			}
			if rank <= 3 {
				res.Hits3++
			}
		}
	}
	if res.Queries > 0 {
		q := float64(res.Queries)
		res.MRR, res.Hits1, res.Hits3 = rr/q, res.Hits1/q, res.Hits3/q
	}
	return res, nil
}
