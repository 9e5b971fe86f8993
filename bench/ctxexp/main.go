// Command ctxexp trains the contrastive context model on a corpus and
// measures it: the rank of true contexts on held-out documents, and on an
// STS file the Spearman correlation of the sentence-vector cosine and of
// Eq. 4 over random and over retrieved contexts. It is the bench behind
// the choice of the model's settings (run on STS-B train).
package main

import (
	"cmp"
	"context"
	"encoding/gob"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"time"

	porterstemmer "github.com/blevesearch/go-porterstemmer"

	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/retrieval/corpus"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/contrast"
	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/lexical"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/scoring/stats"
	"github.com/ctxsim/ctxsim/scoring/sts"
)

var (
	corpusPath = flag.String("corpus", "../shared/data/corpus/mixed-20m.jsonl.gz", "corpus file")
	docsCache  = flag.String("docs_cache", "out/ctxexp/docs.gob", "cache of the split corpus")
	stsPath    = flag.String("sts", "../shared/data/eval/stsb-train.tsv", "STS file")
	maxPairs   = flag.Int("pairs", 0, "STS pairs (spread), 0 all")
	indexDir   = flag.String("index", "", "index dir for retrieved contexts")
	chunks     = flag.String("chunks", "", "chunks glob for retrieved contexts")
	hitsCache  = flag.String("hits_cache", "", "cache of retrieval results")
	topK       = flag.Int("top_k", 2000, "chunks retrieved")
	setSizes   = flag.String("set_sizes", "100,500", "|C_s| for Eq. 4 over retrieved contexts")
	refN       = flag.Int("ref", 1000, "random contexts for Eq. 4 over random contexts")
	threads    = flag.Int("threads", 1, "training threads")
	dim        = flag.Int("dim", 256, "")
	vocab      = flag.Int("vocab", 60000, "")
	buckets    = flag.Int("buckets", 16384, "")
	epochs     = flag.Float64("epochs", 1, "")
	lr         = flag.Float64("lr", 0.003, "")
	batch      = flag.Int("batch", 1024, "")
	temp       = flag.Float64("temp", 0.05, "")
	sym        = flag.Bool("sym", true, "")
	window     = flag.Int("window", 2, "")
	initStd    = flag.Float64("init_std", 0.1, "")
	stem       = flag.Bool("stem", false, "")
	maxDocs    = flag.Int("max_docs", 0, "")
	save       = flag.String("save", "", "save the model to this directory")
	load       = flag.String("load", "", "load the model from this directory instead of training")
	skipRank   = flag.Bool("skip_rank", false, "")
	cpuProf    = flag.String("cpuprofile", "", "")
	noSTS      = flag.Bool("no_sts", false, "")
	liFile     = flag.String("li", "", "STS file: Eq. 4 under a late-interaction scorer, and stop")
	liSet      = flag.Int("li_set", 100, "|C_s| for -li")
	liScorer   = flag.Bool("li_scorer", true, "-li: also the late-interaction scorer (slow)")
	whitePs    = flag.String("white_p", "", "-li: comma-separated powers p of whitened bilinear Eq. 4 (g -> C^(-p/2)(g - mean) over the random contexts)")
	whiteAlpha = flag.Float64("white_alpha", 0.05, "-li: shrinkage of the whitening covariance towards its mean eigenvalue")
	leverFiles = flag.String("levers", "", "comma-separated STS files: measure sentence-level levers on each and stop")
)

