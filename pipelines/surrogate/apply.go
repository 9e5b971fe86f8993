package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/retrieval/corpus"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/disc"
	"github.com/ctxsim/ctxsim/scoring/surrogate"
	"github.com/ctxsim/ctxsim/storage"
)

// Output files of the apply mode.
const (
	embeddingsFile = "embeddings.parquet"
	scoresFile     = "scores.tsv"
)

// loadEncoder reads a trained surrogate from dir: an averaged-subword
// model (surrogate.json) or a fine-tuned BiLSTM (disc.json), checked
// against the tokenizer.
func loadEncoder(ctx context.Context, dir string, tok textVocab) (surrogate.Encoder, string, error) {
	local, err := storage.Fetch(ctx, dir)
	if err != nil {
		return nil, "", fmt.Errorf("--load %s: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(local, surrogate.ConfigFile)); err == nil {
		m, _, err := surrogate.Load(local, tok.Fingerprint())
		if err != nil {
			return nil, "", fmt.Errorf("--load %s: %w", dir, err)
		}
		return m, "mean", nil
	}
	if _, err := os.Stat(filepath.Join(local, disc.ConfigFile)); err == nil {
		m, _, err := disc.Load(local, tok.Fingerprint())
		if err != nil {
			return nil, "", fmt.Errorf("--load %s: %w", dir, err)
		}
		return &surrogate.BiLSTM{M: m}, "bilstm", nil
	}
	return nil, "", fmt.Errorf("--load %s: no trained surrogate there (neither %s nor %s)", dir, surrogate.ConfigFile, disc.ConfigFile)
}

// readLines returns the non-blank lines of a local or remote text file
// with their 1-based line numbers.
func readLines(ctx context.Context, path string) (lines []string, numbers []int, err error) {
	data, err := storage.ReadFile(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) != "" {
			lines, numbers = append(lines, sc.Text()), append(numbers, n)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(lines) == 0 {
		return nil, nil, fmt.Errorf("%s: no lines", path)
	}
	return lines, numbers, nil
}

// encodeTexts normalises texts as corpus text is, tokenizes them and
// returns their embeddings as rows; an empty sentence is an error naming
// its line.
func encodeTexts(enc surrogate.Encoder, tok textVocab, texts []string, where func(i int) string) ([][]float32, error) {
	norm := make([]string, len(texts))
	for i, s := range texts {
		if norm[i] = corpus.Normalize(s); norm[i] == "" {
			return nil, fmt.Errorf("%s: empty sentence", where(i))
		}
	}
	ids := surrogate.IDs[int](tok.EncodeBatch(norm))
	for i := range ids {
		if len(ids[i]) == 0 {
			return nil, fmt.Errorf("%s: the sentence has no tokens", where(i))
		}
	}
	return encodeRows(enc, ids), nil
}

// pairColumns finds the two sentence columns of a pairs file: the columns
// named s1 and s2 when the first line is such a header (as in STS files),
// else the first two columns of every line.
func pairColumns(first string) (c1, c2 int, header bool) {
	cols := strings.Split(first, "\t")
	i1, i2 := -1, -1
	for i, c := range cols {
		switch strings.TrimSpace(c) {
		case "s1", "sentence1":
			i1 = i
		case "s2", "sentence2":
			i2 = i
		}
	}
	if i1 >= 0 && i2 >= 0 {
		return i1, i2, true
	}
	return 0, 1, false
}

// runApply is the apply mode: with --embed, the embedding of every line of
// a text file (output/embeddings.parquet); with --score, the cosine of
// every sentence pair of a TSV (output/scores.tsv).
func runApply(ctx context.Context) error {
	if *embedPath == "" && *scorePath == "" {
		return errors.New("--load: give --embed (a file of sentences) or --score (a TSV of sentence pairs)")
	}
	if *model == "" || *output == "" {
		return errors.New("--load needs --model (for its tokenizer) and --output")
	}
	start := time.Now()
	models, err := resources.LoadModels(ctx, *model)
	if err != nil {
		return fmt.Errorf("--model %s: %w", *model, err)
	}
	// The surrogate reads the tokens it was trained on: with --tokens=auto,
	// whichever of the directory's vocabularies it loads with.
	names := []string{*tokens}
	if *tokens == "auto" {
		names = []string{"ctx", "subword"}
	}
	var tok textVocab
	var enc surrogate.Encoder
	var kind string
	var errs []error
	for _, name := range names {
		t, _, err := chooseTokens(name, models)
		if err == nil {
			if enc, kind, err = loadEncoder(ctx, *load, t); err == nil {
				tok = t
				break
			}
		}
		errs = append(errs, err)
	}
	if tok == nil {
		return errors.Join(errs...)
	}
	dest, work := *output, *output
	if storage.IsRemote(dest) {
		if work, err = os.MkdirTemp("", "surrogate-apply-"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	if *embedPath != "" {
		lines, numbers, err := readLines(ctx, *embedPath)
		if err != nil {
			return fmt.Errorf("--embed: %w", err)
		}
		vecs, err := encodeTexts(enc, tok, lines, func(i int) string { return fmt.Sprintf("%s:%d", *embedPath, numbers[i]) })
		if err != nil {
			return err
		}
		rows := make([]schemas.SentenceEmbedding, len(lines))
		for i := range rows {
			rows[i] = schemas.SentenceEmbedding{Line: int64(numbers[i]), Sentence: lines[i], Embedding: vecs[i]}
		}
		if err := writeParquet(filepath.Join(work, embeddingsFile), rows); err != nil {
			return err
		}
		fmt.Printf("surrogate: %d embeddings (%d wide, %s encoder) in %s\n", len(rows), enc.Dim(), kind, storage.Join(dest, embeddingsFile))
	}
	if *scorePath != "" {
		lines, numbers, err := readLines(ctx, *scorePath)
		if err != nil {
			return fmt.Errorf("--score: %w", err)
		}
		c1, c2, header := pairColumns(lines[0])
		if header {
			lines, numbers = lines[1:], numbers[1:]
		}
		if len(lines) == 0 {
			return fmt.Errorf("--score %s: no sentence pairs after the header", *scorePath)
		}
		var a, b []string
		for i, l := range lines {
			cols := strings.Split(l, "\t")
			if len(cols) <= max(c1, c2) {
				return fmt.Errorf("%s:%d: want two tab-separated sentences, got %d columns", *scorePath, numbers[i], len(cols))
			}
			a, b = append(a, cols[c1]), append(b, cols[c2])
		}
		where := func(i int) string { return fmt.Sprintf("%s:%d", *scorePath, numbers[i]) }
		va, err := encodeTexts(enc, tok, a, where)
		if err != nil {
			return err
		}
		vb, err := encodeTexts(enc, tok, b, where)
		if err != nil {
			return err
		}
		var sb strings.Builder
		sb.WriteString("score\ts1\ts2\n")
		for i := range a {
			sb.WriteString(strconv.FormatFloat(surrogate.Cosine(va[i], vb[i]), 'g', -1, 64))
			sb.WriteString("\t" + a[i] + "\t" + b[i] + "\n")
		}
		if err := os.WriteFile(filepath.Join(work, scoresFile), []byte(sb.String()), 0o644); err != nil {
			return err
		}
		fmt.Printf("surrogate: %d pair scores (cosine, %s encoder) in %s\n", len(a), kind, storage.Join(dest, scoresFile))
	}
	if dest != work {
		if err := storage.Upload(ctx, work, dest); err != nil {
			return err
		}
	}
	fmt.Printf("surrogate: done in %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// writeParquet writes rows to a Parquet file through a temporary file and
// a rename.
func writeParquet[T any](path string, rows []T) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := schemas.NewWriter(f, reflect.TypeOf(*new(T)), schemas.WriterOptions{})
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Close(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
