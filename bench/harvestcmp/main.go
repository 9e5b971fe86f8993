// Command harvestcmp compares two harvest outputs row by row: the labeled
// pairs (by pair ID) and the context sets (by sentence ID), every field. It
// prints one line and exits 1 when they differ, so a change meant to keep
// the labels can be checked on a real harvest.
//
//	go run ./bench/harvestcmp -a out/harvest-before -b out/harvest-after
//
// When they differ, a second line measures by how much, for a change that
// is approximate on purpose: over the pairs both labeled, the largest and
// mean absolute label change, the spread (standard deviation) of a's
// labels for scale, the Pearson and Spearman correlations of the two
// label lists, and over the sentences both have context sets for,
// the mean share of contexts the sets have in common (|A∩B| / |A∪B|), and
// over those common contexts, the spread of a's S(s, c), the spread and
// largest size of its change, and the correlation of the two.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"reflect"
	"sort"
	"strconv"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/stats"
	"github.com/ctxsim/ctxsim/storage"
)

var (
	dirA = flag.String("a", "", "A harvest output directory.")
	dirB = flag.String("b", "", "Another harvest output directory.")
)

func read[T any](dir, table string, key func(T) string) map[string]T {
	rows, err := storage.ReadTable[T](context.Background(), storage.Join(dir, table))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	m := make(map[string]T, len(rows))
	for _, r := range rows {
		m[key(r)] = r
	}
	return m
}

// diff counts the keys of a that b lacks or holds with other values, and
// the keys of b that a lacks; first names one of them.
func diff[T any](a, b map[string]T) (n int, first string) {
	var keys []string
	for k, x := range a {
		if y, ok := b[k]; !ok || !reflect.DeepEqual(x, y) {
			keys = append(keys, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) > 0 {
		first = keys[0]
	}
	return len(keys), first
}

func main() {
	flag.Parse()
	if *dirA == "" || *dirB == "" {
		fmt.Fprintln(os.Stderr, "usage: harvestcmp -a DIR -b DIR")
		os.Exit(2)
	}
	pa := read(*dirA, "pairs", func(p schemas.LabeledPair) string { return p.PairID })
	pb := read(*dirB, "pairs", func(p schemas.LabeledPair) string { return p.PairID })
	sa := read(*dirA, "context_sets", func(c schemas.ContextSet) string { return c.SentenceID })
	sb := read(*dirB, "context_sets", func(c schemas.ContextSet) string { return c.SentenceID })
	np, fp := diff(pa, pb)
	ns, fs := diff(sa, sb)
	fmt.Printf("harvestcmp pairs=%d/%d context_sets=%d/%d pairs_differing=%d context_sets_differing=%d", len(pa), len(pb), len(sa), len(sb), np, ns)
	if np+ns > 0 {
		fmt.Printf(" first_pair=%q first_set=%q\n", fp, fs)
		fmt.Println(change(pa, pb, sa, sb))
		os.Exit(1)
	}
	fmt.Println(" identical")
}

// change describes how far the labels and context sets of b are from a's.
func change(pa, pb map[string]schemas.LabeledPair, sa, sb map[string]schemas.ContextSet) string {
	var x, y []float64
	var maxDiff, sumAbs float64
	for id, p := range pa {
		q, ok := pb[id]
		if !ok {
			continue
		}
		d := math.Abs(float64(p.Label) - float64(q.Label))
		maxDiff, sumAbs = max(maxDiff, d), sumAbs+d
		x, y = append(x, float64(p.Label)), append(y, float64(q.Label))
	}
	var overlap float64
	sets := 0
	var sx, sy []float64 // S of the contexts in both sets of a sentence
	for id, a := range sa {
		b, ok := sb[id]
		if !ok {
			continue
		}
		in := map[string]float32{}
		for _, c := range a.Contexts {
			in[c.ChunkID+"#"+strconv.Itoa(int(c.Slot))] = c.Score
		}
		common := 0
		for _, c := range b.Contexts {
			if v, ok := in[c.ChunkID+"#"+strconv.Itoa(int(c.Slot))]; ok {
				common++
				sx, sy = append(sx, float64(v)), append(sy, float64(c.Score))
			}
		}
		if union := len(a.Contexts) + len(b.Contexts) - common; union > 0 {
			overlap += float64(common) / float64(union)
			sets++
		}
	}
	out := fmt.Sprintf("harvestcmp change: pairs_both=%d", len(x))
	if len(x) > 0 {
		out += fmt.Sprintf(" label_max_abs_diff=%.3g label_mean_abs_diff=%.3g label_sd_a=%.3g pearson=%.6f spearman=%.6f",
			maxDiff, sumAbs/float64(len(x)), sd(x), stats.Pearson(x, y), stats.Spearman(x, y))
	}
	out += fmt.Sprintf(" context_sets_both=%d", sets)
	if sets > 0 {
		out += fmt.Sprintf(" mean_context_overlap=%.4f", overlap/float64(sets))
	}
	if len(sx) > 0 {
		d := make([]float64, len(sx))
		for i := range sx {
			d[i] = sy[i] - sx[i]
		}
		out += fmt.Sprintf(" contexts_both=%d S_sd_a=%.3g S_diff_sd=%.3g S_max_abs_diff=%.3g S_pearson=%.6f",
			len(sx), sd(sx), sd(d), maxAbs(d), stats.Pearson(sx, sy))
	}
	return out
}

// sd is the standard deviation of x.
func sd(x []float64) float64 {
	var mean, v float64
	for _, a := range x {
		mean += a / float64(len(x))
	}
	for _, a := range x {
		v += (a - mean) * (a - mean) / float64(len(x))
	}
	return math.Sqrt(v)
}

func maxAbs(x []float64) float64 {
	m := 0.0
	for _, a := range x {
		m = max(m, math.Abs(a))
	}
	return m
}
