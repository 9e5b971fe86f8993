package tokenizer

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Shared corpora, relative to the package directory: gzipped JSONL, one
// document per line with a "paragraphs" list.
const (
	corpus2M  = "../../../shared/data/corpus/mixed-2m.jsonl.gz"
	corpus20M = "../../../shared/data/corpus/mixed-20m.jsonl.gz"
)

// corpusSplit holds the paragraphs of a corpus split into training and
// held-out parts, with their whitespace-separated word counts.
type corpusSplit struct {
	train, heldOut           []string
	trainWords, heldOutWords int
}

// readCorpus reads paragraphs from the corpus at path until the training
// part has maxTrainWords words. Every tenth document is held out, up to
// maxHeldOutWords words. It returns os.ErrNotExist when path is absent.
func readCorpus(path string, maxTrainWords, maxHeldOutWords int) (*corpusSplit, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(zr)
	var c corpusSplit
	for doc := 0; c.trainWords < maxTrainWords; doc++ {
		var d struct {
			Paragraphs []string `json:"paragraphs"`
		}
		if err := dec.Decode(&d); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, doc, err)
		}
		for _, p := range d.Paragraphs {
			n := len(strings.Fields(p))
			if doc%10 == 9 {
				if c.heldOutWords < maxHeldOutWords {
					c.heldOut = append(c.heldOut, p)
					c.heldOutWords += n
				}
			} else if c.trainWords < maxTrainWords {
				c.train = append(c.train, p)
				c.trainWords += n
			}
		}
	}
	return &c, nil
}

// syntheticCorpus returns pseudo-English paragraphs of about words words
// each, for when the shared corpus is absent.
func syntheticCorpus(paragraphs, words int) []string {
	vocab := strings.Fields(`the of and to a in is that for it as was with be by on not he I this are
		or his from at which but have an they you were her she there been one all we their has would
		when if so no what can more about said time people could some them other into than its only
		sentence similarity context model label encoder decoder training corpus token merge
		Beam pipeline index retrieval chunk shard parquet, however; (see below) "quoted" 1984 3.14`)
	rng := rand.New(rand.NewPCG(7, 8))
	out := make([]string, paragraphs)
	for i := range out {
		var b strings.Builder
		for j := range words {
			if j > 0 {
				b.WriteByte(' ')
			}
			// A Zipf-like choice favours the first words.
			b.WriteString(vocab[int(float64(len(vocab))*rng.Float64()*rng.Float64())])
		}
		b.WriteByte('.')
		out[i] = b.String()
	}
	return out
}

func TestCompression(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on a 2M-word corpus")
	}
	c, err := readCorpus(corpus2M, 2_000_000, 200_000)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s absent", corpus2M)
	}
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	tok, err := Train(slices.Values(c.train), TrainConfig{VocabSize: 8000})
	if err != nil {
		t.Fatal(err)
	}
	trainTime := time.Since(start)
	if tok.VocabSize() != 8000 {
		t.Errorf("VocabSize() = %d, want 8000", tok.VocabSize())
	}
	tokens := 0
	for _, p := range c.heldOut {
		ids := tok.Encode(p)
		tokens += len(ids)
		if tok.Decode(ids) != p {
			t.Fatalf("round trip failed for held-out paragraph %.60q", p)
		}
	}
	perWord := float64(tokens) / float64(c.heldOutWords)
	t.Logf("trained on %d words in %v; held out: %d words, %d tokens, %.3f tokens per word",
		c.trainWords, trainTime.Round(time.Millisecond), c.heldOutWords, tokens, perWord)
	if perWord >= 1.5 {
		t.Errorf("%.3f tokens per held-out word, want < 1.5", perWord)
	}
}

func BenchmarkTrain(b *testing.B) {
	cases := []struct {
		name  string
		path  string
		words int
	}{
		{"mixed-2m", corpus2M, 2_000_000},
		{"mixed-20m-10Mwords", corpus20M, 10_000_000},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			c, err := readCorpus(tc.path, tc.words, 0)
			if errors.Is(err, os.ErrNotExist) {
				if tc.path != corpus2M {
					b.Skipf("%s absent", tc.path)
				}
				b.Logf("%s absent; training on synthetic text", tc.path)
				c = &corpusSplit{train: syntheticCorpus(20_000, 100), trainWords: 2_000_000}
			} else if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			var tok *Tokenizer
			for b.Loop() {
				tok, err = Train(slices.Values(c.train), TrainConfig{})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(tok.VocabSize()), "vocab")
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(sec, "s/train")
			b.ReportMetric(float64(c.trainWords)/sec, "words/s")
		})
	}
}

var (
	encodeBenchOnce sync.Once
	encodeBenchTok  *Tokenizer
	encodeBenchText []string
	encodeBenchErr  error
)

// encodeBenchSetup trains a 12K tokenizer on the 2M-word corpus (or on
// synthetic text) and returns it with held-out paragraphs.
func encodeBenchSetup() (*Tokenizer, []string, error) {
	encodeBenchOnce.Do(func() {
		c, err := readCorpus(corpus2M, 2_000_000, 200_000)
		if errors.Is(err, os.ErrNotExist) {
			text := syntheticCorpus(2_000, 100)
			c, err = &corpusSplit{train: text[:1800], heldOut: text[1800:]}, nil
		}
		if err != nil {
			encodeBenchErr = err
			return
		}
		encodeBenchTok, encodeBenchErr = Train(slices.Values(c.train), TrainConfig{})
		encodeBenchText = c.heldOut
	})
	return encodeBenchTok, encodeBenchText, encodeBenchErr
}

func BenchmarkEncode(b *testing.B) {
	tok, text, err := encodeBenchSetup()
	if err != nil {
		b.Fatal(err)
	}
	size := 0
	for _, p := range text {
		size += len(p)
	}
	b.Run("warm", func(b *testing.B) {
		for _, p := range text {
			tok.Encode(p)
		}
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, p := range text {
				tok.Encode(p)
			}
		}
	})
	b.Run("cold", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			tok.cache = newWordCache() // what a freshly loaded tokenizer has
			for _, p := range text {
				tok.Encode(p)
			}
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	tok, text, err := encodeBenchSetup()
	if err != nil {
		b.Fatal(err)
	}
	size := 0
	ids := make([][]int32, len(text))
	for i, p := range text {
		size += len(p)
		ids[i] = tok.Encode(p)
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for b.Loop() {
		for _, x := range ids {
			tok.Decode(x)
		}
	}
}
