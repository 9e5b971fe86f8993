package retrieval

import (
	"context"
	"fmt"
	"math"

	"github.com/blevesearch/bleve/v2/index/scorch"
	index "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	zapx "github.com/blevesearch/zapx/v17"
)

// postings is a query's terms opened on one shard: a reader of the shard
// (a scorch snapshot) and each term's postings lists, read straight from
// the snapshot's segments. Each term is looked up in each segment's
// dictionary once, for its document frequency and its postings both.
type postings struct {
	r     index.IndexReader
	segs  []*scorch.SegmentSnapshot
	first []uint64                            // each segment's first internal document number
	dicts map[string][]segment.TermDictionary // per field, per segment
	terms []termPostings
}

// termPostings is one term's postings in one shard.
type termPostings struct {
	lists []segment.PostingsList // per segment
	count uint64                 // documents holding the term: its document frequency
}

// close releases the reader.
func (p *postings) close() error {
	if p == nil {
		return nil
	}
	return p.r.Close()
}

// closePostings closes one query's postings on every shard.
func closePostings(ps []*postings) {
	for _, p := range ps {
		p.close()
	}
}

// openTerms opens terms on every shard, appending to ps (nil: new readers),
// and returns each term's document frequency per shard and in total.
func (ix *Index) openTerms(ctx context.Context, ps []*postings, terms []term) (_ []*postings, local [][]uint64, global []uint64, err error) {
	if ps == nil {
		ps = make([]*postings, len(ix.shards))
	}
	local = make([][]uint64, len(ix.shards))
	global = make([]uint64, len(terms))
	for s := range ix.shards {
		if ix.shards[s] == nil {
			continue
		}
		if ps[s], err = ix.openShardTerms(ctx, s, ps[s], terms); err != nil {
			closePostings(ps)
			return nil, nil, nil, err
		}
		p := ps[s]
		local[s] = make([]uint64, len(terms))
		for t, tp := range p.terms[len(p.terms)-len(terms):] {
			local[s][t] = tp.count
			global[t] += tp.count
		}
	}
	return ps, local, global, nil
}

// openShardTerms opens terms on shard s, appending them to p (nil: a new
// reader).
func (ix *Index) openShardTerms(ctx context.Context, s int, p *postings, terms []term) (_ *postings, err error) {
	defer ix.corrupt(s, &err)
	if p == nil {
		adv, err := ix.shards[s].Advanced()
		if err != nil {
			return nil, err
		}
		r, err := adv.Reader()
		if err != nil {
			return nil, err
		}
		snap, ok := r.(*scorch.IndexSnapshot)
		if !ok {
			r.Close()
			return nil, fmt.Errorf("shard %d reads as %T, not a scorch snapshot", s, r)
		}
		p = &postings{r: r, segs: snap.Segments(), dicts: map[string][]segment.TermDictionary{}}
		// Internal document numbers run on from one segment to the next,
		// each segment counting its deleted documents too.
		var next uint64
		for _, ss := range p.segs {
			p.first = append(p.first, next)
			next += ss.Segment().Count()
		}
	}
	for _, t := range terms {
		dicts, ok := p.dicts[t.field]
		if !ok {
			for _, ss := range p.segs {
				d, err := ss.Segment().Dictionary(t.field)
				if err != nil {
					return p, err
				}
				dicts = append(dicts, d)
			}
			p.dicts[t.field] = dicts
		}
		tp := termPostings{lists: make([]segment.PostingsList, len(p.segs))}
		for i, ss := range p.segs {
			pl, err := dicts[i].PostingsList([]byte(t.text), ss.Deleted(), nil)
			if err != nil {
				return p, err
			}
			tp.lists[i] = pl
			tp.count += pl.Count()
		}
		p.terms = append(p.terms, tp)
	}
	return p, nil
}

// postingsCursor walks one term's postings across a shard's segments in
// internal document number order, with each posting's frequency and norm.
type postingsCursor struct {
	p    *postings
	tp   *termPostings
	seg  int
	it   segment.PostingsIterator
	doc  uint64 // the current posting's internal document number
	freq uint64
	norm float64 // as bleve's Posting.Norm gives it
	done bool
}

// next moves to the next posting.
func (c *postingsCursor) next() error {
	for c.seg < len(c.tp.lists) {
		if c.it == nil {
			c.it = c.tp.lists[c.seg].Iterator(true, true, false, nil)
		}
		p, err := c.it.Next()
		if err != nil {
			return err
		}
		if p != nil {
			c.doc = p.Number() + c.p.first[c.seg]
			c.freq = p.Frequency()
			if zp, ok := p.(*zapx.Posting); ok {
				c.norm = normOfLength(zp.NormUint64())
			} else {
				c.norm = p.Norm()
			}
			return nil
		}
		c.seg++
		c.it = nil
	}
	c.done = true
	return nil
}

// normOfLength is zapx's Posting.Norm for a field of n terms,
// float32(1/sqrt(n)), from a table for the lengths chunks have: the square
// root and division were a tenth of a search on a million-chunk shard.
func normOfLength(n uint64) float64 {
	if n < uint64(len(normTable)) {
		return normTable[n]
	}
	return float64(float32(1.0 / math.Sqrt(float64(n))))
}

var normTable = func() []float64 {
	t := make([]float64, 1<<12)
	for n := range t {
		t[n] = float64(float32(1.0 / math.Sqrt(float64(n))))
	}
	return t
}()
