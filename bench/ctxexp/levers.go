package main

import (
	"cmp"
	"context"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/scoring/method"

	"github.com/ctxsim/ctxsim/scoring/contrast"
	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/stats"
	"github.com/ctxsim/ctxsim/scoring/sts"
)

// levers measures sentence-level similarities that need no contexts, on
// every STS file given: the model's cosine with common components removed,
// word alignment over the model's tables, and their sums with the stemmed
// TF-IDF cosine (IDF from the model's vocabulary).
func levers(m *contrast.Model, docs []examples.Doc, files []string) {
	r := rand.New(rand.NewPCG(11, 12))
	var sample [][]float32
	for len(sample) < 20000 {
		d := docs[r.IntN(len(docs))]
		s := d.Sentences[r.IntN(len(d.Sentences))]
		if v := m.SentenceVec(s); contrast.Dot(v, v) > 0 {
			sample = append(sample, v)
		}
	}
	mu, pcs := principal(sample, 10)
	d := m.Dim()
	tables := map[string]func(int32) []float32{"sent": unitRows(m.Sent, d), "ctx": unitRows(m.Ctx, d), "sum": unitRows(tableSum(m), d)}
	for _, path := range files {
		all, err := sts.Read(context.Background(), path)
		if err != nil {
			log.Fatal(err)
		}
		pairs := sts.Spread(all, *maxPairs)
		gold := make([]float64, len(pairs))
		for i, p := range pairs {
			gold[i] = p.Gold
		}
		res := map[string][]float64{}
		var order []string
		add := func(name string, pred []float64) {
			res[name] = pred
			order = append(order, name)
		}
		each := func(fn func(p sts.Pair) float64) []float64 {
			out := make([]float64, len(pairs))
			for i, p := range pairs {
				out[i] = fn(p)
			}
			return out
		}
		add("tfidf_stem(vocab idf)", each(func(p sts.Pair) float64 { return bagCosine(m, p.S1, p.S2) }))
		add("cos f", each(func(p sts.Pair) float64 {
			return float64(contrast.Dot(m.SentenceVec(p.S1), m.SentenceVec(p.S2)))
		}))
		for _, k := range []int{0, 1, 2, 3, 5, 10} {
			add(fmt.Sprintf("cos f -mean -%dpc", k), each(func(p sts.Pair) float64 {
				return cosine(removePCs(m.SentenceVec(p.S1), mu, pcs[:k]), removePCs(m.SentenceVec(p.S2), mu, pcs[:k]))
			}))
		}
		add("align F1 (the labeler's, contrast.Model.AlignSimilarity)", each(func(p sts.Pair) float64 { return m.AlignSimilarity(p.S1, p.S2) }))
		for _, tn := range []string{"sent", "ctx", "sum"} {
			vec := tables[tn]
			for _, pw := range []float64{1, 0} {
				add(fmt.Sprintf("align F1 %s idf^%g", tn, pw), each(func(p sts.Pair) float64 { return align(m, vec, p.S1, p.S2, pw, 0) }))
			}
		}
		for _, tn := range []string{"sent", "ctx", "sum"} {
			for _, pw := range []float64{1, 1.5, 2} {
				add(fmt.Sprintf("cos of mean unit %s rows, idf^%g", tn, pw), each(func(p sts.Pair) float64 {
					return cosine(meanRows(m, tables[tn], p.S1, pw), meanRows(m, tables[tn], p.S2, pw))
				}))
			}
		}
		for _, pw := range []float64{1.5, 2, 3} {
			add(fmt.Sprintf("align F1 sum idf^%g", pw), each(func(p sts.Pair) float64 { return align(m, tables["sum"], p.S1, p.S2, pw, 0) }))
		}
		for _, t := range []float32{0.2, 0.4, 0.6} {
			for _, pw := range []float64{1, 2} {
				add(fmt.Sprintf("align F1 sum idf^%g thr %.1f", pw, t), each(func(p sts.Pair) float64 { return align(m, tables["sum"], p.S1, p.S2, pw, t) }))
			}
		}
		type simsOf struct {
			ab, aa, bb     [][]float64
			wa, wb, na, nb []float64
		}
		sims := make([]simsOf, len(pairs))
		for i, p := range pairs {
			var x simsOf
			x.ab, x.wa, x.wb, x.na, x.nb = pairSims(m, p.S1, p.S2)
			x.aa, _, _, _, _ = pairSims(m, p.S1, p.S1)
			x.bb, _, _, _, _ = pairSims(m, p.S2, p.S2)
			sims[i] = x
		}
		eachS := func(fn func(x simsOf) float64) []float64 {
			out := make([]float64, len(pairs))
			for i := range pairs {
				out[i] = fn(sims[i])
			}
			return out
		}
		mul := func(a, b []float64) []float64 {
			out := make([]float64, len(a))
			for i := range a {
				out[i] = a[i] * b[i]
			}
			return out
		}
		for _, eps := range []float64{0.02, 0.1} {
			add(fmt.Sprintf("wmd idf eps %g", eps), eachS(func(x simsOf) float64 { return otSimilarity(x.ab, x.wa, x.wb, eps) }))
			add(fmt.Sprintf("wrd norm eps %g", eps), eachS(func(x simsOf) float64 { return otSimilarity(x.ab, x.na, x.nb, eps) }))
			add(fmt.Sprintf("wrd idf*norm eps %g", eps), eachS(func(x simsOf) float64 { return otSimilarity(x.ab, mul(x.wa, x.na), mul(x.wb, x.nb), eps) }))
		}
		for _, pw := range []float64{1, 2, 4} {
			add(fmt.Sprintf("soft cosine idf, sim^%g", pw), eachS(func(x simsOf) float64 { return softCosine(x.ab, x.aa, x.bb, x.wa, x.wb, pw) }))
		}
		add("bigram cosine (stems, idf)", each(func(p sts.Pair) float64 { return bigramCosine(m, p.S1, p.S2) }))
		for _, n := range []int{3, 4} {
			add(fmt.Sprintf("char %d-gram cosine", n), each(func(p sts.Pair) float64 { return charCosine(p.S1, p.S2, n) }))
		}
		{
			cf, al := res["cos f"], res["align F1 (the labeler's, contrast.Model.AlignSimilarity)"]
			base := make([]float64, len(cf))
			for i := range cf {
				base[i] = cf[i] + 3*al[i]
			}
			add("raw: cos f + 3 align", base)
			for _, name := range []string{"bigram cosine (stems, idf)", "char 3-gram cosine", "char 4-gram cosine", "tfidf_stem(vocab idf)", "soft cosine idf, sim^1", "wmd idf eps 0.02"} {
				for _, r := range []float64{0.25, 0.5, 1, 2} {
					v := res[name]
					mix := make([]float64, len(cf))
					for i := range cf {
						mix[i] = base[i] + r*v[i]
					}
					add(fmt.Sprintf("raw: cos f + 3 align + %g %s", r, name), mix)
				}
			}
		}
		for _, name := range []string{"wmd idf eps 0.02", "wrd idf*norm eps 0.02", "soft cosine idf, sim^2"} {
			v := res[name]
			cf := res["cos f"]
			for _, r := range []float64{1, 3} {
				mix := make([]float64, len(cf))
				for i := range cf {
					mix[i] = cf[i] + r*v[i]
				}
				add(fmt.Sprintf("raw: cos f + %g %s", r, name), mix)
			}
		}
		ts := res["tfidf_stem(vocab idf)"]
		for _, name := range []string{"cos f", "align F1 sum idf^1", "align F1 sum idf^2", "align F1 sum idf^2 thr 0.2", "align F1 sum idf^2 thr 0.4"} {
			add("z: "+name+" + tfidf", zsum(res[name], ts))
		}
		for _, a := range []string{"align F1 sum idf^1", "align F1 sum idf^2", "align F1 sum idf^2 thr 0.2", "align F1 sum idf^2 thr 0.4"} {
			for _, w := range []float64{0.5, 1, 2} {
				add(fmt.Sprintf("z: cos f + %g %s", w, a), wsum(res["cos f"], res[a], w))
				add(fmt.Sprintf("z: cos f + tfidf + %g %s", w, a), wsum(zsum(res["cos f"], ts), res[a], w))
			}
		}
		// Fixed weights, as a labeler must use them (no per-file z-scores):
		// the sentence cosine plus r times the labeler's alignment.
		cf, al := res["cos f"], res["align F1 (the labeler's, contrast.Model.AlignSimilarity)"]
		for _, r := range []float64{0.5, 1, 1.5, 2, 3, 4, 6} {
			mix := make([]float64, len(cf))
			for i := range cf {
				mix[i] = cf[i] + r*al[i]
			}
			add(fmt.Sprintf("raw: cos f + %g align", r), mix)
		}
		fmt.Printf("== %s (%d pairs)\n", path, len(pairs))
		fmt.Printf("sd: cos f %.4f, align %.4f\n", stdDev(cf), stdDev(al))
		for _, name := range order {
			fmt.Printf("%-60s %6.2f\n", name, 100*stats.Spearman(res[name], gold))
		}
	}
}

