package corpus

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/schemas"
)

// IsCSV reports whether a file name denotes CSV (".csv") or TSV (".tsv",
// ".tab"), optionally followed by ".gz", ".zst" or ".zstd".
func IsCSV(name string) bool {
	n := trimCompression(name)
	return strings.HasSuffix(n, ".csv") || strings.HasSuffix(n, ".tsv") || strings.HasSuffix(n, ".tab")
}

// csvDelimiter returns the field delimiter a CSV or TSV file name implies.
func csvDelimiter(name string) byte {
	if strings.HasSuffix(trimCompression(name), ".csv") {
		return ','
	}
	return '\t'
}

// ReadCSV reads a CSV file with a header, one document per record, from r:
// the text is the column opts.TextField, split into paragraphs on blank
// lines; the ID is the column opts.IDField or, when the header has no such
// column, idStem + "#" + the record's number (from 1, the header not
// counted). Other columns are ignored. Fields are separated by commas, or
// by tabs when source ends in ".tsv" or ".tab" (after any compression
// suffix).
//
// Quoting follows RFC 4180 as spreadsheets and pandas write it: a field
// that starts with a double quote ends at the next lone double quote, may
// hold delimiters and newlines, and writes a double quote as two. A "\r"
// before a newline is dropped. A double quote inside an unquoted field is
// kept as it is. Empty lines between records are skipped; a leading UTF-8
// byte order mark is ignored.
//
// A record's Document.Origin is "source:line" with the line it starts on,
// and its dead letters carry that line. A record is dead-lettered when it
// is malformed or has another number of fields than the header
// (invalid_csv), holds more than opts.MaxLineBytes bytes (line_too_long,
// skipped without being held in memory), has an empty ID (missing_field),
// invalid UTF-8 (invalid_utf8), or no text (empty_document). A file whose
// header has no text column, or names the text or ID column twice, gives
// one dead letter with Line 0 and no records, and sets Stats.Refused. An
// empty file gives nothing.
//
// Stats.Lines counts the physical lines read (the header's and those
// inside quoted fields included) and Stats.BlankLines the empty lines
// skipped; Documents + DeadLetters is the number of records after the
// header. The returned error is an invalid opts or a read error of r; on a
// read error the record being read is neither counted nor dead-lettered.
func ReadCSV(r io.Reader, source, idStem string, opts Options,
	onDoc func(schemas.Document), onDead func(schemas.DeadLetter)) (Stats, error) {
	opts = opts.withDefaults()
	var st Stats
	if err := opts.Validate(); err != nil {
		return st, err
	}
	cr := newCSVReader(r, csvDelimiter(source), opts.MaxLineBytes)
	readErr := func(err error) (Stats, error) {
		st.Lines, st.BlankLines = cr.line, cr.blank
		return st, fmt.Errorf("corpus: reading %s after line %d: %w", source, cr.line, err)
	}
	head, err := cr.next()
	if err == io.EOF {
		st.Lines, st.BlankLines = cr.line, cr.blank
		return st, nil
	}
	if err != nil {
		return readErr(err)
	}
	refuse := func(format string, args ...any) (Stats, error) {
		st.Lines, st.BlankLines = cr.line, cr.blank
		st.Refused = true
		onDead(newDeadLetter(source, 0, ReasonMissingField, fmt.Sprintf(format, args...), recordOf(head.raw)))
		return st, nil
	}
	switch {
	case head.tooLong:
		return refuse("the header is %d bytes, more than MaxLineBytes=%d", head.size, opts.MaxLineBytes)
	case head.problem != "":
		return refuse("the header is not valid CSV: %s", head.problem)
	}
	names := head.strings()
	textCol, idCol := -1, -1
	for i, n := range names {
		switch {
		case n == opts.TextField && textCol >= 0:
			return refuse("the header names the text column %q twice; the header has columns %s", n, quoteNames(names))
		case n == opts.IDField && idCol >= 0:
			return refuse("the header names the ID column %q twice; the header has columns %s", n, quoteNames(names))
		case n == opts.TextField:
			textCol = i
		case n == opts.IDField:
			idCol = i
		}
	}
	if textCol < 0 {
		return refuse("no text column %q; the header has columns %s", opts.TextField, quoteNames(names))
	}
	var n int64 // records after the header
	for {
		rec, err := cr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return readErr(err)
		}
		n++
		doc, dl := csvDocument(rec, source, idStem, n, len(names), textCol, idCol, opts)
		st.deliver(doc, dl, onDoc, onDead)
	}
	st.Lines, st.BlankLines = cr.line, cr.blank
	return st, nil
}

