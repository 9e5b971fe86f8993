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

// Stats counts what a reader (ReadJSONL, ReadCSV, ReadParquet) saw. Every
// record is exactly one of a document or a dead letter, and for JSONL every
// line is exactly one of blank, a document or a dead letter:
// Lines == BlankLines + Documents + DeadLetters.
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
	// UnknownFields counts the unknown top-level fields ignored in the
	// lines that are JSON objects, whether they became documents or dead
	// letters such as missing_field (only when Options.StrictFields is
	// unset).
	UnknownFields int64
	// Refused is set when the whole file was refused with one dead letter
	// of its own, with Line 0 and not counted in DeadLetters: a Parquet or
	// CSV file without a usable text or ID column. No record is read.
	Refused bool
}

// deliver passes one record's document to onDoc or, when dl is not nil,
// its dead letter to onDead, and counts it.
func (st *Stats) deliver(doc schemas.Document, dl *schemas.DeadLetter,
	onDoc func(schemas.Document), onDead func(schemas.DeadLetter)) {
	if dl != nil {
		st.DeadLetters++
		onDead(*dl)
		return
	}
	st.Documents++
	onDoc(doc)
}

// ReadJSONL reads one document per line from r, in the native form
//
//	{"doc_id": "...", "source": "...", "title": "...", "paragraphs": ["...", ...]}
//
// or in the form web corpora (Dolma, RedPajama, FineWeb) use
//
//	{"id": "...", "text": "..."}
//
// where the text is split into paragraphs on blank lines and the ID may
// also be a number; opts.TextField and opts.IDField rename "text" and "id".
// The native fields win when a record has both. ReadJSONL passes each good document to onDoc and each bad line to onDead (see
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
// a null ID or text counts as missing. A missing_field detail names the
// fields the record has. A string of a field read (not of an ignored one)
// that escapes a lone UTF-16 surrogate ("\ud800"), which encoding/json
// would read as U+FFFD, is invalid_utf8. A document is dead-lettered as
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
		doc, unknown, dl := parseLine(l.text, opts)
		st.UnknownFields += int64(unknown)
		if dl != nil {
			dl.Source, dl.Line, dl.Record = source, st.Lines, recordOf(l.text)
			st.DeadLetters++
			onDead(*dl)
			continue
		}
		doc.Origin = source + ":" + strconv.FormatInt(st.Lines, 10)
		st.Documents++
		onDoc(doc)
	}
}

// Names of the fields of a JSONL document in the native shape.
const (
	fieldDocID      = "doc_id"
	fieldSource     = "source"
	fieldTitle      = "title"
	fieldParagraphs = "paragraphs"
)

// maxNamedFields bounds the field names a missing_field detail lists.
const maxNamedFields = 12

