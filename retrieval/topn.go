package retrieval

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
)

// shardHit is one hit of one shard, with bleve's score for that shard.
type shardHit struct {
	id    string
	score float64
}

// compareShardHits orders hits best first: by score, descending, then by
// chunk ID, as bleve sorts by (-_score, _id).
func compareShardHits(a, b shardHit) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	return strings.Compare(a.id, b.id)
}

// bleveTop returns the top size hits of q on sh, best first, ties broken by
// chunk ID, through bleve's own search request.
func bleveTop(ctx context.Context, sh bleve.Index, q query.Query, size int) ([]shardHit, error) {
	req := bleve.NewSearchRequestOptions(q, size, 0, false)
	req.SortBy([]string{"-_score", "_id"})
	res, err := sh.SearchInContext(ctx, req)
	if err != nil {
		return nil, err
	}
	out := make([]shardHit, len(res.Hits))
	for i, h := range res.Hits {
		out[i] = shardHit{h.ID, h.Score}
	}
	return out, nil
}

// checkDoneEvery is how many matches topN scores between looks at ctx, as
// bleve's collector does.
const checkDoneEvery = 1024

// topN returns what bleveTop returns, faster. It runs q's searcher over sh
// itself, exactly as bleve's search request builds it (same query, reader,
// mapping, scoring model and searcher options, so the same scores, bit for
// bit), and keeps the best matches by score and internal document number
// alone (see topScores). Only the survivors, at least size of them, have
// their chunk IDs read, and are then sorted by (-score, ID) and cut to size.
// bleve's collector instead reads and compares the ID of every match.
//
// With a table (non-nil ids), the survivors' chunk IDs come from it instead
// of from the index, one array read each.
func topN(ctx context.Context, sh bleve.Index, q query.Query, size int, ids *idTable) (_ []shardHit, err error) {
	adv, err := sh.Advanced()
	if err != nil {
		return nil, err
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := r.Close(); err == nil {
			err = cerr
		}
	}()
	m := sh.Mapping()
	// bleve's search request tells the term searchers the mapping's scoring
	// model this way; "" and "tfidf" both mean TF-IDF.
	var model string
	if im, ok := m.(*mapping.IndexMappingImpl); ok {
		model = im.ScoringModel
	}
	ctx = context.WithValue(ctx, search.GetScoringModelCallbackKey,
		search.GetScoringModelCallbackFn(func() string { return model }))
	sr, err := q.Searcher(ctx, r, m, search.SearcherOptions{})
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := sr.Close(); err == nil {
			err = cerr
		}
	}()
	sctx := &search.SearchContext{
		DocumentMatchPool: search.NewDocumentMatchPool(sr.DocumentMatchPoolSize()+1, 0),
		IndexReader:       r,
	}
	// Count is the sum of the terms' document frequencies: at least the
	// number of matches.
	top := topScores{k: size, heap: make([]scoredDoc, 0, min(uint64(size), sr.Count()))}
	for n := 0; ; n++ {
		if n%checkDoneEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		d, err := sr.Next(sctx)
		if err != nil {
			return nil, err
		}
		if d == nil {
			break
		}
		if len(d.IndexInternalID) != 8 {
			return nil, fmt.Errorf("internal document ID of %d bytes, want 8", len(d.IndexInternalID))
		}
		top.add(d.Score, binary.BigEndian.Uint64(d.IndexInternalID))
		sctx.DocumentMatchPool.Put(d)
	}
	// Sort the survivors by score, best first, read their IDs, then order
	// each run of equal scores by ID: string comparisons only among ties.
	kept := top.survivors()
	slices.SortFunc(kept, func(a, b scoredDoc) int { return cmp.Compare(b.score, a.score) })
	out := make([]shardHit, len(kept))
	var table []string
	if ids != nil {
		if table, err = ids.get(r); err != nil {
			return nil, err
		}
	}
	var buf [8]byte
	for i, c := range kept {
		var id string
		if c.doc < uint64(len(table)) && table[c.doc] != "" {
			id = table[c.doc]
		} else {
			binary.BigEndian.PutUint64(buf[:], c.doc)
			if id, err = r.ExternalID(buf[:]); err != nil {
				return nil, err
			}
		}
		out[i] = shardHit{id, c.score}
	}
	for i := 0; i < len(out) && i < size; {
		j := i + 1
		for j < len(out) && out[j].score == out[i].score {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(out[i:j], compareShardHits)
		}
		i = j
	}
	return out[:min(size, len(out))], nil
}

