// Command index reads a corpus and builds the sharded chunk index plus the
// sentence, chunk and dead-letter Parquet tables.
//
//	go run ./pipelines/index --input='corpus/*.jsonl.gz' --output=out/corpus
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/ctxsim/ctxsim/pipelines/internal/beamjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/retrieval/corpus"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/index"
	"github.com/ctxsim/ctxsim/transforms/ingest"
	"github.com/ctxsim/ctxsim/transforms/parquetio"
)

const usage = `
index: corpus -> sharded bigram TF-IDF index + Parquet tables.

Reads JSONL ({"doc_id","source","title","paragraphs"}, gzipped or plain) and
plain-text files (one document per file, blank line between paragraphs), from
local paths or gs:// globs. Writes, under --output:
  sentences/     schemas.Sentence Parquet
  chunks/        schemas.Chunk Parquet
  dead_letters/  every rejected record with file, line and reason
and the index under --index (default --output/index). Any of these may be on
gs://: index shards are then built in local temporary directories and
copied up when complete, with the index metadata written last.`

var (
	input        = flag.String("input", "", "Comma-separated corpus file globs, local or gs:// (required).")
	output       = flag.String("output", "", "Directory for the Parquet tables (required).")
	indexDir     = flag.String("index", "", "Directory for the index, local or gs:// (default <output>/index).")
	shards       = flag.Int("shards", 4, "Number of index shards, built in parallel.")
	fileShards   = flag.Int("parquet_shards", 4, "Number of files per Parquet table.")
	chunkSize    = flag.Int("chunk_size", corpus.DefaultChunkSize, "Sentences per chunk.")
	chunkStride  = flag.Int("chunk_stride", corpus.DefaultChunkStride, "Sentences between chunk starts.")
	maxParagraph = flag.Int("max_paragraph_bytes", corpus.DefaultMaxParagraphBytes, "Longer paragraphs are dead-lettered.")
	maxLine      = flag.Int("max_line_bytes", corpus.DefaultMaxLineBytes, "Longer JSONL lines are dead-lettered.")
	strict       = flag.Bool("strict_fields", false, "Dead-letter JSONL records with unknown fields instead of ignoring them.")
	unigrams     = flag.Bool("unigrams", true, "Also index stop-word-free unigrams, searched by queries with few known bigrams.")
)

func main() {
	beamjob.Init(usage)
	jobrun.Require("input", "output")
	jobrun.CheckRanges(jobrun.Range{Name: "shards", Lo: 1, Hi: 256}, jobrun.Range{Name: "parquet_shards", Lo: 1, Hi: 1000},
		jobrun.Range{Name: "chunk_size", Lo: 1, Hi: 1000}, jobrun.Range{Name: "chunk_stride", Lo: 1, Hi: 1000})
	jobrun.Lease("index", *output)
	defer jobrun.Release()
	opts := corpus.Options{
		ChunkSize: *chunkSize, ChunkStride: *chunkStride,
		MaxParagraphBytes: *maxParagraph, MaxLineBytes: *maxLine, StrictFields: *strict,
	}
	if err := opts.Validate(); err != nil {
		jobrun.Fail(err)
	}
	dir := *indexDir
	if dir == "" {
		dir = storage.Join(*output, "index")
	}
	if !storage.IsRemote(dir) {
		abs, err := filepath.Abs(dir)
		if err != nil {
			jobrun.Fail(err)
		}
		dir = abs
	}

	p, s := beam.NewPipelineWithRoot()
	in := ingest.Ingest(s, jobrun.SplitList(*input), opts)
	_, idxDead := index.Build(s, index.BuildConfig{
		Dir: dir, NumShards: *shards, Unigrams: *unigrams,
		Chunking: fmt.Sprintf("size=%d,stride=%d", *chunkSize, *chunkStride),
	}, in.Chunks)
	table := func(name string, col beam.PCollection) {
		parquetio.Write(s, parquetio.Config{Dir: *output + "/" + name, NumShards: *fileShards}, col)
	}
	table("sentences", in.Sentences)
	table("chunks", in.Chunks)
	table("dead_letters", beam.Flatten(s, in.Dead, idxDead))

	c, err := beamjob.Run(context.Background(), "index", p)
	if err != nil {
		jobrun.Fail(err)
	}
	if jobrun.NotRun() {
		// Only built or submitted: say where the job writes.
		fmt.Printf("index:        %s\nsentences:    %s/sentences\nchunks:       %s/chunks\n", dir, *output, *output)
		return
	}
	fmt.Println("counters:")
	c.Print(os.Stdout, "ingest", "index", "parquetio")
	jobrun.CheckNotEmpty(c, "ingest/documents_ingested",
		fmt.Sprintf("no documents in --input=%s: nothing was indexed (dead letters in %s/dead_letters)", *input, *output))
	for _, e := range []error{
		c.Reconcile("ingest/records_read", "ingest/documents_parsed", "ingest/records_dead"),
		c.Reconcile("ingest/documents_parsed", "ingest/documents_ingested", "ingest/documents_duplicate", "ingest/documents_empty"),
		c.Reconcile("ingest/chunks", "index/chunks_indexed", "index/chunks_duplicate"),
	} {
		if e != nil {
			jobrun.Fail(e)
		}
	}
	fmt.Printf("index:        %s\n", dir)
	fmt.Printf("sentences:    %s/sentences\n", *output)
	fmt.Printf("chunks:       %s/chunks\n", *output)
	fmt.Printf("dead letters: %s/dead_letters (%d records)\n", *output,
		c["ingest/records_dead"]+c["ingest/files_failed"]+c["ingest/documents_duplicate"]+
			c["ingest/documents_empty"]+c["ingest/paragraphs_dead"]+c["index/chunks_duplicate"])
}