// bagCosine is the cosine of the IDF-weighted bags of the model's tokens.
func bagCosine(m *contrast.Model, a, b string) float64 {
	va, vb := map[int32]float64{}, map[int32]float64{}
	ra, wa := m.Vocab.Bag(a, nil, nil)
	rb, wb := m.Vocab.Bag(b, nil, nil)
	for i, r := range ra {
		va[r] += float64(wa[i])
	}
	for i, r := range rb {
		vb[r] += float64(wb[i])
	}
	return mapCosine(va, vb)
}

// align is the F1 of greedy word matching: each token of one sentence
// against its most similar token of the other (cosine of word vectors),
// weighted by IDF^pw, both ways.
func align(m *contrast.Model, vec func(int32) []float32, a, b string, pw float64, thr float32) float64 {
	return alignSim(m, func(x, y int32) float32 { return max(0, contrast.Dot(vec(x), vec(y))-thr) / (1 - thr) }, a, b, pw)
}

// principal returns the mean of vs and their top k principal directions
// (power iteration with deflation on the covariance).
func principal(vs [][]float32, k int) ([]float32, [][]float32) {
	d := len(vs[0])
	mu, cov := stats.Covariance(vs)
	var out [][]float32
	r := rand.New(rand.NewPCG(5, 6))
	for range k {
		v := make([]float64, d)
		for j := range v {
			v[j] = r.NormFloat64()
		}
		var lambda float64
		for range 300 {
			w := make([]float64, d)
			for i := range d {
				var s float64
				for j := range d {
					s += cov[i*d+j] * v[j]
				}
				w[i] = s
			}
			var n float64
			for _, y := range w {
				n += y * y
			}
			lambda = math.Sqrt(n)
			for i := range w {
				v[i] = w[i] / lambda
			}
		}
		for i := range d {
			for j := range d {
				cov[i*d+j] -= lambda * v[i] * v[j]
			}
		}
		pc := make([]float32, d)
		for j := range v {
			pc[j] = float32(v[j])
		}
		out = append(out, pc)
	}
	m32 := make([]float32, d)
	for j := range mu {
		m32[j] = float32(mu[j])
	}
	return m32, out
}

