// Package method is the arithmetic of the method between retrieval and
// labels: expanding retrieved chunks into candidate contexts, ranking them
// by one term (Eq. 1's role), scoring them with Eq. 3 through pluggable
// scorers (the contrastive context model, the coherence model, the
// infilling model), building the diversity-constrained context set C_s, and
// labelling a pair of sentences with Eq. 4, alone or combined with the
// lexical similarity. It knows nothing about Beam: transforms call it from
// DoFns and the evaluate job calls it directly.
package method

import (
	"fmt"
	"slices"
	"sync"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/lexical"
)

// Store holds the text of the corpus chunks, each distinct sentence once,
// so that contexts can be resolved from (chunk ID, slot) and per-sentence
// work (tokens, coherence vectors) can be cached by sentence index.
type Store struct {
	sentIdx map[string]int32 // sentence ID -> index
	sents   []string
	chunks  map[string]int32 // chunk ID -> place in list
	list    []storedChunk    // the chunks in the order added
	ids     []string         // chunk IDs in insertion order
	slots   int32            // sentence places in all chunks (storedChunk.base)
	// layout is an FNV-1a hash of the corpus chunks' IDs and sizes in the
	// order they were added: two stores with the same layout number every
	// context alike (contextID), so the numbers can cross processes.
	layout uint64

	// Distinct words of sentences, as sorted IDs, filled when first asked
	// for (the diversity constraint compares them).
	wmu   sync.Mutex
	words [][]uint32
	wid   map[string]uint32

	// keep, when set, returns the copy of a string the store keeps
	// (KeepStrings).
	keep    func(string) string
	lastDoc string
}

// KeepStrings makes the store keep f(s) in place of every string it stores
// from now on: sentence texts and IDs, chunk and document IDs. f returns a
// string equal to s, held where f chooses (resources keeps them in a
// memory-mapped file, off the heap). Call it before the first Add.
func (st *Store) KeepStrings(f func(string) string) { st.keep = f }

// kept is s as the store keeps it.
func (st *Store) kept(s string) string {
	if st.keep == nil {
		return s
	}
	return st.keep(s)
}

type storedChunk struct {
	doc   string
	sents []int32
	// num is the chunk's position in the order chunks were added; base
	// the number of sentence places of the chunks added before it, so
	// that place i of the chunk is base+i among all chunks' places.
	num, base int32
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{sentIdx: map[string]int32{}, chunks: map[string]int32{}}
}

// Add stores a chunk. Adding a chunk ID twice keeps the first.
func (st *Store) Add(c schemas.Chunk) error {
	if len(c.SentenceIDs) != len(c.Sentences) {
		return fmt.Errorf("harvest: chunk %s has %d sentence IDs for %d sentences", c.ID, len(c.SentenceIDs), len(c.Sentences))
	}
	if _, ok := st.chunks[c.ID]; ok {
		return nil
	}
	idx := make([]int32, len(c.Sentences))
	for i, id := range c.SentenceIDs {
		k, ok := st.sentIdx[id]
		if !ok {
			k = int32(len(st.sents))
			st.sentIdx[st.kept(id)] = k
			st.sents = append(st.sents, st.kept(c.Sentences[i]))
		}
		idx[i] = k
	}
	cid := st.kept(c.ID)
	if c.DocID != st.lastDoc {
		// A document's chunks are mostly added together: keep its ID once.
		st.lastDoc = st.kept(c.DocID)
	}
	st.add(cid, storedChunk{doc: st.lastDoc, sents: idx})
	st.ids = append(st.ids, cid)
	st.layout = layoutStep(st.layout, c.ID, len(idx))
	return nil
}

// layoutStep adds one chunk (its ID and number of sentences) to a layout
// hash (FNV-1a; the empty store's layout is the offset basis).
func layoutStep(h uint64, id string, n int) uint64 {
	if h == 0 {
		h = 14695981039346656037
	}
	for i := 0; i < len(id); i++ {
		h = (h ^ uint64(id[i])) * 1099511628211
	}
	h = (h ^ 0) * 1099511628211
	for ; n > 0; n >>= 8 {
		h = (h ^ uint64(n&0xff)) * 1099511628211
	}
	return h
}

