package corpus

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxsim/ctxsim/schemas"
)

func FuzzReadJSONL(f *testing.F) {
	for _, seed := range []string{
		"",
		"\n\n",
		`{"doc_id": "a", "paragraphs": ["One. Two."]}`,
		"{\"doc_id\": \"a\", \"paragraphs\": [\"x\"]}\n \n{\"doc_id\": 1}\n[\n\xff\n",
		`{"doc_id": "a", "paragraphs": ["x"], "z": {"doc_id": 2}}` + "\n" + strings.Repeat("y", 300),
		"\ufeff{\"doc_id\": \"a\", \"paragraphs\": [\"x\"]}",
	} {
		f.Add([]byte(seed), false)
	}
	f.Fuzz(func(t *testing.T, in []byte, strict bool) {
		opts := Options{MaxLineBytes: 256, MaxParagraphBytes: 64, StrictFields: strict}
		var docs, dead int64
		st, err := ReadJSONL(strings.NewReader(string(in)), "fuzz", opts,
			func(d schemas.Document) {
				docs++
				if strings.TrimSpace(d.DocID) == "" || d.Paragraphs == nil {
					t.Errorf("document without doc_id or paragraphs: %+v", d)
				}
				// Split must not panic and must account for the document.
				s, _, dl := Split(d, opts)
				if len(s) == 0 && (len(dl) == 0 || dl[len(dl)-1].Reason != ReasonEmptyDocument) {
					t.Errorf("document %q: no sentences and no empty_document dead letter", d.DocID)
				}
			},
			func(d schemas.DeadLetter) {
				dead++
				if d.Reason == "" || d.Line < 1 || !utf8.ValidString(d.Record) {
					t.Errorf("bad dead letter %+v", d)
				}
			})
		if err != nil {
			t.Fatalf("ReadJSONL on an in-memory reader: %v", err)
		}
		if st.Lines != st.BlankLines+st.Documents+st.DeadLetters || st.Documents != docs || st.DeadLetters != dead {
			t.Fatalf("stats %+v do not reconcile (callbacks: %d docs, %d dead)", st, docs, dead)
		}
		if want := int64(strings.Count(string(in), "\n")); st.Lines != want && st.Lines != want+1 {
			t.Fatalf("%d lines counted, input has %d newlines", st.Lines, want)
		}
	})
}
