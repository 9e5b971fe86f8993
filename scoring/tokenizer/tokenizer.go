// Package tokenizer is a byte-level byte-pair-encoding (BPE) tokenizer for
// the contextual models.
//
// Text is split into words (see the pre-tokenization rules below), each word
// is turned into its UTF-8 bytes, one token per byte, and the learned merges
// are applied to each word in rank order. Every byte has a token, so any
// string, valid UTF-8 or not, is encodable and Decode(Encode(s)) == s.
//
// The vocabulary is laid out as:
//
//	0..8          special tokens: <pad> <unk> <bos> <eos> <sep> <mask>
//	              <to_s> <to_left> <to_right> (see PadID and the others)
//	9..264        the 256 bytes: byte b has ID ByteOffset+b
//	265..         merges: merge of rank r has ID FirstMergeID+r
//
// Special tokens are never produced by Encode: the text "<pad>" is encoded
// as its bytes like any other text. Callers add them where a model needs
// them.
//
// Pre-tokenization keeps case. A word is a run of letters (with combining
// marks), of numbers, or of other non-space characters, with at most one
// leading U+0020 space, e.g. "Hello, world!" gives "Hello", ",", " world",
// "!". Other whitespace forms words of its own, and English contraction
// suffixes ("'s", "'ll", ...) are split off. Merges never cross words.
//
// A Tokenizer is safe for concurrent use.
package tokenizer

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// IDs of the special tokens.
const (
	// PadID is the ID of <pad>, which fills batches to a common length.
	PadID int32 = iota
	// UnkID is the ID of <unk>. Byte fallback makes it unused by Encode; it
	// is kept for models and data that need an unknown-token symbol.
	UnkID
	// BOSID is the ID of <bos>, the beginning of a sequence.
	BOSID
	// EOSID is the ID of <eos>, the end of a sequence.
	EOSID
	// SepID is the ID of <sep>, which separates segments.
	SepID
	// MaskID is the ID of <mask>, a masked position.
	MaskID
	// ToSentenceID is the ID of <to_s>, which asks an infilling model to
	// generate the sentence segment.
	ToSentenceID
	// ToLeftID is the ID of <to_left>, which asks an infilling model to
	// generate the left context.
	ToLeftID
	// ToRightID is the ID of <to_right>, which asks an infilling model to
	// generate the right context.
	ToRightID
)

const (
	// NumSpecial is the number of special tokens, which take IDs
	// 0..NumSpecial-1.
	NumSpecial = 9
	// ByteOffset is the ID of the token for byte 0x00; byte b has ID
	// ByteOffset+b.
	ByteOffset = NumSpecial
	// FirstMergeID is the ID of the token made by the first merge; the merge
	// of rank r makes token FirstMergeID+r.
	FirstMergeID = ByteOffset + 256
	// MaxVocabSize is the largest vocabulary a tokenizer may have, so that
	// IDs fit in 16 bits.
	MaxVocabSize = math.MaxUint16
	// MaxTokenBytes is the longest token a tokenizer may have. Train makes
	// tokens of at most 64 bytes; the bound keeps a crafted file from
	// making tokens of exponential length.
	MaxTokenBytes = 256
)

// specialNames holds the text of each special token, indexed by ID.
var specialNames = [NumSpecial]string{
	"<pad>", "<unk>", "<bos>", "<eos>", "<sep>", "<mask>",
	"<to_s>", "<to_left>", "<to_right>",
}

// SpecialTokens returns the names of the special tokens, indexed by ID.
func SpecialTokens() []string {
	return slices.Clone(specialNames[:])
}

const (
	// noRank marks a pair of tokens that has no merge.
	noRank = math.MaxInt32
	// shortWordBytes is the longest word merged with the quadratic,
	// allocation-free method; longer words use a heap.
	shortWordBytes = 64
	// maxCachedWordBytes is the longest word kept in the encoding cache.
	maxCachedWordBytes = 64
	// batchChunk is the number of texts an EncodeBatch worker takes at a
	// time.
	batchChunk = 64
)

// Tokenizer encodes text to token IDs and decodes them back. Make one with
// Train or Load.
type Tokenizer struct {
	// merges holds the merged pair of each rank.
	merges [][2]int32
	// ranks maps pairKey(a, b) to the rank of the merge of a and b.
	ranks map[uint64]int32
	// tokens holds the bytes of each token; special tokens have none.
	tokens []string
	cache  *wordCache

	fingerprintOnce sync.Once
	fingerprint     string
}

