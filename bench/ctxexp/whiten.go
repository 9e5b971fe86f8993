package main

import (
	"math"
	"strings"

	"github.com/ctxsim/ctxsim/scoring/contrast"
	"github.com/ctxsim/ctxsim/scoring/stats"
)

// whitener maps a context vector g to W(g - mu), where mu is the mean of
// a sample of context vectors and W = C^(-p/2) for their covariance C
// shrunk towards its mean eigenvalue by alpha. With p = 1 the sample's
// covariance becomes the identity, so Eq. 4 of a bilinear scorer over
// contexts drawn like the sample is the cosine of the two sentence
// vectors; p = 0 leaves g centred but unscaled.
type whitener struct {
	d  int
	mu []float64
	w  []float64 // d x d, row-major
}

func newWhitener(gs [][]float32, p, alpha float64) *whitener {
	mu, w := stats.Whitening(gs, p, alpha)
	return &whitener{d: len(mu), mu: mu, w: w}
}

func (wh *whitener) apply(g []float32) []float32 {
	d := wh.d
	x := make([]float64, d)
	for j := range x {
		x[j] = float64(g[j]) - wh.mu[j]
	}
	out := make([]float32, d)
	for i := range d {
		var s float64
		row := wh.w[i*d : i*d+d]
		for j := range d {
			s += row[j] * x[j]
		}
		out[i] = float32(s)
	}
	return out
}

// dot64 is the float64 dot product of two float32 vectors.
func dot64(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// pairSims is the similarity of every token of a to every token of b as
// the labeler's word alignment sees it (contrast.Model.AlignSimilarity):
// 1 for the same token, the cosine of two vocabulary words' unit vectors
// clipped at 0, 0 for a hashed bucket; with each side's IDF weights and
// the norms of the words' unnormalised vectors (1 for a bucket).
func pairSims(m *contrast.Model, a, b string) (s [][]float64, wa, wb, na, nb []float64) {
	ta, tb := tokensOf(m, a), tokensOf(m, b)
	d := m.Dim()
	words := int32(m.VocabWords())
	vec := func(r int32) ([]float32, float64) {
		v := make([]float32, d)
		for j := range v {
			v[j] = m.Sent[int(r)*d+j] + m.Ctx[int(r)*d+j]
		}
		n := math.Sqrt(dot64(v, v))
		for j := range v {
			v[j] /= float32(n)
		}
		return v, n
	}
	side := func(t toks) (vs [][]float32, w, n []float64) {
		for i, r := range t.rows {
			w = append(w, float64(t.w[i]))
			if r >= words {
				vs, n = append(vs, nil), append(n, 1)
				continue
			}
			v, nn := vec(r)
			vs, n = append(vs, v), append(n, nn)
		}
		return
	}
	va, wa, na := side(ta)
	vb, wb, nb := side(tb)
	s = make([][]float64, len(ta.words))
	for i, x := range ta.words {
		s[i] = make([]float64, len(tb.words))
		for j, y := range tb.words {
			switch {
			case x == y:
				s[i][j] = 1
			case va[i] == nil || vb[j] == nil:
			default:
				s[i][j] = max(0, dot64(va[i], vb[j]))
			}
		}
	}
	return
}

// otSimilarity is 1 minus the optimal-transport cost of moving mass pa
// (over a's tokens) onto pb (over b's tokens) at cost 1 - s, by Sinkhorn
// iterations with entropy eps: a word mover's similarity.
func otSimilarity(s [][]float64, pa, pb []float64, eps float64) float64 {
	n, k := len(pa), len(pb)
	if n == 0 || k == 0 {
		return 0
	}
	norm := func(p []float64) []float64 {
		var t float64
		for _, x := range p {
			t += x
		}
		out := make([]float64, len(p))
		for i, x := range p {
			out[i] = x / t
		}
		return out
	}
	a, b := norm(pa), norm(pb)
	K := make([][]float64, n)
	for i := range K {
		K[i] = make([]float64, k)
		for j := range K[i] {
			K[i][j] = math.Exp(-(1 - s[i][j]) / eps)
		}
	}
	u, v := make([]float64, n), make([]float64, k)
	for j := range v {
		v[j] = 1
	}
	for range 300 {
		for i := range u {
			var t float64
			for j := range v {
				t += K[i][j] * v[j]
			}
			u[i] = a[i] / max(t, 1e-300)
		}
		for j := range v {
			var t float64
			for i := range u {
				t += K[i][j] * u[i]
			}
			v[j] = b[j] / max(t, 1e-300)
		}
	}
	var cost float64
	for i := range u {
		for j := range v {
			cost += u[i] * K[i][j] * v[j] * (1 - s[i][j])
		}
	}
	return 1 - cost
}

// softCosine is x'Sy / sqrt(x'Sx y'Sy) for the IDF-weighted bags of the
// two sentences and the word similarities raised to pw (sa and sb are
// each sentence's similarities with itself).
func softCosine(sab, saa, sbb [][]float64, wa, wb []float64, pw float64) float64 {
	q := func(s [][]float64, x, y []float64) float64 {
		var t float64
		for i := range x {
			for j := range y {
				t += x[i] * y[j] * math.Pow(s[i][j], pw)
			}
		}
		return t
	}
	den := math.Sqrt(q(saa, wa, wa) * q(sbb, wb, wb))
	if den == 0 {
		return 0
	}
	return q(sab, wa, wb) / den
}

// bigramCosine is the cosine of the two sentences' bags of adjacent stem
// pairs, each weighted by the mean IDF of its two stems.
func bigramCosine(m *contrast.Model, a, b string) float64 {
	bag := func(s string) map[string]float64 {
		ts := m.Vocab.Tokens(s)
		out := map[string]float64{}
		for i := 1; i < len(ts); i++ {
			w := (float64(m.Vocab.Weights[m.Vocab.Row(ts[i-1])]) + float64(m.Vocab.Weights[m.Vocab.Row(ts[i])])) / 2
			out[ts[i-1]+" "+ts[i]] += w
		}
		return out
	}
	return mapCosine(bag(a), bag(b))
}

// charCosine is the cosine of the two sentences' bags of character
// n-grams of their lower-cased words (each word padded with spaces).
func charCosine(a, b string, n int) float64 {
	bag := func(s string) map[string]float64 {
		out := map[string]float64{}
		for _, w := range strings.Fields(strings.ToLower(s)) {
			r := []rune(" " + w + " ")
			for i := 0; i+n <= len(r); i++ {
				out[string(r[i:i+n])]++
			}
		}
		return out
	}
	return mapCosine(bag(a), bag(b))
}

// mapCosine is the cosine of two sparse vectors held as maps.
func mapCosine[K comparable](x, y map[K]float64) float64 {
	var xy, xx, yy float64
	for k, v := range x {
		xy += v * y[k]
		xx += v * v
	}
	for _, v := range y {
		yy += v * v
	}
	if xx == 0 || yy == 0 {
		return 0
	}
	return xy / math.Sqrt(xx*yy)
}
