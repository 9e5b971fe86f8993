package corpus

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// ellipsisChar is U+2026 HORIZONTAL ELLIPSIS in UTF-8.
const ellipsisChar = "\u2026"

// mayStartTerminal marks the bytes that can start sentence-final
// punctuation: '.', '?', '!' and 0xE2, the lead byte of U+2026.
var mayStartTerminal = [256]bool{'.': true, '?': true, '!': true, 0xe2: true}

// terminalRun describes a run of sentence-final punctuation such as ".",
// "?!" or "...".
type terminalRun struct {
	end      int  // offset just past the run
	periods  int  // number of '.'
	qe       bool // holds '?' or '!'
	ellipsis bool // holds U+2026
}

// SplitSentences splits a paragraph, normalised with Normalize, into
// sentences. The sentences are trimmed, non-empty, and in order; together
// they hold every non-space character of the paragraph. It never panics,
// whatever the input, and scans the paragraph once, without regexps.
//
// A sentence ends after '.', '?', '!', '…' or a run of them ("?!", "..."),
// plus any closing quotes and brackets, when whitespace follows. It does not
// end when:
//   - the next word, after any opening quotes or brackets, starts with a
//     lowercase letter ("e.g. this", "Wait... what", `"Stop!" he said`);
//   - an ellipsis ("...", "…", ". . .") is not followed by an uppercase
//     letter;
//   - the period follows a title, month or similar abbreviation ("Mr.",
//     "Jan.", "e.g.", "vs."), or a numbering abbreviation followed by a
//     number ("No. 5", "Fig. 3");
//   - the period follows an initial ("J. R. R. Tolkien") or an ambiguous
//     abbreviation ("Inc.", "U.S.", "Jr.", "a.m."), unless the next word is
//     a common sentence opener such as "The" or "However";
//   - the period follows a number that opens the sentence ("1. Scope").
//
// No punctuation followed by a non-space splits: decimals ("3.14", "$1.5
// million"), dotted names and URLs stay whole. A piece without any letter
// or digit (". . .", `" .`) is not a sentence of its own: it joins the
// sentence before it, or the next one at the start of the paragraph.
func SplitSentences(paragraph string) []string {
	var out []string
	p := paragraph
	start := 0
	prevStart := 0 // start of out[len(out)-1] in p
	for i := 0; i < len(p); {
		if !mayStartTerminal[p[i]] {
			i++
			continue
		}
		run := scanTerminalRun(p, i)
		if run.end == i {
			i++ // 0xE2 starting some other character.
			continue
		}
		k := skipClosers(p, run.end)
		if k == len(p) {
			break
		}
		if !isSpaceByte(p[k]) {
			i = k
			continue
		}
		next := skipSpaceBytes(p, k)
		if next == len(p) {
			break
		}
		if endsSentence(p, start, i, run, next) {
			switch {
			case hasWord(p[start:k]):
				out = append(out, strings.TrimSpace(p[start:k]))
				prevStart, start = start, next
			case len(out) > 0:
				// Bare punctuation (". . .", `" .`) belongs to the
				// sentence before it.
				out[len(out)-1] = strings.TrimSpace(p[prevStart:k])
				start = next
			default:
				// Bare punctuation opening the paragraph: keep it for
				// the next sentence.
			}
		}
		i = next
	}
	if rest := strings.TrimSpace(p[start:]); rest != "" {
		if len(out) > 0 && !hasWord(rest) {
			out[len(out)-1] = strings.TrimSpace(p[prevStart:])
		} else {
			out = append(out, rest)
		}
	}
	return out
}

// hasWord reports whether s holds a letter or a number. A candidate
// sentence without one (". . .", `" .`, "?!") is bare punctuation.
func hasWord(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if isDigit(rune(c)) || isASCIILetter(c) {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			return true
		}
		i += size
	}
	return false
}

// scanTerminalRun scans the sentence-final punctuation starting at i. The
// returned run ends at i when p[i] starts none.
func scanTerminalRun(p string, i int) terminalRun {
	run := terminalRun{end: i}
	for run.end < len(p) {
		switch c := p[run.end]; {
		case c == '.':
			run.periods++
			run.end++
		case c == '?' || c == '!':
			run.qe = true
			run.end++
		case c == 0xe2 && strings.HasPrefix(p[run.end:], ellipsisChar):
			run.ellipsis = true
			run.end += len(ellipsisChar)
		default:
			return run
		}
	}
	return run
}