// csvDocument makes the document of record number n, or its dead letter.
func csvDocument(rec csvRecord, source, idStem string, n int64, width, textCol, idCol int, opts Options) (schemas.Document, *schemas.DeadLetter) {
	fail := func(reason, format string, args ...any) (schemas.Document, *schemas.DeadLetter) {
		dl := newDeadLetter(source, rec.line, reason, fmt.Sprintf(format, args...), recordOf(rec.raw))
		return schemas.Document{}, &dl
	}
	switch {
	case rec.tooLong:
		return fail(ReasonLineTooLong, "record is %d bytes, more than MaxLineBytes=%d; skipped", rec.size, opts.MaxLineBytes)
	case rec.problem != "":
		return fail(ReasonInvalidCSV, "%s", rec.problem)
	case len(rec.ends) != width:
		return fail(ReasonInvalidCSV, "record has %d fields where the header has %d", len(rec.ends), width)
	}
	docID := idStem + "#" + strconv.FormatInt(n, 10)
	if idCol >= 0 {
		id := rec.field(idCol)
		if off := invalidUTF8Offset(id); off >= 0 {
			return fail(ReasonInvalidUTF8, "invalid UTF-8 at byte offset %d of column %q", off, opts.IDField)
		}
		if len(bytes.TrimSpace(id)) == 0 {
			return fail(ReasonMissingField, "column %q is empty", opts.IDField)
		}
		docID = string(id)
	}
	text := rec.field(textCol)
	if off := invalidUTF8Offset(text); off >= 0 {
		return fail(ReasonInvalidUTF8, "invalid UTF-8 at byte offset %d of column %q (id %q)", off, opts.TextField, docID)
	}
	paragraphs := splitParagraphs(string(text))
	if !anyText(paragraphs) {
		return fail(ReasonEmptyDocument, "document %q has no text in column %q", docID, opts.TextField)
	}
	return schemas.Document{
		DocID:      docID,
		Paragraphs: paragraphs,
		Origin:     source + ":" + strconv.FormatInt(rec.line, 10),
	}, nil
}

// csvRecord is one record read by csvReader.next; its slices are valid
// until the next call.
type csvRecord struct {
	// buf holds the fields' bytes one after another; field i ends at
	// ends[i].
	buf  []byte
	ends []int
	// line is the line the record starts on (from 1).
	line int64
	// size is the record's length in bytes, newlines inside quoted
	// fields included, without its final newline.
	size int64
	// tooLong is set when size exceeds the reader's bound; buf and ends
	// are then empty.
	tooLong bool
	// problem describes a malformed record; buf and ends are then partial.
	problem string
	// raw is the start of the record as written, for dead letters.
	raw []byte
}

// field returns field i.
func (r *csvRecord) field(i int) []byte {
	start := 0
	if i > 0 {
		start = r.ends[i-1]
	}
	return r.buf[start:r.ends[i]]
}

// strings returns the fields as strings.
func (r *csvRecord) strings() []string {
	out := make([]string, len(r.ends))
	for i := range r.ends {
		out[i] = string(r.field(i))
	}
	return out
}

// csvReader reads CSV records of any length from a stream, holding at most
// max bytes of one record (see ReadCSV for the dialect).
type csvReader struct {
	br    *bufio.Reader
	delim byte
	max   int
	// line counts the lines read; blank the empty lines skipped.
	line, blank int64
	rec         csvRecord
}

