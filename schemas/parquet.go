package schemas

import (
	"fmt"
	"io"
	"reflect"
	"sort"

	"github.com/parquet-go/parquet-go"
)

// MetaVersionKey is the Parquet key/value metadata key holding Version.
const MetaVersionKey = "ctxsim.schema_version"

// MetaRecordKey is the Parquet key/value metadata key naming the record type.
const MetaRecordKey = "ctxsim.record"

// MetaRunKey is the Parquet key/value metadata key holding the ID of the
// run that wrote the file (when the writer was given one).
const MetaRunKey = "ctxsim.run_id"

// MetaProvenanceKey is the Parquet key/value metadata key holding, as
// JSON, what a harvest's tables were made from and by what (the inputs as
// given, the model, the settings, the sample, the tool's version, the
// command line): the "provenance" object of the harvest's summary.json.
const MetaProvenanceKey = "ctxsim.provenance"

// MetaScoreKey is the Parquet key/value metadata key of a TrainingPair
// file saying how its score was made from the harvested label.
const MetaScoreKey = "ctxsim.score"

// DefaultRowGroupRows bounds the rows buffered per row group, and so the
// memory a writer holds, for records of a few hundred bytes.
const DefaultRowGroupRows = 16384

// DefaultRowGroupBytes bounds the bytes buffered per row group, for records
// that are large (a retrieval holds 20,000 hits).
const DefaultRowGroupBytes = 64 << 20

// WriterOptions configures NewWriter.
type WriterOptions struct {
	// RowGroupRows is the most rows per row group. Zero means
	// DefaultRowGroupRows.
	RowGroupRows int64
	// RowGroupBytes is the most uncompressed bytes buffered per row group.
	// Zero means DefaultRowGroupBytes. A writer's memory is bounded by one
	// row group, whichever limit is reached first.
	RowGroupBytes int64
	// RunID, when set, is recorded in the file's metadata (MetaRunKey), so
	// a reader can tell which run wrote it.
	RunID string
	// Metadata is more key/value metadata for the file's footer (a
	// harvest's provenance, MetaProvenanceKey). Its keys must not be
	// those this package writes itself (MetaVersionKey, MetaRecordKey,
	// MetaRunKey).
	Metadata map[string]string
}

// Writer writes records of one type to a Parquet file with bounded memory.
type Writer struct {
	pw       *parquet.Writer
	maxBytes int64
	flushed  int64
	pending  int
}

// Write appends one row: a value of the writer's record type.
func (w *Writer) Write(row any) error {
	if err := w.pw.Write(row); err != nil {
		return err
	}
	// Checking the buffered size costs a little: do it every few rows.
	if w.pending++; w.pending >= 16 {
		w.pending = 0
		if size := w.pw.Size(); size-w.flushed >= w.maxBytes {
			if err := w.pw.Flush(); err != nil {
				return err
			}
			w.flushed = w.pw.Size()
		}
	}
	return nil
}

// Close writes the last row group and the footer. It does not close the
// underlying io.Writer.
func (w *Writer) Close() error { return w.pw.Close() }

// NewWriter returns a Parquet writer for records of type t (a struct type of
// this package, or any struct with parquet tags) that writes to w. The file
// metadata carries the schema version and the record type's name. Rows are
// compressed with zstd. Call Close to finish the file.
func NewWriter(w io.Writer, t reflect.Type, opts WriterOptions) *Writer {
	rows := opts.RowGroupRows
	if rows <= 0 {
		rows = DefaultRowGroupRows
	}
	maxBytes := opts.RowGroupBytes
	if maxBytes <= 0 {
		maxBytes = DefaultRowGroupBytes
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	options := []parquet.WriterOption{
		parquet.SchemaOf(reflect.New(t).Interface()),
		parquet.KeyValueMetadata(MetaVersionKey, Version),
		parquet.KeyValueMetadata(MetaRecordKey, t.Name()),
		parquet.MaxRowsPerRowGroup(rows),
		parquet.Compression(&parquet.Zstd),
	}
	if opts.RunID != "" {
		options = append(options, parquet.KeyValueMetadata(MetaRunKey, opts.RunID))
	}
	keys := make([]string, 0, len(opts.Metadata))
	for k := range opts.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the same footer, byte for byte, on every run
	for _, k := range keys {
		if k == MetaVersionKey || k == MetaRecordKey || k == MetaRunKey {
			panic(fmt.Sprintf("schemas: metadata key %q is written by NewWriter itself", k))
		}
		options = append(options, parquet.KeyValueMetadata(k, opts.Metadata[k]))
	}
	pw := parquet.NewWriter(w, options...)
	return &Writer{pw: pw, maxBytes: maxBytes}
}

// CheckVersion returns an error unless the file was written with this
// package's schema version.
func CheckVersion(f *parquet.File) error {
	v, ok := f.Lookup(MetaVersionKey)
	if !ok {
		return fmt.Errorf("no %s metadata: not a ctxsim file", MetaVersionKey)
	}
	if v != Version {
		return fmt.Errorf("schema version %q, this build reads %q", v, Version)
	}
	return nil
}
