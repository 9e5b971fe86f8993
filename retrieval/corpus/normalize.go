package corpus

import (
	"unicode"
	"unicode/utf8"

	"github.com/ctxsim/ctxsim/schemas"
)

// Normalize returns s in the form the splitter expects
// (schemas.NormalizeText): one ASCII space for every run of whitespace,
// trimmed, without control characters, invalid UTF-8 as U+FFFD, in NFC.
func Normalize(s string) string { return schemas.NormalizeText(s) }

// hasText reports whether Normalize(s) would be non-empty, without
// building it.
func hasText(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c > ' ' && c != 0x7f {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) && !unicode.IsControl(r) {
			return true
		}
		i += size
	}
	return false
}
