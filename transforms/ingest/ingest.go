// Package ingest holds the Beam transforms that read a corpus (JSONL, CSV,
// Parquet or plain-text files, or directories of them, local or gs://,
// gzipped, zstd or plain) into documents, sentences and chunks, with every
// bad record routed to a dead-letter output.
//
// Counters (namespace "ingest") reconcile:
//
//	records_read      = documents_parsed + records_dead
//	documents_parsed  = documents_ingested + documents_duplicate + documents_empty
//
// A record is a non-blank JSONL line, a CSV record, a Parquet row or a
// whole text file. Files that fail to read to their end also produce a
// read_error dead letter (files_failed), as do a Parquet or CSV file
// without the text column and a directory entry not read (a broken
// symbolic link, one leading outside the input). The documents of a
// compressed file that fails its checksum are withdrawn
// (files_corrupt, documents_withdrawn): they are counted in records_dead,
// each with a corrupt_file dead letter.
package ingest

import (
	"context"
	"fmt"
	"hash/fnv"
	"reflect"
	"sort"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ctxsim/ctxsim/retrieval/corpus"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/transforms/beamreg"
	"github.com/ctxsim/ctxsim/transforms/counter"
	"github.com/ctxsim/ctxsim/transforms/progress"
)

func init() {
	for _, t := range []reflect.Type{
		reflect.TypeOf(schemas.Document{}), reflect.TypeOf(schemas.Sentence{}),
		reflect.TypeOf(schemas.Chunk{}), reflect.TypeOf(schemas.DeadLetter{}),
		reflect.TypeOf(corpus.Input{}),
	} {
		beam.RegisterType(t)
	}
	beamreg.DoFn(&expandFn{})
	register.Emitter1[corpus.Input]()
	beamreg.DoFn(&readFileFn{})
	register.Emitter1[schemas.Document]()
	register.Emitter1[schemas.DeadLetter]()
	register.Function1x2[schemas.Document, string, schemas.Document](keyByDocID)
	beamreg.DoFn(&dedupeFn{})
	register.Iter1[schemas.Document]()
	beamreg.DoFn(&splitFn{})
	register.Emitter1[schemas.Sentence]()
	register.Emitter1[schemas.Chunk]()
}

// Result holds the outputs of Ingest.
type Result struct {
	Documents beam.PCollection // schemas.Document, unique doc_id
	Sentences beam.PCollection // schemas.Sentence
	Chunks    beam.PCollection // schemas.Chunk
	Dead      beam.PCollection // schemas.DeadLetter
}

// Ingest reads the files that patterns name (comma-free globs, files or
// directories, local or gs://; see corpus.ExpandInput) and splits them into
// sentences and chunks. A pattern that names no file fails the job.
func Ingest(s beam.Scope, patterns []string, opts corpus.Options) Result {
	return IngestPart(s, patterns, opts, 0, 1)
}

// IngestPart is Ingest of part part of parts: it keeps only the documents
// whose ID DocPart assigns to part, before documents are grouped by ID, so
// a pipeline holds about 1/parts of the corpus. A document's duplicates
// share its ID, and its sentences and chunks have IDs made from it, so the
// parts' outputs are disjoint and together are Ingest's. Every part reads
// every file; the records a file could not parse are dead-lettered by part
// 0 alone, and the other parts count them without emitting them again.
// Documents left to other parts are counted as
// ingest/documents_other_part.
func IngestPart(s beam.Scope, patterns []string, opts corpus.Options, part, parts int) Result {
	s = s.Scope("ingest")
	if parts < 1 || part < 0 || part >= parts {
		panic(fmt.Sprintf("ingest: part %d of %d", part, parts))
	}
	files := beam.Reshuffle(s, ExpandInputs(s, patterns, opts))
	docs, dead1 := beam.ParDo2(s, &readFileFn{Opts: opts, Part: part, Parts: parts}, files)

	keyed := beam.ParDo(s, keyByDocID, docs)
	unique, dead2 := beam.ParDo2(s, &dedupeFn{}, beam.GroupByKey(s, keyed))

	sents, chunks, dead3 := beam.ParDo3(s, &splitFn{Opts: opts}, unique)
	return Result{
		Documents: unique,
		Sentences: sents,
		Chunks:    chunks,
		Dead:      beam.Flatten(s, dead1, dead2, dead3),
	}
}

// ExpandInputs lists the corpus files that patterns name, each a
// corpus.Input with the root its document IDs are relative to (see
// corpus.ExpandInput; opts.FollowLinks is the option it reads).
func ExpandInputs(s beam.Scope, patterns []string, opts corpus.Options) beam.PCollection {
	return beam.ParDo(s.Scope("ExpandInputs"), &expandFn{Opts: opts}, beam.CreateList(s, patterns))
}

// expandFn expands one pattern with corpus.ExpandInput. A pattern naming
// no file is an error: a misspelt input must not silently produce an
// empty result.
type expandFn struct {
	Opts corpus.Options
}

func (f *expandFn) ProcessElement(ctx context.Context, pattern string, emit func(corpus.Input)) error {
	ins, err := corpus.ExpandInput(ctx, pattern, f.Opts)
	if err != nil {
		return err
	}
	for _, in := range ins {
		emit(in)
	}
	return nil
}

// readFileFn parses one file into documents and dead letters.
type readFileFn struct {
	Opts corpus.Options
	// Part and Parts select the documents kept (see IngestPart); Parts 0
	// means 1.
	Part, Parts int

	files, failed, corrupt, withdrawn, read, dead, parsed, unknown, other counter.Counter
	prog                                                                  *progress.Reporter
}

