package retrieval

import (
	"context"
	"fmt"
	"slices"

	"github.com/ctxsim/ctxsim/schemas"
)

// A search split over shard parts, for workers that each open some of an
// index's shards (OpenShards): the query's document frequencies are first
// counted on each part and added (QueryTerms, AddDF), each part is then
// searched with the whole index's frequencies (SearchTerms), and the
// parts' hits are merged (MergeHits). Every shard's scores depend only on
// its own postings and the whole index's frequencies and chunk count, so
// the merged hits are those of Search over the whole index, score for
// score (TestSplitSearchEqualsWhole).

// QueryTerms are a query's terms, bigrams and unigrams, with their document
// frequencies in the shards counted so far: what the parts of a split
// search must agree on before they search. A few hundred bytes a query.
type QueryTerms struct {
	Bigrams, Unigrams   []string
	BigramDF, UnigramDF []uint64
}

// QueryTerms returns text's query terms with their document frequencies
// in the shards this index has open. The unigrams are counted only when
// the index has a unigram field.
func (ix *Index) QueryTerms(ctx context.Context, text string) (QueryTerms, error) {
	q := QueryTerms{Bigrams: ix.an.Bigrams(text)}
	if ix.Meta.Unigrams {
		q.Unigrams = ix.an.Unigrams(text)
	}
	terms := ix.queryTerms(q, true)
	ps, _, global, err := ix.openTerms(ctx, nil, terms)
	if err != nil {
		return q, err
	}
	closePostings(ps)
	q.BigramDF = global[:len(q.Bigrams)]
	q.UnigramDF = global[len(q.Bigrams):]
	return q, nil
}

// AddDF adds the document frequencies of o, the same query counted on
// other shards, to q's.
func (q *QueryTerms) AddDF(o QueryTerms) error {
	if !slices.Equal(q.Bigrams, o.Bigrams) || !slices.Equal(q.Unigrams, o.Unigrams) ||
		len(o.BigramDF) != len(q.BigramDF) || len(o.UnigramDF) != len(q.UnigramDF) {
		return fmt.Errorf("retrieval: the document frequencies of two different queries cannot be added")
	}
	for i, n := range o.BigramDF {
		q.BigramDF[i] += n
	}
	for i, n := range o.UnigramDF {
		q.UnigramDF[i] += n
	}
	return nil
}

// queryTerms lists q's terms: the bigrams, then the unigrams when withUni.
func (ix *Index) queryTerms(q QueryTerms, withUni bool) []term {
	ts := make([]term, 0, len(q.Bigrams)+len(q.Unigrams))
	for _, b := range q.Bigrams {
		ts = append(ts, term{BigramField, b})
	}
	if withUni {
		for _, u := range q.Unigrams {
			ts = append(ts, term{UnigramField, u})
		}
	}
	return ts
}

// SearchTerms is Search over the shards this index has open, for a query
// whose document frequencies q holds for the whole index (QueryTerms of
// every part, added): the hits are the open shards' share of the whole
// index's, with its scores. As Search does, it adds the unigrams when
// fewer than MinBigrams of the bigrams occur anywhere in the index.
func (ix *Index) SearchTerms(ctx context.Context, q QueryTerms, k int, exclude []string) ([]schemas.Hit, int, error) {
	if k <= 0 {
		return nil, 0, nil
	}
	found := 0
	for _, n := range q.BigramDF {
		if n > 0 {
			found++
		}
	}
	withUni := ix.Meta.Unigrams && found < ix.MinBigrams
	terms := ix.queryTerms(q, withUni)
	global := slices.Clone(q.BigramDF)
	if withUni {
		global = append(global, q.UnigramDF...)
	}
	if len(global) != len(terms) {
		return nil, 0, fmt.Errorf("retrieval: a query's document frequencies do not match its terms (%d for %d)", len(global), len(terms))
	}
	ps, local, _, err := ix.openTerms(ctx, nil, terms)
	if err != nil {
		return nil, 0, err
	}
	defer closePostings(ps)
	return ix.searchOpened(ctx, terms, ps, local, global, k, exclude)
}

// MergeHits merges the hits of the parts of a split search into the k best,
// in Search's order.
func MergeHits(parts [][]schemas.Hit, k int) []schemas.Hit {
	var all []schemas.Hit
	for _, p := range parts {
		all = append(all, p...)
	}
	sortHits(all)
	return all[:min(k, len(all))]
}
