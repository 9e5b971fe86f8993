// Package retrievejob is bin/retrieve: sentences -> Parquet of their top-K
// chunk hits.
package retrievejob

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/ctxsim/ctxsim/pipelines/internal/beamjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/index"
	"github.com/ctxsim/ctxsim/transforms/ingest"
	"github.com/ctxsim/ctxsim/transforms/parquetio"
)

const Usage = `
retrieve: sentences -> Parquet of top-K chunk hits (schemas.Retrieval).

Sentences come from a sentences table written by the index job (--sentences;
each sentence's own chunks are excluded from its hits) or from text files
(--queries: one sentence per line, or an STS file in a layout bin/evaluate's
--sts reads, whose pairs' sentences are the queries).
Writes --output/hits/ and --output/dead_letters/.`

// Config is the retrieve job's command line.
type Config struct {
	Index, Sentences, Queries, Output, Chunks string
	K, MinBigrams, FileShards, Print          int
	Sample                                    float64
}

// Register adds the job's flags to fs, bound to c.
func (c *Config) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.Index, "index", "", "Local index directory built by the index job (required).")
	fs.StringVar(&c.Sentences, "sentences", "", "Glob of a sentences Parquet table (local or gs://).")
	fs.StringVar(&c.Queries, "queries", "", "Comma-separated globs of query text or TSV files.")
	fs.StringVar(&c.Output, "output", "", "Output directory (required).")
	fs.IntVar(&c.K, "k", retrieval.DefaultK, "Chunks retrieved per sentence.")
	fs.IntVar(&c.MinBigrams, "min_bigrams", retrieval.DefaultMinBigrams, "Queries with fewer bigrams found in the index also search unigrams (if indexed).")
	fs.Float64Var(&c.Sample, "sample", 1, "Fraction of sentences to query, chosen deterministically by ID.")
	fs.IntVar(&c.FileShards, "parquet_shards", 4, "Number of files per Parquet table.")
	fs.IntVar(&c.Print, "print", 0, "After the run, print this many example retrievals (local output only).")
	fs.StringVar(&c.Chunks, "chunks", "", "Glob of the chunks table, to print chunk text with -print; it must be the table of the index's corpus.")
}

// Ranges are the bounds of the job's numeric flags.
func Ranges() []jobrun.Range {
	return []jobrun.Range{{Name: "k", Lo: 1, Hi: 1e6}, {Name: "sample", Lo: 0, Hi: 1, Open: true},
		{Name: "parquet_shards", Lo: 1, Hi: 1000}}
}

// Run retrieves the sentences' hits and writes them.
func Run(ctx context.Context, c Config) error {
	if (c.Sentences == "") == (c.Queries == "") {
		return fmt.Errorf("give exactly one of --sentences and --queries")
	}
	// Fail before starting the job if the index cannot be opened, or
	// --chunks is not the table of its corpus.
	ix, err := retrieval.OpenAt(ctx, c.Index)
	if err != nil {
		return err
	}
	ix.Close()
	if c.Chunks != "" {
		if err := checkChunks(ctx, ix.Meta, c.Index, c.Chunks); err != nil {
			return err
		}
	}
	abs := c.Index
	if !storage.IsRemote(abs) {
		if abs, err = filepath.Abs(abs); err != nil {
			return err
		}
	}

	p, s := beam.NewPipelineWithRoot()
	var sents beam.PCollection
	var dead []beam.PCollection
	if c.Sentences != "" {
		sents = parquetio.Read(s, c.Sentences, reflect.TypeOf(schemas.Sentence{}))
	} else {
		var qdead beam.PCollection
		sents, qdead = ingest.ReadQueries(s, jobrun.SplitList(c.Queries))
		dead = append(dead, qdead)
	}
	sents = ingest.Sample(s, c.Sample, sents)
	hits, rdead := index.Retrieve(s, index.RetrieveConfig{IndexDir: abs, K: c.K, MinBigrams: c.MinBigrams}, sents)
	dead = append(dead, rdead)
	parquetio.Write(s, parquetio.Config{Dir: c.Output + "/hits", NumShards: c.FileShards}, hits)
	parquetio.Write(s, parquetio.Config{Dir: c.Output + "/dead_letters", NumShards: 1}, beam.Flatten(s, dead...))

	counters, err := beamjob.Run(ctx, "retrieve", p)
	if err != nil {
		return err
	}
	if jobrun.NotRun() {
		return nil
	}
	fmt.Println("counters:")
	counters.Print(os.Stdout, "retrieve", "parquetio")
	if err := jobrun.NotEmpty(counters, "retrieve/queries", "no sentence was queried"); err != nil {
		return err
	}
	fmt.Printf("hits: %s/hits\n", c.Output)
	if c.Print > 0 {
		return printExamples(ctx, c.Output+"/hits", c.Chunks, c.Print)
	}
	return nil
}

