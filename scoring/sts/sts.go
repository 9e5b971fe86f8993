// Package sts reads STS files (gold scores and sentence pairs), for the
// jobs that evaluate against STS gold scores.
package sts

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

// Pair is one STS pair: the gold score and the two sentences, normalised as
// corpus text is.
type Pair struct {
	Gold   float64
	S1, S2 string
}

// Formats says, for error messages and help, which files Read takes.
const Formats = `a TSV with the header "score<TAB>s1<TAB>s2" (further columns ignored); ` +
	`a TSV or CSV whose header names the columns sentence1, sentence2 and score ` +
	`(the sentence-transformers/stsb layout; also sentence_A, sentence_B and relatedness_score, as SICK's files); ` +
	`or the STS Benchmark's own sts-*.csv (tab-separated, no header: genre, file, year, id, score, s1, s2)`

// Names a header may give each column, compared without case, spaces,
// "_" and "-".
var (
	scoreNames = []string{"score", "label", "gold", "similarityscore", "relatednessscore", "relatedness"}
	s1Names    = []string{"s1", "sentence1", "sentencea", "text1", "sent1"}
	s2Names    = []string{"s2", "sentence2", "sentenceb", "text2", "sent2"}
)

// layout is where a file's columns are and whether its first record is a
// header.
type layout struct {
	comma         rune
	header        bool
	score, s1, s2 int
	name          string
}

// Read reads the gold scores and sentence pairs of the STS file at path,
// local or remote, in any of the layouts Formats names. Blank lines are
// skipped; a malformed line is an error naming it, and so is a first line
// that is no header of a known layout (without the header, the first pair
// would be taken for it and lost).
func Read(ctx context.Context, path string) ([]Pair, error) {
	data, err := storage.ReadFile(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("sts: %w", err)
	}
	return Parse(path, data)
}

// IsSTS reports whether first, a file's first line, begins a file of one
// of the layouts Formats names (a text file of one sentence per line does
// not).
func IsSTS(first string) bool {
	_, err := detect(strings.TrimRight(strings.TrimPrefix(first, "\uFEFF"), "\r"))
	return err == nil
}

// Parse reads the pairs of an STS file's contents, as Read does; path
// names the file in errors.
func Parse(path string, data []byte) ([]Pair, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	first, _, _ := bytes.Cut(data, []byte("\n"))
	lay, err := detect(strings.TrimRight(string(first), "\r"))
	if err != nil {
		return nil, fmt.Errorf("%s:1: %w", path, err)
	}
	records, err := split(data, lay.comma)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []Pair
	need := max(lay.score, lay.s1, lay.s2) + 1
	for i, rec := range records {
		if i == 0 && lay.header {
			continue
		}
		cols, line := rec.cols, rec.line
		if len(cols) == 1 && strings.TrimSpace(cols[0]) == "" {
			continue
		}
		if len(cols) < need {
			return nil, fmt.Errorf("%s:%d: want %s, got %d columns", path, line, lay.name, len(cols))
		}
		g, err := strconv.ParseFloat(strings.TrimSpace(cols[lay.score]), 64)
		if err != nil || math.IsNaN(g) {
			return nil, fmt.Errorf("%s:%d: bad score %q", path, line, cols[lay.score])
		}
		s1, s2 := schemas.NormalizeText(cols[lay.s1]), schemas.NormalizeText(cols[lay.s2])
		if s1 == "" || s2 == "" {
			return nil, fmt.Errorf("%s:%d: empty sentence", path, line)
		}
		out = append(out, Pair{g, s1, s2})
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("%s: %d pairs; need at least 2", path, len(out))
	}
	return out, nil
}

// record is one line's (or one CSV record's) columns and its line number.
type record struct {
	cols []string
	line int
}

// split cuts data into records: lines split at tabs (STS files quote
// nothing, so a quotation mark is part of the text), or CSV records.
func split(data []byte, comma rune) ([]record, error) {
	var out []record
	if comma == '\t' {
		for i, l := range strings.Split(string(data), "\n") {
			l = strings.TrimRight(l, "\r")
			out = append(out, record{strings.Split(l, "\t"), i + 1})
		}
		return out, nil
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	for {
		cols, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		line, _ := r.FieldPos(0)
		out = append(out, record{cols, line})
	}
}

// detect tells the layout of a file from its first line.
func detect(line string) (layout, error) {
	for _, comma := range []rune{'\t', ','} {
		if !strings.ContainsRune(line, comma) {
			continue
		}
		var names []string
		if comma == '\t' {
			names = strings.Split(line, "\t")
		} else {
			r := csv.NewReader(strings.NewReader(line))
			rec, err := r.Read()
			if err != nil {
				continue
			}
			names = rec
		}
		lay := layout{comma: comma, header: true, score: find(names, scoreNames), s1: find(names, s1Names), s2: find(names, s2Names)}
		if lay.score >= 0 && lay.s1 >= 0 && lay.s2 >= 0 {
			lay.name = fmt.Sprintf("the columns %s, %s and %s", names[lay.score], names[lay.s1], names[lay.s2])
			return lay, nil
		}
		if comma == '\t' && len(names) >= 7 && isNumber(names[4]) && !isNumber(names[0]) {
			return layout{comma: '\t', score: 4, s1: 5, s2: 6, name: "genre, file, year, id, score, s1 and s2 separated by tabs"}, nil
		}
		if isNumber(names[0]) && len(names) >= 3 {
			return layout{}, fmt.Errorf("no header: the first line is a pair (%q); add the header line %q above it", line, "score\ts1\ts2\tgenre")
		}
	}
	return layout{}, fmt.Errorf("not an STS file I know: got the first line %q; want %s", line, Formats)
}

// find returns the index of the first of names that is one of want, or -1.
func find(names, want []string) int {
	for i, n := range names {
		n = strings.NewReplacer(" ", "", "_", "", "-", "").Replace(strings.ToLower(strings.TrimSpace(n)))
		for _, w := range want {
			if n == w {
				return i
			}
		}
	}
	return -1
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil
}

// Spread returns n pairs spread evenly over ps (every len/n-th), or ps when
// n is 0 or not smaller. STS files are ordered by genre, so a prefix would
// be one genre.
func Spread(ps []Pair, n int) []Pair {
	if n <= 0 || n >= len(ps) {
		return ps
	}
	out := make([]Pair, n)
	for i := range out {
		out[i] = ps[i*len(ps)/n]
	}
	return out
}
