// Package indexjob is bin/index: it reads a corpus and builds the sharded
// chunk index plus the sentence, chunk and dead-letter Parquet tables.
package indexjob

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/ctxsim/ctxsim/pipelines/internal/beamjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/retrieval/corpus"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/index"
	"github.com/ctxsim/ctxsim/transforms/ingest"
	"github.com/ctxsim/ctxsim/transforms/parquetio"
)

const Usage = `
index: corpus -> sharded bigram TF-IDF index + Parquet tables.

Reads --input, local or gs:// (files, globs or directories):
` + corpus.InputShapes + `
Writes, under --output:
  sentences/     schemas.Sentence Parquet
  chunks/        schemas.Chunk Parquet
  dead_letters/  every rejected record with file, line and reason
and the index under --index (default --output/index). Any of these may be on
gs://: index shards are then built in local temporary directories and
copied up when complete, with the index metadata written last.`

// Config is the index job's command line.
type Config struct {
	Input, Output, Index, TextField, IDField                                    string
	Shards, FileShards, ChunkSize, ChunkStride, MaxParagraphBytes, MaxLineBytes int
	StrictFields, Unigrams, FollowLinks                                         bool
	// Parts splits the corpus by document ID into pipelines run in turn
	// (see Run).
	Parts int
}

// Register adds the job's flags to fs, bound to c.
func (c *Config) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.Input, "input", "", "Comma-separated corpus files, globs or directories, local or gs:// (required).")
	fs.StringVar(&c.Output, "output", "", "Directory for the Parquet tables (required).")
	fs.StringVar(&c.Index, "index", "", "Directory for the index, local or gs:// (default <output>/index).")
	fs.IntVar(&c.Shards, "shards", 4, "Number of index shards, built in parallel.")
	fs.IntVar(&c.FileShards, "parquet_shards", 4, "Number of files per Parquet table.")
	fs.IntVar(&c.ChunkSize, "chunk_size", corpus.DefaultChunkSize, "Sentences per chunk.")
	fs.IntVar(&c.ChunkStride, "chunk_stride", corpus.DefaultChunkStride, "Sentences between chunk starts.")
	fs.IntVar(&c.MaxParagraphBytes, "max_paragraph_bytes", corpus.DefaultMaxParagraphBytes, "Longer paragraphs are dead-lettered.")
	fs.IntVar(&c.MaxLineBytes, "max_line_bytes", corpus.DefaultMaxLineBytes, "Longer JSONL lines, CSV records, Parquet texts and plain-text files are dead-lettered, without being held in memory.")
	fs.BoolVar(&c.StrictFields, "strict_fields", false, "Dead-letter JSONL records with unknown fields instead of ignoring them.")
	fs.StringVar(&c.TextField, "text_field", corpus.DefaultTextField, "JSONL field (when a record has no \"paragraphs\"), or Parquet or CSV column, holding a document's text, split into paragraphs on blank lines.")
	fs.StringVar(&c.IDField, "id_field", corpus.DefaultIDField, "JSONL field (when a record has no \"doc_id\"), or Parquet or CSV column, holding a document's ID; a Parquet or CSV file without it numbers its rows.")
	fs.BoolVar(&c.FollowLinks, "follow_links", false, "Read the files that symbolic links under an input directory lead to outside it (by default they are dead-lettered as link_outside_input).")
	fs.IntVar(&c.Parts, "parts", 1, "Index the corpus in this many pipelines run in turn, each over the documents whose ID hashes to it: "+
		"a local run's memory is about 1/parts of the corpus's. The first builds the shards, the later ones add to them; the index is the same as one pipeline's.")
	fs.BoolVar(&c.Unigrams, "unigrams", true, "Also index stop-word-free unigrams, searched by queries with few known bigrams.")
}

// Ranges are the bounds of the job's numeric flags.
func Ranges() []jobrun.Range {
	return []jobrun.Range{{Name: "shards", Lo: 1, Hi: 256}, {Name: "parquet_shards", Lo: 1, Hi: 1000},
		{Name: "chunk_size", Lo: 1, Hi: 1000}, {Name: "chunk_stride", Lo: 1, Hi: 1000},
		{Name: "parts", Lo: 1, Hi: 1000}}
}

