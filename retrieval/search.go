package retrieval

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/ctxsim/ctxsim/schemas"
)

// DefaultK is the number of chunks retrieved per sentence (the paper's 20K).
const DefaultK = 20000

// DefaultMinBigrams is the default Index.MinBigrams. On mixed-20m, with two
// words of a corpus sentence replaced, the original's chunk is in the top 10
// for 94.6% of sentences with bigrams alone and 95.9% with the unigram
// fallback at 5 (71.5% vs 61.0% for sentences of 4-7 words), at the same
// query latency (bench/results.txt).
const DefaultMinBigrams = 5

// Index is an open, read-only sharded chunk index. Its methods are safe for
// concurrent use.
type Index struct {
	Meta     Meta
	dir      string
	shards   []bleve.Index
	docCount []uint64
	ids      []idTable // per shard, read at the first search
	an       *Analyzer
	// MinBigrams: queries with fewer distinct bigrams found in the index
	// than this also search the unigram field, when the index has one.
	MinBigrams int
	// BleveCollector makes each shard's top-K search go through bleve's own
	// searcher and top-N collector sorted by (-_score, _id), which merges
	// the postings lists document at a time and reads and compares the chunk
	// ID of every match. The default (accumulateTop) scores term at a time
	// and returns the same hits and scores several times faster (for long
	// queries, the same up to the last bits of a score); this one is kept to
	// check it against.
	BleveCollector bool
}

// Open opens the index in dir read-only. Several processes may open the same
// index at once. It fails with a clear error if the index is incomplete or
// was built by a different analyzer or schema version.
func Open(dir string) (*Index, error) { return OpenShards(dir, nil) }

// OpenShards opens the shards of the index in dir that open reports true
// for (all of them when open is nil), read-only, as Open does. Searching
// an index open on some shards covers only their chunks: a search split
// over workers that each open some shards takes its query's document
// frequencies over all of them first (QueryTerms, AddDF), searches each
// part with them (SearchTerms), and merges the parts' hits (MergeHits), to
// give the hits and scores of Search over the whole index.
func OpenShards(dir string, open func(shard int) bool) (*Index, error) {
	meta, err := ReadMeta(dir)
	if err != nil {
		return nil, err
	}
	an, err := NewAnalyzer()
	if err != nil {
		return nil, err
	}
	ix := &Index{Meta: meta, dir: dir, an: an, MinBigrams: DefaultMinBigrams}
	ix.shards = make([]bleve.Index, meta.NumShards)
	ix.docCount = make([]uint64, meta.NumShards)
	for i := 0; i < meta.NumShards; i++ {
		if i < len(meta.Shards) {
			ix.docCount[i] = meta.Shards[i].Count
		}
		if open != nil && !open(i) {
			continue
		}
		p := filepath.Join(dir, ShardDir(i, meta.NumShards))
		if i < len(meta.ShardFiles) && meta.ShardFiles[i] != nil {
			if err := CheckShardFiles(p, meta.ShardFiles[i]); err != nil {
				ix.Close()
				return nil, err
			}
		}
		sh, err := bleve.OpenUsing(p, map[string]interface{}{"read_only": true})
		if err != nil {
			ix.Close()
			return nil, fmt.Errorf("open shard %s: %w", p, err)
		}
		ix.shards[i] = sh
		if im, ok := sh.Mapping().(*mapping.IndexMappingImpl); ok && im.ScoringModel != "" && im.ScoringModel != index.TFIDFScoring {
			ix.Close()
			return nil, fmt.Errorf("shard %s scores with %q; retrieval supports TF-IDF only", p, im.ScoringModel)
		}
		sm, err := shardMetaOf(p, sh)
		if err != nil {
			ix.Close()
			return nil, err
		}
		if sm.Fingerprint != meta.Shards[i] || sm.Shard != i {
			ix.Close()
			return nil, fmt.Errorf("shard %s does not belong to this index: its fingerprint differs from %s",
				p, MetaFile)
		}
		n, err := sh.DocCount()
		if err != nil {
			ix.Close()
			return nil, err
		}
		if n != sm.Fingerprint.Count {
			ix.Close()
			return nil, fmt.Errorf("shard %s holds %d chunks, its metadata says %d", p, n, sm.Fingerprint.Count)
		}
		ix.docCount[i] = n
	}
	ix.ids = make([]idTable, len(ix.shards))
	return ix, nil
}

