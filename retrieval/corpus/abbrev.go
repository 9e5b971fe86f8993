package corpus

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// abbrevClass says how a known abbreviation followed by a period affects
// sentence splitting.
type abbrevClass uint8

const (
	// notAbbrev: the word is not a known abbreviation.
	notAbbrev abbrevClass = iota
	// prepositive abbreviations (titles, months, "e.g.") precede the word
	// they belong to and never end a sentence.
	prepositive
	// numbered abbreviations ("No.", "Fig.") do not end a sentence when a
	// number follows; otherwise they are ordinary words ("No. I won't.").
	numbered
	// ambiguous abbreviations ("Inc.", "U.S.", "etc.") often end sentences:
	// they do when the next word is a common sentence opener.
	ambiguous
)

// abbrevs maps known abbreviations, without their final period, to their
// class. See classify for how it is looked up.
var abbrevs = func() map[string]abbrevClass {
	m := make(map[string]abbrevClass)
	add := func(c abbrevClass, words string) {
		for _, w := range strings.Fields(words) {
			m[w] = c
		}
	}
	add(prepositive, `Mr Mrs Ms Messrs Mme Mlle Dr Drs Prof Profs Rev Hon Gen
		Lt Col Maj Capt Cmdr Adm Sgt Cpl Pvt Brig Gov Sen Sens Rep Reps Pres
		Supt Atty Insp Fr Mt Ft Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov
		Dec vs v cf e.g i.e eg viz approx ca incl esp`)
	add(numbered, `No Nos Nr no nos Fig Figs fig figs Eq Eqs eq eqs Vol Vols
		vol vols p pp Pt pt Art art Sec sec Ch ch Chap chap Ex ex Tab tab Ref
		Refs Ps Op op sc`)
	add(ambiguous, `Inc Ltd Co Corp Cos Plc plc Jr Sr St Bros Ave Blvd Dept
		Univ Assn al resp a.m p.m U.S U.K U.N U.S.A E.U Ph.D M.D B.A M.A
		B.Sc M.Sc D.C Mass Calif Wash Ariz Colo Conn Fla Ind Kan Mich Minn Mo
		Mont Neb Nev Okla Ore Pa Tenn Tex Va Vt Wis Wyo`)
	return m
}()

// maxAbbrevLen is the length in bytes of the longest key of abbrevs.
var maxAbbrevLen = func() int {
	n := 0
	for w := range abbrevs {
		n = max(n, len(w))
	}
	return n
}()

// classify returns the class of word, the text before a period. A
// capitalised word is also looked up with a lowercase first letter, so that
// "E.g." and "Etc." at the start of a sentence are known. Words of single
// letters separated by periods ("U.S.S.R", "e.g") that are not in the table
// are ambiguous.
func classify(word string) abbrevClass {
	if word == "" || len(word) > 16 {
		return notAbbrev
	}
	if len(word) <= maxAbbrevLen {
		if c, ok := abbrevs[word]; ok {
			return c
		}
		if c := word[0]; c >= 'A' && c <= 'Z' {
			var buf [16]byte
			lower := append(buf[:0], word...)
			lower[0] = c + ('a' - 'A')
			if cl, ok := abbrevs[string(lower)]; ok {
				return cl
			}
		}
	}
	if isDottedLetters(word) {
		return ambiguous
	}
	return notAbbrev
}

// isDottedLetters reports whether word is two or more single letters
// separated by periods, as in "U.S.S.R" or "i.e".
func isDottedLetters(word string) bool {
	letters := 0
	for i := 0; i < len(word); {
		r, size := utf8.DecodeRuneInString(word[i:])
		if !unicode.IsLetter(r) {
			return false
		}
		letters++
		i += size
		if i == len(word) {
			break
		}
		if word[i] != '.' {
			return false
		}
		i++
	}
	return letters >= 2
}

// sentenceOpeners are capitalised words that commonly start a sentence and
// rarely follow an abbreviation inside one. After an ambiguous abbreviation
// or an initial, a following opener means the sentence ended.
var sentenceOpeners = func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(`A An The This That These Those There Then
		Thus Therefore Hence However Moreover Meanwhile Nevertheless Instead
		Also Although Though After Afterwards Before Because Since When While
		Where Whereas Which What Who Why How If Unless Once Until In On At
		For From By With Without To Of As But And Or Nor So Yet Still It Its
		He She His Her Him They Them Their We Our Us You Your I My Me Some
		Many Most Much All Both Each Every Few Several Such Other Another One
		Two Three Today Now Later Soon Here Despite During Under Over Following
		According Finally First Second Similarly Otherwise Note See Not No`) {
		m[w] = true
	}
	return m
}()