// parseLine decodes one non-blank JSONL line. It returns the document and
// the number of unknown fields in the line, or a dead letter with only
// Stage, Reason and Detail set. Unknown fields are counted in every line
// decoded to its end, document or dead letter, so that records whose
// fields have other names than expected show in the count; with
// opts.StrictFields the first one dead-letters the line instead.
//
// The ID is doc_id, else opts.IDField (a string or a number); the text is
// paragraphs, else opts.TextField split into paragraphs on blank lines.
func parseLine(b []byte, opts Options) (schemas.Document, int, *schemas.DeadLetter) {
	var (
		docID, src, title, text *string
		id                      *json.RawMessage
		paragraphs              *[]string
		seen                    uint8 // bit i set: known field i already decoded
		unknown                 int
		decoded                 bool // the whole object was read
		keys                    []string
	)
	fail := func(reason, format string, args ...any) (schemas.Document, int, *schemas.DeadLetter) {
		dl := newDeadLetter("", 0, reason, fmt.Sprintf(format, args...), "")
		if !decoded {
			return schemas.Document{}, 0, &dl
		}
		return schemas.Document{}, unknown, &dl
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
	// encoding/json also replaces a lone surrogate escape with U+FFFD:
	// the fields read are checked for one when the line may hold one.
	mayEscapeSurrogate := bytes.Contains(b, []byte(`\ud`)) || bytes.Contains(b, []byte(`\uD`))
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fail(ReasonInvalidJSON, "line is not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(ReasonInvalidJSON, "%v", describeJSONError(err))
		}
		key, _ := tok.(string) // json.Valid guarantees keys are strings.
		if len(keys) <= maxNamedFields {
			keys = append(keys, key)
		}
		var target any
		var bit uint8
		// The native fields come first: IDField "doc_id" is doc_id.
		switch key {
		case fieldDocID:
			target, bit = &docID, 1
		case fieldSource:
			target, bit = &src, 2
		case fieldTitle:
			target, bit = &title, 4
		case fieldParagraphs:
			target, bit = &paragraphs, 8
		case opts.TextField:
			target, bit = &text, 16
		case opts.IDField:
			target, bit = &id, 32
		default:
			if opts.StrictFields {
				return fail(ReasonUnknownField, "unknown field %q (StrictFields is set)", key)
			}
			unknown++
			target = new(json.RawMessage)
		}
		if seen&bit != 0 {
			return fail(ReasonInvalidJSON, "duplicate field %q", key)
		}
		seen |= bit
		start := dec.InputOffset()
		if err := dec.Decode(target); err != nil {
			return fail(ReasonInvalidJSON, "field %q: %v", key, describeJSONError(err))
		}
		if bit != 0 && mayEscapeSurrogate {
			if off := loneSurrogate(b[start:dec.InputOffset()]); off >= 0 {
				return fail(ReasonInvalidUTF8, "field %q: the escape %s at byte offset %d of the line is a lone UTF-16 surrogate, which is no character",
					key, b[start+int64(off):start+int64(off)+6], start+int64(off))
			}
		}
	}
	decoded = true

	idName, idVal := fieldDocID, docID
	if idVal == nil && id != nil {
		v, err := idString(*id)
		if err != nil {
			return fail(ReasonInvalidJSON, "field %q: %v", opts.IDField, err)
		}
		idName, idVal = opts.IDField, v
	}
	hasText := paragraphs != nil || text != nil
	if idVal == nil || !hasText {
		idNames := quoteAlternatives(fieldDocID, opts.IDField)
		textNames := quoteAlternatives(fieldParagraphs, opts.TextField)
		switch {
		case idVal == nil && !hasText:
			return fail(ReasonMissingField, "missing fields %s and %s%s", idNames, textNames, recordFields(keys))
		case idVal == nil:
			return fail(ReasonMissingField, "missing field %s (or null)%s", idNames, recordFields(keys))
		default:
			return fail(ReasonMissingField, "missing field %s (or null)%s", textNames, recordFields(keys))
		}
	}
	if strings.TrimSpace(*idVal) == "" {
		return fail(ReasonMissingField, "field %q is empty", idName)
	}
	doc := schemas.Document{DocID: *idVal}
	if paragraphs != nil {
		doc.Paragraphs = *paragraphs
	} else {
		doc.Paragraphs = splitParagraphs(*text)
	}
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

// loneSurrogate returns the offset in b, JSON text that starts outside a
// string, of the first \u escape of a UTF-16 surrogate (U+D800 to U+DFFF)
// that is not a high surrogate followed by an escaped low one, or -1 when
// there is none. b must be valid JSON text.
func loneSurrogate(b []byte) int {
	inString := false
	for i := 0; i < len(b); i++ {
		switch {
		case !inString:
			inString = b[i] == '"'
		case b[i] == '"':
			inString = false
		case b[i] != '\\':
		case b[i+1] != 'u':
			i++ // a one-character escape
		default:
			r := hex4(b[i+2 : i+6])
			switch {
			case r >= 0xd800 && r < 0xdc00:
				if i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
					if low := hex4(b[i+8 : i+12]); low >= 0xdc00 && low < 0xe000 {
						i += 11
						continue
					}
				}
				return i
			case r >= 0xdc00 && r < 0xe000:
				return i
			}
			i += 5
		}
	}
	return -1
}

// hex4 decodes four hexadecimal digits.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// idString reads an ID given in opts.IDField: a JSON string, or a number
// kept as written ("id": 42 is the ID "42"). null is no ID (nil).
func idString(raw json.RawMessage) (*string, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case string(raw) == "null":
		return nil, nil
	case len(raw) > 0 && raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return &s, nil
	case len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9'):
		s := string(raw)
		return &s, nil
	}
	return nil, fmt.Errorf("wrong type: JSON %s where a string or a number was expected", jsonKind(raw))
}

// jsonKind names the kind of a JSON value by its first byte.
func jsonKind(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	}
	return "value"
}

// quoteAlternatives quotes a native field name and, when it differs, the
// configured field read in its place: `"doc_id" (or "id")`.
func quoteAlternatives(native, alt string) string {
	if alt == native {
		return strconv.Quote(native)
	}
	return fmt.Sprintf("%q (or %q)", native, alt)
}

// recordFields describes the fields a record does have, for a
// missing_field detail: "; the record has fields "a", "b"".
func recordFields(keys []string) string {
	if len(keys) == 0 {
		return "; the record has no fields"
	}
	return "; the record has fields " + quoteNames(keys)
}

// quoteNames lists field or column names, quoted and separated by commas:
// at most maxNamedFields of them, then "...". No names is "(none)".
func quoteNames(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	q := make([]string, 0, min(len(names), maxNamedFields+1))
	for i, n := range names {
		if i == maxNamedFields {
			q = append(q, "...")
			break
		}
		q = append(q, strconv.Quote(n))
	}
	return strings.Join(q, ", ")
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
