package corpus

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
)

// docWithSentences returns a one-paragraph document of n distinct
// sentences.
func docWithSentences(id string, n int) schemas.Document {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "Sentence number %d is here. ", i)
	}
	return schemas.Document{DocID: id, Paragraphs: []string{b.String()}, Origin: "f.jsonl:7"}
}

func TestSplitChunkWindows(t *testing.T) {
	tests := []struct {
		n, size, stride int
		want            [][2]int // [start, end) of each chunk
	}{
		{10, 6, 3, [][2]int{{0, 6}, {3, 9}, {6, 10}}},
		{1, 6, 3, [][2]int{{0, 1}}},
		{5, 6, 3, [][2]int{{0, 5}}},
		{6, 6, 3, [][2]int{{0, 6}}},
		{7, 6, 3, [][2]int{{0, 6}, {3, 7}}},
		{9, 6, 3, [][2]int{{0, 6}, {3, 9}}},
		{12, 6, 3, [][2]int{{0, 6}, {3, 9}, {6, 12}}},
		{5, 2, 2, [][2]int{{0, 2}, {2, 4}, {4, 5}}},
		{4, 2, 2, [][2]int{{0, 2}, {2, 4}}},
		{3, 1, 1, [][2]int{{0, 1}, {1, 2}, {2, 3}}},
		{5, 3, 1, [][2]int{{0, 3}, {1, 4}, {2, 5}}},
		{8, 4, 3, [][2]int{{0, 4}, {3, 7}, {6, 8}}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("n=%d,size=%d,stride=%d", tc.n, tc.size, tc.stride), func(t *testing.T) {
			opts := Options{ChunkSize: tc.size, ChunkStride: tc.stride}
			sents, chunks, dead := Split(docWithSentences("d", tc.n), opts)
			if len(dead) != 0 {
				t.Fatalf("dead letters: %v", dead)
			}
			if len(sents) != tc.n {
				t.Fatalf("got %d sentences, want %d", len(sents), tc.n)
			}
			var got [][2]int
			for _, c := range chunks {
				got = append(got, [2]int{int(c.Start), int(c.Start) + len(c.SentenceIDs)})
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("chunk windows = %v, want %v", got, tc.want)
			}
			if n := numChunks(tc.n, tc.size, tc.stride); n != len(tc.want) {
				t.Errorf("numChunks = %d, want %d", n, len(tc.want))
			}
			checkChunkConsistency(t, sents, chunks)
		})
	}
}

// checkChunkConsistency checks that chunks hold the sentences they claim,
// and that each sentence's ChunkIDs are exactly the chunks holding it.
func checkChunkConsistency(t *testing.T, sents []schemas.Sentence, chunks []schemas.Chunk) {
	t.Helper()
	holders := make(map[string][]string) // sentence ID -> chunk IDs
	for _, c := range chunks {
		if len(c.Sentences) != len(c.SentenceIDs) {
			t.Fatalf("chunk %s: %d texts, %d IDs", c.ID, len(c.Sentences), len(c.SentenceIDs))
		}
		if want := ChunkID(c.DocID, int(c.Start), c.SentenceIDs); c.ID != want {
			t.Errorf("chunk ID %q, want %q", c.ID, want)
		}
		for j, id := range c.SentenceIDs {
			s := sents[int(c.Start)+j]
			if s.ID != id || s.Text != c.Sentences[j] {
				t.Errorf("chunk %s slot %d = (%s, %q), want sentence %d (%s, %q)", c.ID, j, id, c.Sentences[j], s.Pos, s.ID, s.Text)
			}
			holders[id] = append(holders[id], c.ID)
		}
	}
	for i, s := range sents {
		if int(s.Pos) != i {
			t.Errorf("sentence %d has Pos %d", i, s.Pos)
		}
		if want := SentenceID(s.DocID, i, s.Text); s.ID != want {
			t.Errorf("sentence %d ID %q, want %q", i, s.ID, want)
		}
		if !slices.Equal(s.ChunkIDs, holders[s.ID]) {
			t.Errorf("sentence %d ChunkIDs = %v, want %v", i, s.ChunkIDs, holders[s.ID])
		}
		if len(s.ChunkIDs) == 0 {
			t.Errorf("sentence %d is in no chunk", i)
		}
	}
}