// modelContexts are contexts the models carry (reference or whitening),
// stored as chunks of their own: their chunk IDs and slots.
type modelContexts struct {
	ids   []string
	slots []int32
}

// addModelContexts stores the models' contexts of one kind (reference or
// whitening) as chunks of their own, "<kind>:<i>", whose slot (the
// sentence left blank) is len(Left); they are not among the corpus chunks
// (Len, ChunkIDAt).
func (st *Store) addModelContexts(kind string, ctxs []examples.Context) modelContexts {
	var out modelContexts
	for i, c := range ctxs {
		id := fmt.Sprintf("%s:%d", kind, i)
		out.ids, out.slots = append(out.ids, id), append(out.slots, int32(len(c.Left)))
		if _, ok := st.chunks[id]; ok {
			continue
		}
		sents := append(append(append([]string(nil), c.Left...), ""), c.Right...)
		idx := make([]int32, len(sents))
		for j, text := range sents {
			idx[j] = int32(len(st.sents))
			st.sents = append(st.sents, text)
		}
		st.add(id, storedChunk{doc: id, sents: idx})
	}
	return out
}

// add stores chunk c under id, numbering it and its sentence places.
func (st *Store) add(id string, c storedChunk) {
	c.num, c.base = int32(len(st.list)), st.slots
	st.slots += int32(len(c.sents))
	st.chunks[id] = c.num
	st.list = append(st.list, c)
}

// Slots is the number of sentence places in all stored chunks: every
// context (chunk and slot) has a number below it.
func (st *Store) Slots() int { return int(st.slots) }

// Len is the number of chunks stored.
func (st *Store) Len() int { return len(st.ids) }

// Sentences is the number of distinct sentences stored.
func (st *Store) Sentences() int { return len(st.sents) }

// Text returns sentence k.
func (st *Store) Text(k int32) string { return st.sents[k] }

// ChunkIDAt returns the i-th chunk added.
func (st *Store) ChunkIDAt(i int) string { return st.ids[i] }

// Has reports whether the chunk with the given ID is stored.
func (st *Store) Has(id string) bool {
	_, ok := st.chunks[id]
	return ok
}

// chunk returns a stored chunk.
func (st *Store) chunk(id string) (storedChunk, bool) {
	i, ok := st.chunks[id]
	if !ok {
		return storedChunk{}, false
	}
	return st.list[i], true
}

// wordIDs returns the distinct words of sentence k (see wordSet) as sorted
// IDs; equal words have equal IDs within the store.
func (st *Store) wordIDs(k int32) []uint32 {
	st.wmu.Lock()
	defer st.wmu.Unlock()
	if len(st.words) != len(st.sents) {
		st.words = append(st.words, make([][]uint32, len(st.sents)-len(st.words))...)
		if st.wid == nil {
			st.wid = map[string]uint32{}
		}
	}
	if w := st.words[k]; w != nil {
		return w
	}
	set := wordSet(st.sents[k])
	ids := make([]uint32, 0, len(set))
	for w := range set {
		id, ok := st.wid[w]
		if !ok {
			id = uint32(len(st.wid))
			st.wid[w] = id
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	st.words[k] = ids
	return ids
}

// ChunkSentences returns the store indices of a chunk's sentences, or nil.
func (st *Store) ChunkSentences(id string) []int32 {
	c, _ := st.chunk(id)
	return c.sents
}

// TFIDF counts the document frequencies of the stored chunks' words (or,
// with stem, their stems), each chunk a document.
func (st *Store) TFIDF(stem bool) *lexical.TFIDF {
	t := &lexical.TFIDF{DF: map[string]int{}, N: float64(len(st.ids)), Stem: stem}
	terms := make([][]string, len(st.sents))
	seen := map[string]bool{}
	for _, id := range st.ids {
		clear(seen)
		c, _ := st.chunk(id)
		for _, k := range c.sents {
			if terms[k] == nil {
				terms[k] = t.Terms(st.sents[k])
			}
			for _, w := range terms[k] {
				if !seen[w] {
					seen[w] = true
					t.DF[w]++
				}
			}
		}
	}
	return t
}
