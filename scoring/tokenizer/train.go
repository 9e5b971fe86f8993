package tokenizer

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
	"strings"
	"unicode/utf8"
)

// Defaults of TrainConfig.
const (
	// DefaultVocabSize is the vocabulary size when TrainConfig.VocabSize is 0.
	DefaultVocabSize = 12000
	// DefaultMinFrequency is the minimum pair frequency when
	// TrainConfig.MinFrequency is 0.
	DefaultMinFrequency = 2
	// DefaultMaxWords is the cap on distinct words when TrainConfig.MaxWords
	// is 0.
	DefaultMaxWords = 2_000_000
	// MinTrainVocabSize is the smallest vocabulary size Train accepts.
	MinTrainVocabSize = 300
)

// maxTrainWordBytes is the longest word that training counts whole. Longer
// words (long runs of letters, as in unsegmented CJK text or encoded blobs)
// are counted as pieces of at most this many bytes cut at character
// boundaries, which keeps the cost of a merge bounded: a word of n symbols
// takes at most n-1 merges, each of which rescans it.
const maxTrainWordBytes = 64

// TrainConfig configures Train. Zero fields take their defaults.
type TrainConfig struct {
	// VocabSize is the largest vocabulary to learn, special and byte tokens
	// included: MinTrainVocabSize..MaxVocabSize, default DefaultVocabSize.
	// Training stops earlier when no pair occurs MinFrequency times.
	VocabSize int
	// MinFrequency is the number of occurrences a pair needs to be merged:
	// at least 1, default DefaultMinFrequency.
	MinFrequency int
	// MaxWords caps the number of distinct pre-tokenized words counted:
	// once that many are known, new words are ignored while known words
	// are still counted. Default DefaultMaxWords.
	MaxWords int
}

// withDefaults returns c with defaults filled in, or an error for invalid
// values.
func (c TrainConfig) withDefaults() (TrainConfig, error) {
	if c.VocabSize == 0 {
		c.VocabSize = DefaultVocabSize
	}
	if c.MinFrequency == 0 {
		c.MinFrequency = DefaultMinFrequency
	}
	if c.MaxWords == 0 {
		c.MaxWords = DefaultMaxWords
	}
	switch {
	case c.VocabSize < MinTrainVocabSize || c.VocabSize > MaxVocabSize:
		return c, fmt.Errorf("tokenizer: VocabSize %d out of range %d..%d", c.VocabSize, MinTrainVocabSize, MaxVocabSize)
	case c.MinFrequency < 1:
		return c, fmt.Errorf("tokenizer: MinFrequency %d is less than 1", c.MinFrequency)
	case c.MaxWords < 1:
		return c, fmt.Errorf("tokenizer: MaxWords %d is less than 1", c.MaxWords)
	}
	return c, nil
}

// Train learns a tokenizer from texts. It counts the pre-tokenized words of
// all texts, then learns merges over the table of distinct words: at each
// step it merges the most frequent pair of adjacent tokens, counting a pair
// once per occurrence in each word times the word's frequency. Ties between
// equally frequent pairs go to the pair whose left token's bytes are
// lexicographically smallest, then whose right token's bytes are, then
// (for tokens with equal bytes) whose token IDs are smallest. Words longer
// than 64 bytes are counted as pieces of at most 64 bytes cut at character
// boundaries, so no learned token is longer than that. The result
// depends only on the multiset of texts (and their order once MaxWords is
// reached), so equal inputs give byte-identical saved files.
func Train(texts iter.Seq[string], cfg TrainConfig) (*Tokenizer, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	words, freqs := countWords(texts, cfg.MaxWords)
	tr := newTrainer(words, freqs, int64(cfg.MinFrequency))
	t, err := newTokenizer(tr.learn(cfg.VocabSize - FirstMergeID))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: train: %w", err) // a bug
	}
	return t, nil
}