// endsSentence decides whether the terminal run at [i, run.end) ends the
// sentence that started at start. next is the offset of the first
// non-space byte after the run and its closers.
func endsSentence(p string, start, i int, run terminalRun, next int) bool {
	w := skipOpeners(p, next)
	r, _ := utf8.DecodeRuneInString(p[w:])
	lower := unicode.IsLower(r)
	upper := unicode.IsUpper(r) || unicode.IsTitle(r)
	switch {
	case lower:
		return false
	case run.qe:
		return true
	case run.ellipsis || run.periods > 1:
		return upper
	}
	// A single period.
	ws := wordStart(p, start, i)
	if ws == i {
		// A period after a space: a spaced ellipsis (". . .") or a
		// detached period (". The" in tokenised text).
		if p[next] == '.' || lastNonSpace(p, start, i) == '.' {
			return upper
		}
		return true
	}
	word := p[skipOpeners(p, ws):i]
	if isInitial(word) {
		return opensSentence(p, w)
	}
	switch classify(word) {
	case prepositive:
		return false
	case numbered:
		return !isDigit(r)
	case ambiguous:
		return opensSentence(p, w)
	}
	if ws == start && isNumber(word) {
		return false // An enumeration: "1. Scope".
	}
	return true
}

// wordStart returns the offset of the word that ends at i: just past the
// last space in p[start:i], or start.
func wordStart(p string, start, i int) int {
	for j := i - 1; j >= start; j-- {
		if isSpaceByte(p[j]) {
			return j + 1
		}
	}
	return start
}

// lastNonSpace returns the last non-space byte of p[start:i], or 0.
func lastNonSpace(p string, start, i int) byte {
	for j := i - 1; j >= start; j-- {
		if !isSpaceByte(p[j]) {
			return p[j]
		}
	}
	return 0
}

// opensSentence reports whether the word at w is a common sentence opener
// (and not itself an initial such as the "A." of "J. A. Smith").
func opensSentence(p string, w int) bool {
	e := w
	for e < len(p) && isASCIILetter(p[e]) {
		e++
	}
	if e == w || (e < len(p) && p[e] == '.') {
		return false
	}
	return sentenceOpeners[p[w:e]]
}

// isInitial reports whether word is one uppercase letter.
func isInitial(word string) bool {
	r, size := utf8.DecodeRuneInString(word)
	return size == len(word) && unicode.IsUpper(r)
}

// isNumber reports whether word is a non-empty run of ASCII digits.
func isNumber(word string) bool {
	for i := 0; i < len(word); i++ {
		if !isDigit(rune(word[i])) {
			return false
		}
	}
	return word != ""
}

// isDigit reports whether r is an ASCII digit.
func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// isASCIILetter reports whether c is an ASCII letter.
func isASCIILetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

// isSpaceByte reports whether c is ASCII whitespace. Normalised text only
// holds ' ', but the splitter tolerates the others.
func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// skipSpaceBytes returns the offset of the first non-space byte at or after i.
func skipSpaceBytes(p string, i int) int {
	for i < len(p) && isSpaceByte(p[i]) {
		i++
	}
	return i
}

// Closing and opening quotes and brackets, as they may follow sentence-final
// punctuation or precede the first word of a sentence. The ASCII quotes
// serve both ways.
var (
	closers = []string{`"`, `'`, ")", "]", "}", "\u201d", "\u2019", "\u00bb", "\u203a"}
	openers = []string{`"`, `'`, "(", "[", "{", "\u201c", "\u2018", "\u00ab", "\u2039", "\u00bf", "\u00a1"}
)

// skipClosers returns the offset just past the closing quotes and brackets
// at i.
func skipClosers(p string, i int) int { return skipAny(p, i, closers) }

// skipOpeners returns the offset just past the opening quotes and brackets
// at i.
func skipOpeners(p string, i int) int { return skipAny(p, i, openers) }

// skipAny returns the offset just past the strings of set repeated at i.
func skipAny(p string, i int, set []string) int {
outer:
	for i < len(p) {
		for _, s := range set {
			if strings.HasPrefix(p[i:], s) {
				i += len(s)
				continue outer
			}
		}
		break
	}
	return i
}
