package main

// Word vectors by skip-gram with negative sampling (SGNS) over the
// contrastive model's tokens: a word is predicted from the words near it in
// its sentence, so two words are close when one can stand in for the other
// there, not (as in the contrastive model's tables) when they share
// neighbouring sentences. An experiment: are such vectors a better basis for
// the labeler's word alignment?

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/retrieval/corpus"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/contrast"
)

var (
	sgnsCorpus = flag.String("sgns", "", "comma-separated corpus files: train SGNS word vectors over the model's tokens")
	sgnsSave   = flag.String("sgns_save", "", "write the SGNS table here")
	sgnsLoad   = flag.String("sgns_load", "", "read an SGNS table written by -sgns_save")
	sgnsDim    = flag.Int("sgns_dim", 128, "SGNS width")
	sgnsWin    = flag.Int("sgns_window", 5, "SGNS window (words each side, dynamic)")
	sgnsNeg    = flag.Int("sgns_neg", 5, "SGNS negatives per pair")
	sgnsEpochs = flag.Int("sgns_epochs", 1, "SGNS epochs")
	sgnsSample = flag.Float64("sgns_sample", 1e-4, "SGNS subsampling threshold")
	sgnsLR     = flag.Float64("sgns_lr", 0.025, "SGNS starting learning rate")
	sgnsCenter = flag.Bool("sgns_center", false, "-sgns_load: remove the rows' plain mean before normalising them")
)

// sgnsVecs is the loaded or trained table: unit rows, one per vocabulary
// word (not the hashed buckets), width sgnsD.
var (
	sgnsVecs []float32
	sgnsD    int
)

// wordRows returns the model's vocabulary rows of s's tokens, the hashed
// buckets left out.
func wordRows(m *contrast.Model, s string) []int32 {
	words := int32(len(m.Vocab.Words))
	var out []int32
	for _, w := range m.Vocab.Tokens(s) {
		if r := m.Vocab.Row(w); r < words {
			out = append(out, r)
		}
	}
	return out
}

// eachSentence reads the corpus files and calls fn with the word rows of
// every sentence (as wordRows gives them).
func eachSentence(m *contrast.Model, files []string, fn func(rows []int32)) {
	opts := corpus.Options{}
	for _, f := range files {
		_, err := corpus.ReadFile(context.Background(), f, opts, func(d schemas.Document) {
			sents, _, _ := corpus.Split(d, opts)
			for _, s := range sents {
				fn(wordRows(m, s.Text))
			}
		}, func(schemas.DeadLetter) {})
		if err != nil {
			log.Fatal(err)
		}
	}
}

// sgnsTokens returns every sentence's word rows flat, with -1 after each
// sentence that has any.
func sgnsTokens(m *contrast.Model, files []string) []int32 {
	var toks []int32
	eachSentence(m, files, func(rows []int32) {
		if len(rows) > 0 {
			toks = append(append(toks, rows...), -1)
		}
	})
	return toks
}

func sigmoid(x float32) float32 {
	if x > 8 {
		return 1
	}
	if x < -8 {
		return 0
	}
	return 1 / (1 + float32(math.Exp(-float64(x))))
}

// trainSGNS trains the table on the corpus and leaves it, unit rows, in
// sgnsVecs.
func trainSGNS(m *contrast.Model, files []string) {
	t0 := time.Now()
	toks := sgnsTokens(m, files)
	V := len(m.Vocab.Words)
	count := make([]float64, V)
	var total float64
	for _, t := range toks {
		if t >= 0 {
			count[t]++
			total++
		}
	}
	fmt.Printf("sgns: %d tokens, %d words, read in %.0fs\n", int(total), V, time.Since(t0).Seconds())
	// Negatives from the unigram distribution to the 3/4.
	const tableSize = 1 << 24
	neg := make([]int32, tableSize)
	{
		var z float64
		for _, c := range count {
			z += math.Pow(c, 0.75)
		}
		i, acc := 0, 0.0
		for w, c := range count {
			acc += math.Pow(c, 0.75) / z
			for i < tableSize && float64(i)/tableSize < acc {
				neg[i] = int32(w)
				i++
			}
		}
		for ; i < tableSize; i++ {
			neg[i] = int32(V - 1)
		}
	}
	keep := make([]float32, V)
	for w, c := range count {
		if c == 0 {
			continue
		}
		f := c / total
		keep[w] = float32(min(1, (math.Sqrt(f / *sgnsSample)+1)**sgnsSample/f))
	}
	d := *sgnsDim
	rng := rand.New(rand.NewPCG(5, 6))
	in := make([]float32, V*d)
	out := make([]float32, V*d)
	for i := range in {
		in[i] = (rng.Float32() - 0.5) / float32(d)
	}
	grad := make([]float32, d)
	steps := float64(*sgnsEpochs) * float64(len(toks))
	var done float64
	sent := make([]int32, 0, 256)
	for ep := 0; ep < *sgnsEpochs; ep++ {
		t1 := time.Now()
		for i := 0; i < len(toks); {
			// One sentence, subsampled.
			sent = sent[:0]
			j := i
			for ; j < len(toks) && toks[j] >= 0; j++ {
				if w := toks[j]; keep[w] >= 1 || rng.Float32() < keep[w] {
					sent = append(sent, w)
				}
			}
			done += float64(j - i + 1)
			i = j + 1
			lr := float32(*sgnsLR * max(1e-4, 1-done/steps))
			for p, w := range sent {
				b := 1 + rng.IntN(*sgnsWin)
				for q := max(0, p-b); q < min(len(sent), p+b+1); q++ {
					if q == p {
						continue
					}
					u := in[int(sent[q])*d : int(sent[q])*d+d]
					clear(grad)
					for k := 0; k <= *sgnsNeg; k++ {
						target, label := w, float32(1)
						if k > 0 {
							target = neg[rng.IntN(tableSize)]
							if target == w {
								continue
							}
							label = 0
						}
						v := out[int(target)*d : int(target)*d+d]
						g := (label - sigmoid(contrast.Dot(u, v))) * lr
						for x := range grad {
							grad[x] += g * v[x]
							v[x] += g * u[x]
						}
					}
					for x := range u {
						u[x] += grad[x]
					}
				}
			}
		}
		fmt.Printf("sgns: epoch %d in %.0fs\n", ep+1, time.Since(t1).Seconds())
	}
	for r := range V {
		contrast.Normalize(in[r*d : r*d+d])
	}
	sgnsVecs, sgnsD = in, d
	if *sgnsSave != "" {
		f, err := os.Create(*sgnsSave)
		if err != nil {
			log.Fatal(err)
		}
		err = binary.Write(f, binary.LittleEndian, int32(d))
		if err == nil {
			err = binary.Write(f, binary.LittleEndian, in)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			log.Fatal(err)
		}
	}
}

