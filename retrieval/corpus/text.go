package corpus

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ctxsim/ctxsim/schemas"
)

// SourceText is the Document.Source of documents read by ParseText.
const SourceText = "text"

// utf8BOM is the byte order mark some editors put at the start of a file.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// ParseText parses one plain-text file into one document. Paragraphs are
// separated by one or more blank (whitespace-only) lines; the lines inside
// a paragraph are trimmed and joined with a space. A leading UTF-8 byte
// order mark is ignored. The document's DocID and Origin are source, its
// Title is empty and its Source is SourceText.
//
// It returns a dead letter instead (Line 0) when data is not valid UTF-8
// or holds no text. Paragraph lengths are not checked here: Split enforces
// opts.MaxParagraphBytes. opts is taken for symmetry with ReadJSONL.
func ParseText(data []byte, source string, opts Options) (schemas.Document, *schemas.DeadLetter) {
	if off := invalidUTF8Offset(data); off >= 0 {
		line := 1 + bytes.Count(data[:off], []byte{'\n'})
		dl := newDeadLetter(source, 0, ReasonInvalidUTF8,
			fmt.Sprintf("invalid UTF-8 at byte offset %d (line %d)", off, line), recordOf(data))
		return schemas.Document{}, &dl
	}
	paragraphs := splitParagraphs(string(bytes.TrimPrefix(data, utf8BOM)))
	if !anyText(paragraphs) {
		dl := newDeadLetter(source, 0, ReasonEmptyDocument,
			fmt.Sprintf("text file of %d bytes has no text", len(data)), recordOf(data))
		return schemas.Document{}, &dl
	}
	return schemas.Document{
		DocID:      source,
		Source:     SourceText,
		Paragraphs: paragraphs,
		Origin:     source,
	}, nil
}

// splitParagraphs splits text into paragraphs at blank (whitespace-only)
// lines; the lines inside a paragraph are trimmed and joined with a space.
func splitParagraphs(text string) []string {
	var paragraphs []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			paragraphs = append(paragraphs, strings.Join(cur, " "))
			cur = cur[:0]
		}
	}
	for len(text) > 0 {
		ln, rest, _ := strings.Cut(text, "\n")
		text = rest
		ln = strings.TrimSpace(ln)
		if ln == "" {
			flush()
			continue
		}
		cur = append(cur, ln)
	}
	flush()
	return paragraphs
}
