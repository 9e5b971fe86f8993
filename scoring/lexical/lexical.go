// Package lexical is the word-level side of sentence similarity: the
// tokenization every word model of the project shares, and the unigram
// TF-IDF cosine, the lexical baseline labels are judged against and the
// lexical half of the hybrid labeler.
package lexical

import (
	"math"
	"slices"
	"strings"
	"unicode"

	porterstemmer "github.com/blevesearch/go-porterstemmer"
)

// Words splits s into lowercased runs of letters and digits.
func Words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// TFIDF is the unigram TF-IDF cosine: IDF = log(N / (1 + df)), with
// document frequencies DF counted over N documents. With Stem, words are
// reduced to their Porter stems first, so inflections of a word match.
type TFIDF struct {
	DF   map[string]int
	N    float64
	Stem bool
}

// Stems returns the Porter stems of the words of s.
func Stems(s string) []string {
	ws := Words(s)
	for i, w := range ws {
		ws[i] = porterstemmer.StemString(w)
	}
	return ws
}

// Terms returns the units t counts in s: words, or their stems.
func (t *TFIDF) Terms(s string) []string {
	if t.Stem {
		return Stems(s)
	}
	return Words(s)
}

// term returns the unit t counts for the word w.
func (t *TFIDF) term(w string) string {
	if t.Stem {
		return porterstemmer.StemString(w)
	}
	return w
}

// AddDocument counts the distinct words of a document's sentences.
func (t *TFIDF) AddDocument(sentences ...string) {
	if t.DF == nil {
		t.DF = map[string]int{}
	}
	seen := map[string]bool{}
	for _, s := range sentences {
		for _, w := range t.Terms(s) {
			if !seen[w] {
				seen[w] = true
				t.DF[w]++
			}
		}
	}
	t.N++
}

// IDF returns the inverse document frequency of w (a word, or a stem when
// t.Stem is set).
func (t *TFIDF) IDF(w string) float64 { return math.Log(t.N / float64(1+t.DF[w])) }

// Vector is a sentence's TF-IDF vector: its distinct terms, sorted, and
// their weights. Sums run in term order, so a cosine is the same bit for
// bit on every run.
type Vector struct {
	terms []string
	w     []float64
	sq    float64 // squared norm
}

// Vector returns the TF-IDF vector of s.
func (t *TFIDF) Vector(s string) Vector {
	ts := t.Terms(s)
	slices.Sort(ts)
	var v Vector
	for i, w := range ts {
		if i == 0 || w != ts[i-1] {
			v.terms = append(v.terms, w)
			v.w = append(v.w, 0)
		}
		v.w[len(v.w)-1] += t.IDF(w)
	}
	for _, x := range v.w {
		v.sq += x * x
	}
	return v
}

// Cosine is the cosine of two vectors, 0 when either is zero.
func (a Vector) Cosine(b Vector) float64 {
	if a.sq == 0 || b.sq == 0 {
		return 0
	}
	var ab float64
	for i, j := 0, 0; i < len(a.terms) && j < len(b.terms); {
		switch c := strings.Compare(a.terms[i], b.terms[j]); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			ab += a.w[i] * b.w[j]
			i++
			j++
		}
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
		wt := max(t.IDF(t.term(w)), 0)
		for _, id := range encode(w) {
			row := emb[int(id)*dim : int(id+1)*dim]
			for j, x := range row {
				v[j] += wt * float64(x)
			}
		}
	}
	return v
}