func loadSGNS(path string, m *contrast.Model) {
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	var d int32
	if err := binary.Read(f, binary.LittleEndian, &d); err != nil {
		log.Fatal(err)
	}
	t := make([]float32, len(m.Vocab.Words)*int(d))
	if err := binary.Read(f, binary.LittleEndian, t); err != nil {
		log.Fatal(err)
	}
	sgnsVecs, sgnsD = t, int(d)
	if *sgnsCenter {
		mu := make([]float64, d)
		n := len(m.Vocab.Words)
		for r := range n {
			for k := range int(d) {
				mu[k] += float64(t[r*int(d)+k]) / float64(n)
			}
		}
		for r := range n {
			row := t[r*int(d) : r*int(d)+int(d)]
			for k := range row {
				row[k] -= float32(mu[k])
			}
			contrast.Normalize(row)
		}
	}
}

// setupSGNS trains or loads the table when asked.
func setupSGNS(m *contrast.Model) {
	switch {
	case *sgnsCorpus != "":
		trainSGNS(m, strings.Split(*sgnsCorpus, ","))
	case *sgnsLoad != "":
		loadSGNS(*sgnsLoad, m)
	}
}

// sgnsRow returns row r of the SGNS table, or zeros for a bucket.
func sgnsRow(r int32) []float32 {
	if int(r)*sgnsD >= len(sgnsVecs) {
		return make([]float32, sgnsD)
	}
	return sgnsVecs[int(r)*sgnsD : int(r)*sgnsD+sgnsD]
}

// sgnsLevers adds the SGNS rows to a levers table.
func sgnsLevers(m *contrast.Model, sum func(int32) []float32, res map[string][]float64, add func(string, []float64), each func(func(a, b string) float64) []float64) {
	if sgnsVecs == nil {
		return
	}
	sg, ct := wordCos(m, sgnsRow), wordCos(m, sum)
	for _, pw := range []float64{1, 1.5} {
		add(fmt.Sprintf("sgns: align F1 idf^%g", pw), each(func(a, b string) float64 { return alignSim(m, sg, a, b, pw) }))
	}
	add("sgns: cos of mean unit rows idf^1", each(func(a, b string) float64 {
		return cosine(meanRows(m, sgnsRow, a, 1), meanRows(m, sgnsRow, b, 1))
	}))
	add("sgns: align F1, word sim = max(ctx, sgns)", each(func(a, b string) float64 {
		return alignSim(m, func(x, y int32) float32 { return max(ct(x, y), sg(x, y)) }, a, b, 1)
	}))
	add("sgns: align F1, word sim = mean(ctx, sgns)", each(func(a, b string) float64 {
		return alignSim(m, func(x, y int32) float32 { return (ct(x, y) + sg(x, y)) / 2 }, a, b, 1)
	}))
	add("sgns: align F1, ctx sim (check: = align F1 sum idf^1 up to buckets)", each(func(a, b string) float64 { return alignSim(m, ct, a, b, 1) }))
	al := res["align F1 (the labeler's, contrast.Model.AlignSimilarity)"]
	cf := res["cos f"]
	sa := res["sgns: align F1 idf^1"]
	for _, w := range []float64{0.25, 0.5, 1, 2} {
		add(fmt.Sprintf("sgns: z: align + %g sgns align", w), wsum(al, sa, w))
	}
	for _, r := range []float64{0.5, 1, 2, 3} {
		mix := make([]float64, len(cf))
		for i := range cf {
			mix[i] = cf[i] + 3*al[i] + r*sa[i]
		}
		add(fmt.Sprintf("sgns: raw: cos f + 3 align + %g sgns align", r), mix)
	}
	for _, r := range []float64{0.5, 1, 2} {
		mix := make([]float64, len(cf))
		for i := range cf {
			mix[i] = (1-r/4)*al[i] + r/4*sa[i]
		}
		add(fmt.Sprintf("sgns: raw: (1-%g/4) align + %g/4 sgns align", r, r), mix)
	}
}
