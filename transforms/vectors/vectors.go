// Package vectors holds the Beam transform that computes the sentence
// vectors of a corpus under one model (the coherence model's BiLSTM
// vectors, the contrastive model's context-table sums) once, for harvest
// workers to load instead of computing them each (resources.LoadVectors).
package vectors

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/transforms/counter"
	"github.com/ctxsim/ctxsim/transforms/progress"
)

func init() {
	register.DoFn3x1[context.Context, schemas.Sentence, func(schemas.SentenceVector), error](&encodeFn{})
	register.Emitter1[schemas.SentenceVector]()
}

// Config configures Encode.
type Config struct {
	// Models is the model directory, local or remote.
	Models string
	// Key is the vector key (method.VectorScorer.VectorKey) of the model
	// whose vectors are computed.
	Key string
	// BLAS selects the matrix multiply (see resources.UseBackend); empty
	// keeps the process's.
	BLAS string
	// Batch is the sentences a DoFn gathers before encoding them; 0 means
	// 4,096.
	Batch int
	// Threads encode parts of a batch at once; 0 means GOMAXPROCS. A
	// runner that gives a stage one bundle at a time (Prism) otherwise
	// encodes on one core.
	Threads int
}

// part is the sentences one thread encodes at a time.
const part = 256

// Scorer returns the vector scorer of the models in dir with the given key.
func Scorer(ctx context.Context, dir, key string) (method.VectorScorer, error) {
	m, err := resources.OpenModels(ctx, dir)
	if err != nil {
		return nil, err
	}
	e, err := m.Engine(method.NewStore())
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, v := range e.VectorScorers() {
		if v.VectorKey() == key {
			return v, nil
		}
		keys = append(keys, v.VectorKey())
	}
	return nil, fmt.Errorf("models %s have no sentence vectors %q (they have %v)", dir, key, keys)
}

// Encode computes the vector of every sentence (schemas.Sentence) under the
// model cfg.Key names, as schemas.SentenceVector.
func Encode(s beam.Scope, cfg Config, sentences beam.PCollection) beam.PCollection {
	s = s.Scope("vectors.Encode")
	return beam.ParDo(s, &encodeFn{Cfg: cfg}, sentences)
}

type encodeFn struct {
	Cfg Config

	scorer  method.VectorScorer
	ids     []string
	texts   []string
	encoded counter.Counter
	prog    *progress.Reporter
}

func (f *encodeFn) Setup(ctx context.Context) error {
	if f.Cfg.BLAS != "" {
		if err := resources.UseBackend(f.Cfg.BLAS); err != nil {
			return err
		}
	}
	var err error
	if f.scorer, err = Scorer(ctx, f.Cfg.Models, f.Cfg.Key); err != nil {
		return err
	}
	if f.Cfg.Batch <= 0 {
		f.Cfg.Batch = 4096
	}
	if f.Cfg.Threads <= 0 {
		f.Cfg.Threads = runtime.GOMAXPROCS(0)
	}
	term, _, _ := strings.Cut(f.Cfg.Key, "-")
	f.encoded = counter.New("encode", "vectors_"+term)
	f.prog = progress.New("encode", "sentences ("+f.Cfg.Key+")")
	return nil
}

func (f *encodeFn) ProcessElement(ctx context.Context, sent schemas.Sentence, emit func(schemas.SentenceVector)) error {
	f.ids = append(f.ids, sent.ID)
	f.texts = append(f.texts, sent.Text)
	if len(f.ids) >= f.Cfg.Batch {
		f.flush(ctx, emit)
	}
	return nil
}

// FinishBundle encodes what the bundle left in the batch.
func (f *encodeFn) FinishBundle(ctx context.Context, emit func(schemas.SentenceVector)) error {
	f.flush(ctx, emit)
	return nil
}

func (f *encodeFn) flush(ctx context.Context, emit func(schemas.SentenceVector)) {
	if len(f.ids) == 0 {
		return
	}
	// A sentence's vector does not depend on what it is encoded with, so
	// the parts can go to threads in any order.
	vs := make([][]float32, len(f.texts))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(f.Cfg.Threads, (len(f.texts)+part-1)/part) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				copy(vs[b:], f.scorer.SentenceVectors(f.texts[b:min(b+part, len(f.texts))]))
			}
		}()
	}
	for b := 0; b < len(f.texts); b += part {
		next <- b
	}
	close(next)
	wg.Wait()
	for i, id := range f.ids {
		emit(schemas.SentenceVector{SentenceID: id, Vector: vs[i]})
	}
	f.encoded.Inc(ctx, int64(len(f.ids)))
	f.prog.Add(int64(len(f.ids)))
	f.ids, f.texts = f.ids[:0], f.texts[:0]
}

func (f *encodeFn) Teardown() {
	if f.prog != nil {
		f.prog.Done()
	}
}