// Run ingests the corpus, builds the index and writes the tables.
func Run(ctx context.Context, c Config) error {
	opts := corpus.Options{
		ChunkSize: c.ChunkSize, ChunkStride: c.ChunkStride,
		MaxParagraphBytes: c.MaxParagraphBytes, MaxLineBytes: c.MaxLineBytes, StrictFields: c.StrictFields,
		TextField: c.TextField, IDField: c.IDField, FollowLinks: c.FollowLinks,
	}
	if err := opts.Validate(); err != nil {
		return err
	}
	dir := c.Index
	if dir == "" {
		dir = storage.Join(c.Output, "index")
	}
	if !storage.IsRemote(dir) {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return err
		}
		dir = abs
	}

	parts := max(c.Parts, 1)
	run := storage.RunID()
	var counters jobrun.Counters
	for part := range parts {
		if parts > 1 {
			fmt.Printf("index: part %d of %d (the documents whose ID hashes to %d)\n", part+1, parts, part)
		}
		got, err := runPart(ctx, c, opts, dir, run, part, parts)
		if err != nil {
			if parts > 1 {
				return fmt.Errorf("part %d of %d: %w", part+1, parts, err)
			}
			return err
		}
		if jobrun.NotRun() {
			// Only built or submitted: say where the job writes.
			fmt.Printf("index:        %s\nsentences:    %s/sentences\nchunks:       %s/chunks\n", dir, c.Output, c.Output)
			return nil
		}
		if counters, err = addPart(counters, got, part); err != nil {
			return err
		}
	}
	if parts > 1 {
		for _, t := range tables(c, run, 0, parts) {
			if _, err := t.spec.CommitParts(ctx); err != nil {
				return err
			}
		}
	}
	fmt.Println("counters:")
	counters.Print(os.Stdout, "ingest", "index", "parquetio")
	for _, w := range readWarnings(counters, c.Output) {
		fmt.Fprintln(stdout, "warning: "+w)
	}
	if mostlyDead(counters) {
		if err := printDeadLetters(ctx, stdout, c, counters); err != nil {
			fmt.Fprintf(stdout, "warning: could not summarise the dead letters: %v\n", err)
		}
	}
	for _, e := range []error{
		jobrun.NotEmpty(counters, "ingest/documents_ingested",
			fmt.Sprintf("no documents in --input=%s: nothing was indexed (the dead letters are summarised above)", c.Input)),
		counters.Reconcile("ingest/records_read", "ingest/documents_parsed", "ingest/records_dead"),
		counters.Reconcile("ingest/documents_parsed", "ingest/documents_ingested", "ingest/documents_duplicate", "ingest/documents_empty",
			"ingest/documents_other_part"),
		counters.Reconcile("ingest/chunks", "index/chunks_indexed", "index/chunks_duplicate"),
	} {
		if e != nil {
			return e
		}
	}
	fmt.Printf("index:        %s\n", dir)
	fmt.Printf("sentences:    %s/sentences\n", c.Output)
	fmt.Printf("chunks:       %s/chunks\n", c.Output)
	fmt.Printf("dead letters: %s/dead_letters (%d records)\n", c.Output,
		counters["ingest/records_dead"]+counters["ingest/files_failed"]+counters["ingest/documents_duplicate"]+
			counters["ingest/documents_empty"]+counters["ingest/paragraphs_dead"]+counters["index/chunks_duplicate"])
	return nil
}

// runPart runs the pipeline of part part of parts: it ingests the
// documents of that part, builds the shards (part 0) or adds to them, and
// writes the part's files of the tables.
func runPart(ctx context.Context, c Config, opts corpus.Options, dir, run string, part, parts int) (jobrun.Counters, error) {
	p, s := beam.NewPipelineWithRoot()
	in := ingest.IngestPart(s, jobrun.SplitList(c.Input), opts, part, parts)
	_, idxDead := index.Build(s, index.BuildConfig{
		Dir: dir, NumShards: c.Shards, Unigrams: c.Unigrams, RunID: run, Append: part > 0,
		Chunking: fmt.Sprintf("size=%d,stride=%d", c.ChunkSize, c.ChunkStride),
	}, in.Chunks)
	cols := map[string]beam.PCollection{
		"sentences": in.Sentences, "chunks": in.Chunks, "dead_letters": beam.Flatten(s, in.Dead, idxDead)}
	for _, t := range tables(c, run, part, parts) {
		parquetio.Write(s, t.cfg, cols[t.name])
	}
	return beamjob.Run(ctx, "index", p)
}

// table is one of the Parquet tables the job writes.
type table struct {
	name string
	cfg  parquetio.Config
	spec storage.TableSpec
}

// tables returns the job's tables as part part of parts writes them.
func tables(c Config, run string, part, parts int) []table {
	types := []struct {
		name string
		t    reflect.Type
	}{{"sentences", reflect.TypeOf(schemas.Sentence{})}, {"chunks", reflect.TypeOf(schemas.Chunk{})},
		{"dead_letters", reflect.TypeOf(schemas.DeadLetter{})}}
	var out []table
	for _, ty := range types {
		cfg := parquetio.Config{Dir: c.Output + "/" + ty.name, NumShards: c.FileShards}
		spec := storage.TableSpec{Dir: cfg.Dir, NumShards: max(cfg.NumShards, 1), Type: ty.t}
		if parts > 1 {
			cfg.RunID, cfg.Part, cfg.Parts = run, part, parts
			spec.RunID, spec.Part, spec.Parts = run, part, parts
		}
		out = append(out, table{ty.name, cfg, spec})
	}
	return out
}

// readOnce are the counters of reading the files, which every part counts
// in full (each part reads every file): the job's total is part 0's.
var readOnce = []string{"ingest/files", "ingest/files_failed", "ingest/files_corrupt", "ingest/records_read",
	"ingest/records_dead", "ingest/documents_parsed", "ingest/documents_withdrawn", "ingest/unknown_fields"}