// checkChunks reads the chunk IDs of the chunks table chunks and checks
// that they are the corpus of the index in dir, with metadata meta
// (retrieval.Meta.CheckChunks).
func checkChunks(ctx context.Context, meta retrieval.Meta, dir, chunks string) error {
	var f retrieval.Fingerprint
	seen := map[string]bool{}
	if err := storage.ScanGlob(ctx, chunks, func(c schemas.Chunk) bool {
		if !seen[c.ID] {
			seen[c.ID] = true
			f.AddID(c.ID)
		}
		return true
	}); err != nil {
		return fmt.Errorf("chunks: %w", err)
	}
	return meta.CheckChunks(dir, chunks, f)
}

// printExamples prints n retrievals, each with its top chunks and, from
// each chunk, the sentence that shares the most bigrams with the query.
func printExamples(ctx context.Context, hitsDir, chunksGlob string, n int) error {
	rs, err := storage.ReadTable[schemas.Retrieval](ctx, hitsDir)
	if err != nil {
		return err
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].SentenceID < rs[j].SentenceID })
	if len(rs) > n {
		rs = rs[:n]
	}
	const top = 3
	want := map[string]*schemas.Chunk{}
	for _, r := range rs {
		for _, h := range r.Hits[:min(top, len(r.Hits))] {
			want[h.ChunkID] = nil
		}
	}
	if chunksGlob != "" {
		if err := storage.ScanGlob(ctx, chunksGlob, func(c schemas.Chunk) bool {
			if _, ok := want[c.ID]; ok {
				want[c.ID] = &c
			}
			return true
		}); err != nil {
			return err
		}
	}
	an, err := retrieval.NewAnalyzer()
	if err != nil {
		return err
	}
	for _, r := range rs {
		fmt.Printf("\nquery: %s\n  (%d hits; %d of its own chunks excluded)\n", r.Text, len(r.Hits), r.Excluded)
		for i, h := range r.Hits[:min(top, len(r.Hits))] {
			fmt.Printf("  %d. score %.3f  chunk %s", i+1, h.Score, h.ChunkID)
			if c := want[h.ChunkID]; c != nil {
				fmt.Printf("  (%s, sentences %d-%d)\n     best match: %s", c.DocID, c.Start, int(c.Start)+len(c.Sentences)-1,
					clip(bestSentence(an, r.Text, c), 240))
			}
			fmt.Println()
		}
	}
	return nil
}

// bestSentence returns the chunk sentence sharing the most bigrams with q.
func bestSentence(an *retrieval.Analyzer, q string, c *schemas.Chunk) string {
	qb := map[string]bool{}
	for _, b := range an.Bigrams(q) {
		qb[b] = true
	}
	best, bestN := "", -1
	for _, s := range c.Sentences {
		n := 0
		for _, b := range an.Bigrams(s) {
			if qb[b] {
				n++
			}
		}
		if n > bestN {
			best, bestN = s, n
		}
	}
	return best
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut] != ' ' {
		cut--
	}
	if cut == 0 {
		cut = n
	}
	return s[:cut] + " …"
}