// pairKey packs a pair of token IDs into one map key.
func pairKey(a, b int32) uint64 {
	return uint64(uint32(a))<<32 | uint64(uint32(b))
}

// newTokenizer builds a tokenizer from merges in rank order, checking that
// each merge joins two existing non-special tokens made before it, that no
// pair is merged twice and that no token is longer than MaxTokenBytes.
func newTokenizer(merges [][2]int32) (*Tokenizer, error) {
	if n := FirstMergeID + len(merges); n > MaxVocabSize {
		return nil, fmt.Errorf("%d merges give a vocabulary of %d tokens, more than the maximum %d", len(merges), n, MaxVocabSize)
	}
	t := &Tokenizer{
		merges: merges,
		ranks:  make(map[uint64]int32, len(merges)),
		tokens: make([]string, FirstMergeID, FirstMergeID+len(merges)),
		cache:  newWordCache(),
	}
	for b := range 256 {
		t.tokens[ByteOffset+b] = string([]byte{byte(b)})
	}
	for r, m := range merges {
		id := int32(FirstMergeID + r)
		for _, part := range m {
			if part < ByteOffset || part >= id {
				return nil, fmt.Errorf("merge %d (token %d) refers to token %d, which is not a byte or earlier merge token (valid: %d..%d)", r, id, part, ByteOffset, id-1)
			}
		}
		if n := len(t.tokens[m[0]]) + len(t.tokens[m[1]]); n > MaxTokenBytes {
			return nil, fmt.Errorf("merge %d (token %d) makes a token of %d bytes, more than the maximum %d", r, id, n, MaxTokenBytes)
		}
		k := pairKey(m[0], m[1])
		if prev, ok := t.ranks[k]; ok {
			return nil, fmt.Errorf("merge %d duplicates merge %d: both join tokens %d and %d", r, prev, m[0], m[1])
		}
		t.ranks[k] = int32(r)
		t.tokens = append(t.tokens, t.tokens[m[0]]+t.tokens[m[1]])
	}
	return t, nil
}

// VocabSize returns the number of tokens: special, byte and merge tokens.
// IDs run from 0 to VocabSize()-1.
func (t *Tokenizer) VocabSize() int {
	return len(t.tokens)
}

// rank returns the rank of the merge of a and b, or noRank.
func (t *Tokenizer) rank(a, b int32) int32 {
	if r, ok := t.ranks[pairKey(a, b)]; ok {
		return r
	}
	return noRank
}

// Encode returns the token IDs of text. It adds no special tokens.
func (t *Tokenizer) Encode(text string) []int32 {
	return t.appendEncode(make([]int32, 0, len(text)/4+1), text)
}

// EncodeBatch encodes each text, in parallel on up to GOMAXPROCS
// goroutines. Its result is the same as calling Encode on each text.
func (t *Tokenizer) EncodeBatch(texts []string) [][]int32 {
	out := make([][]int32, len(texts))
	workers := min(runtime.GOMAXPROCS(0), (len(texts)+batchChunk-1)/batchChunk)
	if workers <= 1 {
		for i, s := range texts {
			out[i] = t.Encode(s)
		}
		return out
	}
	var (
		mu   sync.Mutex
		next int
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for {
				mu.Lock()
				lo := next
				next += batchChunk
				mu.Unlock()
				if lo >= len(texts) {
					return
				}
				for i := lo; i < min(lo+batchChunk, len(texts)); i++ {
					out[i] = t.Encode(texts[i])
				}
			}
		})
	}
	wg.Wait()
	return out
}

// appendEncode appends the token IDs of text to dst.
func (t *Tokenizer) appendEncode(dst []int32, text string) []int32 {
	for i := 0; i < len(text); {
		j := wordEnd(text, i)
		dst = t.appendWord(dst, text[i:j])
		i = j
	}
	return dst
}

// appendWord appends the token IDs of one pre-tokenized word to dst.
func (t *Tokenizer) appendWord(dst []int32, w string) []int32 {
	if len(w) == 1 {
		return append(dst, ByteOffset+int32(w[0]))
	}
	cacheable := len(w) <= maxCachedWordBytes
	if cacheable {
		if ids, ok := t.cache.get(w); ok {
			return append(dst, ids...)
		}
	}
	start := len(dst)
	if len(w) <= shortWordBytes {
		dst = t.mergeShort(dst, w)
	} else {
		dst = t.mergeLong(dst, w)
	}
	if cacheable {
		t.cache.put(w, slices.Clone(dst[start:]))
	}
	return dst
}