func loadDocs() []examples.Doc {
	if f, err := os.Open(*docsCache); err == nil {
		defer f.Close()
		var docs []examples.Doc
		if err := gob.NewDecoder(f).Decode(&docs); err == nil {
			return docs
		}
	}
	byID := map[string]examples.Doc{}
	opts := corpus.Options{}
	_, err := corpus.ReadFile(context.Background(), *corpusPath, opts, func(d schemas.Document) {
		sents, _, _ := corpus.Split(d, opts)
		doc := examples.Doc{ID: d.DocID}
		for _, s := range sents {
			doc.Sentences = append(doc.Sentences, s.Text)
		}
		if len(doc.Sentences) > 0 {
			byID[d.DocID] = doc
		}
	}, func(schemas.DeadLetter) {})
	if err != nil {
		log.Fatal(err)
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	docs := make([]examples.Doc, len(ids))
	for i, id := range ids {
		docs[i] = byID[id]
	}
	os.MkdirAll(strings.TrimSuffix(*docsCache, "/docs.gob"), 0o755)
	if f, err := os.Create(*docsCache); err == nil {
		gob.NewEncoder(f).Encode(docs)
		f.Close()
	}
	return docs
}

func main() {
	flag.Parse()
	if *cpuProf != "" {
		f, _ := os.Create(*cpuProf)
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	t0 := time.Now()
	docs := loadDocs()
	if *maxDocs > 0 && len(docs) > *maxDocs {
		docs = docs[:*maxDocs]
	}
	train, held := examples.Split(docs, examples.Config{})
	fmt.Printf("docs %d (train %d, held-out %d) loaded in %.0fs\n", len(docs), len(train), len(held), time.Since(t0).Seconds())
	cfg := contrast.DefaultConfig()
	cfg.Dim, cfg.Vocab, cfg.Buckets, cfg.Epochs, cfg.LR, cfg.Batch = *dim, *vocab, *buckets, *epochs, *lr, *batch
	cfg.Temperature, cfg.Symmetric, cfg.Window, cfg.InitStd, cfg.Stem = *temp, *sym, *window, *initStd, *stem
	var m *contrast.Model
	var err error
	if *load != "" {
		m, _, err = contrast.Load(*load)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("loaded %s: %+v\n", *load, m.Cfg)
	} else {
		fmt.Printf("config %+v\n", cfg)
		t1 := time.Now()
		m, _, err = contrast.Train(cfg, train, contrast.TrainOptions{Threads: *threads, Every: 200, Progress: func(p contrast.Progress) {
			fmt.Printf("  step %d/%d loss %.4f %.0fs\n", p.Step, p.Steps, p.Loss, p.Elapsed.Seconds())
		}})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("trained in %.1fs (%d threads)\n", time.Since(t1).Seconds(), *threads)
		if *save != "" {
			if err := m.Save(*save, nil); err != nil {
				log.Fatal(err)
			}
		}
	}
	if *liFile != "" {
		liContexts(m, docs, *liFile)
		return
	}
	if *leverFiles != "" {
		levers(m, docs, strings.Split(*leverFiles, ","))
		return
	}
	for _, kind := range []examples.NegKind{examples.Random, examples.SameDoc} {
		for _, n := range []int{20, 100} {
			if *skipRank {
				break
			}
			tasks := examples.RankTasks(held, n, 1000, kind, cfg.Window, 7)
			r := examples.Rank(tasks, func(t examples.RankTask) []float32 {
				f := m.SentenceVec(t.S)
				out := make([]float32, len(t.Contexts))
				for i, c := range t.Contexts {
					out[i] = m.Score(f, m.ContextVec(c.Left, c.Right))
				}
				return out
			})
			fmt.Printf("rank N=%d %s: MRR %.3f hits@1 %.3f (%d tasks)\n", n, r.Kind, r.MRR, r.Hits1, r.Tasks)
		}
	}
	if !*noSTS {
		evalSTS(m, docs)
	}
}

func evalSTS(m *contrast.Model, docs []examples.Doc) {
	all, err := sts.Read(context.Background(), *stsPath)
	if err != nil {
		log.Fatal(err)
	}
	pairs := sts.Spread(all, *maxPairs)
	gold := make([]float64, len(pairs))
	for i, p := range pairs {
		gold[i] = p.Gold
	}
	report := func(name string, pred []float64) {
		fmt.Printf("STS %-40s %6.2f\n", name, 100*stats.Spearman(pred, gold))
	}
	fvec := map[string][]float32{}
	gvec := map[string][]float32{}
	for _, p := range pairs {
		for _, s := range []string{p.S1, p.S2} {
			if fvec[s] == nil {
				fvec[s] = m.SentenceVec(s)
				gvec[s] = m.ContextVec([]string{s}, nil)
			}
		}
	}
	cos := make([]float64, len(pairs))
	cosG := make([]float64, len(pairs))
	cosFG := make([]float64, len(pairs))
	for i, p := range pairs {
		cos[i] = float64(contrast.Dot(fvec[p.S1], fvec[p.S2]))
		cosG[i] = float64(contrast.Dot(gvec[p.S1], gvec[p.S2]))
		cosFG[i] = (cos[i] + cosG[i]) / 2
	}
	tfp := tfidfPreds(pairs)
	report("tfidf (IDF over chunks)", tfp)
	hyb = func(name string, x []float64) {
		report("hybrid z "+name, zsum(x, tfp))
		report("hybrid rank "+name, ranksum(x, tfp))
	}
	report("cosine f(s1).f(s2)", cos)
	hyb("cosine f", cos)
	lexicalVariants(m, pairs, report, cos)
	report("cosine g(s1).g(s2)", cosG)
	report("mean of the two", cosFG)

	// Mean sentence vector over a corpus sample, for centring.
	r := rand.New(rand.NewPCG(3, 4))
	var refSents []string
	var refCtx [][]float32
	for len(refCtx) < *refN {
		d := docs[r.IntN(len(docs))]
		if len(d.Sentences) < 3 {
			continue
		}
		i := 1 + r.IntN(len(d.Sentences)-2)
		c := examples.ContextAt(d, i, m.Cfg.Window)
		refCtx = append(refCtx, m.ContextVec(c.Left, c.Right))
		refSents = append(refSents, d.Sentences[i])
	}
	mu := make([]float32, m.Dim())
	for _, s := range refSents {
		for j, x := range m.SentenceVec(s) {
			mu[j] += x / float32(len(refSents))
		}
	}
	centred := func(v []float32) []float32 {
		out := make([]float32, len(v))
		for j := range v {
			out[j] = v[j] - mu[j]
		}
		return out
	}
	cc := make([]float64, len(pairs))
	for i, p := range pairs {
		cc[i] = cosine(centred(fvec[p.S1]), centred(fvec[p.S2]))
	}
	report("cosine, centred f", cc)

	scores := func(s string, ctx [][]float32, center bool) []float64 {
		f := fvec[s]
		if center {
			f = centred(f)
		}
		out := make([]float64, len(ctx))
		for i, g := range ctx {
			out[i] = float64(m.Score(f, g))
		}
		return out
	}
	for _, n := range []int{200, *refN} {
		ref := refCtx[:min(n, len(refCtx))]
		p1 := make([]float64, len(pairs))
		p2 := make([]float64, len(pairs))
		p3 := make([]float64, len(pairs))
		for i, p := range pairs {
			a, b := scores(p.S1, ref, false), scores(p.S2, ref, false)
			p1[i] = method.Similarity(a, b, "pearson")
			p3[i] = method.Similarity(a, b, "cosine")
			a, b = scores(p.S1, ref, true), scores(p.S2, ref, true)
			p2[i] = method.Similarity(a, b, "pearson")
		}
		report(fmt.Sprintf("Eq4 random %d, cosine", n), p3)
		report(fmt.Sprintf("Eq4 random %d, pearson", n), p1)
		report(fmt.Sprintf("Eq4 random %d, ctx-normalised pearson", n), p2)
		hyb(fmt.Sprintf("Eq4 random %d pearson", n), p1)
	}
	if *indexDir == "" {
		return
	}
	retrieved(m, pairs, report, centred, refCtx)
}

var hyb func(string, []float64)

// lexicalVariants reports stemmed TF-IDF and soft cosines that let similar
// words (by the model's sentence table) match partially.
func lexicalVariants(m *contrast.Model, pairs []sts.Pair, report func(string, []float64), cos []float64) {
	st, err := resources.LoadStore(context.Background(), *chunks)
	if err != nil {
		log.Fatal(err)
	}
	stem := func(w string) string { return porterstemmer.StemString(w) }
	df := map[string]int{}
	dfStem := map[string]int{}
	seen := map[string]bool{}
	seenS := map[string]bool{}
	words := make([][]string, st.Sentences())
	for k := range words {
		words[k] = lexical.Words(st.Text(int32(k)))
	}
	stems := map[string]string{}
	stemOf := func(w string) string {
		if x, ok := stems[w]; ok {
			return x
		}
		x := stem(w)
		stems[w] = x
		return x
	}
	for i := range st.Len() {
		clear(seen)
		clear(seenS)
		for _, k := range st.ChunkSentences(st.ChunkIDAt(i)) {
			for _, w := range words[k] {
				if !seen[w] {
					seen[w] = true
					df[w]++
				}
				if x := stemOf(w); !seenS[x] {
					seenS[x] = true
					dfStem[x]++
				}
			}
		}
	}
	n := float64(st.Len())
	type vec map[string]float64
	mk := func(s string, stemmed bool) vec {
		v := vec{}
		for _, w := range lexical.Words(s) {
			if stemmed {
				x := stemOf(w)
				v[x] += math.Log(n / float64(1+dfStem[x]))
			} else {
				v[w] += math.Log(n / float64(1+df[w]))
			}
		}
		return v
	}
	cosv := mapCosine[string]
	plain := make([]float64, len(pairs))
	stemmed := make([]float64, len(pairs))
	for i, p := range pairs {
		plain[i] = cosv(mk(p.S1, false), mk(p.S2, false))
		stemmed[i] = cosv(mk(p.S1, true), mk(p.S2, true))
	}
	report("tfidf recomputed", plain)
	report("tfidf stemmed", stemmed)
	hyb = func(name string, x []float64) {
		report("hybrid z "+name, zsum(x, plain))
		report("hybrid z(stem) "+name, zsum(x, stemmed))
		avg := make([]float64, len(x))
		for i := range x {
			avg[i] = x[i] + stemmed[i]
		}
		report("hybrid sum(stem) "+name, avg)
	}
	hyb("cosine f", cos)
	// Soft cosine: word vectors from the sentence table.
	d := m.Dim()
	unit := func(w string) []float32 {
		r := m.Vocab.Row(w)
		v := append([]float32(nil), m.Sent[int(r)*d:int(r)*d+d]...)
		contrast.Normalize(v)
		return v
	}
	for _, thr := range []float32{0.3, 0.5, 0.7} {
		soft := func(a, b vec, words map[string][]float32) float64 {
			k := func(x, y string) float64 {
				if x == y {
					return 1
				}
				c := contrast.Dot(words[x], words[y])
				if c < thr {
					return 0
				}
				return float64(c)
			}
			dot := func(a, b vec) float64 {
				var s float64
				for x, u := range a {
					for y, v := range b {
						s += u * v * k(x, y)
					}
				}
				return s
			}
			ab, aa, bb := dot(a, b), dot(a, a), dot(b, b)
			if aa <= 0 || bb <= 0 {
				return 0
			}
			return ab / math.Sqrt(aa*bb)
		}
		pred := make([]float64, len(pairs))
		for i, p := range pairs {
			a, b := mk(p.S1, false), mk(p.S2, false)
			words := map[string][]float32{}
			for _, v := range []vec{a, b} {
				for w := range v {
					words[w] = unit(w)
				}
			}
			pred[i] = soft(a, b, words)
		}
		report(fmt.Sprintf("soft tfidf cosine thr %.1f", thr), pred)
		hyb(fmt.Sprintf("soft %.1f", thr), pred)
	}
}

func tfidfPreds(pairs []sts.Pair) []float64 {
	st, err := resources.LoadStore(context.Background(), *chunks)
	if err != nil {
		log.Fatal(err)
	}
	t := &lexical.TFIDF{DF: map[string]int{}, N: float64(st.Len())}
	seen := map[string]bool{}
	for i := range st.Len() {
		clear(seen)
		for _, k := range st.ChunkSentences(st.ChunkIDAt(i)) {
			for _, w := range lexical.Words(st.Text(k)) {
				if !seen[w] {
					seen[w] = true
					t.DF[w]++
				}
			}
		}
	}
	out := make([]float64, len(pairs))
	for i, p := range pairs {
		out[i] = t.Cosine(p.S1, p.S2)
	}
	return out
}

func zscore(x []float64) []float64 {
	m, sd := meanSD(x)
	out := make([]float64, len(x))
	for i, a := range x {
		out[i] = (a - m) / sd
	}
	return out
}

func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	out := make([]float64, len(x))
	for r, i := range idx {
		out[i] = float64(r)
	}
	return out
}

func zsum(a, b []float64) []float64 {
	za, zb := zscore(a), zscore(b)
	out := make([]float64, len(a))
	for i := range a {
		out[i] = za[i] + zb[i]
	}
	return out
}

func ranksum(a, b []float64) []float64 {
	ra, rb := ranks(a), ranks(b)
	out := make([]float64, len(a))
	for i := range a {
		out[i] = ra[i] + rb[i]
	}
	return out
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

func retrieved(m *contrast.Model, pairs []sts.Pair, report func(string, []float64), centred func([]float32) []float32, refCtx [][]float32) {
	ctx := context.Background()
	t0 := time.Now()
	st, err := resources.LoadStore(ctx, *chunks)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("store: %d chunks in %.0fs\n", st.Len(), time.Since(t0).Seconds())
	hits := map[string][]schemas.Hit{}
	type compact struct {
		IDs  []string
		Sent []string
		Hits [][]int32
	}
	if *hitsCache != "" {
		if f, err := os.Open(*hitsCache + ".v2"); err == nil {
			var c compact
			gob.NewDecoder(f).Decode(&c)
			f.Close()
			for i, s := range c.Sent {
				h := make([]schemas.Hit, len(c.Hits[i]))
				for j, k := range c.Hits[i] {
					h[j] = schemas.Hit{ChunkID: c.IDs[k]}
				}
				hits[s] = h
			}
		} else if f, err := os.Open(*hitsCache); err == nil {
			gob.NewDecoder(f).Decode(&hits)
			f.Close()
			var c compact
			idx := map[string]int32{}
			for s, h := range hits {
				c.Sent = append(c.Sent, s)
				row := make([]int32, len(h))
				for j, x := range h {
					k, ok := idx[x.ChunkID]
					if !ok {
						k = int32(len(c.IDs))
						idx[x.ChunkID] = k
						c.IDs = append(c.IDs, x.ChunkID)
					}
					row[j] = k
				}
				c.Hits = append(c.Hits, row)
			}
			if f, err := os.Create(*hitsCache + ".v2"); err == nil {
				gob.NewEncoder(f).Encode(c)
				f.Close()
			}
		}
		fmt.Printf("hits for %d sentences loaded in %.0fs\n", len(hits), time.Since(t0).Seconds())
	}
	var need []string
	for _, p := range pairs {
		for _, s := range []string{p.S1, p.S2} {
			if h, ok := hits[s]; !ok || len(h) < min(*topK, 1) {
				need = append(need, s)
			}
		}
	}
	if len(need) > 0 {
		ix, err := retrieval.Open(*indexDir)
		if err != nil {
			log.Fatal(err)
		}
		t1 := time.Now()
		for i, s := range need {
			if _, ok := hits[s]; ok {
				continue
			}
			h, _, err := ix.Search(ctx, s, *topK, nil)
			if err != nil {
				log.Fatal(err)
			}
			hits[s] = h
			if i%1000 == 0 {
				fmt.Printf("  retrieved %d/%d (%.0fs)\n", i, len(need), time.Since(t1).Seconds())
			}
		}
		ix.Close()
		if *hitsCache != "" {
			f, _ := os.Create(*hitsCache)
			gob.NewEncoder(f).Encode(hits)
			f.Close()
		}
	}
	e := &method.Engine{Store: st, Window: m.Cfg.Window} // Candidates and BuildSet only
	sums := map[int32][]float32{}
	ctxVec := func(c method.Cand) []float32 {
		v := make([]float32, m.Dim())
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
	type scored struct {
		set []method.Cand
	}
	sets := map[int]map[string]scored{}
	sizes := []int{}
	for _, x := range strings.Split(*setSizes, ",") {
		var n int
		fmt.Sscan(x, &n)
		sizes = append(sizes, n)
		sets[n] = map[string]scored{}
	}
	for _, p := range pairs {
		for _, s := range []string{p.S1, p.S2} {
			if _, ok := sets[sizes[0]][s]; ok {
				continue
			}
			h := hits[s]
			h = h[:min(len(h), *topK)]
			cands, _ := e.Candidates(h)
			f := m.SentenceVec(s)
			for i := range cands {
				cands[i].S = m.Score(f, ctxVec(cands[i]))
			}
			slices.SortStableFunc(cands, func(a, b method.Cand) int { return cmp.Compare(b.S, a.S) })
			for _, n := range sizes {
				sets[n][s] = scored{e.BuildSet(cands, n, true, 0.5)}
			}
		}
	}
	for _, n := range sizes {
		for _, mode := range []string{"pearson", "ctxnorm-pearson", "pearson+ref200", "zref-cosine", "within-pearson"} {
			pred := make([]float64, len(pairs))
			for i, p := range pairs {
				a, b := sets[n][p.S1], sets[n][p.S2]
				var gs [][]float32
				seen := map[string]bool{}
				for _, x := range []scored{a, b} {
					for _, c := range x.set {
						if !seen[c.Key()] {
							seen[c.Key()] = true
							gs = append(gs, ctxVec(c))
						}
					}
				}
				if mode == "pearson+ref200" {
					gs = append(gs, refCtx[:200]...)
				}
				f1, f2 := m.SentenceVec(p.S1), m.SentenceVec(p.S2)
				if mode == "ctxnorm-pearson" {
					f1, f2 = centred(f1), centred(f2)
				}
				va, vb := make([]float64, len(gs)), make([]float64, len(gs))
				for j, g := range gs {
					va[j] = float64(m.Score(f1, g))
					vb[j] = float64(m.Score(f2, g))
				}
				switch mode {
				case "zref-cosine":
					// Standardise each sentence's scores by their mean
					// and spread over the random reference contexts,
					// then compare over C without centring on C.
					z := func(f []float32, v []float64) {
						var mu, sd float64
						for _, g := range refCtx {
							x := float64(m.Score(f, g))
							mu += x
							sd += x * x
						}
						mu /= float64(len(refCtx))
						sd = math.Sqrt(sd/float64(len(refCtx)) - mu*mu)
						for j := range v {
							v[j] = (v[j] - mu) / sd
						}
					}
					z(f1, va)
					z(f2, vb)
					pred[i] = method.Similarity(va, vb, "cosine")
				case "within-pearson":
					na := len(a.set)
					pa := method.Similarity(va[:na], vb[:na], "pearson")
					pb := method.Similarity(va[na:], vb[na:], "pearson")
					pred[i] = (pa + pb) / 2
				default:
					pred[i] = method.Similarity(va, vb, "pearson")
				}
			}
			report(fmt.Sprintf("Eq4 retrieved |C_s|=%d %s", n, mode), pred)
			hyb(fmt.Sprintf("Eq4 retrieved %d %s", n, mode), pred)
		}
	}
}

// meanSD is the mean and the (population) standard deviation of x.
func meanSD(x []float64) (mean, sd float64) {
	var v float64
	for _, a := range x {
		mean += a
	}
	mean /= float64(len(x))
	for _, a := range x {
		v += (a - mean) * (a - mean)
	}
	return mean, math.Sqrt(v / float64(len(x)))
}

// stdDev is meanSD's standard deviation.
func stdDev(x []float64) float64 {
	_, sd := meanSD(x)
	return sd
}