// removePCs subtracts mu from v and then v's projections on the pcs.
func removePCs(v, mu []float32, pcs [][]float32) []float32 {
	out := make([]float32, len(v))
	for j := range v {
		out[j] = v[j] - mu[j]
	}
	for _, u := range pcs {
		p := contrast.Dot(out, u)
		for j := range out {
			out[j] -= p * u[j]
		}
	}
	return out
}

// wsum is z(a) + w z(b).
func wsum(a, b []float64, w float64) []float64 {
	za, zb := zscore(a), zscore(b)
	out := make([]float64, len(a))
	for i := range a {
		out[i] = za[i] + w*zb[i]
	}
	return out
}

// toks is a sentence's tokens: their words, table rows and IDF weights.
type toks struct {
	words []string
	rows  []int32
	w     []float32
}

func tokensOf(m *contrast.Model, s string) toks {
	var t toks
	for _, x := range m.Vocab.Tokens(s) {
		r := m.Vocab.Row(x)
		t.words = append(t.words, x)
		t.rows = append(t.rows, r)
		t.w = append(t.w, m.Vocab.Weights[r])
	}
	return t
}

// wordSim is the similarity of two tokens: 1 for the same token, the
// clipped cosine of their rows in vec for two vocabulary words, 0 when
// either has no row of its own (a shared bucket says nothing).
type wordSim struct {
	m    *contrast.Model
	vec  func(int32) []float32
	memo map[[2]int32]float32
}

