package main

// Within-sentence co-occurrence as a penalty on the alignment's word
// similarity. Distributional word vectors put alternatives close together
// (Monday and Thursday, Egypt and Syria, higher and lower), and swapping
// one alternative for another changes what a sentence says. Alternatives
// also tend to appear together in one sentence ("on Monday and Thursday"),
// where two words for the same thing rarely do. An experiment: does
// lowering the similarity of two words by how much more often than chance
// they share a sentence (their positive normalised PMI) make the alignment
// rank STS pairs better?

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/scoring/contrast"
	"github.com/ctxsim/ctxsim/scoring/sts"
)

var coocCorpus = flag.String("cooc", "", "-levers: comma-separated corpus files; adds alignments whose word similarity is lowered by the words' within-sentence NPMI")

// coocStats holds sentence counts of the vocabulary's words and of the
// word pairs the STS files need.
type coocStats struct {
	n    float64
	one  []float64
	pair map[[2]int32]float64
}

func pairKey(a, b int32) [2]int32 {
	if a > b {
		a, b = b, a
	}
	return [2]int32{a, b}
}

// npmi is the normalised PMI of two words' sentence co-occurrence, in
// [-1, 1] (-1 when they never share a sentence).
func (c *coocStats) npmi(a, b int32) float64 {
	ab := c.pair[pairKey(a, b)]
	if ab == 0 || c.one[a] == 0 || c.one[b] == 0 {
		return -1
	}
	pab := ab / c.n
	return math.Log(pab/((c.one[a]/c.n)*(c.one[b]/c.n))) / -math.Log(pab)
}

// countCooc reads the corpus once and counts, per sentence, each word and
// each needed pair of words.
func countCooc(m *contrast.Model, files, stsFiles []string) *coocStats {
	c := &coocStats{one: make([]float64, len(m.Vocab.Words)), pair: map[[2]int32]float64{}}
	for _, f := range stsFiles {
		all, err := sts.Read(context.Background(), f)
		if err != nil {
			log.Fatal(err)
		}
		for _, p := range all {
			rb := wordRows(m, p.S2)
			for _, x := range wordRows(m, p.S1) {
				for _, y := range rb {
					if x != y {
						c.pair[pairKey(x, y)] = 0
					}
				}
			}
		}
	}
	t0 := time.Now()
	seen := map[int32]bool{}
	var uniq []int32
	eachSentence(m, files, func(rows []int32) {
		clear(seen)
		uniq = uniq[:0]
		for _, r := range rows {
			if !seen[r] {
				seen[r] = true
				uniq = append(uniq, r)
			}
		}
		if len(uniq) == 0 {
			return
		}
		c.n++
		for i, x := range uniq {
			c.one[x]++
			for _, y := range uniq[i+1:] {
				k := pairKey(x, y)
				if v, ok := c.pair[k]; ok {
					c.pair[k] = v + 1
				}
			}
		}
	})
	fmt.Printf("cooc: %.0f sentences, %d word pairs counted, %.0fs\n", c.n, len(c.pair), time.Since(t0).Seconds())
	return c
}

var coocState *coocStats

// coocLevers adds the penalised alignments to a levers table.
func coocLevers(m *contrast.Model, sum func(int32) []float32, res map[string][]float64, add func(string, []float64), each func(func(a, b string) float64) []float64) {
	if coocState == nil {
		return
	}
	c := coocState
	base := wordCos(m, sum)
	// A similarity lowered by the pair's positive NPMI; words in a bucket
	// keep theirs (0).
	penalised := func(beta float64, by func(s float32, p float64) float32) func(x, y int32) float32 {
		return func(x, y int32) float32 {
			s := base(x, y)
			if s <= 0 {
				return s
			}
			return by(s, beta*max(0, c.npmi(x, y)))
		}
	}
	for _, beta := range []float64{0.25, 0.5, 1, 2} {
		sim := penalised(beta, func(s float32, p float64) float32 { return s - float32(p) })
		add(fmt.Sprintf("cooc: align F1, sim - %g npmi+", beta), each(func(a, b string) float64 { return alignSim(m, sim, a, b, 1) }))
	}
	for _, beta := range []float64{0.5, 1} {
		sim := penalised(beta, func(s float32, p float64) float32 { return s * float32(1-p) })
		add(fmt.Sprintf("cooc: align F1, sim x (1 - %g npmi+)", beta), each(func(a, b string) float64 { return alignSim(m, sim, a, b, 1) }))
	}
	// The penalised alignment in the fixed-weight mix with cos f.
	cf := res["cos f"]
	for _, beta := range []float64{0.5, 1} {
		v := res[fmt.Sprintf("cooc: align F1, sim - %g npmi+", beta)]
		mix := make([]float64, len(cf))
		for i := range cf {
			mix[i] = cf[i] + 3*v[i]
		}
		add(fmt.Sprintf("cooc: raw: cos f + 3 align(sim - %g npmi+)", beta), mix)
	}
}

// setupCooc counts the co-occurrences when asked.
func setupCooc(m *contrast.Model, stsFiles []string) {
	if *coocCorpus != "" {
		coocState = countCooc(m, strings.Split(*coocCorpus, ","), stsFiles)
	}
}
