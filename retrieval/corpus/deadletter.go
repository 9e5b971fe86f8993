package corpus

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ctxsim/ctxsim/schemas"
)

// Stage is the schemas.DeadLetter.Stage of every dead letter of this package.
const Stage = "ingest"

// Reasons of the dead letters produced by this package
// (schemas.DeadLetter.Reason).
const (
	// ReasonInvalidJSON: the line is not a JSON object, has a syntax error,
	// a field of the wrong type, or a duplicated known field.
	ReasonInvalidJSON = "invalid_json"
	// ReasonInvalidUTF8: the input is not valid UTF-8, or a JSON string
	// of a JSONL record escapes a lone UTF-16 surrogate ("\ud800"), which
	// no UTF-8 text can hold (JSON decoders replace it with U+FFFD).
	ReasonInvalidUTF8 = "invalid_utf8"
	// ReasonMissingField: the ID (doc_id, or Options.IDField) is missing,
	// null or blank, or the text (paragraphs, or Options.TextField) is
	// missing or null; or a Parquet or CSV file has no text column of
	// strings, or an ID column that holds neither strings nor integers.
	ReasonMissingField = "missing_field"
	// ReasonEmptyDocument: the document has no text left to split.
	ReasonEmptyDocument = "empty_document"
	// ReasonParagraphTooLong: a paragraph exceeds Options.MaxParagraphBytes.
	ReasonParagraphTooLong = "paragraph_too_long"
	// ReasonLineTooLong: a JSONL line, a CSV record, the text of a Parquet
	// row or a plain-text file exceeds Options.MaxLineBytes.
	ReasonLineTooLong = "line_too_long"
	// ReasonUnknownField: a JSONL line has an unknown top-level field and
	// Options.StrictFields is set.
	ReasonUnknownField = "unknown_field"
	// ReasonReadError: the input could not be read to its end.
	ReasonReadError = "read_error"
	// ReasonCorruptFile: a document was read from a gzip or zstd file
	// that fails its checks, and withdrawn (see ReadInput).
	ReasonCorruptFile = "corrupt_file"
	// ReasonInvalidCSV: a CSV or TSV record is malformed (a quoted field
	// not closed, text after a closing quote) or has another number of
	// fields than the header; or the header names the text or ID column
	// twice.
	ReasonInvalidCSV = "invalid_csv"
	// ReasonBrokenLink: a symbolic link under an input directory leads
	// nowhere (a missing target, a loop).
	ReasonBrokenLink = "broken_link"
	// ReasonLinkOutside: a symbolic link under an input directory leads
	// outside it, and Options.FollowLinks is unset.
	ReasonLinkOutside = "link_outside_input"
	// ReasonNotRegularFile: an entry under an input directory is neither
	// a file nor a directory (a socket, a FIFO, a device), or is a
	// symbolic link to a directory, which is not followed.
	ReasonNotRegularFile = "not_regular_file"
)

// MaxRecordBytes bounds schemas.DeadLetter.Record.
const MaxRecordBytes = 512

// recordOf returns the start of b for schemas.DeadLetter.Record: at most
// MaxRecordBytes bytes, cut on a rune boundary when possible, with invalid
// UTF-8 replaced by U+FFFD.
func recordOf[T string | []byte](b T) string {
	if len(b) > MaxRecordBytes {
		n := MaxRecordBytes
		// Back off to the start of a rune cut in two, if any.
		for i := n; i > n-utf8.UTFMax && i > 0; i-- {
			if utf8.RuneStart(b[i]) {
				n = i
				break
			}
		}
		b = b[:n]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// newDeadLetter returns an ingest dead letter.
func newDeadLetter(source string, line int64, reason, detail, record string) schemas.DeadLetter {
	return schemas.DeadLetter{
		Stage:  Stage,
		Source: source,
		Line:   line,
		Reason: reason,
		Detail: detail,
		Record: record,
	}
}

// ReadErrorDeadLetter returns the read_error dead letter for a file that
// ReadJSONL (or any reader) could not read to its end. line is the number of
// lines read before the error (stats.Lines), so the dead letter points at
// the line being read when the error happened.
func ReadErrorDeadLetter(source string, line int64, err error) schemas.DeadLetter {
	return newDeadLetter(source, line+1, ReasonReadError,
		fmt.Sprintf("reading stopped after %d complete lines: %v", line, err), "")
}

// invalidUTF8Offset returns the offset of the first byte of b that is not
// part of valid UTF-8, or -1 when b is valid.
func invalidUTF8Offset(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}