func (ws *wordSim) sim(x string, rx int32, y string, ry int32) float32 {
	if x == y {
		return 1
	}
	n := int32(ws.m.VocabWords())
	if rx >= n || ry >= n || rx == ry {
		return 0
	}
	k := [2]int32{min(rx, ry), max(rx, ry)}
	if v, ok := ws.memo[k]; ok {
		return v
	}
	v := max(0, contrast.Dot(ws.vec(rx), ws.vec(ry)))
	ws.memo[k] = v
	return v
}

// recall is Σ_w idf_w max_v sim(w, v) / Σ idf_w over the tokens w of s
// and v of c: how well s's words are found in c.
func (ws *wordSim) recall(s, c toks) float64 {
	var num, den float64
	for i, x := range s.words {
		var best float32
		for j, y := range c.words {
			if v := ws.sim(x, s.rows[i], y, c.rows[j]); v > best {
				best = v
				if v == 1 {
					break
				}
			}
		}
		num += float64(s.w[i]) * float64(best)
		den += float64(s.w[i])
	}
	if den == 0 {
		return 0
	}
	return num / den
}

func (ws *wordSim) f1(a, b toks) float64 {
	p, q := ws.recall(a, b), ws.recall(b, a)
	if p+q <= 0 {
		return 0
	}
	return 2 * p * q / (p + q)
}

