package index

import (
	"context"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/transforms/beamreg"
	"github.com/ctxsim/ctxsim/transforms/counter"
	"github.com/ctxsim/ctxsim/transforms/progress"
)

func init() {
	beam.RegisterType(reflect.TypeOf(schemas.Retrieval{}))
	beamreg.DoFn(&retrieveFn{})
	register.Emitter1[schemas.Retrieval]()
}

// ReasonEmptyQuery is the dead-letter reason of a query sentence without text.
const ReasonEmptyQuery = "empty_query"

// RetrieveConfig configures Retrieve.
type RetrieveConfig struct {
	// IndexDir is the index directory, local or remote (fetched once per
	// worker).
	IndexDir string
	// K is the number of chunks per sentence; 0 means retrieval.DefaultK.
	K int
	// MinBigrams sets retrieval.Index.MinBigrams; 0 means the default.
	MinBigrams int
}

// Retrieve returns the top-K chunks for each sentence (schemas.Sentence),
// excluding the sentence's own chunks, as schemas.Retrieval records.
func Retrieve(s beam.Scope, cfg RetrieveConfig, sentences beam.PCollection) (hits, dead beam.PCollection) {
	s = s.Scope("index.Retrieve")
	if cfg.K <= 0 {
		cfg.K = retrieval.DefaultK
	}
	return beam.ParDo2(s, &retrieveFn{IndexDir: cfg.IndexDir, K: cfg.K, MinBigrams: cfg.MinBigrams}, sentences)
}

// EmptyQuery is the dead letter of a query sentence without text.
func EmptyQuery(sent schemas.Sentence) schemas.DeadLetter {
	return schemas.DeadLetter{Stage: "retrieve", Source: sent.DocID, Reason: ReasonEmptyQuery,
		Detail: "sentence " + sent.ID + " has no text", Record: sent.ID}
}

// retrieveFn searches the index, opened once per DoFn instance in Setup.
type retrieveFn struct {
	IndexDir   string
	K          int
	MinBigrams int

	ix                               *retrieval.Index
	queries, noHits, excluded, empty counter.Counter
	prog                             *progress.Reporter
}

func (f *retrieveFn) Setup() error {
	ix, err := retrieval.OpenAt(context.Background(), f.IndexDir)
	if err != nil {
		return err
	}
	f.ix = ix
	if f.MinBigrams > 0 {
		ix.MinBigrams = f.MinBigrams
	}
	f.queries = counter.New("retrieve", "queries")
	f.noHits = counter.New("retrieve", "queries_without_hits")
	f.excluded = counter.New("retrieve", "own_chunks_excluded")
	f.empty = counter.New("retrieve", "queries_empty")
	f.prog = progress.New("retrieve", "queries")
	return nil
}

func (f *retrieveFn) ProcessElement(ctx context.Context, sent schemas.Sentence,
	emit func(schemas.Retrieval), emitDead func(schemas.DeadLetter)) error {
	if sent.Text == "" {
		f.empty.Inc(ctx, 1)
		emitDead(EmptyQuery(sent))
		return nil
	}
	hits, excluded, err := f.ix.Search(ctx, sent.Text, f.K, sent.ChunkIDs)
	if err != nil {
		return err
	}
	f.queries.Inc(ctx, 1)
	f.excluded.Inc(ctx, int64(excluded))
	if len(hits) == 0 {
		f.noHits.Inc(ctx, 1)
	}
	f.prog.Add(1)
	emit(schemas.Retrieval{
		SentenceID: sent.ID, Text: sent.Text, Excluded: int32(excluded), Hits: hits,
		IndexFingerprint: f.ix.Meta.ID(),
	})
	return nil
}

func (f *retrieveFn) Teardown() {
	if f.ix != nil {
		f.ix.Close()
	}
	if f.prog != nil {
		f.prog.Done()
	}
}
