package contrast

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"

	"github.com/ctxsim/ctxsim/scoring/lexical"
)

// Vocab maps words to rows of the embedding tables: each of the most
// frequent words has a row of its own, and any other word shares one of
// Buckets rows chosen by a hash of the word, so no word is ever dropped.
// Every row has a weight, the word's inverse document frequency over the
// training sentences (a bucket's weight is that of a word seen once).
type Vocab struct {
	// Stem makes the tokens the Porter stems of words.
	Stem    bool      `json:"stem,omitempty"`
	Words   []string  `json:"words"`
	Buckets int       `json:"buckets"`
	Weights []float32 `json:"weights"`
	// Sentences is the number of sentences the document frequencies were
	// counted over.
	Sentences int64 `json:"sentences"`

	index map[string]int32
}

// Rows is the number of table rows: one per word plus the buckets.
func (v *Vocab) Rows() int { return len(v.Words) + v.Buckets }

// init builds the lookup map.
func (v *Vocab) init() error {
	if v.Buckets < 1 {
		return fmt.Errorf("contrast: vocabulary needs at least one bucket, has %d", v.Buckets)
	}
	if len(v.Weights) != v.Rows() {
		return fmt.Errorf("contrast: vocabulary has %d weights for %d rows", len(v.Weights), v.Rows())
	}
	v.index = make(map[string]int32, len(v.Words))
	for i, w := range v.Words {
		if _, dup := v.index[w]; dup {
			return fmt.Errorf("contrast: word %q is in the vocabulary twice", w)
		}
		v.index[w] = int32(i)
	}
	for i, x := range v.Weights {
		if !(x >= 0) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("contrast: row %d has weight %v", i, x)
		}
	}
	return nil
}

// Row returns the table row of word w.
func (v *Vocab) Row(w string) int32 {
	if r, ok := v.index[w]; ok {
		return r
	}
	h := fnv.New32a()
	h.Write([]byte(w))
	return int32(len(v.Words)) + int32(h.Sum32()%uint32(v.Buckets))
}

// Tokens splits s into the tokens the vocabulary counts: its words
// (lexical.Words), or their stems.
func (v *Vocab) Tokens(s string) []string {
	if v.Stem {
		return lexical.Stems(s)
	}
	return lexical.Words(s)
}

// Bag appends the rows of the tokens of s to rows, and their weights to
// weights (a token that occurs twice is there twice).
func (v *Vocab) Bag(s string, rows []int32, weights []float32) ([]int32, []float32) {
	for _, w := range v.Tokens(s) {
		r := v.Row(w)
		rows = append(rows, r)
		weights = append(weights, v.Weights[r])
	}
	return rows, weights
}

// VocabCounter counts words and their document frequencies over
// sentences, to build a Vocab.
type VocabCounter struct {
	stem      bool
	count, df map[string]int64
	n         int64
	seen      map[string]bool
}

// NewVocabCounter returns an empty counter of words or, with stem, of
// their stems.
func NewVocabCounter(stem bool) *VocabCounter {
	return &VocabCounter{stem: stem, count: map[string]int64{}, df: map[string]int64{}, seen: map[string]bool{}}
}

// Add counts one sentence.
func (c *VocabCounter) Add(s string) {
	clear(c.seen)
	tokens := lexical.Words(s)
	if c.stem {
		tokens = lexical.Stems(s)
	}
	for _, w := range tokens {
		c.count[w]++
		if !c.seen[w] {
			c.seen[w] = true
			c.df[w]++
		}
	}
	c.n++
}

// Build keeps the size most frequent words (ties broken by the word) that
// occur at least minCount times, and hashes the others into buckets rows.
func (c *VocabCounter) Build(size, buckets int, minCount int64) (*Vocab, error) {
	words := make([]string, 0, len(c.count))
	for w, n := range c.count {
		if n >= minCount {
			words = append(words, w)
		}
	}
	slices.SortFunc(words, func(a, b string) int {
		if d := cmp.Compare(c.count[b], c.count[a]); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	words = words[:min(size, len(words))]
	v := &Vocab{Stem: c.stem, Words: words, Buckets: buckets, Sentences: c.n, Weights: make([]float32, len(words)+buckets)}
	idf := func(df int64) float32 { return float32(math.Log(float64(c.n+1) / float64(df+1))) }
	for i, w := range words {
		v.Weights[i] = idf(c.df[w])
	}
	rare := idf(1)
	for i := len(words); i < len(v.Weights); i++ {
		v.Weights[i] = rare
	}
	return v, v.init()
}
