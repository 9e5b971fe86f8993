package retrieval

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/ctxsim/ctxsim/scoring/stats"
)

// shardHit is one hit of one shard, with bleve's score for that shard, and
// where known the rank of its ID in byte order among the shard's IDs.
type shardHit struct {
	id    string
	score float64
	rank  uint32
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
		out[i] = shardHit{id: h.ID, score: h.Score}
	}
	return out, nil
}

// rankSurvivors returns the survivors kept (see keepTop) as hits, best
// first, ties by chunk ID, cut to size. With a table (non-nil ids), they are
// sorted once by score and the rank of their IDs, integers both, their IDs
// read from the table, and the hits carry the ranks (ranked). Without one,
// they are sorted by score, their IDs read from the index through r, and
// then each run of equal scores ordered by ID.
func rankSurvivors(r index.IndexReader, kept []scoredDoc, size int, ids *idTable) (_ []shardHit, ranked bool, err error) {
	var table *idTable
	if ids != nil {
		if table, err = ids.get(r); err != nil {
			return nil, false, err
		}
	}
	if table != nil && table.holds(kept) {
		rs := make([]rankedDoc, len(kept))
		for i, c := range kept {
			rs[i] = rankedDoc{c.score, table.rank[c.doc], c.doc}
		}
		rs = sortRanked(rs, make([]rankedDoc, len(rs)))
		rs = rs[:min(size, len(rs))]
		out := make([]shardHit, len(rs))
		for i, c := range rs {
			out[i] = shardHit{table.id(c.doc), c.score, c.rank}
		}
		return out, true, nil
	}
	slices.SortFunc(kept, func(a, b scoredDoc) int { return cmp.Compare(b.score, a.score) })
	out := make([]shardHit, len(kept))
	var buf [8]byte
	for i, c := range kept {
		binary.BigEndian.PutUint64(buf[:], c.doc)
		id, err := r.ExternalID(buf[:])
		if err != nil {
			return nil, false, err
		}
		out[i] = shardHit{id: id, score: c.score}
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
	return out[:min(size, len(out))], false, nil
}

// rankedDoc is a survivor with the rank of its chunk ID.
type rankedDoc struct {
	score float64
	rank  uint32
	doc   uint64
}

// sortRanked sorts rs by score, best first, then by rank, using buf (as
// long as rs) as scratch, and returns the sorted slice (rs or buf). Scores
// that are all positive or +0 are sorted as their bit patterns, which order
// them alike: a least-significant-digit radix sort over the rank, then the
// score, 11 bits a pass, skipping digits that no two elements differ in.
// Other scores are sorted by comparison.
func sortRanked(rs, buf []rankedDoc) []rankedDoc {
	var or, and uint64 = 0, ^uint64(0)
	var rankOr uint32
	for _, r := range rs {
		if math.Signbit(r.score) || r.score != r.score { // negative, -0 or NaN
			slices.SortFunc(rs, func(a, b rankedDoc) int {
				if c := cmp.Compare(b.score, a.score); c != 0 {
					return c
				}
				return cmp.Compare(a.rank, b.rank)
			})
			return rs
		}
		bits := math.Float64bits(r.score)
		or |= bits
		and &= bits
		rankOr |= r.rank
	}
	const digit = 11
	var count [1 << digit]int
	src, dst := rs, buf
	pass := func(key func(r *rankedDoc) uint64, shift uint) {
		count = [1 << digit]int{}
		for i := range src {
			count[(key(&src[i])>>shift)&(1<<digit-1)]++
		}
		sum := 0
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for i := range src {
			d := (key(&src[i]) >> shift) & (1<<digit - 1)
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	rank := func(r *rankedDoc) uint64 { return uint64(r.rank) }
	for shift := uint(0); shift < 32 && rankOr>>shift != 0; shift += digit {
		pass(rank, shift)
	}
	// Best first: the score's bits inverted, ascending.
	score := func(r *rankedDoc) uint64 { return ^math.Float64bits(r.score) }
	varying := or ^ and
	for shift := uint(0); shift < 64; shift += digit {
		if (varying>>shift)&(1<<digit-1) != 0 {
			pass(score, shift)
		}
	}
	return src
}

// idTable holds the chunk ID of every document of a read-only shard by its
// internal document number, and each ID's rank in byte order, read once:
// reading IDs from the index for the thousands of survivors of every query
// was a quarter of a top-20,000 search, and comparing them as strings to
// order tied scores a tenth. The numbers stay valid because the shard is
// opened read-only, so every reader of it sees the same segments. The IDs
// are kept in one byte slice, which holds no pointers for the garbage
// collector to scan.
type idTable struct {
	once sync.Once
	tab  *idTable // the table read by get; nil: none
	err  error

	blob []byte   // every ID, concatenated
	off  []uint32 // doc d's ID is blob[off[d]:off[d+1]]; empty: no document d
	rank []uint32 // doc d's position among the IDs in byte order
}

// maxIDTableSlack bounds the table's length as a multiple of the documents
// it holds: a shard whose internal numbers are sparser than that (many
// deletions) gets no table, and its IDs are read from the index.
const maxIDTableSlack = 4

// get returns the table (nil if the shard gets none), reading every
// document's ID through r the first time.
func (t *idTable) get(r index.IndexReader) (*idTable, error) {
	t.once.Do(func() { t.tab, t.err = readIDTable(r) })
	return t.tab, t.err
}

// id returns document doc's chunk ID, "" if the table has none. The string
// shares the table's memory.
func (t *idTable) id(doc uint64) string {
	if doc+1 >= uint64(len(t.off)) || t.off[doc] == t.off[doc+1] {
		return ""
	}
	return unsafe.String(&t.blob[t.off[doc]], t.off[doc+1]-t.off[doc])
}

// holds reports whether the table has the ID of every doc in ds.
func (t *idTable) holds(ds []scoredDoc) bool {
	for _, d := range ds {
		if d.doc+1 >= uint64(len(t.off)) || t.off[d.doc] == t.off[d.doc+1] {
			return false
		}
	}
	return true
}

func readIDTable(r index.IndexReader) (_ *idTable, err error) {
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
	t := &idTable{off: make([]uint32, 1, n+1)}
	var docs []uint64
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
		if doc >= maxIDTableSlack*(n+1024) || doc+1 < uint64(len(t.off)) {
			return nil, nil
		}
		id, err := r.ExternalID(internal)
		if err != nil {
			return nil, err
		}
		if uint64(len(t.blob))+uint64(len(id)) > math.MaxUint32 {
			return nil, nil
		}
		for uint64(len(t.off)) <= doc {
			t.off = append(t.off, uint32(len(t.blob)))
		}
		t.blob = append(t.blob, id...)
		t.off = append(t.off, uint32(len(t.blob)))
		docs = append(docs, doc)
	}
	slices.SortFunc(docs, func(a, b uint64) int { return strings.Compare(t.id(a), t.id(b)) })
	t.rank = make([]uint32, len(t.off)-1)
	for i, d := range docs {
		t.rank[d] = uint32(i)
	}
	return t, nil
}

// scoredDoc is a match by internal document number.
type scoredDoc struct {
	score float64
	doc   uint64
}

// keepTop reorders ds so that its first n elements are exactly those whose
// score is at least the k-th best score: the best k and every one tied with
// the k-th at the cut, so that sorting them by (-score, ID) and cutting to k
// gives the top k by (-score, ID) without knowing any ID. It returns that
// prefix. scores is scratch space, grown if needed and returned.
func keepTop(ds []scoredDoc, k int, scores []float64) ([]scoredDoc, []float64) {
	if k <= 0 {
		return ds[:0], scores
	}
	if len(ds) <= k {
		return ds, scores
	}
	scores = scores[:0]
	for _, d := range ds {
		scores = append(scores, d.score)
	}
	cut := stats.KthLargest(scores, k)
	n := 0
	for _, d := range ds {
		if d.score >= cut {
			ds[n] = d
			n++
		}
	}
	return ds[:n], scores
}
