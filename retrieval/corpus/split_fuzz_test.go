package corpus

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func FuzzSplitSentences(f *testing.F) {
	for _, seed := range []string{
		"", " ", ".", "...", ". . .", "?!", "Mr. Smith. The end.", `He said "Stop." Then`,
		"(See below.) Next", "Wait\u2026 What", "3.14. Pi", "J. R. R. Tolkien",
		"a.\xff. B", "\xe2. \xe2\x80. X", "\u201c\u201d. \u2019 x", "\t.\n.\r. A",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := SplitSentences(in)
		for i, s := range got {
			if s == "" {
				t.Fatalf("SplitSentences(%q)[%d] is empty", in, i)
			}
			if strings.TrimSpace(s) != s {
				t.Fatalf("SplitSentences(%q)[%d] = %q is not trimmed", in, i, s)
			}
		}
		if a, b := stripSpace(strings.Join(got, "")), stripSpace(in); a != b {
			t.Fatalf("SplitSentences(%q) = %q: non-space text %q, want %q", in, got, a, b)
		}
	})
}

// stripSpace returns s without its Unicode whitespace, copying every other
// byte unchanged (invalid UTF-8 included).
func stripSpace(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