// newCSVReader returns a csvReader over r, past a UTF-8 byte order mark
// that opens r.
func newCSVReader(r io.Reader, delim byte, max int) *csvReader {
	br := bufio.NewReaderSize(r, 1<<16)
	if head, _ := br.Peek(len(utf8BOM)); bytes.Equal(head, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	return &csvReader{br: br, delim: delim, max: max}
}

// States of the CSV parser within a record.
const (
	csvFieldStart = iota // at the start of a field
	csvUnquoted          // inside an unquoted field
	csvQuoted            // inside a quoted field
	csvQuote             // just after a double quote inside a quoted field
	csvQuoteCR           // after a closing quote and a "\r"
	csvBad               // after a syntax error: skipping to the end of the line
)

// next returns the next record, skipping empty lines; io.EOF at the end of
// the input; or a read error of the input.
func (cr *csvReader) next() (csvRecord, error) {
	for {
		blank, err := cr.read()
		if err != nil {
			return csvRecord{}, err
		}
		if !blank {
			return cr.rec, nil
		}
		cr.blank++
	}
}

// read reads one record into cr.rec, or reports an empty line.
func (cr *csvReader) read() (blank bool, err error) {
	rec := &cr.rec
	*rec = csvRecord{buf: rec.buf[:0], ends: rec.ends[:0], raw: rec.raw[:0], line: cr.line + 1}
	state := csvFieldStart
	var quoteLine int64 // the line the last quoted field opened on
	quoted := false     // a field of the record was quoted
	started := false    // a byte of the record was read
	add := func(c byte) {
		if !rec.tooLong {
			rec.buf = append(rec.buf, c)
		}
	}
	endField := func() {
		if !rec.tooLong {
			rec.ends = append(rec.ends, len(rec.buf))
		}
	}
	dropCR := func() {
		if n := len(rec.buf); !rec.tooLong && n > 0 && rec.buf[n-1] == '\r' {
			rec.buf = rec.buf[:n-1]
		}
	}
	// end completes the record at a newline or at the end of the input.
	end := func() bool {
		switch state {
		case csvQuoted:
			rec.problem = fmt.Sprintf("the quoted field opened on line %d is not closed at the end of the file", quoteLine)
		case csvBad:
		default:
			if state == csvUnquoted {
				dropCR()
			}
			endField()
		}
		if rec.tooLong {
			rec.problem = ""
			return false
		}
		return rec.problem == "" && !quoted && len(rec.ends) == 1 && rec.ends[0] == 0
	}
	for {
		frag, err := cr.br.ReadSlice('\n')
		started = started || len(frag) > 0
		if n := MaxRecordBytes - len(rec.raw); n > 0 {
			rec.raw = append(rec.raw, frag[:min(n, len(frag))]...)
		}
		for _, c := range frag {
			if c == '\n' {
				cr.line++
				if state != csvQuoted {
					return end(), nil // frag ends here
				}
			}
			rec.size++
			if rec.size > int64(cr.max) && !rec.tooLong {
				rec.tooLong = true
				rec.buf, rec.ends = rec.buf[:0], rec.ends[:0]
			}
			switch state {
			case csvFieldStart:
				switch c {
				case '"':
					state, quoted, quoteLine = csvQuoted, true, cr.line+1
				case cr.delim:
					endField()
				default:
					add(c)
					state = csvUnquoted
				}
			case csvUnquoted:
				if c == cr.delim {
					endField()
					state = csvFieldStart
				} else {
					add(c)
				}
			case csvQuoted:
				switch c {
				case '"':
					state = csvQuote
				case '\n':
					dropCR() // "\r\n" inside a quoted field reads "\n"
					add(c)
				default:
					add(c)
				}
			case csvQuote:
				switch c {
				case '"':
					add('"')
					state = csvQuoted
				case cr.delim:
					endField()
					state = csvFieldStart
				case '\r':
					state = csvQuoteCR
				default:
					state = csvBad
					rec.problem = fmt.Sprintf("line %d: %q after the closing quote of a field (a quote inside a quoted field is written twice)", cr.line+1, c)
				}
			case csvQuoteCR:
				state = csvBad
				rec.problem = fmt.Sprintf("line %d: %q after the closing quote of a field and a carriage return", cr.line+1, c)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			if !started {
				return false, io.EOF
			}
			cr.line++ // the last line, without a newline
			return end(), nil
		case err != nil:
			return false, err
		}
	}
}
