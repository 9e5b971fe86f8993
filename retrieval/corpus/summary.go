package corpus

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/ctxsim/ctxsim/schemas"
)

// InputShapes describes, for people, the input a corpus reader accepts. Jobs
// print it when most of their input was dead-lettered.
const InputShapes = `  JSONL (*.jsonl, *.ndjson, *.json; plain, gzip or zstd), one document per line:
    {"doc_id": "...", "paragraphs": ["...", ...], "source": "...", "title": "..."}
    or {"id": "...", "text": "..."} (Dolma, RedPajama, FineWeb), the text split into
    paragraphs on blank lines; --id_field and --text_field name other fields
  Parquet (*.parquet) with a string column --text_field (default "text") and
    optionally an ID column --id_field (default "id"), one document per row
  CSV (*.csv) or TSV (*.tsv, *.tab; plain, gzip or zstd) with a header naming a
    column --text_field and optionally --id_field, one document per record
  plain text: any other file is one document, paragraphs separated by blank lines;
    its ID is its path under the input root
  a directory: every file under it (hidden files and ctxsim outputs skipped)`

// ReasonCount is one line of a DeadLetterTally: how many dead letters gave
// a reason, and one of them.
type ReasonCount struct {
	Reason  string
	Count   int64
	Example schemas.DeadLetter
}

// DeadLetterTally counts dead letters by stage and reason and keeps, for
// each, the example with the smallest (source, line), so that the same
// dead letters give the same summary in any order. The zero value is
// ready to use.
type DeadLetterTally struct {
	// Total is the number of dead letters added.
	Total  int64
	counts map[string]*ReasonCount
}

// Add counts d.
func (t *DeadLetterTally) Add(d schemas.DeadLetter) {
	if t.counts == nil {
		t.counts = map[string]*ReasonCount{}
	}
	t.Total++
	key := d.Reason
	if d.Stage != "" && d.Stage != Stage {
		key = d.Stage + "/" + d.Reason
	}
	rc := t.counts[key]
	if rc == nil {
		t.counts[key] = &ReasonCount{Reason: key, Count: 1, Example: d}
		return
	}
	rc.Count++
	if e := rc.Example; d.Source < e.Source || d.Source == e.Source && d.Line < e.Line {
		rc.Example = d
	}
}

// Top returns the n most frequent reasons, most frequent first (ties by
// reason), or all of them when n <= 0.
func (t *DeadLetterTally) Top(n int) []ReasonCount {
	out := make([]ReasonCount, 0, len(t.counts))
	for _, rc := range t.counts {
		out = append(out, *rc)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Reason < out[j].Reason
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

// maxExampleBytes bounds the detail of an example in Print.
const maxExampleBytes = 300

// Print writes the n most frequent reasons to w, one per line: the count,
// the reason and the example's place and detail, indented by indent.
func (t *DeadLetterTally) Print(w io.Writer, n int, indent string) {
	top := t.Top(n)
	width := 0
	for _, rc := range top {
		width = max(width, len(rc.Reason))
	}
	for _, rc := range top {
		e := rc.Example
		place := e.Source
		if e.Line > 0 {
			place = fmt.Sprintf("%s:%d", e.Source, e.Line)
		}
		detail := e.Detail
		if len(detail) > maxExampleBytes {
			detail = strings.ToValidUTF8(detail[:maxExampleBytes], "") + "..."
		}
		fmt.Fprintf(w, "%s%8d  %-*s  e.g. %s: %s\n", indent, rc.Count, width, rc.Reason, place, detail)
	}
	if rest := len(t.counts) - len(top); rest > 0 {
		fmt.Fprintf(w, "%s(and %d more reasons)\n", indent, rest)
	}
}