// addPart adds part's counters to the job's total. The counters of reading
// are taken from part 0, and every later part must have read the same:
// a file that failed or read differently in one part would lose or add
// documents without a trace. documents_other_part counts, in total, the
// documents no part kept, which is none.
func addPart(total, got jobrun.Counters, part int) (jobrun.Counters, error) {
	if err := got.Reconcile("ingest/documents_parsed", "ingest/documents_ingested", "ingest/documents_duplicate",
		"ingest/documents_empty", "ingest/documents_other_part"); err != nil {
		return nil, err
	}
	if part == 0 {
		out := jobrun.Counters{}
		for k, v := range got {
			out[k] = v
		}
		out["ingest/documents_other_part"] = 0
		return out, nil
	}
	for _, k := range readOnce {
		if got[k] != total[k] {
			return nil, fmt.Errorf("part %d read %s=%d where part 1 read %d: the input changed or failed to read between parts; nothing is committed",
				part+1, k, got[k], total[k])
		}
	}
	for k, v := range got {
		if !slices.Contains(readOnce, k) && k != "ingest/documents_other_part" {
			total[k] += v
		}
	}
	return total, nil
}

// readWarnings says which input files were not read in full: compressed
// files that fail their checks, whose documents were withdrawn, and the
// other files that failed.
func readWarnings(c jobrun.Counters, output string) []string {
	var out []string
	failed, corrupt := c["ingest/files_failed"], c["ingest/files_corrupt"]
	if corrupt > 0 {
		out = append(out, fmt.Sprintf("%d of %d input files failed their gzip or zstd checks (a checksum, a format error, a truncation): "+
			"the %s read from them were withdrawn, not indexed (dead letters corrupt_file, and read_error for each file)",
			corrupt, c["ingest/files"], plural(c["ingest/documents_withdrawn"], "document")))
	}
	if other := failed - corrupt; other > 0 {
		out = append(out, fmt.Sprintf("%d of %d input files were not read in full "+
			"(a read error, a broken symbolic link or one leading outside the input, a table without the text column); "+
			"their dead letters in %s say why", other, c["ingest/files"], storage.Join(output, "dead_letters")))
	}
	return out
}

// stdout is where Run prints the dead-letter summary (a variable for tests).
var stdout io.Writer = os.Stdout

// Bounds of the dead-letter summary.
const (
	summaryReasons = 8
	// summaryMaxRows bounds the dead letters read for the summary.
	summaryMaxRows = 1_000_000
)

// mostlyDead reports whether the run's input was mostly rejected: no
// document was indexed, or over half the records were dead letters,
// duplicates or empty documents.
func mostlyDead(c jobrun.Counters) bool {
	bad := c["ingest/records_dead"] + c["ingest/documents_duplicate"] + c["ingest/documents_empty"]
	return c["ingest/documents_ingested"] == 0 || 2*bad > c["ingest/records_read"]
}

// printDeadLetters writes to w why the run's input was rejected: the most
// frequent dead-letter reasons, each with a count and one example, and the
// input shapes the job reads.
func printDeadLetters(ctx context.Context, w io.Writer, c Config, counters jobrun.Counters) error {
	read, ingested := counters["ingest/records_read"], counters["ingest/documents_ingested"]
	bad, files := read-ingested, plural(counters["ingest/files"], "file")
	switch {
	case read == 0:
		fmt.Fprintf(w, "\nnothing was indexed: no record was read from %s (%d could not be read).\n", files, counters["ingest/files_failed"])
	case ingested == 0:
		fmt.Fprintf(w, "\nnothing was indexed: %d of %d records read from %s were rejected.\n", bad, read, files)
	default:
		fmt.Fprintf(w, "\nmost of the input was rejected: %d of %d records read from %s.\n", bad, read, files)
	}
	var tally corpus.DeadLetterTally
	var scanned int64
	err := storage.ScanTable(ctx, storage.Join(c.Output, "dead_letters"), func(d schemas.DeadLetter) bool {
		tally.Add(d)
		scanned++
		return scanned < summaryMaxRows
	})
	if tally.Total > 0 {
		of := ""
		if scanned >= summaryMaxRows {
			of = fmt.Sprintf(" (of the first %d dead letters)", scanned)
		}
		fmt.Fprintf(w, "dead letters by reason%s:\n", of)
		tally.Print(w, summaryReasons, "  ")
		if top := tally.Top(1); top[0].Reason == corpus.ReasonMissingField || top[0].Reason == corpus.ReasonUnknownField {
			d := corpus.Defaults()
			fmt.Fprintf(w, "  (the ID and text fields read are set by --id_field=%q and --text_field=%q)\n",
				cmp.Or(c.IDField, d.IDField), cmp.Or(c.TextField, d.TextField))
		}
	} else if read == 0 {
		fmt.Fprintf(w, "the files hold no JSONL line, Parquet row or text: they are empty or blank.\n")
	}
	fmt.Fprintf(w, "the job reads:\n%s\n\n", corpus.InputShapes)
	return err
}

// plural returns "1 file", "2 files".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
