package retrieval

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"

	"github.com/ctxsim/ctxsim/schemas"
)

// synthChunks makes n chunks of Zipf-distributed words, deterministically.
func synthChunks(n int, seed int64) []schemas.Chunk {
	r := rand.New(rand.NewSource(seed))
	z := rand.NewZipf(r, 1.2, 2, 2000)
	out := make([]schemas.Chunk, n)
	for i := range out {
		var sents []string
		for s := 0; s < 3+r.Intn(4); s++ {
			words := make([]string, 5+r.Intn(15))
			for w := range words {
				words[w] = fmt.Sprintf("w%d", z.Uint64())
			}
			sents = append(sents, strings.Join(words, " ")+".")
		}
		out[i] = schemas.Chunk{ID: fmt.Sprintf("c%06d", i), DocID: fmt.Sprintf("d%d", i/10), Sentences: sents}
	}
	return out
}

func buildIndex(t testing.TB, dir string, chunks []schemas.Chunk, shards int, opts BuildOptions) *Index {
	t.Helper()
	ws := make([]*ShardWriter, shards)
	for i := range ws {
		w, err := CreateShard(dir, i, shards, opts)
		if err != nil {
			t.Fatal(err)
		}
		ws[i] = w
	}
	for i := range chunks {
		if err := ws[ShardOf(chunks[i].ID, shards)].Add(&chunks[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range ws {
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Finalize(dir, shards, opts, "test"); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func TestShardedScoresEqualSingleIndex(t *testing.T) {
	chunks := synthChunks(3000, 1)
	tmp := t.TempDir()
	one := buildIndex(t, filepath.Join(tmp, "one"), chunks, 1, BuildOptions{})
	four := buildIndex(t, filepath.Join(tmp, "four"), chunks, 4, BuildOptions{})
	if one.Meta.Corpus != four.Meta.Corpus {
		t.Fatalf("corpus fingerprints differ: %v vs %v", one.Meta.Corpus, four.Meta.Corpus)
	}
	for q := 0; q < 40; q++ {
		text := chunks[q*50].Sentences[0]
		h1, _, err := one.Search(context.Background(), text, 200, nil)
		if err != nil {
			t.Fatal(err)
		}
		h4, _, err := four.Search(context.Background(), text, 200, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(h1) == 0 || len(h1) != len(h4) {
			t.Fatalf("query %d: %d hits on 1 shard, %d on 4", q, len(h1), len(h4))
		}
		for i := range h1 {
			if math.Abs(float64(h1[i].Score-h4[i].Score)) > 1e-5*float64(h1[i].Score) {
				t.Fatalf("query %d rank %d: score %v on 1 shard, %v on 4", q, i, h1[i].Score, h4[i].Score)
			}
		}
		// Ranks may only differ among (nearly) tied scores.
		for i := range h1 {
			if h1[i].ChunkID != h4[i].ChunkID {
				if math.Abs(float64(h1[i].Score-h4[i].Score)) > 1e-5*float64(h1[i].Score) {
					t.Fatalf("query %d rank %d: %s vs %s", q, i, h1[i].ChunkID, h4[i].ChunkID)
				}
			}
		}
	}
}

// TestScoresAreBleveTFIDF checks the single-shard score against bleve's own
// TF-IDF for an unboosted disjunction of the query's bigrams.
func TestScoresAreBleveTFIDF(t *testing.T) {
	chunks := synthChunks(500, 2)
	ix := buildIndex(t, t.TempDir(), chunks, 1, BuildOptions{})
	text := chunks[7].Sentences[1]
	hits, _, err := ix.Search(context.Background(), text, 50, nil)
	if err != nil {
		t.Fatal(err)
	}
	var qs []query.Query
	for _, b := range ix.Analyzer().Bigrams(text) {
		tq := bleve.NewTermQuery(b)
		tq.SetField(BigramField)
		qs = append(qs, tq)
	}
	req := bleve.NewSearchRequestOptions(bleve.NewDisjunctionQuery(qs...), 50, 0, false)
	req.SortBy([]string{"-_score", "_id"})
	res, err := ix.shards[0].Search(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != len(hits) {
		t.Fatalf("%d hits, bleve %d", len(hits), len(res.Hits))
	}
	for i, h := range res.Hits {
		if h.ID != hits[i].ChunkID || math.Abs(h.Score-float64(hits[i].Score)) > 1e-5*h.Score {
			t.Fatalf("rank %d: got %s %v, bleve %s %v", i, hits[i].ChunkID, hits[i].Score, h.ID, h.Score)
		}
	}
	if hits[0].ChunkID != chunks[7].ID {
		t.Errorf("a chunk's own sentence should retrieve it first; got %s", hits[0].ChunkID)
	}
}

func TestSearchExcludesOwnChunks(t *testing.T) {
	chunks := synthChunks(500, 3)
	ix := buildIndex(t, t.TempDir(), chunks, 2, BuildOptions{})
	text := chunks[11].Sentences[0]
	hits, _, err := ix.Search(context.Background(), text, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) < 3 {
		t.Fatalf("only %d hits", len(hits))
	}
	if hits[0].ChunkID != chunks[11].ID {
		t.Fatalf("top hit %s, want %s", hits[0].ChunkID, chunks[11].ID)
	}
	hits2, excluded, err := ix.Search(context.Background(), text, 10, []string{chunks[11].ID})
	if err != nil {
		t.Fatal(err)
	}
	if want := min(10, len(hits)-1); excluded != 1 || len(hits2) != want {
		t.Fatalf("excluded %d, %d hits; want 1 and %d", excluded, len(hits2), want)
	}
	for _, h := range hits2 {
		if h.ChunkID == chunks[11].ID {
			t.Fatal("excluded chunk returned")
		}
	}
	if hits2[0] != hits[1] {
		t.Errorf("after exclusion the top hit should be the former second: %v vs %v", hits2[0], hits[1])
	}
}

func TestOpenRejectsMismatchedIndex(t *testing.T) {
	chunks := synthChunks(50, 4)
	dir := t.TempDir()
	buildIndex(t, dir, chunks, 2, BuildOptions{}).Close()

	m, err := ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		mutate func(*Meta)
		want   string
	}{
		{"analyzer", func(m *Meta) { m.Analyzer = "ctxsim-bigram/0" }, "analyzer"},
		{"version", func(m *Meta) { m.SchemaVersion = "ctxsim/v0" }, "schema version"},
		{"fingerprint", func(m *Meta) { m.Shards[0].Count++; m.Corpus.Count++ }, "does not belong"},
		{"sum", func(m *Meta) { m.Corpus.Count++ }, "do not add up"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mm := m
			mm.Shards = append([]Fingerprint(nil), m.Shards...)
			c.mutate(&mm)
			if err := WriteMeta(dir, mm); err != nil {
				t.Fatal(err)
			}
			_, err := Open(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Open error %v, want one mentioning %q", err, c.want)
			}
		})
	}
	os.Remove(filepath.Join(dir, MetaFile))
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "not a complete") {
		t.Fatalf("Open without metadata: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, MetaFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("Open with corrupt metadata: %v", err)
	}
}

func TestFinalizeFillsEmptyShardsAndRemovesStale(t *testing.T) {
	dir := t.TempDir()
	chunks := synthChunks(3, 5)
	// An old build with another shard count and an interrupted temp dir.
	buildIndex(t, dir, chunks, 3, BuildOptions{}).Close()
	if err := os.MkdirAll(filepath.Join(dir, ".shard-00000-of-00008.tmp-x"), 0o755); err != nil {
		t.Fatal(err)
	}
	ix := buildIndex(t, dir, chunks, 8, BuildOptions{})
	if ix.Meta.Corpus.Count != 3 || ix.Meta.NumShards != 8 {
		t.Fatalf("meta %+v", ix.Meta)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(ents) != 9 { // 8 shards + metadata
		t.Fatalf("directory holds %v", names)
	}
	hits, _, err := ix.Search(context.Background(), chunks[0].Sentences[0], 5, nil)
	if err != nil || len(hits) == 0 {
		t.Fatalf("search on mostly empty shards: %v %v", hits, err)
	}
}

func TestDuplicateChunkRejected(t *testing.T) {
	w, err := CreateShard(t.TempDir(), 0, 1, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	c := schemas.Chunk{ID: "x", Sentences: []string{"a b c"}}
	if err := w.Add(&c); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(&c); err != ErrDuplicateChunk {
		t.Fatalf("second Add: %v", err)
	}
	if w.Count() != 1 {
		t.Fatalf("count %d", w.Count())
	}
}

func TestAnalyzerBigrams(t *testing.T) {
	a, err := NewAnalyzer()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(a.Bigrams("The cat sat, the cat sat!"), "|")
	if got != "the cat|cat sat|sat the" {
		t.Fatalf("bigrams %q", got)
	}
	got = strings.Join(a.BigramTokens("The cat sat, the cat sat!"), "|")
	if got != "the cat|cat sat|sat the|the cat|cat sat" {
		t.Fatalf("bigram tokens %q", got)
	}
	if got := a.Bigrams("Hello"); len(got) != 0 {
		t.Fatalf("one word has no bigram: %q", got)
	}
	if got := strings.Join(a.Unigrams("The cat and the hat"), "|"); got != "cat|hat" {
		t.Fatalf("unigrams %q", got)
	}
}

func TestUnigramFallback(t *testing.T) {
	chunks := synthChunks(300, 6)
	words := strings.Fields(chunks[42].Sentences[0])
	// Two words of the chunk, reversed: their bigram is unknown to the index.
	q := words[len(words)-1] + " zzunknown " + words[0]
	tmp := t.TempDir()
	bi := buildIndex(t, filepath.Join(tmp, "bi"), chunks, 2, BuildOptions{})
	uni := buildIndex(t, filepath.Join(tmp, "uni"), chunks, 2, BuildOptions{Unigrams: true})
	if hits, _, _ := bi.Search(context.Background(), q, 10, nil); len(hits) != 0 {
		t.Fatalf("bigram-only index matched unknown bigrams: %v", hits)
	}
	hits, _, err := uni.Search(context.Background(), q, 3000, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, h := range hits {
		found = found || h.ChunkID == chunks[42].ID
	}
	if !found {
		t.Fatalf("unigram fallback did not reach the chunk holding the words (%d hits)", len(hits))
	}
	// A query whose bigrams are known does not fall back: same hits as
	// the bigram-only index.
	long := chunks[7].Sentences[0]
	h1, _, _ := bi.Search(context.Background(), long, 20, nil)
	h2, _, _ := uni.Search(context.Background(), long, 20, nil)
	if len(strings.Fields(long)) > 8 && !reflect.DeepEqual(h1, h2) {
		t.Fatalf("long query changed by the unigram field")
	}
}

// tiedChunks is synthChunks(n) plus copies of its first chunks under other
// IDs, so that queries score many chunks exactly alike.
func tiedChunks(n int, seed int64) []schemas.Chunk {
	chunks := synthChunks(n, seed)
	for i := 0; i < 120; i++ {
		c := chunks[i%6]
		c.ID = fmt.Sprintf("dup%04d-%s", (i*7919)%1000, c.ID)
		chunks = append(chunks, c)
	}
	return chunks
}

// tiedQueries are queries with many tied scores: sentences of the copied
// chunks, and single bigrams, which score every chunk of the same length
// and frequency alike.
func tiedQueries(chunks []schemas.Chunk) []string {
	var qs []string
	for i := 0; i < 6; i++ {
		qs = append(qs, chunks[i].Sentences[0])
		w := strings.Fields(chunks[i].Sentences[1])
		qs = append(qs, w[0]+" "+w[1], strings.Join(w[:min(4, len(w))], " "))
	}
	for i := 100; i < 110; i++ {
		qs = append(qs, chunks[i].Sentences[0])
	}
	return qs
}

// sameHits checks hits got against bleve's want. With exact, they must be
// equal bit for bit. Otherwise (a query of more clauses than bleve's slice
// searcher takes, whose sums bleve adds in another order) every score must
// be within a few ulps of bleve's for the same chunk, and a chunk only one
// side returns must score within that of the cut.
func sameHits(got, want []shardHit, exact bool) error {
	if exact {
		if len(got) != len(want) {
			return fmt.Errorf("%d hits, bleve %d", len(got), len(want))
		}
		for i := range want {
			if got[i].id != want[i].id || math.Float64bits(got[i].score) != math.Float64bits(want[i].score) {
				return fmt.Errorf("rank %d: %s %v, bleve %s %v", i, got[i].id, got[i].score, want[i].id, want[i].score)
			}
		}
		return nil
	}
	if len(got) != len(want) {
		return fmt.Errorf("%d hits, bleve %d", len(got), len(want))
	}
	const tol = 1e-13
	close := func(a, b float64) bool { return math.Abs(a-b) <= tol*math.Abs(b) }
	byID := make(map[string]float64, len(want))
	for _, h := range want {
		byID[h.id] = h.score
	}
	for i, h := range got {
		if !close(h.score, want[i].score) {
			return fmt.Errorf("rank %d: score %v, bleve %v", i, h.score, want[i].score)
		}
		if ws, ok := byID[h.id]; ok {
			if !close(h.score, ws) {
				return fmt.Errorf("%s: score %v, bleve %v", h.id, h.score, ws)
			}
		} else if cut := want[len(want)-1].score; !close(h.score, cut) {
			return fmt.Errorf("%s (score %v) is not in bleve's hits, whose cut is %v", h.id, h.score, cut)
		}
	}
	return nil
}

// shardTop is accumulateTop on shard s of ix.
func shardTop(ix *Index, s int, terms []term, boosts []float64, k int, ids *idTable) ([]shardHit, error) {
	p, err := ix.openShardTerms(context.Background(), s, nil, terms)
	defer p.close()
	if err != nil {
		return nil, err
	}
	hits, _, err := accumulateTop(context.Background(), p, boosts, k, ids)
	return hits, err
}

// TestAccumulateMatchesBleve checks the default top-K path against bleve's
// own searcher and collector sorted by (-_score, _id): per shard, bit for
// bit for queries of up to DisjunctionHeapTakeover clauses and to a few
// ulps above that, with and without the chunk ID table, and through Search,
// for K below, at and above the number of hits tied at the cut.
func TestAccumulateMatchesBleve(t *testing.T) {
	chunks := tiedChunks(1500, 7)
	queries := tiedQueries(chunks)
	ks := []int{1, 2, 3, 5, 8, 13, 40, 100, 333, 1000, 5000}
	tmp := t.TempDir()
	cutTies := 0 // cases where K cuts through a run of tied scores
	long := 0    // queries of more clauses than bleve's slice searcher takes
	for _, cfg := range []struct {
		shards  int
		batch   int
		segment bool // leave the shards as the batches made them
	}{{1, 0, false}, {3, 0, false}, {1, 97, true}, {2, 40, true}} {
		shards := cfg.shards
		keepSegments = cfg.segment
		ix := buildIndex(t, filepath.Join(tmp, fmt.Sprint(cfg)), chunks, shards, BuildOptions{BatchSize: cfg.batch})
		keepSegments = false
		if cfg.segment {
			for s := range ix.shards {
				p, err := ix.openShardTerms(context.Background(), s, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(p.segs) < 2 {
					t.Fatalf("%+v: shard %d has %d segments, want several", cfg, s, len(p.segs))
				}
				p.close()
			}
		}
		for qi, text := range queries {
			terms := ix.bigramTerms(text)
			exact := len(terms) <= searcher.DisjunctionHeapTakeover
			if !exact && shards == 1 && !cfg.segment {
				long++
			}
			boosts := make([]float64, len(terms))
			var clauses []query.Query
			for i, tm := range terms {
				// Boosts as Search sets them on a sharded index.
				boosts[i] = 1 + float64(i%3)/7
				tq := bleve.NewTermQuery(tm.text)
				tq.SetField(tm.field)
				tq.SetBoost(boosts[i])
				clauses = append(clauses, tq)
			}
			q := bleve.NewDisjunctionQuery(clauses...)
			for s, sh := range ix.shards {
				for _, k := range ks {
					want, err := bleveTop(context.Background(), sh, q, k)
					if err != nil {
						t.Fatal(err)
					}
					got, err := shardTop(ix, s, terms, boosts, k, &ix.ids[s])
					if err != nil {
						t.Fatal(err)
					}
					if s == 0 {
						// And without the ID table.
						plain, err := shardTop(ix, s, terms, boosts, k, nil)
						if err != nil || !slices.EqualFunc(plain, got, func(a, b shardHit) bool { return a.id == b.id && a.score == b.score }) {
							t.Fatalf("shards=%d query %d k=%d: the ID table changed the hits (%v)", shards, qi, k, err)
						}
						named := 0
						for d := range ix.ids[s].tab.rank {
							if ix.ids[s].tab.id(uint64(d)) != "" {
								named++
							}
						}
						if uint64(named) != ix.docCount[s] {
							t.Fatalf("shards=%d: the ID table names %d chunks of %d", shards, named, ix.docCount[s])
						}
					}
					if err := sameHits(got, want, exact); err != nil {
						t.Fatalf("shards=%d shard %d query %d (%d clauses) k=%d: %v", shards, s, qi, len(terms), k, err)
					}
					if all, _ := bleveTop(context.Background(), sh, q, k+1); len(all) > k && k > 1 &&
						all[k].score == all[k-1].score && all[k-2].score == all[k-1].score {
						cutTies++
					}
				}
			}
			for _, k := range ks {
				for _, exclude := range [][]string{nil, {chunks[qi%6].ID, "dup0000-c000000"}} {
					ix.BleveCollector = true
					want, wex, err := ix.Search(context.Background(), text, k, exclude)
					if err != nil {
						t.Fatal(err)
					}
					ix.BleveCollector = false
					got, gex, err := ix.Search(context.Background(), text, k, exclude)
					if err != nil {
						t.Fatal(err)
					}
					if !exact {
						// The shards' float64 scores were compared above. Here
						// chunks alike in every clause may have been ranked
						// differently by bleve (see accumulateTop), and so
						// one of them excluded or not.
						if len(got) != len(want) {
							t.Fatalf("shards=%d query %d k=%d: %d hits (%d excluded), bleve %d (%d) %v %v", shards, qi, k, len(got), gex, len(want), wex, got, want)
						}
						continue
					}
					if len(got) != len(want) || gex != wex {
						t.Fatalf("shards=%d query %d k=%d: %d hits (%d excluded), bleve %d (%d)", shards, qi, k, len(got), gex, len(want), wex)
					}
					for i := range want {
						if got[i].ChunkID != want[i].ChunkID || math.Float32bits(got[i].Score) != math.Float32bits(want[i].Score) {
							t.Fatalf("shards=%d query %d k=%d rank %d: %v, bleve %v", shards, qi, k, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
	if cutTies < 20 {
		t.Fatalf("only %d cases cut through tied scores; the test needs more ties", cutTies)
	}
	if long < 3 || long > len(queries)-3 {
		t.Fatalf("%d of %d queries have more than %d clauses; the test needs both kinds", long, len(queries), searcher.DisjunctionHeapTakeover)
	}
	t.Logf("%d shard searches cut through a run of tied scores; %d of %d queries are long", cutTies, long, len(queries))
}

// TestKeepTopKeepsTiesAtTheCut checks keepTop against sorting all
// matches: the survivors are exactly the matches scoring at least the k-th
// best.
func TestKeepTopKeepsTiesAtTheCut(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	var scratch []float64
	for trial := 0; trial < 2000; trial++ {
		n := r.Intn(300)
		if trial%10 == 0 {
			n = r.Intn(20000)
		}
		levels := 1 + r.Intn(20) // few distinct scores: many ties
		if trial%3 == 0 {
			levels = 1 << 30 // nearly all distinct
		}
		k := r.Intn(n + 5)
		all := make([]scoredDoc, n)
		for i := range all {
			all[i] = scoredDoc{float64(r.Intn(levels)) / 7, uint64(i)}
		}
		var want []uint64
		if k > 0 && n > 0 {
			scores := make([]float64, n)
			for i, d := range all {
				scores[i] = d.score
			}
			slices.Sort(scores)
			cut := scores[max(0, n-k)]
			for _, d := range all {
				if d.score >= cut {
					want = append(want, d.doc)
				}
			}
		}
		var kept []scoredDoc
		kept, scratch = keepTop(slices.Clone(all), k, scratch)
		var got []uint64
		for _, d := range kept {
			got = append(got, d.doc)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (n=%d k=%d levels=%d): kept %d, want %d", trial, n, k, levels, len(got), len(want))
		}
	}
}

// TestShardIsOneSegment checks that a shard built in many batches is left
// as one segment, and that its hits are those of the same chunks in one
// batch.
func TestShardIsOneSegment(t *testing.T) {
	chunks := synthChunks(600, 11)
	tmp := t.TempDir()
	many := buildIndex(t, filepath.Join(tmp, "many"), chunks, 1, BuildOptions{BatchSize: 25})
	one := buildIndex(t, filepath.Join(tmp, "one"), chunks, 1, BuildOptions{BatchSize: 1000})
	adv, err := many.shards[0].Advanced()
	if err != nil {
		t.Fatal(err)
	}
	r, err := adv.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		t.Fatalf("reader is %T, want a scorch snapshot", r)
	}
	if n := len(snap.Segments()); n != 1 {
		t.Fatalf("24 batches left %d segments, want 1", n)
	}
	files, err := filepath.Glob(filepath.Join(many.dir, ShardDir(0, 1), "store", "*.zap"))
	if err != nil || len(files) != 1 {
		t.Fatalf("the shard's store holds segment files %v (%v), want one", files, err)
	}
	for q := 0; q < 20; q++ {
		text := chunks[q*30].Sentences[0]
		a, _, err := many.Search(context.Background(), text, 100, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := one.Search(context.Background(), text, 100, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("query %d: hits differ between the two builds", q)
		}
	}
}

// TestSortRankedIsSortByScoreThenRank checks the radix sort against a
// comparison sort, with ties, zero scores, and a negative score that sends
// it to the comparison sort.
func TestSortRankedIsSortByScoreThenRank(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	for trial := 0; trial < 300; trial++ {
		n := r.Intn(3000)
		rs := make([]rankedDoc, n)
		perm := r.Perm(n * 3) // distinct ranks, as a table's are
		shift := uint(r.Intn(12))
		for i := range rs {
			var score float64
			switch trial % 3 {
			case 0:
				score = float64(r.Intn(5)) / 3 // ties, and zeros
			case 1:
				score = r.Float64() * math.Pow(10, float64(r.Intn(10)-5))
			default:
				score = 1 + float64(r.Intn(1000))*1e-15 // last-bit differences
			}
			rs[i] = rankedDoc{score, uint32(perm[i]) << shift, uint64(i)}
		}
		if trial == 7 && n > 0 {
			rs[0].score = -1
		}
		want := slices.Clone(rs)
		slices.SortFunc(want, func(a, b rankedDoc) int {
			if c := cmp.Compare(b.score, a.score); c != 0 {
				return c
			}
			return cmp.Compare(a.rank, b.rank)
		})
		got := sortRanked(rs, make([]rankedDoc, n))
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (n=%d): radix order differs from the comparison sort", trial, n)
		}
	}
}
