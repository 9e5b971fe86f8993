package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

// exportTerms writes, under out, the terms that ix's analyzer gives:
//
//   - chunks.tsv.gz: one line per chunk of the chunks table, in ascending
//     chunk ID order: the chunk ID, then every bigram of the chunk's indexed
//     text in order, repeats included (so a term's count on the line is its
//     within-chunk frequency), all separated by tabs;
//   - queries.tsv.gz: one line per query, in the order `latency` runs them:
//     the query's number (from 0), its normalised text, then its distinct
//     bigrams (the terms Search looks up), separated by tabs.
//
// Tokens never hold whitespace and a bigram joins two tokens with one space,
// so terms never hold a tab. The chunks must be exactly those of the index:
// their IDs' fingerprint is checked against the index's.
func exportTerms(ix *retrieval.Index, chunksDir, queries string, n int, out string) error {
	if out == "" {
		return fmt.Errorf("terms: -out is required")
	}
	if ix.Meta.Unigrams {
		// The unigram fallback would make some queries' terms depend on
		// which bigrams the index holds; the comparison is of bigrams only.
		return fmt.Errorf("terms: the index has the unigram field; export a bigram-only index (--unigrams=false)")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	start := time.Now()
	type chunk struct{ id, text string }
	var all []chunk
	seen := map[string]bool{}
	var fp retrieval.Fingerprint
	err := storage.ScanTable(context.Background(), chunksDir, func(c schemas.Chunk) bool {
		if seen[c.ID] {
			return true // indexed once; ShardWriter refuses the repeat
		}
		seen[c.ID] = true
		fp.AddID(c.ID)
		all = append(all, chunk{c.ID, c.Text()})
		return true
	})
	if err != nil {
		return fmt.Errorf("read chunks %s: %w", chunksDir, err)
	}
	if fp != ix.Meta.Corpus {
		return fmt.Errorf("chunks in %s (%s) are not the index's (%s)", chunksDir, fp, ix.Meta.Corpus)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].id < all[j].id })
	an := ix.Analyzer()
	var tokens int
	err = writeGzip(filepath.Join(out, "chunks.tsv.gz"), func(w *bufio.Writer) error {
		for i := range all {
			w.WriteString(all[i].id)
			for _, t := range an.BigramTokens(all[i].text) {
				w.WriteByte('\t')
				w.WriteString(t)
				tokens++
			}
			w.WriteByte('\n')
			all[i].text = ""
		}
		return nil
	})
	if err != nil {
		return err
	}
	qs := readQueries(queries, n)
	var qterms int
	err = writeGzip(filepath.Join(out, "queries.tsv.gz"), func(w *bufio.Writer) error {
		for i, q := range qs {
			if strings.ContainsAny(q, "\t\n") {
				return fmt.Errorf("query %d holds a tab or newline after normalisation: %q", i, q)
			}
			fmt.Fprintf(w, "%d\t%s", i, q)
			for _, t := range an.Bigrams(q) {
				w.WriteByte('\t')
				w.WriteString(t)
				qterms++
			}
			w.WriteByte('\n')
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Printf("terms chunks=%d bigram_tokens=%d queries=%d query_terms=%d analyzer=%s seconds=%.1f out=%s\n",
		len(all), tokens, len(qs), qterms, ix.Meta.Analyzer, time.Since(start).Seconds(), out)
	return nil
}

// topWithTies returns a copy of the first k hits of h and of the hits after
// them that tie with the k-th hit's score: the hits that a different order
// among equal scores could have put in the top k.
func topWithTies(h []schemas.Hit, k int) []schemas.Hit {
	end := min(k, len(h))
	for end > 0 && end < len(h) && h[end].Score == h[end-1].Score {
		end++
	}
	return append([]schemas.Hit(nil), h[:end]...)
}

// writeTop writes each query's hits from topWithTies as a gzip TSV line:
// the query's number, then one "chunkID score" pair per hit (a space between
// ID and score, tabs between hits), best first.
func writeTop(path string, tops [][]schemas.Hit) error {
	return writeGzip(path, func(w *bufio.Writer) error {
		for i, hs := range tops {
			w.WriteString(strconv.Itoa(i))
			for _, h := range hs {
				w.WriteByte('\t')
				w.WriteString(h.ChunkID)
				w.WriteByte(' ')
				w.WriteString(strconv.FormatFloat(float64(h.Score), 'g', -1, 32))
			}
			w.WriteByte('\n')
		}
		return nil
	})
}

// writeGzip writes path through fn, gzip-compressed, into a temporary file
// that is renamed into place when complete.
func writeGzip(path string, fn func(*bufio.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	zw, err := gzip.NewWriterLevel(f, gzip.BestSpeed)
	if err != nil {
		f.Close()
		return err
	}
	bw := bufio.NewWriterSize(zw, 1<<20)
	if err := fn(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