// mergeShort appends the tokens of the word w, at most shortWordBytes long,
// to dst. It repeatedly merges the leftmost pair of lowest rank, keeping the
// rank of each adjacent pair so that a merge costs two lookups.
func (t *Tokenizer) mergeShort(dst []int32, w string) []int32 {
	var symBuf, rankBuf [shortWordBytes]int32
	syms := symBuf[:len(w)]
	for i := range len(w) {
		syms[i] = ByteOffset + int32(w[i])
	}
	ranks := rankBuf[:len(w)-1]
	for i := range ranks {
		ranks[i] = t.rank(syms[i], syms[i+1])
	}
	for {
		best, at := int32(noRank), -1
		for i, r := range ranks {
			if r < best {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		syms[at] = FirstMergeID + best
		syms = append(syms[:at+1], syms[at+2:]...)
		ranks = append(ranks[:at], ranks[at+1:]...)
		if at > 0 {
			ranks[at-1] = t.rank(syms[at-1], syms[at])
		}
		if at < len(ranks) {
			ranks[at] = t.rank(syms[at], syms[at+1])
		}
	}
	return append(dst, syms...)
}

// mergeLong appends the tokens of the word w to dst. It gives the same
// result as mergeShort in O(n log n) time for a word of n bytes: the
// symbols form a linked list and a heap orders candidate pairs by rank and
// position, so that pathological inputs (a megabyte without a space) stay
// fast.
func (t *Tokenizer) mergeLong(dst []int32, w string) []int32 {
	n := len(w)
	syms := make([]int32, n)
	prev := make([]int32, n)
	next := make([]int32, n)
	for i := range n {
		syms[i] = ByteOffset + int32(w[i])
		prev[i] = int32(i - 1)
		next[i] = int32(i + 1)
	}
	next[n-1] = -1
	var h rankHeap
	for i := range n - 1 {
		if r := t.rank(syms[i], syms[i+1]); r != noRank {
			h.push(candidate{rank: r, pos: int32(i)})
		}
	}
	for len(h) > 0 {
		c := h.pop()
		i := c.pos
		j := next[i]
		if syms[i] < 0 || j < 0 {
			continue
		}
		if m := t.merges[c.rank]; syms[i] != m[0] || syms[j] != m[1] {
			continue // stale: the pair at i changed since it was pushed
		}
		syms[i] = FirstMergeID + c.rank
		syms[j] = -1
		next[i] = next[j]
		if k := next[i]; k >= 0 {
			prev[k] = i
			if r := t.rank(syms[i], syms[k]); r != noRank {
				h.push(candidate{rank: r, pos: i})
			}
		}
		if p := prev[i]; p >= 0 {
			if r := t.rank(syms[p], syms[i]); r != noRank {
				h.push(candidate{rank: r, pos: p})
			}
		}
	}
	for i := int32(0); i >= 0; i = next[i] {
		dst = append(dst, syms[i])
	}
	return dst
}

// candidate is a pair of adjacent symbols that some merge joins.
type candidate struct {
	rank int32 // rank of the merge
	pos  int32 // position of the pair's left symbol
}

// rankHeap is a min-heap of candidates by rank, then position.
type rankHeap []candidate

func (h rankHeap) less(i, j int) bool {
	if h[i].rank != h[j].rank {
		return h[i].rank < h[j].rank
	}
	return h[i].pos < h[j].pos
}

func (h *rankHeap) push(c candidate) {
	*h = append(*h, c)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *rankHeap) pop() candidate {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s.less(l, m) {
			m = l
		}
		if r < len(s) && s.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// Decode returns the text of the token IDs: the concatenation of the bytes
// of each token. Special tokens and IDs outside the vocabulary have no text
// and are skipped. For any string s, Decode(Encode(s)) == s.
func (t *Tokenizer) Decode(ids []int32) string {
	var b strings.Builder
	b.Grow(4 * len(ids))
	for _, id := range ids {
		if id >= ByteOffset && int(id) < len(t.tokens) {
			b.WriteString(t.tokens[id])
		}
	}
	return b.String()
}

// TokenString returns a readable form of a token for debugging: the name of
// a special token, or the token's bytes with invalid UTF-8 bytes and ASCII
// control characters written as \xNN and backslashes doubled. An ID outside
// the vocabulary gives "<invalid:ID>".
func (t *Tokenizer) TokenString(id int32) string {
	switch {
	case id >= 0 && id < NumSpecial:
		return specialNames[id]
	case id < 0 || int(id) >= len(t.tokens):
		return fmt.Sprintf("<invalid:%d>", id)
	}
	s := t.tokens[id]
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r < 0x20, r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