// Close releases the shards.
func (ix *Index) Close() error {
	var first error
	for _, s := range ix.shards {
		if s == nil {
			continue
		}
		if err := s.Close(); err != nil && first == nil {
			first = err
		}
	}
	ix.shards = nil
	return first
}

// Analyzer returns the index's query analyzer.
func (ix *Index) Analyzer() *Analyzer { return ix.an }

// term is one query term in one field.
type term struct {
	field, text string
}

// bigramTerms returns the query's bigram terms.
func (ix *Index) bigramTerms(text string) []term {
	bi := ix.an.Bigrams(text)
	ts := make([]term, 0, len(bi))
	for _, b := range bi {
		ts = append(ts, term{BigramField, b})
	}
	return ts
}

// preSearch returns the query terms, opened on every shard (the caller
// closes them), with their document frequencies per shard and in total.
// When the index has unigrams and fewer than MinBigrams of the query's
// bigrams occur anywhere in the index (a short or unusual sentence), the
// query's unigrams are added.
func (ix *Index) preSearch(ctx context.Context, text string) ([]term, []*postings, [][]uint64, []uint64, error) {
	terms := ix.bigramTerms(text)
	ps, local, global, err := ix.openTerms(ctx, nil, terms)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if !ix.Meta.Unigrams {
		return terms, ps, local, global, nil
	}
	found := 0
	for _, n := range global {
		if n > 0 {
			found++
		}
	}
	if found >= ix.MinBigrams {
		return terms, ps, local, global, nil
	}
	var uni []term
	for _, u := range ix.an.Unigrams(text) {
		uni = append(uni, term{UnigramField, u})
	}
	ps, ul, ug, err := ix.openTerms(ctx, ps, uni)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	for s := range local {
		local[s] = append(local[s], ul[s]...)
	}
	return append(terms, uni...), ps, local, append(global, ug...), nil
}

// Search returns the top k chunks for text, best first, leaving out the
// chunk IDs in exclude (a corpus sentence's own chunks). It also returns how
// many hits were left out.
//
// Scores are TF-IDF as bleve computes it on a single index holding the whole
// corpus: each shard's query is re-weighted so that its IDF is the global
// one, and each shard's query norm is replaced by the global one. So scores
// and ranks do not depend on the number of shards, and scores of different
// queries are on the same scale (see TestShardedScoresEqualSingleIndex).
func (ix *Index) Search(ctx context.Context, text string, k int, exclude []string) ([]schemas.Hit, int, error) {
	if k <= 0 {
		return nil, 0, nil
	}
	terms, ps, local, global, err := ix.preSearch(ctx, text)
	if err != nil {
		return nil, 0, err
	}
	defer closePostings(ps)
	return ix.searchOpened(ctx, terms, ps, local, global, k, exclude)
}

// searchOpened is Search once its terms are opened on the open shards
// (ps, with their document frequencies there, local) and their document
// frequencies in the whole index are known (global).
func (ix *Index) searchOpened(ctx context.Context, terms []term, ps []*postings, local [][]uint64, global []uint64,
	k int, exclude []string) ([]schemas.Hit, int, error) {
	if len(terms) == 0 {
		return nil, 0, nil
	}
	var total uint64
	for _, n := range ix.docCount {
		total += n
	}
	gidf := make([]float64, len(terms))
	var gsum float64
	for t := range terms {
		gidf[t] = idf(total, global[t])
		gsum += gidf[t] * gidf[t]
	}
	gnorm := 1 / math.Sqrt(gsum)

	ex := make(map[string]bool, len(exclude))
	for _, id := range exclude {
		ex[id] = true
	}
	size := k + len(ex)

	type result struct {
		hits    []schemas.Hit
		ordered bool
		err     error
	}
	results := make([]result, len(ix.shards))
	var wg sync.WaitGroup
	for s := range ix.shards {
		if ix.shards[s] == nil || ix.docCount[s] == 0 {
			continue
		}
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			hits, ordered, err := ix.searchShard(ctx, s, terms, ps[s], local[s], gidf, gnorm, size)
			results[s] = result{hits, ordered, err}
		}(s)
	}
	wg.Wait()

	n := 0
	for _, r := range results {
		if r.err != nil {
			return nil, 0, r.err
		}
		n += len(r.hits)
	}
	all := make([]schemas.Hit, 0, n)
	excluded := 0
	for _, r := range results {
		for _, h := range r.hits {
			if ex[h.ChunkID] {
				excluded++
				continue
			}
			all = append(all, h)
		}
	}
	if len(all) == 0 {
		return nil, excluded, nil
	}
	// One shard's hits may already be in their final order.
	shards, ordered := 0, true
	for _, r := range results {
		if len(r.hits) > 0 {
			shards++
			ordered = ordered && r.ordered
		}
	}
	if shards > 1 || !ordered {
		sortHits(all)
	}
	if len(all) > k {
		all = all[:k]
	}
	return all, excluded, nil
}