// liContexts measures Eq. 4 under a late-interaction scorer, S(s, c) the
// IDF-weighted recall of s's words in c, over random and over retrieved
// contexts (sets built as the default method builds them, reranked by
// the bilinear score), against the same scorer applied to the two
// sentences (align F1) and the bilinear model's own numbers.
func liContexts(m *contrast.Model, docs []examples.Doc, path string) {
	ctx := context.Background()
	all, err := sts.Read(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	pairs := sts.Spread(all, *maxPairs)
	gold := make([]float64, len(pairs))
	for i, p := range pairs {
		gold[i] = p.Gold
	}
	d := m.Dim()
	ws := &wordSim{m: m, memo: map[[2]int32]float32{}, vec: unitRows(tableSum(m), d)}
	ctxToks := func(left, right []string) (toks, []float32) {
		var t toks
		for _, s := range append(append([]string(nil), left...), right...) {
			x := tokensOf(m, s)
			t.words = append(t.words, x.words...)
			t.rows = append(t.rows, x.rows...)
			t.w = append(t.w, x.w...)
		}
		return t, m.ContextVec(left, right)
	}
	r := rand.New(rand.NewPCG(3, 4))
	var refT []toks
	var refG [][]float32
	for len(refT) < *refN {
		dd := docs[r.IntN(len(docs))]
		if len(dd.Sentences) < 3 {
			continue
		}
		c := examples.ContextAt(dd, 1+r.IntN(len(dd.Sentences)-2), m.Cfg.Window)
		if !*liScorer {
			refT = append(refT, toks{})
			refG = append(refG, m.ContextVec(c.Left, c.Right))
			continue
		}
		t, g := ctxToks(c.Left, c.Right)
		refT = append(refT, t)
		refG = append(refG, g)
	}
	st, err := resources.LoadStore(ctx, *chunks)
	if err != nil {
		log.Fatal(err)
	}
	ix, err := retrieval.Open(*indexDir)
	if err != nil {
		log.Fatal(err)
	}
	e := &method.Engine{Store: st, Window: m.Cfg.Window}
	sums := map[int32][]float32{}
	stoks := map[int32]toks{}
	storeToks := func(k int32) toks {
		if t, ok := stoks[k]; ok {
			return t
		}
		t := tokensOf(m, st.Text(k))
		stoks[k] = t
		return t
	}
	storeVec := func(c method.Cand) []float32 {
		v := make([]float32, d)
		for _, k := range append(append([]int32(nil), c.Left...), c.Right...) {
			s, ok := sums[k]
			if !ok {
				s = m.ContextSum(st.Text(k))
				sums[k] = s
			}
			for j := range v {
				v[j] += s[j]
			}
		}
		contrast.Normalize(v)
		return v
	}
	type set struct {
		keys []string
		t    []toks
		g    [][]float32
	}
	sets := map[string]set{}
	t0 := time.Now()
	for i, p := range pairs {
		for _, s := range []string{p.S1, p.S2} {
			if _, ok := sets[s]; ok {
				continue
			}
			h, _, err := ix.Search(ctx, s, *topK, nil)
			if err != nil {
				log.Fatal(err)
			}
			cands, _ := e.Candidates(h)
			f := m.SentenceVec(s)
			for j := range cands {
				cands[j].S = m.Score(f, storeVec(cands[j]))
			}
			slices.SortStableFunc(cands, func(a, b method.Cand) int { return cmp.Compare(b.S, a.S) })
			var x set
			for _, c := range e.BuildSet(cands, *liSet, true, 0.5) {
				var t toks
				for _, k := range append(append([]int32(nil), c.Left...), c.Right...) {
					if !*liScorer {
						break
					}
					y := storeToks(k)
					t.words = append(t.words, y.words...)
					t.rows = append(t.rows, y.rows...)
					t.w = append(t.w, y.w...)
				}
				x.keys = append(x.keys, c.Key())
				x.t = append(x.t, t)
				x.g = append(x.g, storeVec(c))
			}
			sets[s] = x
		}
		if i%200 == 0 {
			fmt.Printf("  sets for %d/%d pairs (%.0fs)\n", i, len(pairs), time.Since(t0).Seconds())
		}
	}
	ix.Close()
	// Per-sentence reference statistics of each scorer over the random
	// contexts, for zref.
	type refStat struct{ mu, sd float64 }
	stat := func(v []float64) refStat {
		var a, b float64
		for _, x := range v {
			a += x
			b += x * x
		}
		a /= float64(len(v))
		return refStat{a, math.Sqrt(max(b/float64(len(v))-a*a, 1e-12))}
	}
	liRef := map[string][]float64{}
	biRef := map[string][]float64{}
	toksOf := map[string]toks{}
	for _, p := range pairs {
		for _, s := range []string{p.S1, p.S2} {
			if _, ok := liRef[s]; ok {
				continue
			}
			t := tokensOf(m, s)
			toksOf[s] = t
			f := m.SentenceVec(s)
			li, bi := make([]float64, len(refT)), make([]float64, len(refT))
			for j := range refT {
				if *liScorer {
					li[j] = ws.recall(t, refT[j])
				}
				bi[j] = float64(m.Score(f, refG[j]))
			}
			liRef[s], biRef[s] = li, bi
		}
	}
	fmt.Printf("reference scores done (%.0fs)\n", time.Since(t0).Seconds())
	var whs []*whitener
	var whP []float64
	var whRef []map[string][]float64
	var whG []map[string][]float32
	var whRefG [][][]float32
	for _, ps := range strings.Split(*whitePs, ",") {
		if ps == "" {
			continue
		}
		pv, err := strconv.ParseFloat(ps, 64)
		if err != nil {
			log.Fatal(err)
		}
		wh := newWhitener(refG, pv, *whiteAlpha)
		gw := make([][]float32, len(refG))
		for j, g := range refG {
			gw[j] = wh.apply(g)
		}
		refs := map[string][]float64{}
		for _, p := range pairs {
			for _, s := range []string{p.S1, p.S2} {
				if _, ok := refs[s]; ok {
					continue
				}
				f := m.SentenceVec(s)
				v := make([]float64, len(gw))
				for j := range gw {
					v[j] = dot64(f, gw[j])
				}
				refs[s] = v
			}
		}
		whs, whP = append(whs, wh), append(whP, pv)
		whRef, whG = append(whRef, refs), append(whG, map[string][]float32{})
		whRefG = append(whRefG, gw)
	}
	fmt.Printf("whitening done (%.0fs)\n", time.Since(t0).Seconds())
	res := map[string][]float64{}
	var order []string
	put := func(name string, i int, v float64) {
		if res[name] == nil {
			res[name] = make([]float64, len(pairs))
			order = append(order, name)
		}
		res[name][i] = v
	}
	z := func(v []float64, s refStat) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = (x - s.mu) / s.sd
		}
		return out
	}
	for i, p := range pairs {
		t1, t2 := toksOf[p.S1], toksOf[p.S2]
		f1, f2 := m.SentenceVec(p.S1), m.SentenceVec(p.S2)
		put("align F1 (the LI scorer on the two sentences)", i, ws.f1(t1, t2))
		put("cos f (the bilinear scorer's own)", i, float64(contrast.Dot(f1, f2)))
		l1, l2, b1, b2 := liRef[p.S1], liRef[p.S2], biRef[p.S1], biRef[p.S2]
		put("LI Eq4 random, pearson", i, method.Similarity(l1, l2, "pearson"))
		put("bilinear Eq4 random, pearson", i, method.Similarity(b1, b2, "pearson"))
		var la, lb, ba, bb []float64
		var ukeys []string // C = C_1 + C_2, each context once
		var ug [][]float32 // and their g(c)
		seen := map[string]bool{}
		for _, x := range []set{sets[p.S1], sets[p.S2]} {
			for j, k := range x.keys {
				if seen[k] {
					continue
				}
				seen[k] = true
				ukeys, ug = append(ukeys, k), append(ug, x.g[j])
				if *liScorer {
					la = append(la, ws.recall(t1, x.t[j]))
					lb = append(lb, ws.recall(t2, x.t[j]))
				} else {
					la, lb = append(la, 0), append(lb, 0)
				}
				ba = append(ba, float64(m.Score(f1, x.g[j])))
				bb = append(bb, float64(m.Score(f2, x.g[j])))
			}
		}
		put("LI Eq4 retrieved, pearson", i, method.Similarity(la, lb, "pearson"))
		put("LI Eq4 retrieved, zref", i, method.Similarity(z(la, stat(l1)), z(lb, stat(l2)), "cosine"))
		put("bilinear Eq4 retrieved, pearson", i, method.Similarity(ba, bb, "pearson"))
		put("bilinear Eq4 retrieved, zref", i, method.Similarity(z(ba, stat(b1)), z(bb, stat(b2)), "cosine"))
		// Non-linear readings of the same scores: each sentence's scores
		// over C turned into a distribution p(c|s) ∝ e^{κS}, and the two
		// distributions compared by their overlap Σ√(p1 p2) (the cosine
		// of e^{κS/2}). κ = 1 is the model's own softmax over C.
		for _, kappa := range []float64{0.125, 0.25, 0.5, 1, 2} {
			put(fmt.Sprintf("overlap kappa=%g, raw scores", kappa), i, expOverlap(ba, bb, kappa))
		}
		for k, wh := range whs {
			wr1, wr2 := whRef[k][p.S1], whRef[k][p.S2]
			put(fmt.Sprintf("white p=%g Eq4 random, pearson", whP[k]), i, method.Similarity(wr1, wr2, "pearson"))
			var wa, wb []float64
			for u, key := range ukeys {
				gw, ok := whG[k][key]
				if !ok {
					gw = wh.apply(ug[u])
					whG[k][key] = gw
				}
				wa = append(wa, dot64(f1, gw))
				wb = append(wb, dot64(f2, gw))
			}
			put(fmt.Sprintf("white p=%g Eq4 retrieved, pearson", whP[k]), i, method.Similarity(wa, wb, "pearson"))
			for _, kappa := range []float64{0.5, 1, 2, 4} {
				put(fmt.Sprintf("white p=%g overlap kappa=%g", whP[k], kappa), i, expOverlap(wa, wb, kappa))
				// Over random contexts whose whitened vectors were
				// Gaussian, the overlap would be exp(-κ²(1 - cos f)/4):
				// a monotone function of cos f.
				put(fmt.Sprintf("white p=%g overlap random kappa=%g", whP[k], kappa), i, expOverlap(wr1, wr2, kappa))
			}
			for _, nr := range []int{50, 200, 1000} {
				if nr > len(wr1) {
					break
				}
				put(fmt.Sprintf("white p=%g Eq4 retrieved + %d random, pearson", whP[k], nr), i,
					method.Similarity(append(slices.Clip(wa), wr1[:nr]...), append(slices.Clip(wb), wr2[:nr]...), "pearson"))
			}
			if k == 0 {
				// Each sentence read as the centroid of the contexts it
				// fits, weighted by p(c|s) ∝ e^{κx} over its own set
				// C_s or over C = C_s1 + C_s2, compared by their cosine
				// in whitened coordinates (κ = 0: the plain mean).
				wg := func(keys []string) [][]float32 {
					out := make([][]float32, len(keys))
					for u, key := range keys {
						out[u] = whG[k][key]
					}
					return out
				}
				own1, own2 := wg(sets[p.S1].keys), wg(sets[p.S2].keys)
				uni := wg(ukeys)
				for _, kappa := range []float64{0, 0.5, 2, 8} {
					put(fmt.Sprintf("centroid own C_s, white, kappa=%g", kappa), i,
						method.Similarity(centroid(own1, f1, kappa), centroid(own2, f2, kappa), "cosine"))
					if kappa > 0 { // at κ = 0 both are C's mean
						put(fmt.Sprintf("centroid C1+C2, white, kappa=%g", kappa), i,
							method.Similarity(centroid(uni, f1, kappa), centroid(uni, f2, kappa), "cosine"))
						put(fmt.Sprintf("centroid random, white, kappa=%g", kappa), i,
							method.Similarity(centroid(whRefG[k], f1, kappa), centroid(whRefG[k], f2, kappa), "cosine"))
					}
				}
			}
			put(fmt.Sprintf("white p=%g Eq4 retrieved, cosine (global centre)", whP[k]), i, method.Similarity(wa, wb, "cosine"))
			put(fmt.Sprintf("white p=%g cos f under W^2", whP[k]), i, dot64(wh.apply(f1), wh.apply(f2))/math.Sqrt(dot64(wh.apply(f1), wh.apply(f1))*dot64(wh.apply(f2), wh.apply(f2))))
		}
	}
	tf := make([]float64, len(pairs))
	for i, p := range pairs {
		tf[i] = bagCosine(m, p.S1, p.S2)
	}
	put2 := func(name string, v []float64) { res[name] = v; order = append(order, name) }
	put2("tfidf_stem (vocab idf)", tf)
	al := res["align F1 (the LI scorer on the two sentences)"]
	mixes := []string{"LI Eq4 retrieved, zref", "LI Eq4 retrieved, pearson", "LI Eq4 random, pearson", "bilinear Eq4 retrieved, zref"}
	if !*liScorer {
		mixes = mixes[3:]
	}
	for _, pv := range whP {
		mixes = append(mixes, fmt.Sprintf("white p=%g Eq4 retrieved, cosine (global centre)", pv), fmt.Sprintf("white p=%g Eq4 retrieved + 1000 random, pearson", pv))
	}
	rawMixes := append([]string{"bilinear Eq4 retrieved, zref"}, mixes[len(mixes)-2*len(whP):]...)
	for _, name := range order {
		if strings.Contains(name, "overlap") || strings.Contains(name, "centroid") {
			mixes = append(mixes, name)
		}
	}
	cfz := res["cos f (the bilinear scorer's own)"]
	put2("z: cos f + 3 align (no contexts)", wsum(cfz, al, 3))
	rawMix := func(a, b []float64, wa, wb float64) []float64 {
		out := make([]float64, len(a))
		for i := range a {
			out[i] = (wa*a[i] + wb*b[i]) / (wa + wb)
		}
		return out
	}
	for _, n := range rawMixes {
		for _, r := range []float64{6, 3, 2} {
			put2(fmt.Sprintf("raw: (%g align + %s)/%g", r, n, r+1), rawMix(al, res[n], r, 1))
		}
	}
	for _, n := range mixes {
		for _, w := range []float64{0.25, 0.5, 1} {
			put2(fmt.Sprintf("z: align + %g %s", w, n), wsum(al, res[n], w))
			cf := res["cos f (the bilinear scorer's own)"]
			put2(fmt.Sprintf("z: cos f + 3 align + %g %s", w, n), wsum(wsum(cf, al, 3), res[n], w))
		}
	}
	fmt.Printf("== %s (%d pairs), |C_s| %d, top_k %d, %d random contexts, %.0fs\n", path, len(pairs), *liSet, *topK, len(refT), time.Since(t0).Seconds())
	for _, name := range order {
		fmt.Printf("%-60s %6.2f\n", name, 100*stats.Spearman(res[name], gold))
	}
}

