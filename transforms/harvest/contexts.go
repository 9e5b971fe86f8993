package harvest

import (
	"context"
	"fmt"
	"hash/fnv"
	"reflect"
	"runtime"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/transforms/beamreg"
	"github.com/ctxsim/ctxsim/transforms/counter"
	"github.com/ctxsim/ctxsim/transforms/progress"
)

func init() {
	beam.RegisterType(reflect.TypeOf(schemas.ContextSet{}))
	beamreg.DoFn(&contextSetFn{})
	register.Emitter1[schemas.ContextSet]()
	beamreg.DoFn(&filterFn{})
	register.Emitter1[schemas.Sentence]()
}

// Dead-letter reasons of the harvest.
const (
	ReasonNoContexts      = "no_contexts"         // no candidate context survived
	ReasonMissingContexts = "missing_context_set" // a pair's sentence has no context set
)

// Config is what every harvest DoFn needs.
type Config struct {
	Paths    resources.Paths
	Settings method.Settings
	// Seed drives the random-context ablation and the pair sampler.
	Seed uint64
	// BLAS selects the matrix multiply ("go" or "openblas"); see
	// resources.UseBackend.
	BLAS string
}

// open loads the worker's resources and selects the matrix multiply.
func (c Config) open(ctx context.Context) (*resources.Resources, error) {
	if c.BLAS != "" {
		if err := resources.UseBackend(c.BLAS); err != nil {
			return nil, err
		}
	}
	p := c.Paths
	p.GenPrecision = c.Settings.GenPrecision
	return resources.Open(ctx, p)
}

// ContextSets builds C_s (schemas.ContextSet) for each retrieval
// (schemas.Retrieval): its chunks are expanded into contexts, reranked by
// the coherence model, scored with Eq. 3 and selected under the diversity
// constraints. Sentences left with no context go to the dead letters.
func ContextSets(s beam.Scope, cfg Config, retrievals beam.PCollection) (sets, dead beam.PCollection) {
	s = s.Scope("harvest.ContextSets")
	return beam.ParDo2(s, &contextSetFn{Cfg: cfg}, retrievals)
}

type contextSetFn struct {
	Cfg Config

	res                                *resources.Resources
	terms                              []string
	termIdx                            []int
	sets, empty, cands, reranked, ctxs counter.Counter
	millis, genEvals, discPairs        counter.Counter
	ctxPairs                           counter.Counter
	encoded                            counter.Counter
	prog                               *progress.Reporter

	// pending holds the bundle's sets being built, in arrival order (see
	// ProcessElement).
	pending []*setJob
}

// setSlots bounds the context sets built at once in this worker process,
// across all bundles, to its cores.
var setSlots = make(chan struct{}, runtime.GOMAXPROCS(0))

// setJob is one context set being built in its own goroutine.
type setJob struct {
	r    schemas.Retrieval
	hits []schemas.Hit
	done chan struct{}
	set  []method.Cand
	info method.SetInfo
	took time.Duration
	err  error
}

func (f *contextSetFn) Setup(ctx context.Context) error {
	var err error
	if f.res, err = f.Cfg.open(ctx); err != nil {
		return err
	}
	if err := f.res.Engine.Check(f.Cfg.Settings); err != nil {
		return err
	}
	f.terms, f.termIdx = f.res.Engine.SetTerms(f.Cfg.Settings)
	f.sets = counter.New("harvest", "context_sets")
	f.empty = counter.New("harvest", "context_sets_empty")
	f.cands = counter.New("harvest", "candidate_contexts")
	f.reranked = counter.New("harvest", "reranked_contexts")
	f.ctxs = counter.New("harvest", "selected_contexts")
	f.millis = counter.New("harvest", "stage_ms_context_sets")
	f.genEvals = counter.New("harvest", "gen_evals_context_sets")
	f.discPairs = counter.New("harvest", "disc_pairs_context_sets")
	f.ctxPairs = counter.New("harvest", "ctx_pairs_context_sets")
	f.encoded = counter.New("harvest", "sentences_encoded")
	f.prog = progress.New("harvest", "context sets")
	return nil
}

// sentenceSeed derives a per-sentence seed, so random contexts do not
// depend on the order sentences arrive in.
func sentenceSeed(seed uint64, id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return seed ^ h.Sum64()
}

// ProcessElement starts building r's context set in a goroutine and emits
// the sets of earlier elements that are done, in arrival order, waiting for
// the oldest while the bundle has as many in flight as the process has
// cores. A runner that gives a stage one bundle at a time (Prism with a
// small input) then still builds sets on every core; with a bundle per
// core (Dataflow, larger inputs), setSlots keeps the sets built at once to
// the cores. Each set depends on its sentence alone (sentenceSeed), so the
// output does not depend on the order or the overlap.
func (f *contextSetFn) ProcessElement(ctx context.Context, r schemas.Retrieval,
	emit func(schemas.ContextSet), emitDead func(schemas.DeadLetter)) error {
	j := &setJob{r: r, hits: r.Hits[:min(len(r.Hits), f.Cfg.Settings.TopK)], done: make(chan struct{})}
	go f.build(j)
	f.pending = append(f.pending, j)
	return f.flush(ctx, cap(setSlots), emit, emitDead)
}

// FinishBundle emits the bundle's remaining sets.
func (f *contextSetFn) FinishBundle(ctx context.Context, emit func(schemas.ContextSet), emitDead func(schemas.DeadLetter)) error {
	return f.flush(ctx, 1, emit, emitDead)
}