func TestSplitDocument(t *testing.T) {
	doc := schemas.Document{
		DocID: "doc-1",
		Paragraphs: []string{
			"  First  paragraph.\tIt has two sentences.  ",
			"",
			" \u00a0 ",
			"Caf\u0065\u0301 time! Mr. Smith came.",
		},
		Origin: "corpus/a.jsonl:12",
	}
	sents, chunks, dead := Split(doc, Options{ChunkSize: 2, ChunkStride: 1})
	if len(dead) != 0 {
		t.Fatalf("dead letters: %v", dead)
	}
	want := []struct {
		text string
		para int32
	}{
		{"First paragraph.", 0},
		{"It has two sentences.", 0},
		{"Caf\u00e9 time!", 3},
		{"Mr. Smith came.", 3},
	}
	if len(sents) != len(want) {
		t.Fatalf("got %d sentences %v, want %d", len(sents), sents, len(want))
	}
	for i, w := range want {
		s := sents[i]
		if s.Text != w.text || s.Paragraph != w.para || s.Pos != int32(i) || s.DocID != "doc-1" {
			t.Errorf("sentence %d = %+v, want text %q paragraph %d", i, s, w.text, w.para)
		}
	}
	if len(chunks) != 3 {
		t.Fatalf("got %d chunks, want 3", len(chunks))
	}
	if got := chunks[1].Text(); got != "It has two sentences. Caf\u00e9 time!" {
		t.Errorf("chunk 1 text = %q", got)
	}
	checkChunkConsistency(t, sents, chunks)

	// Same input, same IDs; another document, other IDs.
	sents2, chunks2, _ := Split(doc, Options{ChunkSize: 2, ChunkStride: 1})
	if !slices.EqualFunc(sents, sents2, func(a, b schemas.Sentence) bool { return a.ID == b.ID }) ||
		!slices.EqualFunc(chunks, chunks2, func(a, b schemas.Chunk) bool { return a.ID == b.ID }) {
		t.Error("IDs differ between two runs")
	}
	doc.DocID = "doc-2"
	sents3, chunks3, _ := Split(doc, Options{ChunkSize: 2, ChunkStride: 1})
	if sents3[0].ID == sents[0].ID || chunks3[0].ID == chunks[0].ID {
		t.Error("IDs of two documents with the same text collide")
	}
}

func TestSplitDeadLetters(t *testing.T) {
	long := strings.Repeat("x", 101)
	tests := []struct {
		name        string
		doc         schemas.Document
		wantSents   int
		wantReasons []string
		wantSource  string
		wantLine    int64
	}{
		{
			name:        "long paragraph skipped, rest kept",
			doc:         schemas.Document{DocID: "d", Paragraphs: []string{"One. Two.", long, "Three."}, Origin: "dir/f.jsonl:42"},
			wantSents:   3,
			wantReasons: []string{ReasonParagraphTooLong},
			wantSource:  "dir/f.jsonl",
			wantLine:    42,
		},
		{
			name:        "all paragraphs too long",
			doc:         schemas.Document{DocID: "d", Paragraphs: []string{long, long}, Origin: "f.jsonl:3"},
			wantReasons: []string{ReasonParagraphTooLong, ReasonParagraphTooLong, ReasonEmptyDocument},
			wantSource:  "f.jsonl",
			wantLine:    3,
		},
		{
			name:        "no paragraphs",
			doc:         schemas.Document{DocID: "d", Origin: "notes/a.txt"},
			wantReasons: []string{ReasonEmptyDocument},
			wantSource:  "notes/a.txt",
		},
		{
			name:        "only controls and spaces",
			doc:         schemas.Document{DocID: "d", Paragraphs: []string{"\x01 \x02", "\u00a0"}, Origin: "gs://b/x.txt"},
			wantReasons: []string{ReasonEmptyDocument},
			wantSource:  "gs://b/x.txt",
		},
		{
			name:        "no origin",
			doc:         schemas.Document{DocID: "lonely", Paragraphs: []string{" "}},
			wantReasons: []string{ReasonEmptyDocument},
			wantSource:  "lonely",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sents, chunks, dead := Split(tc.doc, Options{MaxParagraphBytes: 100})
			if len(sents) != tc.wantSents {
				t.Errorf("got %d sentences, want %d", len(sents), tc.wantSents)
			}
			if tc.wantSents == 0 && chunks != nil {
				t.Errorf("got chunks %v for a document without sentences", chunks)
			}
			var reasons []string
			for _, d := range dead {
				reasons = append(reasons, d.Reason)
				if d.Stage != Stage || d.Source != tc.wantSource || d.Line != tc.wantLine {
					t.Errorf("dead letter %+v: want stage %q source %q line %d", d, Stage, tc.wantSource, tc.wantLine)
				}
				if !strings.Contains(d.Detail, `"`+tc.doc.DocID+`"`) {
					t.Errorf("detail %q does not name doc_id %q", d.Detail, tc.doc.DocID)
				}
			}
			if !slices.Equal(reasons, tc.wantReasons) {
				t.Errorf("reasons = %v, want %v", reasons, tc.wantReasons)
			}
		})
	}
}

func TestSplitParagraphDetail(t *testing.T) {
	doc := schemas.Document{DocID: "d9", Paragraphs: []string{"Ok.", strings.Repeat("y", 2000)}, Origin: "f:5"}
	_, _, dead := Split(doc, Options{MaxParagraphBytes: 1000})
	if len(dead) != 1 {
		t.Fatalf("got %d dead letters, want 1", len(dead))
	}
	d := dead[0]
	if !strings.Contains(d.Detail, "paragraph 1") || !strings.Contains(d.Detail, "2000 bytes") {
		t.Errorf("detail %q should name paragraph 1 and its size", d.Detail)
	}
	if len(d.Record) != MaxRecordBytes {
		t.Errorf("record is %d bytes, want %d", len(d.Record), MaxRecordBytes)
	}
}

func TestSplitPanicsOnInvalidOptions(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Split with ChunkStride > ChunkSize did not panic")
		}
	}()
	Split(docWithSentences("d", 3), Options{ChunkSize: 2, ChunkStride: 5})
}