// countWords returns the distinct pre-tokenized words of texts, sorted, and
// their frequencies.
func countWords(texts iter.Seq[string], maxWords int) ([]string, []int64) {
	index := make(map[string]int32)
	var words []string
	var freqs []int64
	add := func(w string) {
		if i, ok := index[w]; ok {
			freqs[i]++
			return
		}
		if len(words) >= maxWords {
			return
		}
		w = strings.Clone(w) // do not keep the whole text alive
		index[w] = int32(len(words))
		words = append(words, w)
		freqs = append(freqs, 1)
	}
	for text := range texts {
		for i := 0; i < len(text); {
			j := wordEnd(text, i)
			for w := text[i:j]; len(w) > 0; {
				n := pieceLen(w)
				add(w[:n])
				w = w[n:]
			}
			i = j
		}
	}
	order := make([]int32, len(words))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(words[a], words[b]) })
	sortedWords := make([]string, len(words))
	sortedFreqs := make([]int64, len(words))
	for i, o := range order {
		sortedWords[i], sortedFreqs[i] = words[o], freqs[o]
	}
	return sortedWords, sortedFreqs
}

// pieceLen returns the length of the first piece of w that training counts:
// all of w when it is at most maxTrainWordBytes long, else the longest
// prefix of at most that length that ends at a character boundary.
func pieceLen(w string) int {
	if len(w) <= maxTrainWordBytes {
		return len(w)
	}
	for n := maxTrainWordBytes; n > 0; n-- {
		if utf8.RuneStart(w[n]) {
			return n
		}
	}
	return maxTrainWordBytes
}

// trainer learns merges over a table of distinct words. Each word is a
// sequence of symbols (token IDs) in syms; pair counts are updated
// incrementally: a merge rescans only the words that contain its pair,
// found through the where index, and changes only the counts of pairs next
// to the merged positions.
type trainer struct {
	minFreq int64
	// tokens holds the bytes of each token, for tie-breaking.
	tokens []string
	// syms holds the symbols of all words; word w takes
	// syms[start[w] : start[w]+length[w]].
	syms   []int32
	start  []int
	length []int32
	freq   []int64
	// counts maps each pair key to its number of occurrences, weighted by
	// word frequency. Pairs with no occurrences have no entry.
	counts map[uint64]int64
	// where maps each pair key to the words that contained it when it was
	// created; a listed word may since have lost the pair.
	where map[uint64][]int32
	heap  pairHeap
	// mark and fresh are scratch space for merge.
	mark  []uint8
	fresh []uint64
}

func newTrainer(words []string, freqs []int64, minFreq int64) *trainer {
	t := &trainer{
		minFreq: minFreq,
		tokens:  make([]string, FirstMergeID),
		start:   make([]int, len(words)),
		length:  make([]int32, len(words)),
		freq:    freqs,
		counts:  make(map[uint64]int64),
		where:   make(map[uint64][]int32),
		mark:    make([]uint8, maxTrainWordBytes),
	}
	for b := range 256 {
		t.tokens[ByteOffset+b] = string([]byte{byte(b)})
	}
	total := 0
	for _, w := range words {
		total += len(w)
	}
	t.syms = make([]int32, 0, total)
	for wi, w := range words {
		t.start[wi] = len(t.syms)
		t.length[wi] = int32(len(w))
		for i := range len(w) {
			t.syms = append(t.syms, ByteOffset+int32(w[i]))
		}
		seq := t.word(int32(wi))
		for i := 0; i+1 < len(seq); i++ {
			t.addPair(pairKey(seq[i], seq[i+1]), int32(wi), freqs[wi])
		}
	}
	t.heap.tokens = t.tokens
	for k, c := range t.counts {
		if c >= minFreq {
			t.heap.items = append(t.heap.items, pairCount{count: c, pair: k})
		}
	}
	t.heap.init()
	return t
}

// word returns the symbols of word w.
func (t *trainer) word(w int32) []int32 {
	s := t.start[w]
	return t.syms[s : s+int(t.length[w])]
}

// addPair adds f occurrences of pair k in word w.
func (t *trainer) addPair(k uint64, w int32, f int64) {
	t.counts[k] += f
	ws := t.where[k]
	if n := len(ws); n == 0 || ws[n-1] != w {
		t.where[k] = append(ws, w)
	}
}

// subPair removes f occurrences of pair k.
func (t *trainer) subPair(k uint64, f int64) {
	if c := t.counts[k] - f; c > 0 {
		t.counts[k] = c
	} else {
		delete(t.counts, k)
	}
}