// build builds j's set in a slot of setSlots.
func (f *contextSetFn) build(j *setJob) {
	setSlots <- struct{}{}
	defer func() {
		if p := recover(); p != nil {
			j.err = fmt.Errorf("harvest: context set of sentence %s: %v", j.r.SentenceID, p)
		}
		<-setSlots
		close(j.done)
	}()
	t0 := time.Now()
	j.set, j.info = f.res.Engine.ContextSet(j.r.Text, j.hits, f.Cfg.Settings, sentenceSeed(f.Cfg.Seed, j.r.SentenceID))
	j.took = time.Since(t0)
	if j.info.MissingChunks > 0 {
		j.err = f.missingChunks(j)
	}
}

// missingChunks is the error of a context set some of whose hits are not
// in the chunk store, naming the first of them. resources.Open refuses an
// index whose corpus is not the chunks table's, so this takes a table
// changed since it was opened, or two corpora whose fingerprints collide:
// the job fails rather than build the set from the hits that are left.
func (f *contextSetFn) missingChunks(j *setJob) error {
	var ids []string
	for _, h := range j.hits {
		if !f.res.Engine.Store.Has(h.ChunkID) {
			ids = append(ids, h.ChunkID)
		}
	}
	if len(ids) > 3 {
		ids = append(ids[:3], "…")
	}
	return fmt.Errorf("harvest: sentence %s: %d of its %d hits (%s) are not in the chunks table %s, though index %s returned them: the two are not of one corpus; give the chunks table the index was built from",
		j.r.SentenceID, j.info.MissingChunks, len(j.hits), strings.Join(ids, ", "), f.Cfg.Paths.Chunks, f.Cfg.Paths.Index)
}

// flush emits the pending sets from the oldest on (flushJobs).
func (f *contextSetFn) flush(ctx context.Context, limit int, emit func(schemas.ContextSet), emitDead func(schemas.DeadLetter)) error {
	return flushJobs(&f.pending, limit, func(j *setJob) <-chan struct{} { return j.done }, func(j *setJob) error {
		if j.err == nil {
			f.emitSet(ctx, j, emit, emitDead)
		}
		return j.err
	})
}

// flushJobs hands the pending jobs, each running in its own goroutine, to
// finish from the oldest on: those already done, and more, waiting for
// each, until fewer than limit are left. After finish returns an error the
// rest are still waited for (not finished), so that no goroutine outlives
// the bundle, and the first error is returned.
func flushJobs[J any](pending *[]J, limit int, done func(J) <-chan struct{}, finish func(J) error) error {
	var err error
	for len(*pending) > 0 {
		j := (*pending)[0]
		select {
		case <-done(j):
		default:
			if len(*pending) < limit && err == nil {
				return nil
			}
			<-done(j)
		}
		*pending = (*pending)[1:]
		if err == nil {
			err = finish(j)
		}
	}
	*pending = nil
	return err
}

// emitSet counts j's work and emits its set, or a dead letter when it has
// no context.
func (f *contextSetFn) emitSet(ctx context.Context, j *setJob, emit func(schemas.ContextSet), emitDead func(schemas.DeadLetter)) {
	r, set, info := j.r, j.set, j.info
	f.cands.Inc(ctx, int64(info.Candidates))
	f.reranked.Inc(ctx, int64(info.Reranked))
	f.genEvals.Inc(ctx, info.Work.GenEvals)
	f.discPairs.Inc(ctx, info.Work.DiscPairs)
	f.ctxPairs.Inc(ctx, info.Work.CtxPairs)
	f.encoded.Inc(ctx, info.Work.SentencesEncoded)
	f.millis.Inc(ctx, j.took.Milliseconds())
	f.prog.Add(1)
	if len(set) == 0 {
		f.empty.Inc(ctx, 1)
		emitDead(schemas.DeadLetter{Stage: "harvest", Source: r.SentenceID, Reason: ReasonNoContexts,
			Detail: fmt.Sprintf("%d hits gave %d candidate contexts", len(j.hits), info.Candidates),
			Record: clip(r.Text, 200)})
		return
	}
	out := schemas.ContextSet{SentenceID: r.SentenceID, Text: r.Text, Terms: f.terms,
		Contexts: make([]schemas.ScoredContext, len(set))}
	for i := range set {
		out.Contexts[i] = set[i].Ref(f.termIdx)
	}
	f.sets.Inc(ctx, 1)
	f.ctxs.Inc(ctx, int64(len(set)))
	emit(out)
}

func (f *contextSetFn) Teardown() {
	if f.prog != nil {
		f.prog.Done()
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// FilterSentences keeps the sentences with at least minWords words (split
// on spaces); shorter ones say too little to label and are counted.
func FilterSentences(s beam.Scope, minWords int, sentences beam.PCollection) beam.PCollection {
	return beam.ParDo(s.Scope("harvest.FilterSentences"), &filterFn{MinWords: minWords}, sentences)
}

type filterFn struct {
	MinWords int

	kept, short counter.Counter
}

func (f *filterFn) Setup() {
	f.kept = counter.New("harvest", "sentences_kept")
	f.short = counter.New("harvest", "sentences_too_short")
}

func (f *filterFn) ProcessElement(ctx context.Context, s schemas.Sentence, emit func(schemas.Sentence)) {
	if len(strings.Fields(s.Text)) < f.MinWords {
		f.short.Inc(ctx, 1)
		return
	}
	f.kept.Inc(ctx, 1)
	emit(s)
}
