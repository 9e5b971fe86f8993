package schemas

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// NormalizeText returns s in the form the splitter expects: every run of
// Unicode whitespace (spaces, tabs, newlines, NBSP, ...) becomes one ASCII
// space, the result is trimmed, control characters other than whitespace
// are dropped, invalid UTF-8 bytes become U+FFFD, and the text is put in
// Unicode NFC.
//
// Whitespace and control characters are handled before NFC, so that a
// combining mark separated from its base by a dropped control character
// still composes with it.
func NormalizeText(s string) string {
	if isCleanASCII(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	pendingSpace := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			pendingSpace = b.Len() > 0
		case unicode.IsControl(r):
			// Dropped; a space pending before it stays pending.
		default:
			if pendingSpace {
				b.WriteByte(' ')
				pendingSpace = false
			}
			b.WriteRune(r) // utf8.RuneError for invalid bytes: U+FFFD.
		}
	}
	return norm.NFC.String(b.String())
}

// isCleanASCII reports whether s is printable ASCII with single inner
// spaces only, so that NormalizeText(s) == s.
func isCleanASCII(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	prevSpace := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ':
			if prevSpace {
				return false
			}
			prevSpace = true
		case c > ' ' && c < 0x7f:
			prevSpace = false
		default:
			return false
		}
	}
	return true
}