// sortHits sorts hits by score, best first, then by chunk ID. It compares
// IDs only within runs of equal scores. (One shard's hits come sorted by
// their float64 scores; rounding to float32 joins some of them into ties.)
func sortHits(hits []schemas.Hit) {
	byScore := func(a, b schemas.Hit) int { return cmp.Compare(b.Score, a.Score) }
	if !slices.IsSortedFunc(hits, byScore) {
		slices.SortFunc(hits, byScore)
	}
	for i := 0; i < len(hits); {
		j := i + 1
		for j < len(hits) && hits[j].Score == hits[i].Score {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(hits[i:j], func(a, b schemas.Hit) int { return strings.Compare(a.ChunkID, b.ChunkID) })
		}
		i = j
	}
}

// searchShard runs the query on shard s with per-term boosts that turn the
// shard's local IDF into the global one, and rescales the scores by the
// global query norm.
//
// bleve scores term t in a document as
//
//	boost·idf·qnorm · tf·norm·idf,  qnorm = 1/sqrt(Σ (boost·idf)²),
//
// times the disjunction's coord factor. With local IDF L and global IDF G,
// boost = G²/L² gives boost·idf·idf = G², so the shard's score is
// qnorm_s · coord · Σ G²·tf·norm. Dividing by qnorm_s and multiplying by
// 1/sqrt(Σ G²) gives the single-index score.
func (ix *Index) searchShard(ctx context.Context, s int, terms []term, p *postings, df []uint64,
	gidf []float64, gnorm float64, size int) (_ []schemas.Hit, ordered bool, err error) {
	defer ix.corrupt(s, &err)
	n := ix.docCount[s]
	boosts := make([]float64, len(terms))
	var wsum float64
	for t := range terms {
		l := idf(n, df[t])
		boosts[t] = (gidf[t] * gidf[t]) / (l * l)
		w := boosts[t] * l
		wsum += w * w
	}
	qnorm := 1 / math.Sqrt(wsum)
	var top []shardHit
	var ranked bool
	if ix.BleveCollector {
		clauses := make([]query.Query, len(terms))
		for t, tm := range terms {
			tq := bleve.NewTermQuery(tm.text)
			tq.SetField(tm.field)
			tq.SetBoost(boosts[t])
			clauses[t] = tq
		}
		top, err = bleveTop(ctx, ix.shards[s], bleve.NewDisjunctionQuery(clauses...), size)
	} else {
		top, ranked, err = accumulateTop(ctx, p, boosts, size, &ix.ids[s])
	}
	if err != nil {
		return nil, false, fmt.Errorf("search shard %d: %w", s, err)
	}
	scale := gnorm / qnorm
	hits := make([]schemas.Hit, len(top))
	for i, h := range top {
		hits[i] = schemas.Hit{ChunkID: h.id, Score: float32(h.score * scale)}
	}
	if !ranked {
		return hits, false, nil
	}
	// Rounding to float32 joins some distinct scores into ties: order each
	// run of equal scores by the ranks of the IDs, as sortHits would by
	// the IDs.
	for i := 0; i < len(hits); {
		j := i + 1
		for j < len(hits) && hits[j].Score == hits[i].Score {
			j++
		}
		if j-i > 1 && !slices.IsSortedFunc(top[i:j], byRank) {
			slices.SortFunc(top[i:j], byRank)
			for x := i; x < j; x++ {
				hits[x].ChunkID = top[x].id // the run's scores are equal
			}
		}
		i = j
	}
	return hits, true, nil
}

func byRank(a, b shardHit) int { return cmp.Compare(a.rank, b.rank) }

// idf is bleve's TF-IDF inverse document frequency.
func idf(docs, docFreq uint64) float64 {
	return 1 + math.Log(float64(docs)/float64(docFreq+1))
}

// corrupt turns a panic inside bleve while reading shard s (its reader
// panics on damaged segment files instead of returning an error) into an
// error naming the shard. Deferred by every call that reads a shard.
func (ix *Index) corrupt(s int, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("index shard %s is damaged (reading it failed: %v); rebuild the index",
			filepath.Join(ix.dir, ShardDir(s, len(ix.shards))), r)
	}
}
