package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ctxsim/ctxsim/schemas"
)

// Stats counts what ReadJSONL saw. Every line is exactly one of blank, a
// document or a dead letter: Lines == BlankLines + Documents + DeadLetters.
type Stats struct {
	// Lines is the number of lines read, blank ones included. A final line
	// without a newline counts; the empty string after a final newline
	// does not.
	Lines int64
	// BlankLines counts lines holding only whitespace; they are skipped.
	BlankLines int64
	// Documents counts the documents passed to onDoc.
	Documents int64
	// DeadLetters counts the dead letters passed to onDead.
	DeadLetters int64
	// UnknownFields counts the unknown top-level fields ignored in lines
	// that became documents (only when Options.StrictFields is unset).
	UnknownFields int64
}

// ReadJSONL reads one document per line from r, in the form
//
//	{"doc_id": "...", "source": "...", "title": "...", "paragraphs": ["...", ...]}
//
// and passes each good document to onDoc and each bad line to onDead (see
// the Reason constants). source names r in Document.Origin ("source:line")
// and in the dead letters. r must yield plain bytes: wrap it with Decompress
// first when it may be compressed. A UTF-8 byte order mark opening the first
// line is ignored. onDoc and onDead must not be nil; they are called in line
// order, from the calling goroutine.
//
// Lines may be very long: ReadJSONL never holds more than
// opts.MaxLineBytes bytes of one line, and dead-letters a longer line
// (line_too_long) while skipping the rest of it. Field names are matched
// exactly (case-sensitively); a known field given twice is invalid_json, and
// a null doc_id or paragraphs counts as missing. A document is dead-lettered as
// empty_document when none of its paragraphs holds any text; documents
// whose text vanishes later (for instance every paragraph too long) are
// dead-lettered by Split.
//
// The returned error is either an invalid opts or a read error of r, such
// as a truncated gzip stream. On a read error ReadJSONL stops and returns
// the Stats so far; the partial line it was reading is neither counted nor
// dead-lettered. The caller should then dead-letter the file itself, for
// instance with ReadErrorDeadLetter(source, stats.Lines, err).
func ReadJSONL(r io.Reader, source string, opts Options, onDoc func(schemas.Document), onDead func(schemas.DeadLetter)) (Stats, error) {
	opts = opts.withDefaults()
	var st Stats
	if err := opts.Validate(); err != nil {
		return st, err
	}
	lr := newLineReader(r, opts.MaxLineBytes)
	for {
		l, err := lr.next()
		if err == io.EOF {
			return st, nil
		}
		if err != nil {
			return st, fmt.Errorf("corpus: reading %s after line %d: %w", source, st.Lines, err)
		}
		st.Lines++
		if l.tooLong {
			st.DeadLetters++
			onDead(newDeadLetter(source, st.Lines, ReasonLineTooLong,
				fmt.Sprintf("line is %d bytes, more than MaxLineBytes=%d; skipped", l.size, opts.MaxLineBytes),
				recordOf(l.text)))
			continue
		}
		if st.Lines == 1 {
			l.text = bytes.TrimPrefix(l.text, utf8BOM)
		}
		if len(bytes.TrimSpace(l.text)) == 0 {
			st.BlankLines++
			continue
		}
		doc, unknown, dl := parseLine(l.text, opts.StrictFields)
		if dl != nil {
			dl.Source, dl.Line, dl.Record = source, st.Lines, recordOf(l.text)
			st.DeadLetters++
			onDead(*dl)
			continue
		}
		doc.Origin = source + ":" + strconv.FormatInt(st.Lines, 10)
		st.Documents++
		st.UnknownFields += int64(unknown)
		onDoc(doc)
	}
}

// Names of the fields of a JSONL document.
const (
	fieldDocID      = "doc_id"
	fieldSource     = "source"
	fieldTitle      = "title"
	fieldParagraphs = "paragraphs"
)

// parseLine decodes one non-blank JSONL line. It returns the document and
// the number of unknown fields ignored, or a dead letter with only Stage,
// Reason and Detail set.
func parseLine(b []byte, strict bool) (schemas.Document, int, *schemas.DeadLetter) {
	var doc schemas.Document
	fail := func(reason, format string, args ...any) (schemas.Document, int, *schemas.DeadLetter) {
		dl := newDeadLetter("", 0, reason, fmt.Sprintf(format, args...), "")
		return schemas.Document{}, 0, &dl
	}
	// encoding/json replaces invalid UTF-8 silently: check first.
	if !utf8.Valid(b) {
		return fail(ReasonInvalidUTF8, "invalid UTF-8 at byte offset %d of the line", invalidUTF8Offset(b))
	}
	if !json.Valid(b) {
		var raw json.RawMessage
		err := json.Unmarshal(b, &raw)
		return fail(ReasonInvalidJSON, "%v", describeJSONError(err))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fail(ReasonInvalidJSON, "line is not a JSON object")
	}
	var (
		docID, src, title *string
		paragraphs        *[]string
		seen              uint8 // bit i set: known field i already decoded
		unknown           int
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(ReasonInvalidJSON, "%v", describeJSONError(err))
		}
		key, _ := tok.(string) // json.Valid guarantees keys are strings.
		var target any
		var bit uint8
		switch key {
		case fieldDocID:
			target, bit = &docID, 1
		case fieldSource:
			target, bit = &src, 2
		case fieldTitle:
			target, bit = &title, 4
		case fieldParagraphs:
			target, bit = &paragraphs, 8
		default:
			if strict {
				return fail(ReasonUnknownField, "unknown field %q (StrictFields is set)", key)
			}
			unknown++
			target = new(json.RawMessage)
		}
		if seen&bit != 0 {
			return fail(ReasonInvalidJSON, "duplicate field %q", key)
		}
		seen |= bit
		if err := dec.Decode(target); err != nil {
			return fail(ReasonInvalidJSON, "field %q: %v", key, describeJSONError(err))
		}
	}
	switch {
	case docID == nil && paragraphs == nil:
		return fail(ReasonMissingField, "missing fields %q and %q", fieldDocID, fieldParagraphs)
	case docID == nil:
		return fail(ReasonMissingField, "missing field %q (or null)", fieldDocID)
	case paragraphs == nil:
		return fail(ReasonMissingField, "missing field %q (or null)", fieldParagraphs)
	case strings.TrimSpace(*docID) == "":
		return fail(ReasonMissingField, "field %q is empty", fieldDocID)
	}
	doc.DocID = *docID
	doc.Paragraphs = *paragraphs
	if src != nil {
		doc.Source = *src
	}
	if title != nil {
		doc.Title = *title
	}
	if !anyText(doc.Paragraphs) {
		return fail(ReasonEmptyDocument, "document %q has %d paragraphs and no text", doc.DocID, len(doc.Paragraphs))
	}
	return doc, unknown, nil
}

// describeJSONError rewrites err into a detail that names the offset or the
// type mismatch in plain words.
func describeJSONError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("syntax error at byte offset %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		return fmt.Sprintf("wrong type: JSON %s where %s was expected", typ.Value, typ.Type)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected end of JSON input (truncated line?)"
	}
	return err.Error()
}

// anyText reports whether any paragraph would keep text after Normalize.
func anyText(paragraphs []string) bool {
	for _, p := range paragraphs {
		if hasText(p) {
			return true
		}
	}
	return false
}
