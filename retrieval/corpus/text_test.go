package corpus

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseText(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		want       []string
		wantReason string
		wantDetail string
	}{
		{"one line", "Hello world.", []string{"Hello world."}, "", ""},
		{"lines joined", "Line one\nline two.\n", []string{"Line one line two."}, "", ""},
		{"paragraphs", "P one.\n\nP two\ncontinued.\n\n\n\nP three.", []string{"P one.", "P two continued.", "P three."}, "", ""},
		{"whitespace-only separator", "A.\n  \t \nB.", []string{"A.", "B."}, "", ""},
		{"CRLF", "A\r\nb.\r\n\r\nC.\r\n", []string{"A b.", "C."}, "", ""},
		{"BOM and indentation", "\ufeff  Indented\n   text.", []string{"Indented text."}, "", ""},
		{"leading blank lines", "\n\n\nA.", []string{"A."}, "", ""},
		{"empty", "", nil, ReasonEmptyDocument, "no text"},
		{"whitespace only", " \n\t\n\u00a0\n", nil, ReasonEmptyDocument, "no text"},
		{"controls only", "\x01\n\x02", nil, ReasonEmptyDocument, "no text"},
		{"invalid UTF-8", "good line\nbad \xff here", nil, ReasonInvalidUTF8, "byte offset 14 (line 2)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc, dl := ParseText([]byte(tc.in), "dir/file.txt", Options{})
			if tc.wantReason != "" {
				if dl == nil {
					t.Fatalf("got document %+v, want dead letter %q", doc, tc.wantReason)
				}
				if dl.Reason != tc.wantReason || !strings.Contains(dl.Detail, tc.wantDetail) ||
					dl.Line != 0 || dl.Source != "dir/file.txt" || dl.Stage != Stage || !utf8.ValidString(dl.Record) {
					t.Errorf("dead letter %+v, want reason %q detail containing %q", *dl, tc.wantReason, tc.wantDetail)
				}
				return
			}
			if dl != nil {
				t.Fatalf("unexpected dead letter %+v", *dl)
			}
			if !slices.Equal(doc.Paragraphs, tc.want) {
				t.Errorf("paragraphs = %q, want %q", doc.Paragraphs, tc.want)
			}
			if doc.DocID != "dir/file.txt" || doc.Origin != "dir/file.txt" || doc.Source != SourceText || doc.Title != "" {
				t.Errorf("document fields %+v", doc)
			}
		})
	}
}

func TestParseTextThenSplit(t *testing.T) {
	doc, dl := ParseText([]byte("Dr. Who arrived.\nHe left.\n\nThe end."), "a.txt", Options{})
	if dl != nil {
		t.Fatal(*dl)
	}
	sents, chunks, dead := Split(doc, Defaults())
	var texts []string
	for _, s := range sents {
		texts = append(texts, s.Text)
	}
	if want := []string{"Dr. Who arrived.", "He left.", "The end."}; !slices.Equal(texts, want) || len(dead) != 0 || len(chunks) != 1 {
		t.Errorf("sentences %q, %d chunks, dead %v", texts, len(chunks), dead)
	}
}