func (f *readFileFn) Setup() {
	f.files = counter.New("ingest", "files")
	f.failed = counter.New("ingest", "files_failed")
	f.corrupt = counter.New("ingest", "files_corrupt")
	f.withdrawn = counter.New("ingest", "documents_withdrawn")
	f.read = counter.New("ingest", "records_read")
	f.dead = counter.New("ingest", "records_dead")
	f.parsed = counter.New("ingest", "documents_parsed")
	f.unknown = counter.New("ingest", "unknown_fields")
	f.other = counter.New("ingest", "documents_other_part")
	f.prog = progress.New("ingest", "documents")
}

func (f *readFileFn) ProcessElement(ctx context.Context, in corpus.Input,
	emitDoc func(schemas.Document), emitDead func(schemas.DeadLetter)) error {
	if f.Part > 0 {
		// Part 0 dead-letters what cannot be parsed.
		emitDead = func(schemas.DeadLetter) {}
	}
	var other int64
	st, err := corpus.ReadInput(ctx, in, f.Opts, func(d schemas.Document) {
		if f.Parts > 1 && DocPart(d.DocID, f.Parts) != f.Part {
			other++
			return
		}
		f.prog.Add(1)
		emitDoc(d)
	}, emitDead)
	if err != nil {
		return err
	}
	f.files.Inc(ctx, 1)
	if st.Failed {
		f.failed.Inc(ctx, 1)
	}
	if st.Corrupt {
		f.corrupt.Inc(ctx, 1)
		f.withdrawn.Inc(ctx, st.Withdrawn)
	}
	f.read.Inc(ctx, st.Records)
	f.parsed.Inc(ctx, st.Documents)
	f.dead.Inc(ctx, st.Dead)
	f.unknown.Inc(ctx, st.UnknownFields)
	f.other.Inc(ctx, other)
	return nil
}

// DocPart is the part, of parts, that a document with this ID belongs to:
// its ID's 64-bit FNV-1a hash modulo parts.
func DocPart(docID string, parts int) int {
	if parts <= 1 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(docID))
	return int(h.Sum64() % uint64(parts))
}

func (f *readFileFn) Teardown() { f.prog.Done() }

func keyByDocID(d schemas.Document) (string, schemas.Document) { return d.DocID, d }

// dedupeFn keeps one document per doc_id: the one read first in file/line
// order, so the choice is the same on every run.
type dedupeFn struct {
	dups counter.Counter
}

func (f *dedupeFn) Setup() { f.dups = counter.New("ingest", "documents_duplicate") }

func (f *dedupeFn) ProcessElement(ctx context.Context, id string, docs func(*schemas.Document) bool,
	emit func(schemas.Document), emitDead func(schemas.DeadLetter)) {
	var all []schemas.Document
	var d schemas.Document
	for docs(&d) {
		all = append(all, d)
	}
	if len(all) > 1 {
		sort.Slice(all, func(i, j int) bool { return originLess(all[i].Origin, all[j].Origin) })
	}
	emit(all[0])
	for _, dup := range all[1:] {
		f.dups.Inc(ctx, 1)
		src, line := splitOrigin(dup.Origin)
		emitDead(schemas.DeadLetter{
			Stage: corpus.Stage, Source: src, Line: line, Reason: corpus.ReasonDuplicateDocID,
			Detail: fmt.Sprintf("doc_id %q already read at %s", id, all[0].Origin),
			Record: id,
		})
	}
}

// splitOrigin splits "file:line" into its parts; line is 0 when absent.
func splitOrigin(o string) (string, int64) {
	i := strings.LastIndexByte(o, ':')
	if i < 0 {
		return o, 0
	}
	var n int64
	if _, err := fmt.Sscan(o[i+1:], &n); err != nil {
		return o, 0
	}
	return o[:i], n
}

// originLess orders origins by file, then numerically by line.
func originLess(a, b string) bool {
	fa, la := splitOrigin(a)
	fb, lb := splitOrigin(b)
	if fa != fb {
		return fa < fb
	}
	return la < lb
}

// splitFn splits a document into sentences and chunks.
type splitFn struct {
	Opts corpus.Options

	ingested, empty, paraDead, sents, chunks counter.Counter
}

func (f *splitFn) Setup() {
	f.ingested = counter.New("ingest", "documents_ingested")
	f.empty = counter.New("ingest", "documents_empty")
	f.paraDead = counter.New("ingest", "paragraphs_dead")
	f.sents = counter.New("ingest", "sentences")
	f.chunks = counter.New("ingest", "chunks")
}

func (f *splitFn) ProcessElement(ctx context.Context, doc schemas.Document,
	emitSent func(schemas.Sentence), emitChunk func(schemas.Chunk), emitDead func(schemas.DeadLetter)) {
	sents, chunks, dead := corpus.Split(doc, f.Opts)
	for _, d := range dead {
		if d.Reason == corpus.ReasonEmptyDocument {
			f.empty.Inc(ctx, 1)
		} else {
			f.paraDead.Inc(ctx, 1)
		}
		emitDead(d)
	}
	if len(sents) == 0 {
		return
	}
	f.ingested.Inc(ctx, 1)
	f.sents.Inc(ctx, int64(len(sents)))
	f.chunks.Inc(ctx, int64(len(chunks)))
	for _, s := range sents {
		emitSent(s)
	}
	for _, c := range chunks {
		emitChunk(c)
	}
}
