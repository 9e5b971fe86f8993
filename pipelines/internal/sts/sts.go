// Package sts reads STS files (gold scores and sentence pairs), for the
// jobs that evaluate against STS gold scores.
package sts

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/retrieval/corpus"
	"github.com/ctxsim/ctxsim/storage"
)

// Pair is one STS pair: the gold score and the two sentences, normalised as
// corpus text is.
type Pair struct {
	Gold   float64
	S1, S2 string
}

// Read reads the columns score, s1, s2 (tab-separated, after a header line;
// further columns are ignored) of the file at path, local or remote. Blank
// lines are skipped; a malformed line is an error naming it, and so is a
// first line that is not the header "score\ts1\ts2..." (without the
// header, the first pair would be taken for it and lost).
func Read(ctx context.Context, path string) ([]Pair, error) {
	data, err := storage.ReadFile(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("sts: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var out []Pair
	line := 0
	for sc.Scan() {
		line++
		if line == 1 {
			if err := checkHeader(sc.Text()); err != nil {
				return nil, fmt.Errorf("%s:1: %w", path, err)
			}
			continue
		}
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 3 {
			return nil, fmt.Errorf("%s:%d: want score, s1, s2 separated by tabs, got %d columns", path, line, len(cols))
		}
		g, err := strconv.ParseFloat(cols[0], 64)
		if err != nil || math.IsNaN(g) {
			return nil, fmt.Errorf("%s:%d: bad score %q", path, line, cols[0])
		}
		s1, s2 := corpus.Normalize(cols[1]), corpus.Normalize(cols[2])
		if s1 == "" || s2 == "" {
			return nil, fmt.Errorf("%s:%d: empty sentence", path, line)
		}
		out = append(out, Pair{g, s1, s2})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("%s: %d pairs; need at least 2", path, len(out))
	}
	return out, nil
}

// header is the columns an STS file's first line names.
var header = []string{"score", "s1", "s2"}

// checkHeader returns an error unless line is the header: score, s1 and
// s2, then any other columns, separated by tabs (a byte order mark and the
// names' case and surrounding spaces do not matter).
func checkHeader(line string) error {
	cols := strings.Split(strings.TrimPrefix(line, "\uFEFF"), "\t")
	ok := len(cols) >= len(header)
	for i := 0; ok && i < len(header); i++ {
		ok = strings.EqualFold(strings.TrimSpace(cols[i]), header[i])
	}
	if ok {
		return nil
	}
	if _, err := strconv.ParseFloat(strings.TrimSpace(cols[0]), 64); err == nil && len(cols) >= 3 {
		return fmt.Errorf("no header: the first line is a pair (%q); add the header line %q above it", line, "score\ts1\ts2\tgenre")
	}
	return fmt.Errorf("want the header %q (tab-separated; further columns are ignored), got %q", "score\ts1\ts2", line)
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