// learn returns up to maxMerges merges in rank order.
func (t *trainer) learn(maxMerges int) [][2]int32 {
	var merges [][2]int32
	for len(merges) < maxMerges {
		k, ok := t.best()
		if !ok {
			break
		}
		a, b := int32(k>>32), int32(uint32(k))
		id := int32(len(t.tokens))
		t.tokens = append(t.tokens, t.tokens[a]+t.tokens[b])
		t.heap.tokens = t.tokens
		merges = append(merges, [2]int32{a, b})
		t.merge(k, a, b, id)
	}
	return merges
}

// best pops and returns the most frequent pair with at least minFreq
// occurrences. Heap entries may be stale: a pair's count can have dropped
// since its entry was pushed (its entry is then re-pushed with the current
// count), but never risen, since every increase pushes a new entry. So the
// first entry whose count is current is the true maximum.
func (t *trainer) best() (uint64, bool) {
	for len(t.heap.items) > 0 {
		top := t.heap.pop()
		c := t.counts[top.pair]
		if c == top.count {
			return top.pair, true
		}
		if c >= t.minFreq && c < top.count {
			t.heap.push(pairCount{count: c, pair: top.pair})
		}
	}
	return 0, false
}

// merge replaces every occurrence of the pair k = (a, b) by token id in the
// words that contain it, left to right without overlap, and updates the
// pair counts, the where index and the heap.
func (t *trainer) merge(k uint64, a, b, id int32) {
	ws := t.where[k]
	delete(t.where, k)
	delete(t.counts, k)
	t.fresh = t.fresh[:0]
	for _, w := range ws {
		seq := t.word(w)
		// Mark the occurrences: 1 on the left symbol, 2 on the right one.
		mark := t.mark[:len(seq)]
		clear(mark)
		found := false
		for i := 0; i+1 < len(seq); {
			if seq[i] == a && seq[i+1] == b {
				mark[i], mark[i+1] = 1, 2
				found = true
				i += 2
			} else {
				i++
			}
		}
		if !found {
			continue // the word lost the pair to an earlier merge
		}
		f := t.freq[w]
		// Pairs that touch an occurrence disappear; the others stay.
		for i := 0; i+1 < len(seq); i++ {
			if mark[i] != 0 || mark[i+1] != 0 {
				if q := pairKey(seq[i], seq[i+1]); q != k {
					t.subPair(q, f)
				}
			}
		}
		n := 0
		for i := 0; i < len(seq); n++ {
			if mark[i] == 1 {
				seq[n] = id
				i += 2
			} else {
				seq[n] = seq[i]
				i++
			}
		}
		t.length[w] = int32(n)
		// The new pairs are exactly those that contain the new token.
		for i := 0; i+1 < n; i++ {
			if seq[i] == id || seq[i+1] == id {
				q := pairKey(seq[i], seq[i+1])
				t.addPair(q, w, f)
				t.fresh = append(t.fresh, q)
			}
		}
	}
	slices.Sort(t.fresh)
	for _, q := range slices.Compact(t.fresh) {
		if c := t.counts[q]; c >= t.minFreq {
			t.heap.push(pairCount{count: c, pair: q})
		}
	}
}

// pairCount is a heap entry: a pair and its count when pushed.
type pairCount struct {
	count int64
	pair  uint64
}

// pairHeap is a max-heap of pairs by count, ties broken by the bytes of the
// left token, then of the right token, then by the IDs.
type pairHeap struct {
	items  []pairCount
	tokens []string
}

func (h *pairHeap) less(i, j int) bool {
	x, y := h.items[i], h.items[j]
	if x.count != y.count {
		return x.count > y.count
	}
	xa, xb := int32(x.pair>>32), int32(uint32(x.pair))
	ya, yb := int32(y.pair>>32), int32(uint32(y.pair))
	if c := cmp.Compare(h.tokens[xa], h.tokens[ya]); c != 0 {
		return c < 0
	}
	if c := cmp.Compare(h.tokens[xb], h.tokens[yb]); c != 0 {
		return c < 0
	}
	return x.pair < y.pair
}

func (h *pairHeap) init() {
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *pairHeap) push(p pairCount) {
	h.items = append(h.items, p)
	for i := len(h.items) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			break
		}
		h.items[i], h.items[parent] = h.items[parent], h.items[i]
		i = parent
	}
}

func (h *pairHeap) pop() pairCount {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	h.down(0)
	return top
}

func (h *pairHeap) down(i int) {
	n := len(h.items)
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h.less(l, m) {
			m = l
		}
		if r < n && h.less(r, m) {
			m = r
		}
		if m == i {
			return
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}