// idTable holds the chunk ID of every document of a read-only shard by its
// internal document number, read once: reading IDs from the index for the
// thousands of survivors of every query was a quarter of a top-20,000
// search. The numbers stay valid because the shard is opened read-only, so
// every reader of it sees the same segments.
type idTable struct {
	once sync.Once
	ids  []string
	err  error
}

// maxIDTableSlack bounds the table's length as a multiple of the documents
// it holds: a shard whose internal numbers are sparser than that (many
// deletions) gets no table, and its IDs are read from the index.
const maxIDTableSlack = 4

// get returns the table, reading every document's ID through r the first
// time.
func (t *idTable) get(r index.IndexReader) ([]string, error) {
	t.once.Do(func() { t.ids, t.err = readIDTable(r) })
	return t.ids, t.err
}

func readIDTable(r index.IndexReader) (_ []string, err error) {
	all, err := r.DocIDReaderAll()
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := all.Close(); err == nil {
			err = cerr
		}
	}()
	n, err := r.DocCount()
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, n)
	for {
		internal, err := all.Next()
		if err != nil {
			return nil, err
		}
		if internal == nil {
			break
		}
		if len(internal) != 8 {
			return nil, fmt.Errorf("internal document ID of %d bytes, want 8", len(internal))
		}
		doc := binary.BigEndian.Uint64(internal)
		if doc >= maxIDTableSlack*(n+1024) {
			return nil, nil
		}
		id, err := r.ExternalID(internal)
		if err != nil {
			return nil, err
		}
		if doc >= uint64(len(ids)) {
			ids = append(ids, make([]string, doc+1-uint64(len(ids)))...)
		}
		ids[doc] = id
	}
	return ids, nil
}

// scoredDoc is a match by internal document number.
type scoredDoc struct {
	score float64
	doc   uint64
}

// topScores keeps, of the matches added, every one whose score is at least
// the k-th best score: the k-th best and all that tie with it at the cut,
// so that sorting the survivors by (-score, ID) and cutting to k gives the
// top k by (-score, ID) without knowing any ID while matches stream by.
//
// heap is a min-heap on score of at most k matches. Once it is full, ties
// holds the matches outside it whose score equals its minimum (the cut);
// they are dropped when the cut rises above them.
type topScores struct {
	k    int
	heap []scoredDoc
	ties []scoredDoc
}

func (t *topScores) add(score float64, doc uint64) {
	if t.k <= 0 {
		return
	}
	h := t.heap
	if len(h) < t.k {
		h = append(h, scoredDoc{score, doc})
		// Sift up.
		i := len(h) - 1
		for i > 0 {
			p := (i - 1) / 2
			if h[p].score <= h[i].score {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		t.heap = h
		return
	}
	cut := h[0].score
	switch {
	case score < cut:
		return
	case score == cut:
		t.ties = append(t.ties, scoredDoc{score, doc})
		return
	}
	out := h[0]
	h[0] = scoredDoc{score, doc}
	// Sift down.
	i, n := 0, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && h[r].score < h[l].score {
			c = r
		}
		if h[i].score <= h[c].score {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	if h[0].score == out.score {
		t.ties = append(t.ties, out)
	} else {
		t.ties = t.ties[:0]
	}
}

// survivors returns the matches kept, in no particular order.
func (t *topScores) survivors() []scoredDoc {
	return append(t.heap, t.ties...)
}