// expOverlap is Σ_c √(p1(c) p2(c)) for p_i(c) ∝ e^{κ a_i(c)} over the
// entries of a and b: the Bhattacharyya overlap of the two sentences'
// distributions over the contexts.
func expOverlap(a, b []float64, kappa float64) float64 {
	pa, pb := softmax(a, kappa), softmax(b, kappa)
	var s float64
	for i := range pa {
		s += math.Sqrt(pa[i] * pb[i])
	}
	return s
}

// softmax is p_i ∝ e^{κ x_i}.
func softmax(x []float64, kappa float64) []float64 {
	out := expShift(x, kappa)
	var t float64
	for _, v := range out {
		t += v
	}
	for i := range out {
		out[i] /= t
	}
	return out
}

// expShift is e^{κ (x_i - max x)}: softmax's weights before their sum
// divides them.
func expShift(x []float64, kappa float64) []float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = max(m, v)
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = math.Exp(kappa * (v - m))
	}
	return out
}

// unitRows returns the rows of a (rows, d) table normalised to unit
// length, each computed on first use.
func unitRows(table []float32, d int) func(int32) []float32 {
	cache := map[int32][]float32{}
	return func(row int32) []float32 {
		if v, ok := cache[row]; ok {
			return v
		}
		v := append([]float32(nil), table[int(row)*d:int(row)*d+d]...)
		contrast.Normalize(v)
		cache[row] = v
		return v
	}
}

