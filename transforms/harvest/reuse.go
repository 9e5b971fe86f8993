package harvest

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/transforms/beamreg"
	"github.com/ctxsim/ctxsim/transforms/counter"
)

// Reuse across harvests. Eq. 4 is a function of the two sentences, their
// context sets and the models, and a context set is a function of the
// sentence, the index it was retrieved from and the models. An incremental
// refresh keeps the context sets of sentences it has already harvested, so
// any pair it samples again between such sentences would get the Eq. 4
// value it got before: it is copied, not recomputed. (The lexical part of
// a hybrid label depends on the whole corpus and is computed again.)

func init() {
	register.Function1x2[schemas.Sentence, string, schemas.Sentence](keySentence)
	register.Function1x2[schemas.LabeledPair, string, schemas.LabeledPair](keyLabeledPair)
	register.Function1x2[pairJob, string, pairJob](keyJobByID)
	register.Function2x0[schemas.ContextSet, func(string, string)](setChunksFn)
	register.Function1x2[schemas.Chunk, string, bool](chunkKeyFn)
	beamreg.DoFn(&staleFn{})
	beamreg.DoFn(&reuseSetsFn{})
	register.Iter1[bool]()
	register.Emitter2[string, string]()
	beamreg.DoFn(&reuseLabelFn{})
	register.Iter1[pairJob]()
	register.Emitter1[pairJob]()
	register.Iter1[schemas.Sentence]()
	register.Iter1[schemas.LabeledPair]()
	register.Emitter1[schemas.Sentence]()
	register.Emitter1[schemas.ContextSet]()
	register.Emitter1[schemas.LabeledPair]()
}

func keySentence(s schemas.Sentence) (string, schemas.Sentence)          { return s.ID, s }
func keyLabeledPair(p schemas.LabeledPair) (string, schemas.LabeledPair) { return p.PairID, p }

// ReuseSets splits sentences into fresh ones and old ones. An old sentence
// has a context set in prevSets (schemas.ContextSet) whose contexts all
// come from chunks still in the corpus (chunks, schemas.Chunk); its set is
// returned as reused. The others are fresh: their sets must be computed
// (again). Sets of sentences no longer in sentences are dropped.
func ReuseSets(s beam.Scope, sentences, prevSets, chunks beam.PCollection) (fresh, old, reused beam.PCollection) {
	s = s.Scope("harvest.ReuseSets")
	refs := beam.ParDo(s, setChunksFn, prevSets)
	stale := beam.ParDo(s, &staleFn{}, beam.CoGroupByKey(s, refs, beam.ParDo(s, chunkKeyFn, chunks)))
	return beam.ParDo3(s, &reuseSetsFn{}, beam.CoGroupByKey(s,
		beam.ParDo(s, keySentence, sentences), beam.ParDo(s, keyContextSet, prevSets), stale))
}

// setChunksFn emits (chunk ID, sentence ID) once for each chunk a set uses.
func setChunksFn(cs schemas.ContextSet, emit func(string, string)) {
	seen := map[string]bool{}
	for _, c := range cs.Contexts {
		if !seen[c.ChunkID] {
			seen[c.ChunkID] = true
			emit(c.ChunkID, cs.SentenceID)
		}
	}
}

func chunkKeyFn(c schemas.Chunk) (string, bool) { return c.ID, true }

// staleFn emits (sentence ID, chunk ID) for each set that uses a chunk
// the corpus no longer has.
type staleFn struct{}

func (f *staleFn) ProcessElement(chunkID string, users func(*string) bool, present func(*bool) bool, emit func(string, string)) {
	var ok bool
	if present(&ok) {
		return
	}
	var sid string
	for users(&sid) {
		emit(sid, chunkID)
	}
}

type reuseSetsFn struct {
	reused, fresh, dropped, stale counter.Counter
}

func (f *reuseSetsFn) Setup() {
	f.reused = counter.New("refresh", "context_sets_reused")
	f.fresh = counter.New("refresh", "sentences_to_score")
	f.dropped = counter.New("refresh", "context_sets_dropped")
	f.stale = counter.New("refresh", "context_sets_stale")
}

func (f *reuseSetsFn) ProcessElement(ctx context.Context, _ string, sents func(*schemas.Sentence) bool,
	sets func(*schemas.ContextSet) bool, stale func(*string) bool,
	emitFresh, emitOld func(schemas.Sentence), emitReused func(schemas.ContextSet)) {
	var st schemas.Sentence
	have := sents(&st)
	var cs schemas.ContextSet
	var gone string
	if sets(&cs) {
		if have && stale(&gone) {
			f.stale.Inc(ctx, 1) // it used text that left the corpus
			f.fresh.Inc(ctx, 1)
			emitFresh(st)
		} else if have {
			f.reused.Inc(ctx, 1)
			emitOld(st)
			emitReused(cs)
		} else {
			f.dropped.Inc(ctx, 1) // its sentence left the corpus (or the sample)
		}
		return
	}
	if have {
		f.fresh.Inc(ctx, 1)
		emitFresh(st)
	}
}

func keyJobByID(j pairJob) (string, pairJob) { return j.Pair.ID, j }

// reuseLabelFn marks the pairs whose Eq. 4 value a previous harvest
// computed from the same context sets (keeping that value), and passes
// every pair on to be labeled.
type reuseLabelFn struct {
	copied, fresh counter.Counter
}

func (f *reuseLabelFn) Setup() {
	f.copied = counter.New("refresh", "labels_copied")
	f.fresh = counter.New("refresh", "pairs_to_label")
}

func (f *reuseLabelFn) ProcessElement(ctx context.Context, _ string, jobs func(*pairJob) bool,
	prev func(*schemas.LabeledPair) bool, emitJob func(pairJob)) {
	var j pairJob
	if !jobs(&j) {
		return // a pair of the earlier harvest not sampled now
	}
	var lp schemas.LabeledPair
	if prev(&lp) && lp.ContextsDigest == ContextsDigest(j.SetA, j.SetB) {
		f.copied.Inc(ctx, 1)
		j.Reused, j.PrevContext, j.PrevContexts, j.PrevIndex = true, lp.LabelContext, lp.NumContexts, lp.IndexFingerprint
		emitJob(j)
		return
	}
	f.fresh.Inc(ctx, 1)
	emitJob(j)
}
