package retrieval

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sync"

	"github.com/blevesearch/bleve/v2/search/scorer"
	"github.com/blevesearch/bleve/v2/search/searcher"
)

// accBlock is how many consecutive document numbers accumulateTop sums at
// a time: 16,384 slots of 16 bytes stay in a core's L2 cache, where one
// array over a million-chunk shard missed the cache on most postings.
const accBlock = 1 << 14

// slot is one document's running sum and the number of clauses it matched
// (for the coordination factor), side by side so that a posting touches one
// cache line.
type slot struct {
	sum   float64
	count uint32
}

// accumulator is one query's sums over one block of documents. Only the
// slots of touched documents are nonzero between blocks.
type accumulator struct {
	slots   [accBlock]slot
	touched []uint16 // offsets in the block with count > 0, in order of first match

	matches []scoredDoc // every matching document of the query, scored
	scores  []float64   // keepTop's scratch
}

// accumulators reuses accumulators across queries (several queries may run
// at once, each with its own).
var accumulators = sync.Pool{New: func() any { return new(accumulator) }}

// cursor is one term's postings and its next posting.
type cursor struct {
	postingsCursor
	idf    float64
	weight float64 // bleve's queryWeight: boost·idf·qnorm
}

// score is bleve's TermQueryScorer score of the current posting.
func (c *cursor) score() float64 {
	var tf float64
	if c.freq < scorer.MaxSqrtCache {
		tf = scorer.SqrtCache[c.freq]
	} else {
		tf = math.Sqrt(float64(c.freq))
	}
	s := tf * c.norm * c.idf
	if c.weight != 1.0 {
		s = s * c.weight
	}
	return s
}

// accumulateTop returns what bleveTop returns for the disjunction of term
// queries over p's terms (with boosts), computing the same TF-IDF scores
// block by block instead of document by document: within each block of
// accBlock document numbers, each term's postings are added, in order, into
// per-document sums, with no heap merging the postings lists and no
// per-match objects. keepTop then picks the survivors, the matches scoring
// at least the size-th best, and rankSurvivors orders and names them.
//
// Each clause's contribution to a document is bleve's, bit for bit:
// queryWeight·(sqrt(tf)·norm·idf), with bleve's IDF for this shard and its
// query norm 1/sqrt(Σ (boost·idf)²). The contributions are added rarest
// term first, then multiplied by the coordination factor matched/clauses.
// bleve adds them in the same order for up to DisjunctionHeapTakeover
// clauses, so there the scores are bleve's bit for bit. Above that, bleve's
// heap hands them over in an order that depends on the heap's history, and
// its sums can differ from these in the last bits (TestAccumulateMatchesBleve
// bounds the difference); documents alike in every clause then always get
// equal scores here, which bleve does not guarantee.
func accumulateTop(ctx context.Context, p *postings, boosts []float64, size int, ids *idTable) (_ []shardHit, ranked bool, err error) {
	docs, err := p.r.DocCount()
	if err != nil {
		return nil, false, err
	}
	terms := p.terms
	idfs := make([]float64, len(terms))
	for t := range terms {
		idfs[t] = 1.0 + math.Log(float64(docs)/float64(terms[t].count+1.0))
	}
	// bleve's slice searcher (up to DisjunctionHeapTakeover clauses) orders
	// its clauses by document frequency, rarest first, with a sort that is
	// stable at that length, and both sums below run in that order. Its heap
	// searcher keeps the query's order for the query norm.
	order := make([]int, len(terms))
	for t := range order {
		order[t] = t
	}
	if len(terms) <= searcher.DisjunctionHeapTakeover {
		slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(terms[x].count, terms[y].count) })
	}
	var sumSq float64
	for _, t := range order {
		w := boosts[t] * idfs[t]
		sumSq += w * w
	}
	qnorm := 1.0 / math.Sqrt(sumSq)

	cs := make([]cursor, len(terms))
	for i, t := range order {
		c := &cs[i]
		c.p, c.tp, c.idf = p, &terms[t], idfs[t]
		c.weight = boosts[t] * c.idf * qnorm
		if err := c.next(); err != nil {
			return nil, false, err
		}
	}
	a := accumulators.Get().(*accumulator)
	defer func() {
		for _, d := range a.touched {
			a.slots[d] = slot{}
		}
		a.touched = a.touched[:0]
		a.matches = a.matches[:0]
		accumulators.Put(a)
	}()
	clauses := float64(len(terms))
	for {
		// The next block starts at the lowest document number any cursor
		// is at.
		start, live := uint64(math.MaxUint64), false
		for i := range cs {
			if !cs[i].done {
				start, live = min(start, cs[i].doc), true
			}
		}
		if !live {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		start -= start % accBlock
		end := start + accBlock
		for i := range cs {
			c := &cs[i]
			for !c.done && c.doc < end {
				sl := &a.slots[c.doc-start]
				if sl.count == 0 {
					a.touched = append(a.touched, uint16(c.doc-start))
				}
				sl.sum += c.score()
				sl.count++
				if err := c.next(); err != nil {
					return nil, false, err
				}
			}
		}
		for _, d := range a.touched {
			sl := &a.slots[d]
			a.matches = append(a.matches, scoredDoc{sl.sum * (float64(sl.count) / clauses), start + uint64(d)})
			*sl = slot{}
		}
		a.touched = a.touched[:0]
	}
	var kept []scoredDoc
	kept, a.scores = keepTop(a.matches, size, a.scores)
	return rankSurvivors(p.r, kept, size, ids)
}
