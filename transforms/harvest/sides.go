package harvest

import (
	"context"
	"crypto/sha256"
	"encoding"
	"fmt"
	"hash"
	"reflect"
	"strconv"
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

// The labeling plane of the labelers that build context sets. No pair
// carries a context set: each set is read once per group of pairs that
// share it, and a pair takes from it only the few numbers of Eq. 4
// (method.Sums) and what the other side needs to count a shared context
// once. The pairs cross three shuffles, each a few KB per pair:
//
//  1. by their second sentence, to take its text (the cross scores of the
//     first side need it);
//  2. by their first sentence, to meet C_a: the sums over C_a, with the
//     first sentence's scores from the set and the second's computed;
//  3. by their second sentence, to meet C_b: the sums over C_b \ C_a, the
//     label, and the output row.

func init() {
	beam.RegisterType(reflect.TypeOf(sentenceText{}))
	beam.RegisterType(reflect.TypeOf(pairText{}))
	beam.RegisterType(reflect.TypeOf(halfSums{}))
	register.Function1x2[schemas.ContextSet, string, sentenceText](keySetText)
	register.Function1x2[Pair, string, Pair](keyPairByB)
	beamreg.DoFn(&textJoinFn{})
	beamreg.DoFn(&sideAFn{})
	beamreg.DoFn(&sideBFn{})
	register.Iter1[sentenceText]()
	register.Iter1[pairText]()
	register.Iter1[halfSums]()
	register.Emitter2[string, pairText]()
	register.Emitter2[string, halfSums]()
}

// sentenceText is a sentence's text, taken from its context set.
type sentenceText struct {
	Text string
}

// pairText is a pair with its second sentence's text.
type pairText struct {
	Pair  Pair
	TextB string
}

// halfSums is a pair after its first side: the two texts, Eq. 4's sums
// over C_a, C_a's contexts as numbers in the chunk store (Engine.SetSkip:
// a context of both sets is counted on the first side only), and the state of the
// contexts digest after C_a (ContextsDigest continues it with C_b).
type halfSums struct {
	Pair         Pair
	TextA, TextB string
	SkipA        []byte
	Digest       []byte
	Sums         method.Sums
}

func keySetText(c schemas.ContextSet) (string, sentenceText) {
	return c.SentenceID, sentenceText{Text: c.Text}
}
func keyPairByB(p Pair) (string, Pair) { return p.B, p }

// labelBySides labels pairs from the per-side sums of Eq. 4 (see the
// plane above).
func labelBySides(s beam.Scope, cfg LabelConfig, pairs, sets beam.PCollection) (labeled, dead beam.PCollection) {
	return sidesPlane(s.Scope("harvest.LabelSides"), cfg, pairs, sets, &sideBFn{Cfg: cfg})
}

// sidesPlane runs the three shuffles of the plane above, with second, a
// DoFn over (second sentence, its pairs' halfSums, its set), as the
// second side; it returns second's output and all the dead letters.
func sidesPlane(s beam.Scope, cfg LabelConfig, pairs, sets beam.PCollection, second any) (out, dead beam.PCollection) {
	setsByID := beam.ParDo(s, keyContextSet, sets)
	texts := beam.ParDo(s, keySetText, sets)
	withB, dead1 := beam.ParDo2(s, &textJoinFn{}, beam.CoGroupByKey(s, beam.ParDo(s, keyPairByB, pairs), texts))
	halves, dead2 := beam.ParDo2(s, &sideAFn{Cfg: cfg}, beam.CoGroupByKey(s, withB, setsByID))
	out, dead3 := beam.ParDo2(s, second, beam.CoGroupByKey(s, halves, setsByID))
	return out, beam.Flatten(s, dead1, dead2, dead3)
}

func missingSet(p Pair, missing string) schemas.DeadLetter {
	return schemas.DeadLetter{Stage: "harvest", Source: p.ID, Reason: ReasonMissingContexts,
		Detail: fmt.Sprintf("sentence %s of pair %s has no context set", missing, p.ID),
		Record: p.A + " " + p.B}
}

func unresolved(p Pair, err error) schemas.DeadLetter {
	// A context set that does not resolve against this chunk store comes
	// from a different corpus: a data error, not a reason to stop the job.
	return schemas.DeadLetter{Stage: "harvest", Source: p.ID, Reason: "unresolved_context",
		Detail: err.Error(), Record: p.A + " " + p.B}
}

type textJoinFn struct{}

func (f *textJoinFn) ProcessElement(_ context.Context, _ string, pairs func(*Pair) bool,
	texts func(*sentenceText) bool, emit func(string, pairText), emitDead func(schemas.DeadLetter)) {
	var t sentenceText
	have := texts(&t)
	var p Pair
	for pairs(&p) {
		if !have {
			emitDead(missingSet(p, p.B))
			continue
		}
		emit(p.A, pairText{Pair: p, TextB: t.Text})
	}
}

// digestSet writes one set's part of ContextsDigest.
func digestSet(h hash.Hash, cs schemas.ContextSet) { h.Write(digestBytes(cs)) }

// digestBytes is what digestSet writes: the set's sentence ID and size,
// then each context's chunk ID and slot, each followed by a zero byte.
// Made once per set, it is written into the digest of every pair that
// meets the set.
func digestBytes(cs schemas.ContextSet) []byte {
	b := make([]byte, 0, 32*(len(cs.Contexts)+1))
	b = append(append(b, cs.SentenceID...), 0)
	b = append(strconv.AppendInt(b, int64(len(cs.Contexts)), 10), 0)
	for _, c := range cs.Contexts {
		b = append(append(b, c.ChunkID...), 0)
		b = append(strconv.AppendInt(b, int64(c.Slot), 10), 0)
	}
	return b
}

// sideBase is what both sides' DoFns open and count.
type sideBase struct {
	res                 *resources.Resources
	settings            method.Settings
	millis, evals       counter.Counter
	ctxPairs, cacheHits counter.Counter
}

func (b *sideBase) setup(ctx context.Context, cfg LabelConfig) error {
	var err error
	if b.res, err = cfg.open(ctx); err != nil {
		return err
	}
	if err := b.res.Engine.Check(cfg.Settings); err != nil {
		return err
	}
	b.settings = cfg.Settings
	b.initCounters()
	return nil
}

// resolve resolves a context set's contexts in the worker's chunk store:
// all of them, or, on a worker of one part of the corpus, those of its
// part (the other parts add the rest of the pair's sums).
func (b *sideBase) resolve(set schemas.ContextSet) ([]method.Cand, error) {
	e := b.res.Engine
	if b.res.Part.Parts > 1 {
		return e.ResolveIn(set.Contexts, set.Terms, b.res.Part.Has)
	}
	return e.Resolve(set.Contexts, set.Terms)
}

func (b *sideBase) initCounters() {
	b.millis = counter.New("harvest", "stage_ms_labels")
	b.evals = counter.New("harvest", "gen_evals_labels")
	b.ctxPairs = counter.New("harvest", "ctx_pairs_labels")
	b.cacheHits = counter.New("harvest", "cache_hits_labels")
}

func (b *sideBase) work(ctx context.Context, w method.Stats) {
	b.evals.Inc(ctx, w.GenEvals)
	b.ctxPairs.Inc(ctx, w.CtxPairs)
	b.cacheHits.Inc(ctx, w.CacheHits)
}

// sideAFn meets the pairs that share their first sentence with its
// context set: the sums of Eq. 4 over C_a.
type sideAFn struct {
	Cfg LabelConfig
	sideBase
}

func (f *sideAFn) Setup(ctx context.Context) error { return f.setup(ctx, f.Cfg) }

func (f *sideAFn) ProcessElement(ctx context.Context, _ string, pairs func(*pairText) bool,
	sets func(*schemas.ContextSet) bool, emit func(string, halfSums), emitDead func(schemas.DeadLetter)) {
	t0 := time.Now()
	defer func() { f.millis.Inc(ctx, time.Since(t0).Milliseconds()) }()
	var set schemas.ContextSet
	have := sets(&set)
	e := f.res.Engine
	var side *method.Side
	var err error
	var skip, digest []byte
	if have {
		var cands []method.Cand
		if cands, err = f.resolve(set); err == nil {
			side = e.NewSide(set.Text, cands)
			skip, err = e.SetSkip(cands)
		}
		if err == nil {
			h := sha256.New()
			digestSet(h, set)
			digest, err = h.(encoding.BinaryMarshaler).MarshalBinary()
		}
	}
	eachBatch(pairs, func(p *pairText) Pair { return p.Pair }, false, have, err, emitDead, func(ps []pairText) {
		batch := make([]halfSums, len(ps))
		jobs := make([]method.SideJob, len(ps))
		for n, p := range ps {
			batch[n] = halfSums{Pair: p.Pair, TextA: set.Text, TextB: p.TextB, SkipA: skip, Digest: digest}
			jobs[n] = method.SideJob{Other: p.TextB, Sums: &batch[n].Sums}
		}
		w, lerr := e.LabelSide(side, jobs, true, f.Cfg.Settings)
		f.work(ctx, w)
		for _, h := range batch {
			if lerr != nil {
				emitDead(unresolved(h.Pair, lerr))
				continue
			}
			emit(h.Pair.B, h)
		}
	})
}

// eachBatch reads the pairs that met one sentence's context set and
// calls label with them in batches of up to maxGroup; when the set is
// missing (have false) or did not resolve (err), each pair goes to the
// dead letters instead, naming its second sentence (second) or its first
// as the one without a set.
func eachBatch[T any](next func(*T) bool, pair func(*T) Pair, second, have bool, err error,
	emitDead func(schemas.DeadLetter), label func([]T)) {
	var batch []T
	var x T
	for next(&x) {
		switch p := pair(&x); {
		case !have && second:
			emitDead(missingSet(p, p.B))
			continue
		case !have:
			emitDead(missingSet(p, p.A))
			continue
		case err != nil:
			emitDead(unresolved(p, err))
			continue
		}
		batch = append(batch, x)
		if len(batch) == maxGroup {
			label(batch)
			batch = nil
		}
	}
	if len(batch) > 0 {
		label(batch)
	}
}

// sideBFn meets the pairs that share their second sentence with its
// context set: the sums over C_b \ C_a complete Eq. 4, and the pairs are
// labeled.
type sideBFn struct {
	Cfg LabelConfig
	sideBase
	rows *rowMaker
}

func (f *sideBFn) Setup(ctx context.Context) error {
	if err := f.setup(ctx, f.Cfg); err != nil {
		return err
	}
	f.rows = newRowMaker(f.Cfg)
	return nil
}

func (f *sideBFn) Teardown() {
	if f.rows != nil {
		f.rows.prog.Done()
	}
}

func (f *sideBFn) ProcessElement(ctx context.Context, _ string, halves func(*halfSums) bool,
	sets func(*schemas.ContextSet) bool, emit func(schemas.LabeledPair), emitDead func(schemas.DeadLetter)) {
	f.sideB(ctx, halves, sets, emitDead, func(h halfSums, digest string) {
		row := f.rows.row(f.res.Engine, h.Pair, h.TextA, h.TextB, h.Sums, digest)
		f.rows.count(ctx, row, h.Pair)
		emit(row)
	})
}

// sideB adds the sums over C_b \ C_a to each pair that meets the set, and
// passes the pair to done with its contexts digest.
func (b *sideBase) sideB(ctx context.Context, halves func(*halfSums) bool, sets func(*schemas.ContextSet) bool,
	emitDead func(schemas.DeadLetter), done func(h halfSums, digest string)) {
	t0 := time.Now()
	defer func() { b.millis.Inc(ctx, time.Since(t0).Milliseconds()) }()
	var set schemas.ContextSet
	have := sets(&set)
	e := b.res.Engine
	var side *method.Side
	var err error
	var digestB []byte
	if have {
		var cands []method.Cand
		if cands, err = b.resolve(set); err == nil {
			side = e.NewSide(set.Text, cands)
		}
		digestB = digestBytes(set)
	}
	eachBatch(halves, func(h *halfSums) Pair { return h.Pair }, true, have, err, emitDead, func(batch []halfSums) {
		jobs := make([]method.SideJob, len(batch))
		for n := range batch {
			jobs[n] = method.SideJob{Other: batch[n].TextA, Skip: batch[n].SkipA, Sums: &batch[n].Sums}
		}
		w, lerr := e.LabelSide(side, jobs, false, b.settings)
		b.work(ctx, w)
		for _, h := range batch {
			if lerr != nil {
				emitDead(unresolved(h.Pair, lerr))
				continue
			}
			digest, derr := finishDigest(h, digestB)
			if derr != nil {
				emitDead(unresolved(h.Pair, derr))
				continue
			}
			done(h, digest)
		}
	})
}

// finishDigest completes a pair's contexts digest with digestB, the
// digestBytes of its second context set.
func finishDigest(h halfSums, digestB []byte) (string, error) {
	d := sha256.New()
	if err := d.(encoding.BinaryUnmarshaler).UnmarshalBinary(h.Digest); err != nil {
		return "", fmt.Errorf("harvest: the contexts digest of pair %s does not resume: %w", h.Pair.ID, err)
	}
	d.Write(digestB)
	return fmt.Sprintf("%x", d.Sum(nil)[:16]), nil
}

// rowMaker makes the output rows of labeled pairs and counts them.
type rowMaker struct {
	cfg      LabelConfig
	settings string
	labeled  counter.Counter
	hist     [20]counter.Counter
	strata   map[string]counter.Counter
	prog     *progress.Reporter
}

func newRowMaker(cfg LabelConfig) *rowMaker {
	r := &rowMaker{cfg: cfg, settings: cfg.Settings.JSON(), labeled: counter.New("harvest", "pairs_labeled")}
	for i := range r.hist {
		r.hist[i] = counter.New("harvest_label_hist", HistBin(i))
	}
	r.strata = map[string]counter.Counter{}
	for _, s := range Strata {
		r.strata[s] = counter.New("harvest", "pairs_"+s)
	}
	r.prog = progress.New("harvest", "pairs labeled")
	return r
}

// row completes a pair's label from its sums of Eq. 4 and its parts that
// need no contexts (from e), and makes its output record.
func (r *rowMaker) row(e *method.Engine, p Pair, textA, textB string, sums method.Sums, digest string) schemas.LabeledPair {
	st := r.cfg.Settings
	lab := e.Parts(textA, textB)
	lab.Context, lab.Contexts = float64(float32(sums.Similarity(st.Similarity))), int(sums.N)
	lab.Label = method.Combine(st, lab)
	return schemas.LabeledPair{
		PairID: p.ID, SentenceID1: p.A, SentenceID2: p.B,
		Sentence1: textA, Sentence2: textB, Label: float32(lab.Label),
		LabelContext: float32(lab.Context), LabelLexical: float32(lab.Lexical), LabelEmbed: float32(lab.Embed),
		LabelAlign: float32(lab.Align), Split: Split(p.ID), Stratum: p.Stratum, NumContexts: int32(lab.Contexts),
		ModelFingerprint: r.cfg.ModelFingerprint, IndexFingerprint: r.cfg.IndexFingerprint,
		Settings: r.settings, ContextsDigest: digest,
	}
}

// count counts an output row.
func (r *rowMaker) count(ctx context.Context, row schemas.LabeledPair, p Pair) {
	r.labeled.Inc(ctx, 1)
	r.prog.Add(1)
	r.countCopied(ctx, row, p)
}

// countCopied counts a row whose label was copied from an earlier
// harvest: in the histogram and the strata, not as labeled.
func (r *rowMaker) countCopied(ctx context.Context, row schemas.LabeledPair, p Pair) {
	r.hist[histIndex(float64(row.Label))].Inc(ctx, 1)
	r.strata[p.Stratum].Inc(ctx, 1)
}
