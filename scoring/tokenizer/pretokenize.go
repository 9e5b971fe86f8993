package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// Character classes of the pre-tokenizer. A word is a run of characters of
// one class, optionally preceded by a single U+0020 space.
const (
	classOther  uint8 = iota // punctuation, symbols, controls, invalid bytes
	classLetter              // Unicode letters (L) and marks (M)
	classNumber              // Unicode numbers (N)
	classSpace               // unicode.IsSpace
)

// asciiClass holds the class of each ASCII byte.
var asciiClass = func() [utf8.RuneSelf]uint8 {
	var t [utf8.RuneSelf]uint8
	for c := range rune(utf8.RuneSelf) {
		t[c] = runeClass(c)
	}
	return t
}()

// runeClass returns the class of a valid rune.
func runeClass(r rune) uint8 {
	switch {
	case unicode.IsLetter(r) || unicode.IsMark(r):
		return classLetter
	case unicode.IsNumber(r):
		return classNumber
	case unicode.IsSpace(r):
		return classSpace
	}
	return classOther
}

// classAt returns the class of the character that starts at s[i] and its
// length in bytes. A byte that does not start valid UTF-8 is a one-byte
// character of class classOther.
func classAt(s string, i int) (class uint8, size int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size == 1 {
		return classOther, 1
	}
	return runeClass(r), size
}

// wordEnd returns the end of the pre-tokenized word that starts at s[i],
// which must be a valid index. Splitting s with it, from 0 to len(s), gives
// words whose concatenation is s. The rules, in order:
//
//   - A single space (U+0020) followed by a non-space character starts a
//     word: the space and the run of characters of the next character's
//     class, e.g. " the", " 1984", " (".
//   - Other whitespace forms runs. The last space of a run is left to the
//     word that follows when the run ends with U+0020 before a non-space
//     character, so "a \n  b" gives "a", " \n ", " b".
//   - An apostrophe (' or U+2019) followed by s, t, m, d, re, ve or ll (in
//     either case) and then by a non-letter is a word of its own, e.g. "'s"
//     in "it's".
//   - Otherwise a word is a run of letters (and combining marks), of
//     numbers, or of other characters (punctuation, symbols, controls,
//     invalid UTF-8 bytes).
func wordEnd(s string, i int) int {
	class, size := classAt(s, i)
	if class == classSpace {
		if s[i] == ' ' && i+1 < len(s) {
			if next, nsize := classAt(s, i+1); next != classSpace {
				return runEnd(s, i+1+nsize, next)
			}
		}
		return spaceRunEnd(s, i)
	}
	if n := contractionLen(s, i); n > 0 {
		return i + n
	}
	return runEnd(s, i+size, class)
}

// runEnd returns the end of the run of characters of the given class that
// continues at s[j].
func runEnd(s string, j int, class uint8) int {
	for j < len(s) {
		c, size := classAt(s, j)
		if c != class {
			break
		}
		j += size
	}
	return j
}

// spaceRunEnd returns the end of the whitespace word that starts at s[i]:
// the whole run, less its last byte when that byte is U+0020 followed by a
// non-space character and is not the run's only character.
func spaceRunEnd(s string, i int) int {
	j := runEnd(s, i, classSpace)
	if j < len(s) && s[j-1] == ' ' && j-1 > i {
		return j - 1
	}
	return j
}

// contractionLen returns the length of the English contraction suffix that
// starts at s[i], or 0 when there is none.
func contractionLen(s string, i int) int {
	var n int
	switch {
	case s[i] == '\'':
		n = 1
	case len(s)-i >= 3 && s[i:i+3] == "\u2019":
		n = 3
	default:
		return 0
	}
	rest := s[i+n:]
	var m int
	switch {
	case len(rest) >= 2 && isTwoLetterSuffix(rest[0]|0x20, rest[1]|0x20):
		m = 2
	case len(rest) >= 1 && isOneLetterSuffix(rest[0]|0x20):
		m = 1
	default:
		return 0
	}
	if end := i + n + m; end < len(s) {
		if c, _ := classAt(s, end); c == classLetter {
			return 0
		}
	}
	return n + m
}

// isOneLetterSuffix reports whether the lowercased byte c completes a
// contraction such as "'s".
func isOneLetterSuffix(c byte) bool {
	return c == 's' || c == 't' || c == 'm' || c == 'd'
}

// isTwoLetterSuffix reports whether the lowercased bytes a, b complete a
// contraction such as "'re".
func isTwoLetterSuffix(a, b byte) bool {
	return (a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')
}
