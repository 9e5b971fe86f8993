package surrogatejob

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

// applier is the apply mode's state: the trained encoder, the tokens it
// reads, and where its outputs go.
type applier struct {
	c    Config
	enc  surrogate.Encoder
	kind string // "mean" or "bilstm"
	tok  textVocab
	// dest is --output; work is the local directory written first (dest
	// itself unless it is remote).
	dest, work string
}

// runApply is the apply mode: with --embed, the embedding of every line of
// a text file (output/embeddings.parquet); with --score, the cosine of
// every sentence pair of a TSV (output/scores.tsv).
func runApply(ctx context.Context, c Config) error {
	if c.Embed == "" && c.Score == "" {
		return errors.New("--load: give --embed (a file of sentences) or --score (a TSV of sentence pairs)")
	}
	if c.Model == "" || c.Output == "" {
		return errors.New("--load needs --model (for its tokenizer) and --output")
	}
	start := time.Now()
	a, err := newApplier(ctx, c)
	if err != nil {
		return err
	}
	a.dest, a.work = c.Output, c.Output
	if storage.IsRemote(a.dest) {
		if a.work, err = os.MkdirTemp("", "surrogate-apply-"); err != nil {
			return err
		}
		defer os.RemoveAll(a.work)
	}
	if err := os.MkdirAll(a.work, 0o755); err != nil {
		return err
	}
	if c.Embed != "" {
		if err := a.embed(ctx); err != nil {
			return err
		}
	}
	if c.Score != "" {
		if err := a.score(ctx); err != nil {
			return err
		}
	}
	if a.dest != a.work {
		if err := storage.Upload(ctx, a.work, a.dest); err != nil {
			return fmt.Errorf("upload to %s: %w", a.dest, err)
		}
	}
	fmt.Printf("surrogate: done in %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// newApplier loads the model directory and the trained encoder of --load,
// with the tokens it was trained on: with --tokens=auto, whichever of the
// directory's vocabularies it loads with.
func newApplier(ctx context.Context, c Config) (*applier, error) {
	models, err := resources.LoadModels(ctx, c.Model)
	if err != nil {
		return nil, fmt.Errorf("--model %s: %w", c.Model, err)
	}
	names := []string{c.Tokens}
	if c.Tokens == "auto" {
		names = []string{"ctx", "subword"}
	}
	var errs []error
	for _, name := range names {
		t, _, err := chooseTokens(name, models)
		if err == nil {
			var enc surrogate.Encoder
			var kind string
			if enc, kind, err = loadEncoder(ctx, c.Load, t); err == nil {
				return &applier{c: c, enc: enc, kind: kind, tok: t}, nil
			}
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// embed writes the embedding of every line of --embed to
// work/embeddings.parquet.
func (a *applier) embed(ctx context.Context) error {
	path := a.c.Embed
	lines, numbers, err := readLines(ctx, path)
	if err != nil {
		return fmt.Errorf("--embed: %w", err)
	}
	vecs, err := encodeTexts(a.enc, a.tok, lines, func(i int) string { return fmt.Sprintf("%s:%d", path, numbers[i]) })
	if err != nil {
		return err
	}
	rows := make([]schemas.SentenceEmbedding, len(lines))
	for i := range rows {
		rows[i] = schemas.SentenceEmbedding{Line: int64(numbers[i]), Sentence: lines[i], Embedding: vecs[i]}
	}
	if err := writeParquet(filepath.Join(a.work, embeddingsFile), rows); err != nil {
		return err
	}
	fmt.Printf("surrogate: %d embeddings (%d wide, %s encoder) in %s\n", len(rows), a.enc.Dim(), a.kind, storage.Join(a.dest, embeddingsFile))
	return nil
}

// score writes the cosine of every sentence pair of --score to
// work/scores.tsv.
func (a *applier) score(ctx context.Context) error {
	path := a.c.Score
	lines, numbers, err := readLines(ctx, path)
	if err != nil {
		return fmt.Errorf("--score: %w", err)
	}
	c1, c2, header := pairColumns(lines[0])
	if header {
		lines, numbers = lines[1:], numbers[1:]
	}
	if len(lines) == 0 {
		return fmt.Errorf("--score %s: no sentence pairs after the header", path)
	}
	var s1, s2 []string
	for i, l := range lines {
		cols := strings.Split(l, "\t")
		if len(cols) <= max(c1, c2) {
			return fmt.Errorf("%s:%d: want two tab-separated sentences, got %d columns", path, numbers[i], len(cols))
		}
		s1, s2 = append(s1, cols[c1]), append(s2, cols[c2])
	}
	where := func(i int) string { return fmt.Sprintf("%s:%d", path, numbers[i]) }
	v1, err := encodeTexts(a.enc, a.tok, s1, where)
	if err != nil {
		return err
	}
	v2, err := encodeTexts(a.enc, a.tok, s2, where)
	if err != nil {
		return err
	}
	var sb strings.Builder
	sb.WriteString("score\ts1\ts2\n")
	for i := range s1 {
		sb.WriteString(strconv.FormatFloat(surrogate.Cosine(v1[i], v2[i]), 'g', -1, 64))
		sb.WriteString("\t" + s1[i] + "\t" + s2[i] + "\n")
	}
	if err := os.WriteFile(filepath.Join(a.work, scoresFile), []byte(sb.String()), 0o644); err != nil {
		return err
	}
	fmt.Printf("surrogate: %d pair scores (cosine, %s encoder) in %s\n", len(s1), a.kind, storage.Join(a.dest, scoresFile))
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