// meanRows is the weighted mean of the rows vec gives for the words of s,
// each weighted by its IDF raised to pw: a sentence vector a mean encoder
// can hold, whose cosine is the soft cosine with unclipped similarities.
func meanRows(m *contrast.Model, vec func(int32) []float32, s string, pw float64) []float32 {
	out := make([]float32, m.Dim())
	rows, w := m.Vocab.Bag(s, nil, nil)
	for i, r := range rows {
		wt := float32(math.Pow(float64(w[i]), pw))
		for t, v := range vec(r) {
			out[t] += wt * v
		}
	}
	return out
}

// tableSum is the sum of the model's sentence and context tables.
func tableSum(m *contrast.Model) []float32 {
	sum := make([]float32, len(m.Sent))
	for i := range sum {
		sum[i] = m.Sent[i] + m.Ctx[i]
	}
	return sum
}

// centroid is Σ_j p_j g_j with p_j ∝ e^{κ f·g_j}: the sentence f read
// as the mean of the (whitened) context vectors gs it fits.
func centroid(gs [][]float32, f []float32, kappa float64) []float64 {
	if len(gs) == 0 {
		return nil
	}
	x := make([]float64, len(gs))
	for j, g := range gs {
		x[j] = kappa * dot64(f, g)
	}
	out := make([]float64, len(gs[0]))
	for j, w := range expShift(x, 1) { // the cosine does not need their sum
		for t, v := range gs[j] {
			out[t] += w * float64(v)
		}
	}
	return out
}

