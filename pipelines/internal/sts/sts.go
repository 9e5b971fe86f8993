// Package sts reads STS files and computes the unigram TF-IDF cosine
// baseline, for the jobs that evaluate against STS gold scores.
package sts

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/ctxsim/ctxsim/retrieval/corpus"
	"github.com/ctxsim/ctxsim/transforms/remote"
)

// Pair is one STS pair: the gold score and the two sentences, normalised as
// corpus text is.
type Pair struct {
	Gold   float64
	S1, S2 string
}

// Read reads the columns score, s1, s2 (tab-separated, after a header line;
// further columns are ignored) of the file at path, local or remote. Blank
// lines are skipped; a malformed line is an error naming it.
func Read(ctx context.Context, path string) ([]Pair, error) {
	data, err := remote.ReadFile(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("sts: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var out []Pair
	line := 0
	for sc.Scan() {
		line++
		if line == 1 || strings.TrimSpace(sc.Text()) == "" {
			continue // header, or a blank line
		}
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 3 {
			return nil, fmt.Errorf("%s:%d: want score, s1, s2 separated by tabs, got %d columns", path, line, len(cols))
		}
		g, err := strconv.ParseFloat(cols[0], 64)
		if err != nil || math.IsNaN(g) {
			return nil, fmt.Errorf("%s:%d: bad score %q", path, line, cols[0])
		}
		s1, s2 := corpus.Normalize(cols[1]), corpus.Normalize(cols[2])
		if s1 == "" || s2 == "" {
			return nil, fmt.Errorf("%s:%d: empty sentence", path, line)
		}
		out = append(out, Pair{g, s1, s2})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("%s: %d pairs; need at least 2", path, len(out))
	}
	return out, nil
}

// Spread returns n pairs spread evenly over ps (every len/n-th), or ps when
// n is 0 or not smaller. STS files are ordered by genre, so a prefix would
// be one genre.
func Spread(ps []Pair, n int) []Pair {
	if n <= 0 || n >= len(ps) {
		return ps
	}
	out := make([]Pair, n)
	for i := range out {
		out[i] = ps[i*len(ps)/n]
	}
	return out
}

// Words splits s into lowercased runs of letters and digits.
func Words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// TFIDF is the unigram TF-IDF baseline: IDF = log(N / (1 + df)), with
// document frequencies DF counted over N documents.
type TFIDF struct {
	DF map[string]int
	N  float64
}

// AddDocument counts the distinct words of a document's sentences.
func (t *TFIDF) AddDocument(sentences ...string) {
	if t.DF == nil {
		t.DF = map[string]int{}
	}
	seen := map[string]bool{}
	for _, s := range sentences {
		for _, w := range Words(s) {
			if !seen[w] {
				seen[w] = true
				t.DF[w]++
			}
		}
	}
	t.N++
}

// IDF returns the inverse document frequency of w.
func (t *TFIDF) IDF(w string) float64 { return math.Log(t.N / float64(1+t.DF[w])) }

// Vector is a sentence's TF-IDF vector.
type Vector struct {
	W  map[string]float64
	sq float64 // squared norm
}

// Vector returns the TF-IDF vector of s.
func (t *TFIDF) Vector(s string) Vector {
	v := Vector{W: map[string]float64{}}
	for _, w := range Words(s) {
		v.W[w] += t.IDF(w)
	}
	for _, x := range v.W {
		v.sq += x * x
	}
	return v
}

// Cosine is the cosine of two vectors, 0 when either is zero.
func (a Vector) Cosine(b Vector) float64 {
	if a.sq == 0 || b.sq == 0 {
		return 0
	}
	if len(b.W) < len(a.W) {
		a, b = b, a
	}
	var ab float64
	for w, x := range a.W {
		ab += x * b.W[w]
	}
	return ab / math.Sqrt(a.sq*b.sq)
}

// Cosine is the TF-IDF cosine of two sentences.
func (t *TFIDF) Cosine(a, b string) float64 { return t.Vector(a).Cosine(t.Vector(b)) }

// MeanWordVector is the IDF-weighted mean of the subword embeddings of s:
// each word of s is split into subword IDs by encode, and each subword's
// row of emb (a row-major table of width dim) is weighted by the IDF of the
// word it came from (negative IDFs count as 0). The vector is not divided
// by the total weight, which cosine does not need.
func (t *TFIDF) MeanWordVector(emb []float32, dim int, encode func(string) []int32, s string) []float64 {
	v := make([]float64, dim)
	for _, w := range Words(s) {
		wt := max(t.IDF(w), 0)
		for _, id := range encode(w) {
			row := emb[int(id)*dim : int(id+1)*dim]
			for j, x := range row {
				v[j] += wt * float64(x)
			}
		}
	}
	return v
}
