package corpus

import (
	"errors"
	"fmt"
)

// Default values of Options, used by Defaults and for zero-valued fields.
const (
	DefaultChunkSize         = 6
	DefaultChunkStride       = 3
	DefaultMaxParagraphBytes = 1 << 20
	DefaultMaxLineBytes      = 64 << 20
	DefaultTextField         = "text"
	DefaultIDField           = "id"
)

// Options controls parsing, splitting and chunking. The zero value of a
// field means "use the default"; Defaults returns a fully populated value.
type Options struct {
	// ChunkSize is the number of consecutive sentences in one chunk.
	ChunkSize int
	// ChunkStride is the distance, in sentences, between the starts of two
	// consecutive chunks of a document. It must not exceed ChunkSize, or some
	// sentences would belong to no chunk.
	ChunkStride int
	// MaxParagraphBytes is the largest paragraph, in bytes before
	// normalisation, that Split accepts; longer ones are dead-lettered.
	MaxParagraphBytes int
	// MaxLineBytes is the largest JSONL line (in bytes, without its
	// newline), CSV record, Parquet text or plain-text file accepted as one
	// document; longer ones are dead-lettered without being held in memory
	// (but for Parquet, whose pages are read whole).
	MaxLineBytes int
	// StrictFields makes ReadJSONL dead-letter lines with top-level fields
	// other than doc_id, source, title, paragraphs, TextField and IDField,
	// instead of ignoring and counting them.
	StrictFields bool
	// TextField names the field that holds a document's text as one string,
	// split into paragraphs on blank lines: the JSONL field read when a
	// record has no "paragraphs", and the text column of a Parquet or CSV
	// file.
	// Default "text", the name web corpora (Dolma, RedPajama, FineWeb, C4)
	// use.
	TextField string
	// IDField names the field that holds a document's ID: the JSONL field
	// read when a record has no "doc_id" (a string or a number), and the ID
	// column of a Parquet or CSV file. Default "id".
	IDField string
	// FollowLinks makes ExpandInput read the files that symbolic links
	// under an input directory (or matched by a glob) lead to outside it;
	// by default such links are dead-lettered (link_outside_input), so
	// that a link cannot make a job read files its input does not hold.
	FollowLinks bool
}

// Defaults returns the default options.
func Defaults() Options {
	return Options{
		ChunkSize:         DefaultChunkSize,
		ChunkStride:       DefaultChunkStride,
		MaxParagraphBytes: DefaultMaxParagraphBytes,
		MaxLineBytes:      DefaultMaxLineBytes,
		TextField:         DefaultTextField,
		IDField:           DefaultIDField,
	}
}

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() Options {
	if o.ChunkSize == 0 {
		o.ChunkSize = DefaultChunkSize
	}
	if o.ChunkStride == 0 {
		o.ChunkStride = DefaultChunkStride
	}
	if o.MaxParagraphBytes == 0 {
		o.MaxParagraphBytes = DefaultMaxParagraphBytes
	}
	if o.MaxLineBytes == 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.TextField == "" {
		o.TextField = DefaultTextField
	}
	if o.IDField == "" {
		o.IDField = DefaultIDField
	}
	return o
}

// Validate reports every inconsistency in o, after zero fields have been
// replaced by their defaults, or nil when o is usable.
func (o Options) Validate() error {
	o = o.withDefaults()
	var errs []error
	if o.ChunkSize < 1 {
		errs = append(errs, fmt.Errorf("ChunkSize must be >= 1, got %d", o.ChunkSize))
	}
	if o.ChunkStride < 1 {
		errs = append(errs, fmt.Errorf("ChunkStride must be >= 1, got %d", o.ChunkStride))
	}
	if o.ChunkSize >= 1 && o.ChunkStride > o.ChunkSize {
		errs = append(errs, fmt.Errorf("ChunkStride (%d) must not exceed ChunkSize (%d), or sentences between chunks would be lost", o.ChunkStride, o.ChunkSize))
	}
	if o.MaxParagraphBytes < 1 {
		errs = append(errs, fmt.Errorf("MaxParagraphBytes must be >= 1, got %d", o.MaxParagraphBytes))
	}
	if o.MaxLineBytes < 1 {
		errs = append(errs, fmt.Errorf("MaxLineBytes must be >= 1, got %d", o.MaxLineBytes))
	}
	// The fields of the native shape take precedence, so naming one of
	// them would silently read something else (IDField "doc_id" only
	// restates the native field).
	switch o.TextField {
	case fieldDocID, fieldSource, fieldTitle, fieldParagraphs:
		errs = append(errs, fmt.Errorf("TextField %q is a field of the native shape; name the field that holds the text as one string", o.TextField))
	}
	switch o.IDField {
	case fieldSource, fieldTitle, fieldParagraphs:
		errs = append(errs, fmt.Errorf("IDField %q is a field of the native shape; name the field that holds the ID", o.IDField))
	}
	if o.TextField == o.IDField {
		errs = append(errs, fmt.Errorf("TextField and IDField are both %q", o.TextField))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("corpus: invalid options: %w", errors.Join(errs...))
}