// wordCos is the word similarity of unit rows vec: their dot product, 0
// when either word has no row of its own (a hashed bucket).
func wordCos(m *contrast.Model, vec func(int32) []float32) func(x, y int32) float32 {
	words := int32(len(m.Vocab.Words))
	return func(x, y int32) float32 {
		if x >= words || y >= words {
			return 0
		}
		return contrast.Dot(vec(x), vec(y))
	}
}

// alignSim is align's F1 with any word similarity (the same row is 1).
func alignSim(m *contrast.Model, sim func(x, y int32) float32, a, b string, pw float64) float64 {
	ra, wa := m.Vocab.Bag(a, nil, nil)
	rb, wb := m.Vocab.Bag(b, nil, nil)
	if len(ra) == 0 || len(rb) == 0 {
		return 0
	}
	dir := func(rx []int32, wx []float32, ry []int32) float64 {
		var num, den float64
		for i, x := range rx {
			best := float32(0)
			for _, y := range ry {
				c := float32(1)
				if x != y {
					c = max(0, sim(x, y))
				}
				best = max(best, c)
			}
			w := math.Pow(float64(wx[i]), pw)
			num += w * float64(best)
			den += w
		}
		return num / den
	}
	p, q := dir(ra, wa, rb), dir(rb, wb, ra)
	if p+q <= 0 {
		return 0
	}
	return 2 * p * q / (p + q)
}
