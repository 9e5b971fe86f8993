package corpus

import "testing"

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"clean ASCII unchanged", "Hello world.", "Hello world."},
		{"trim", "  Hello  ", "Hello"},
		{"collapse spaces", "a  b   c", "a b c"},
		{"tabs and newlines", "a\tb\nc\r\nd", "a b c d"},
		{"NBSP and narrow NBSP", "a\u00a0b\u202fc", "a b c"},
		{"ideographic and em space", "a\u3000b\u2003c", "a b c"},
		{"line and paragraph separators", "a\u2028b\u2029c", "a b c"},
		{"NEL is whitespace", "a\u0085b", "a b"},
		{"only whitespace", " \t\n\u00a0 ", ""},
		{"drop C0 controls", "a\x00b\x07c\x1bd", "abcd"},
		{"drop DEL and C1", "a\x7fb\u0080c\u009fd", "abcd"},
		{"control between spaces", "a \x01 b", "a b"},
		{"only controls", "\x01\x02", ""},
		{"NFC composes", "e\u0301t\u00e9", "\u00e9t\u00e9"},
		{"NFC across dropped control", "e\x01\u0301", "\u00e9"},
		{"NFC Hangul", "\u1100\u1161", "\uac00"},
		{"NFC keeps compatibility chars", "\ufb01 \u2460", "\ufb01 \u2460"},
		{"invalid UTF-8 replaced", "a\xffb", "a\ufffdb"},
		{"zero-width space kept", "a\u200bb", "a\u200bb"},
		{"curly quotes kept", "\u201cHi\u201d", "\u201cHi\u201d"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Normalize(tc.in); got != tc.want {
				t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if got, want := hasText(tc.in), tc.want != ""; got != want {
				t.Errorf("hasText(%q) = %v, want %v", tc.in, got, want)
			}
		})
	}
}

func TestNormalizeIdempotent(t *testing.T) {
	for _, in := range []string{"a  b", "e\u0301 \u00a0x", "\tA\x01b\n", "\u1100\u1161\u11a8"} {
		once := Normalize(in)
		if twice := Normalize(once); twice != once {
			t.Errorf("Normalize(Normalize(%q)) = %q, want %q", in, twice, once)
		}
	}
}
