package ingest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ctxsim/ctxsim/retrieval/corpus"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/sts"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/beamreg"
	"github.com/ctxsim/ctxsim/transforms/parquetio"
)

func init() {
	beamreg.DoFn(&readQueriesFn{})
	register.Function1x2[schemas.Sentence, string, schemas.Sentence](keyBySentenceID)
	register.Function2x1[string, func(*schemas.Sentence) bool, schemas.Sentence](firstSentence)
	register.Iter1[schemas.Sentence]()
	beamreg.DoFn(&sampleFn{})
}

// QueryDocID is the DocID of sentences read by ReadQueries: they come from
// outside the corpus, so no chunk is excluded when they are searched.
const QueryDocID = "query"

// ReadQueries reads query sentences from text files matching the patterns:
// one sentence per line, or, for an STS file in any layout sts.Formats
// names (recognised by its first line), the two sentences of each pair. Sentences
// are normalised; each distinct text appears once, with ID
// corpus.SentenceID(QueryDocID, 0, text).
func ReadQueries(s beam.Scope, patterns []string) (sentences, dead beam.PCollection) {
	s = s.Scope("ReadQueries")
	files := parquetio.MatchFiles(s, patterns)
	sents, dead := beam.ParDo2(s, &readQueriesFn{}, files)
	keyed := beam.ParDo(s, keyBySentenceID, sents)
	return beam.ParDo(s, firstSentence, beam.GroupByKey(s, keyed)), dead
}

type readQueriesFn struct{}

func (f *readQueriesFn) ProcessElement(ctx context.Context, name string,
	emit func(schemas.Sentence), emitDead func(schemas.DeadLetter)) error {
	fs, err := storage.New(ctx, name)
	if err != nil {
		return err
	}
	defer fs.Close()
	rc, err := fs.OpenRead(ctx, name)
	if err != nil {
		return err
	}
	defer rc.Close()
	r, err := corpus.Decompress(rc)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if sts.IsSTS(string(first)) {
		// An STS file, in any layout bin/evaluate reads: its sentences.
		pairs, err := sts.Parse(name, data)
		if err != nil {
			return err
		}
		for _, p := range pairs {
			for _, c := range []string{p.S1, p.S2} {
				emit(schemas.Sentence{ID: corpus.SentenceID(QueryDocID, 0, c), DocID: QueryDocID, Text: c})
			}
		}
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var line int64
	for sc.Scan() {
		line++
		text := sc.Text()
		if !utf8.ValidString(text) {
			emitDead(schemas.DeadLetter{Stage: "queries", Source: name, Line: line, Reason: corpus.ReasonInvalidUTF8,
				Detail: "line is not valid UTF-8", Record: strings.ToValidUTF8(text[:min(len(text), corpus.MaxRecordBytes)], "\uFFFD")})
			continue
		}
		if c := corpus.Normalize(text); c != "" {
			emit(schemas.Sentence{ID: corpus.SentenceID(QueryDocID, 0, c), DocID: QueryDocID, Text: c})
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: line %d: %w", name, line+1, err)
	}
	return nil
}

func keyBySentenceID(s schemas.Sentence) (string, schemas.Sentence) { return s.ID, s }

func firstSentence(_ string, it func(*schemas.Sentence) bool) schemas.Sentence {
	var s schemas.Sentence
	it(&s)
	return s
}

// Sample keeps a deterministic fraction of sentences, chosen by a hash of
// their IDs, so the same sentences are kept on every run. rate >= 1 keeps all.
func Sample(s beam.Scope, rate float64, sentences beam.PCollection) beam.PCollection {
	return SampleWindow(s, 0, rate, sentences)
}

// SampleWindow keeps the sentences whose ID hash, read as a fraction of
// [0, 1), falls in [from, from+rate): windows that do not overlap keep
// disjoint sentences, and consecutive windows together keep what one window
// of the summed rate keeps. Sample is the window that starts at 0.
func SampleWindow(s beam.Scope, from, rate float64, sentences beam.PCollection) beam.PCollection {
	if from <= 0 && rate >= 1 {
		return sentences
	}
	return beam.ParDo(s.Scope("Sample"), &sampleFn{From: from, Rate: rate}, sentences)
}

type sampleFn struct {
	From, Rate float64
}

// InSample reports whether the sentence ID falls in the window [from,
// from+rate) of SampleWindow.
func InSample(id string, from, rate float64) bool {
	h := fnv.New64a()
	h.Write([]byte(id))
	x := float64(h.Sum64() % 1_000_000)
	return x >= from*1_000_000 && x < (from+rate)*1_000_000
}

func (f *sampleFn) ProcessElement(s schemas.Sentence, emit func(schemas.Sentence)) {
	if InSample(s.ID, f.From, f.Rate) {
		emit(s)
	}
}
