// Command signal is an early, cheap check that the coherence model carries
// signal for similarity: for each STS pair, the contexts of the chunks
// retrieved for s1 are scored for s1 and for s2 with log p(y=1 | c, s) of
// the discriminative model, and the cosine of the two score vectors is
// correlated (Spearman) with the gold scores.
//
//	signal -index out/bench/uni4/index -chunks 'out/bench/uni4/chunks/*.parquet' \
//	  -model out/train/base-interaction -sts ../shared/data/eval/stsb-dev.tsv -n 300
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/retrieval/corpus"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/disc"
	"github.com/ctxsim/ctxsim/scoring/tokenizer"
)

func main() {
	indexDir := flag.String("index", "", "index directory")
	chunksGlob := flag.String("chunks", "", "glob of the chunks table")
	modelDir := flag.String("model", "", "model directory (tokenizer.json, disc.*)")
	sts := flag.String("sts", "", "STS TSV (score, s1, s2, genre)")
	n := flag.Int("n", 300, "pairs to evaluate")
	nctx := flag.Int("contexts", 200, "contexts per pair")
	k := flag.Int("k", 200, "chunks retrieved for s1")
	flag.Parse()

	f, err := os.Open(filepath.Join(*modelDir, "tokenizer.json"))
	check(err)
	tok, err := tokenizer.Load(f)
	check(err)
	f.Close()
	model, _, err := disc.Load(*modelDir, tok.Fingerprint())
	check(err)
	ix, err := retrieval.Open(*indexDir)
	check(err)
	defer ix.Close()
	chunks := map[string][]string{}
	files, err := filepath.Glob(*chunksGlob)
	check(err)
	for _, p := range files {
		cs, err := schemas.ReadFile[schemas.Chunk](p)
		check(err)
		for _, c := range cs {
			chunks[c.ID] = c.Sentences
		}
	}
	// A plain unigram TF-IDF cosine baseline, IDF counted over the chunks.
	df := map[string]int{}
	for _, ss := range chunks {
		seen := map[string]bool{}
		for _, s := range ss {
			for _, w := range words(s) {
				if !seen[w] {
					seen[w] = true
					df[w]++
				}
			}
		}
	}
	nChunks := float64(len(chunks))
	tfidf := func(s string) map[string]float64 {
		v := map[string]float64{}
		for _, w := range words(s) {
			v[w] += math.Log(nChunks / float64(1+df[w]))
		}
		return v
	}
	pairs := readSTS(*sts, *n)
	var base []float64
	for _, p := range pairs {
		a, b := tfidf(p.s1), tfidf(p.s2)
		var ab, aa, bb float64
		for w, x := range a {
			ab += x * b[w]
			aa += x * x
		}
		for _, y := range b {
			bb += y * y
		}
		if aa == 0 || bb == 0 {
			base = append(base, 0)
		} else {
			base = append(base, ab/math.Sqrt(aa*bb))
		}
	}
	w := model.Cfg.Window
	d := model.VecDim()
	var gold, pred []float64
	start := time.Now()
	for _, p := range pairs {
		hits, _, err := ix.Search(context.Background(), p.s1, *k, nil)
		check(err)
		type ctx struct{ left, right []string }
		var ctxs []ctx
		for _, h := range hits {
			ss := chunks[h.ChunkID]
			for j := 1; j+1 < len(ss) && len(ctxs) < *nctx; j++ {
				ctxs = append(ctxs, ctx{ss[max(0, j-w):j], ss[j+1 : min(len(ss), j+1+w)]})
			}
			if len(ctxs) >= *nctx {
				break
			}
		}
		if len(ctxs) == 0 {
			gold = append(gold, p.score)
			pred = append(pred, 0)
			continue
		}
		// Encode each distinct sentence once.
		index := map[string]int{}
		var seqs [][]int32
		id := func(s string) int {
			if i, ok := index[s]; ok {
				return i
			}
			index[s] = len(seqs)
			seqs = append(seqs, tok.Encode(s))
			return len(seqs) - 1
		}
		id(p.s1)
		id(p.s2)
		for _, c := range ctxs {
			for _, s := range c.left {
				id(s)
			}
			for _, s := range c.right {
				id(s)
			}
		}
		var vecs [][]float32
		for i := 0; i < len(seqs); i += 128 {
			vecs = append(vecs, model.Encode(seqs[i:min(i+128, len(seqs))])...)
		}
		side := func(ss []string) []float32 {
			vs := make([][]float32, len(ss))
			for i, s := range ss {
				vs[i] = vecs[index[s]]
			}
			out := make([]float32, d)
			disc.MeanVec(out, vs)
			return out
		}
		var l, r, s1, s2 []float32
		for _, c := range ctxs {
			l = append(l, side(c.left)...)
			r = append(r, side(c.right)...)
			s1 = append(s1, vecs[index[p.s1]]...)
			s2 = append(s2, vecs[index[p.s2]]...)
		}
		a, b := model.Logits(l, s1, r), model.Logits(l, s2, r)
		va, vb := make([]float64, len(a)), make([]float64, len(b))
		for i := range a {
			va[i], vb[i] = float64(disc.LogSigmoid(a[i])), float64(disc.LogSigmoid(b[i]))
		}
		gold = append(gold, p.score)
		pred = append(pred, cosine(va, vb))
	}
	fmt.Printf("signal: %d STS pairs, %d contexts each (from the top %d chunks for s1), discriminative term only: Spearman x100 = %.2f; unigram TF-IDF cosine on the same pairs: %.2f (%.1fs)\n",
		len(pairs), *nctx, *k, 100*spearman(pred, gold), 100*spearman(base, gold), time.Since(start).Seconds())
}

type pair struct {
	score  float64
	s1, s2 string
}

func readSTS(path string, n int) []pair {
	f, err := os.Open(path)
	check(err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	var out []pair
	for sc.Scan() && len(out) < n {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 3 || cols[0] == "score" {
			continue
		}
		s, err := strconv.ParseFloat(cols[0], 64)
		check(err)
		out = append(out, pair{s, corpus.Normalize(cols[1]), corpus.Normalize(cols[2])})
	}
	return out
}

func cosine(a, b []float64) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += a[i] * b[i]
		aa += a[i] * a[i]
		bb += b[i] * b[i]
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// spearman is the Pearson correlation of the ranks (ties averaged).
func spearman(x, y []float64) float64 {
	return pearson(ranks(x), ranks(y))
}

func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
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

func pearson(x, y []float64) float64 {
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
	return sxy / math.Sqrt(sxx*syy)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// words splits s into lowercased runs of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
