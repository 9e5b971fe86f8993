// Command retrieve finds, for each sentence, the top-K chunks of the index
// by bigram TF-IDF, and writes them as Parquet.
//
//	go run ./pipelines/retrieve --index=out/corpus/index \
//	  --sentences='out/corpus/sentences/*.parquet' --sample=0.01 --output=out/hits
package main

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

const usage = `
retrieve: sentences -> Parquet of top-K chunk hits (schemas.Retrieval).

Sentences come from a sentences table written by the index job (--sentences;
each sentence's own chunks are excluded from its hits) or from text files
(--queries: one sentence per line, or an STS TSV with header score/s1/s2).
Writes --output/hits/ and --output/dead_letters/.`

var (
	indexDir   = flag.String("index", "", "Local index directory built by the index job (required).")
	sentences  = flag.String("sentences", "", "Glob of a sentences Parquet table (local or gs://).")
	queries    = flag.String("queries", "", "Comma-separated globs of query text or TSV files.")
	output     = flag.String("output", "", "Output directory (required).")
	k          = flag.Int("k", retrieval.DefaultK, "Chunks retrieved per sentence.")
	minBigrams = flag.Int("min_bigrams", retrieval.DefaultMinBigrams, "Queries with fewer bigrams found in the index also search unigrams (if indexed).")
	sample     = flag.Float64("sample", 1, "Fraction of sentences to query, chosen deterministically by ID.")
	fileShards = flag.Int("parquet_shards", 4, "Number of files per Parquet table.")
	show       = flag.Int("print", 0, "After the run, print this many example retrievals (local output only).")
	chunks     = flag.String("chunks", "", "Glob of the chunks table, to print chunk text with -print.")
)

func main() {
	beamjob.Init(usage)
	jobrun.Require("index", "output")
	jobrun.CheckRanges(jobrun.Range{Name: "k", Lo: 1, Hi: 1e6}, jobrun.Range{Name: "sample", Lo: 0, Hi: 1, Open: true},
		jobrun.Range{Name: "parquet_shards", Lo: 1, Hi: 1000})
	jobrun.Lease("retrieve", *output)
	defer jobrun.Release()
	if (*sentences == "") == (*queries == "") {
		jobrun.Fail(fmt.Errorf("give exactly one of --sentences and --queries"))
	}
	// Fail before starting the job if the index cannot be opened.
	ix, err := retrieval.OpenAt(context.Background(), *indexDir)
	if err != nil {
		jobrun.Fail(err)
	}
	ix.Close()
	abs := *indexDir
	if !storage.IsRemote(abs) {
		if abs, err = filepath.Abs(abs); err != nil {
			jobrun.Fail(err)
		}
	}

	p, s := beam.NewPipelineWithRoot()
	var sents beam.PCollection
	var dead []beam.PCollection
	if *sentences != "" {
		sents = parquetio.Read(s, *sentences, reflect.TypeOf(schemas.Sentence{}))
	} else {
		var qdead beam.PCollection
		sents, qdead = ingest.ReadQueries(s, jobrun.SplitList(*queries))
		dead = append(dead, qdead)
	}
	sents = ingest.Sample(s, *sample, sents)
	hits, rdead := index.Retrieve(s, index.RetrieveConfig{IndexDir: abs, K: *k, MinBigrams: *minBigrams}, sents)
	dead = append(dead, rdead)
	parquetio.Write(s, parquetio.Config{Dir: *output + "/hits", NumShards: *fileShards}, hits)
	parquetio.Write(s, parquetio.Config{Dir: *output + "/dead_letters", NumShards: 1}, beam.Flatten(s, dead...))

	c, err := beamjob.Run(context.Background(), "retrieve", p)
	if err != nil {
		jobrun.Fail(err)
	}
	if jobrun.NotRun() {
		return
	}
	fmt.Println("counters:")
	c.Print(os.Stdout, "retrieve", "parquetio")
	jobrun.CheckNotEmpty(c, "retrieve/queries", "no sentence was queried")
	fmt.Printf("hits: %s/hits\n", *output)
	if *show > 0 {
		if err := printExamples(*output+"/hits", *chunks, *show); err != nil {
			jobrun.Fail(err)
		}
	}
}

// printExamples prints n retrievals, each with its top chunks and, from
// each chunk, the sentence that shares the most bigrams with the query.
func printExamples(hitsDir, chunksGlob string, n int) error {
	rs, err := storage.ReadTable[schemas.Retrieval](context.Background(), hitsDir)
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
		cf, err := filepath.Glob(chunksGlob)
		if err != nil {
			return err
		}
		for _, f := range cf {
			cs, err := storage.ReadParquet[schemas.Chunk](context.Background(), f)
			if err != nil {
				return err
			}
			for i := range cs {
				if _, ok := want[cs[i].ID]; ok {
					want[cs[i].ID] = &cs[i]
				}
			}
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
