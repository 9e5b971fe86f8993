package harvest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/transforms/beamreg"
	"github.com/ctxsim/ctxsim/transforms/counter"
)

func init() {
	beam.RegisterType(reflect.TypeOf(halfPair{}))
	beam.RegisterType(reflect.TypeOf(pairJob{}))
	beam.RegisterType(reflect.TypeOf(pairGroup{}))
	beam.RegisterType(reflect.TypeOf(schemas.LabeledPair{}))
	register.Function1x2[schemas.ContextSet, string, schemas.ContextSet](keyContextSet)
	register.Function1x2[Pair, string, Pair](keyPairByA)
	beamreg.DoFn(&joinAFn{})
	beamreg.DoFn(&joinBFn{})
	beamreg.DoFn(&labelFn{})
	register.Function2x0[pairGroup, func(pairJob)](ungroup)
	register.Function1x1[pairJob, pairGroup](single)
	register.Iter1[schemas.ContextSet]()
	register.Iter1[halfPair]()
	register.Emitter2[string, halfPair]()
	register.Emitter1[pairJob]()
	register.Emitter1[pairGroup]()
	register.Emitter1[schemas.LabeledPair]()
	register.Emitter1[schemas.DeadLetter]()
}

// halfPair is a pair joined with its first sentence's context set, or
// missing it (Missing).
type halfPair struct {
	Pair    Pair
	SetA    schemas.ContextSet
	Missing bool
}

// pairJob is a pair with both context sets. Reused marks a pair whose
// Eq. 4 value an earlier harvest computed from the same two context sets
// (with the same models and settings): PrevContext and PrevContexts are
// kept, and only the lexical part and the label are computed again (they
// depend on the corpus's document frequencies, which may have changed).
type pairJob struct {
	Pair         Pair
	SetA, SetB   schemas.ContextSet
	Reused       bool
	PrevContext  float32
	PrevContexts int32
	// PrevIndex is the fingerprint of the index the reused sets came from.
	PrevIndex string
}

// pairGroup is up to maxGroup pairs that share their second sentence,
// labeled together: the cross scores of all their first sentences in the
// shared context set fill the same batches, and the generative model
// encodes each of its contexts once for all of them.
type pairGroup struct {
	Jobs []pairJob
}

// maxGroup bounds the pairs of a pairGroup (and so the context sets one
// labeling call holds).
const maxGroup = 32

func ungroup(g pairGroup, emit func(pairJob)) {
	for _, j := range g.Jobs {
		emit(j)
	}
}

func single(j pairJob) pairGroup { return pairGroup{Jobs: []pairJob{j}} }

func keyContextSet(c schemas.ContextSet) (string, schemas.ContextSet) { return c.SentenceID, c }
func keyPairByA(p Pair) (string, Pair)                                { return p.A, p }
func keyHalfByB(h halfPair) (string, halfPair)                        { return h.Pair.B, h }

// LabelConfig adds provenance to Config.
type LabelConfig struct {
	Config
	ModelFingerprint, IndexFingerprint string
}

// Label labels each pair from the context sets of its sentences with
// Eq. 4, computing only the cross scores. Under a labeler that builds
// context sets no pair carries a set: each side adds its share of Eq. 4's
// sums (labelBySides). The lexical labeler's sets are texts alone, and its
// pairs are joined with them. Pairs whose sentence has no context set go
// to the dead letters.
func Label(s beam.Scope, cfg LabelConfig, pairs, sets beam.PCollection) (labeled, dead beam.PCollection) {
	if cfg.Settings.NeedsContexts() {
		return labelBySides(s, cfg, pairs, sets)
	}
	s = s.Scope("harvest.Label")
	jobs, dead1 := joinSets(s, pairs, sets)
	labeled, dead2 := beam.ParDo2(s, &labelFn{Cfg: cfg}, jobs)
	return labeled, beam.Flatten(s, dead1, dead2)
}

// LabelReusing is Label, except that a pair whose label in prev
// (schemas.LabeledPair, from an earlier harvest with the same models and
// settings) was computed from the same two context sets keeps that label's
// Eq. 4 value instead of computing it again; its lexical part and label are
// computed anew, since the corpus's document frequencies may have changed.
func LabelReusing(s beam.Scope, cfg LabelConfig, pairs, sets, prev beam.PCollection) (labeled, dead beam.PCollection) {
	s = s.Scope("harvest.LabelReusing")
	groups, dead1 := joinSets(s, pairs, sets)
	todo := beam.ParDo(s, &reuseLabelFn{}, beam.CoGroupByKey(s,
		beam.ParDo(s, keyJobByID, beam.ParDo(s, ungroup, groups)), beam.ParDo(s, keyLabeledPair, prev)))
	labeled, dead2 := beam.ParDo2(s, &labelFn{Cfg: cfg}, beam.ParDo(s, single, todo))
	return labeled, beam.Flatten(s, dead1, dead2)
}

// joinSets joins each pair with its sentences' context sets, and groups
// the pairs that share their second sentence (pairGroup).
func joinSets(s beam.Scope, pairs, sets beam.PCollection) (groups, dead beam.PCollection) {
	setsByID := beam.ParDo(s, keyContextSet, sets)
	halves := beam.ParDo(s, &joinAFn{}, beam.CoGroupByKey(s, beam.ParDo(s, keyPairByA, pairs), setsByID))
	return beam.ParDo2(s, &joinBFn{}, beam.CoGroupByKey(s, halves, setsByID))
}

// ContextsDigest identifies the context sets a pair's label is computed
// from.
func ContextsDigest(a, b schemas.ContextSet) string {
	h := sha256.New()
	digestSet(h, a)
	digestSet(h, b)
	return fmt.Sprintf("%x", h.Sum(nil)[:16])
}

type joinAFn struct{}

func (f *joinAFn) ProcessElement(_ context.Context, _ string, pairs func(*Pair) bool,
	sets func(*schemas.ContextSet) bool, emit func(string, halfPair)) {
	var set schemas.ContextSet
	have := sets(&set)
	var p Pair
	for pairs(&p) {
		h := halfPair{Pair: p, Missing: !have}
		if have {
			h.SetA = set
		}
		emit(p.B, h)
	}
}

type joinBFn struct{}

func (f *joinBFn) ProcessElement(ctx context.Context, _ string, halves func(*halfPair) bool,
	sets func(*schemas.ContextSet) bool, emit func(pairGroup), emitDead func(schemas.DeadLetter)) {
	var set schemas.ContextSet
	have := sets(&set)
	var h halfPair
	var g pairGroup
	for halves(&h) {
		if h.Missing || !have {
			missing := h.Pair.A
			if !h.Missing {
				missing = h.Pair.B
			}
			emitDead(schemas.DeadLetter{Stage: "harvest", Source: h.Pair.ID, Reason: ReasonMissingContexts,
				Detail: fmt.Sprintf("sentence %s of pair %s has no context set", missing, h.Pair.ID),
				Record: h.Pair.A + " " + h.Pair.B})
			continue
		}
		g.Jobs = append(g.Jobs, pairJob{Pair: h.Pair, SetA: h.SetA, SetB: set})
		if len(g.Jobs) == maxGroup {
			emit(g)
			g = pairGroup{}
		}
	}
	if len(g.Jobs) > 0 {
		emit(g)
	}
}

type labelFn struct {
	Cfg LabelConfig

	res                 *resources.Resources
	millis, evals       counter.Counter
	ctxPairs, cacheHits counter.Counter
	lexical             bool
	rows                *rowMaker
}

func (f *labelFn) Setup(ctx context.Context) error {
	var err error
	if f.res, err = f.Cfg.open(ctx); err != nil {
		return err
	}
	if err := f.res.Engine.Check(f.Cfg.Settings); err != nil {
		return err
	}
	f.lexical = !f.Cfg.Settings.NeedsContexts()
	f.millis = counter.New("harvest", "stage_ms_labels")
	f.evals = counter.New("harvest", "gen_evals_labels")
	f.ctxPairs = counter.New("harvest", "ctx_pairs_labels")
	f.cacheHits = counter.New("harvest", "cache_hits_labels")
	f.rows = newRowMaker(f.Cfg)
	return nil
}

// HistBin names bin i of the label histogram: 20 bins of width 0.1 over
// [-1, 1].
func HistBin(i int) string {
	lo := -1 + float64(i)/10
	return fmt.Sprintf("[%+.1f,%+.1f)", lo, lo+0.1)
}

func histIndex(x float64) int {
	i := int(math.Floor((x + 1) * 10))
	return min(max(i, 0), 19)
}

func (f *labelFn) ProcessElement(ctx context.Context, g pairGroup, emit func(schemas.LabeledPair),
	emitDead func(schemas.DeadLetter)) error {
	t0 := time.Now()
	defer func() { f.millis.Inc(ctx, time.Since(t0).Milliseconds()) }()
	e := f.res.Engine
	var todo []pairJob
	var inputs []method.PairInput
	for _, j := range g.Jobs {
		if f.lexical {
			f.count(ctx, j, emit, e.LabelLexical(j.SetA.Text, j.SetB.Text))
			continue
		}
		if j.Reused {
			lab := e.Parts(j.SetA.Text, j.SetB.Text)
			lab.Context, lab.Contexts = float64(j.PrevContext), int(j.PrevContexts)
			lab.Label = method.Combine(f.Cfg.Settings, lab)
			row := f.row(j, lab)
			row.IndexFingerprint = j.PrevIndex
			// A copied label is a pair of this version like any other: it
			// counts in the strata and the histogram, not in pairs_labeled.
			f.rows.countCopied(ctx, row, j.Pair)
			emit(row)
			continue
		}
		a, err := e.Resolve(j.SetA.Contexts, j.SetA.Terms)
		if err == nil {
			var b []method.Cand
			if b, err = e.Resolve(j.SetB.Contexts, j.SetB.Terms); err == nil {
				todo = append(todo, j)
				inputs = append(inputs, method.PairInput{A: j.SetA.Text, B: j.SetB.Text, SetA: a, SetB: b})
				continue
			}
		}
		// A context set that does not resolve against this chunk store
		// comes from a different corpus: a data error, not a reason to
		// stop the job.
		emitDead(schemas.DeadLetter{Stage: "harvest", Source: j.Pair.ID, Reason: "unresolved_context",
			Detail: err.Error(), Record: j.Pair.A + " " + j.Pair.B})
	}
	if len(inputs) == 0 {
		return nil
	}
	labs, work := e.LabelMany(inputs, f.Cfg.Settings)
	f.evals.Inc(ctx, work.GenEvals)
	f.ctxPairs.Inc(ctx, work.CtxPairs)
	f.cacheHits.Inc(ctx, work.CacheHits)
	for n, lab := range labs {
		f.count(ctx, todo[n], emit, lab)
	}
	return nil
}

// count emits a labeled pair and counts it.
func (f *labelFn) count(ctx context.Context, j pairJob, emit func(schemas.LabeledPair), lab method.PairLabel) {
	f.evals.Inc(ctx, lab.Work.GenEvals)
	f.ctxPairs.Inc(ctx, lab.Work.CtxPairs)
	f.cacheHits.Inc(ctx, lab.Work.CacheHits)
	row := f.row(j, lab)
	f.rows.count(ctx, row, j.Pair)
	emit(row)
}

// row is the output record of a labeled pair.
func (f *labelFn) row(j pairJob, lab method.PairLabel) schemas.LabeledPair {
	return schemas.LabeledPair{
		PairID: j.Pair.ID, SentenceID1: j.Pair.A, SentenceID2: j.Pair.B,
		Sentence1: j.SetA.Text, Sentence2: j.SetB.Text, Label: float32(lab.Label),
		LabelContext: float32(lab.Context), LabelLexical: float32(lab.Lexical), LabelEmbed: float32(lab.Embed),
		LabelAlign: float32(lab.Align), Split: Split(j.Pair.ID), Stratum: j.Pair.Stratum, NumContexts: int32(lab.Contexts),
		ModelFingerprint: f.Cfg.ModelFingerprint, IndexFingerprint: f.Cfg.IndexFingerprint,
		Settings: f.rows.settings, ContextsDigest: ContextsDigest(j.SetA, j.SetB),
	}
}

func (f *labelFn) Teardown() {
	if f.rows != nil {
		f.rows.prog.Done()
	}
}

// Split assigns a pair to "train", "dev" or "test" (98/1/1) by its ID.
func Split(pairID string) string {
	h := sha256.Sum256([]byte("split\x00" + pairID))
	switch binary.LittleEndian.Uint64(h[:8]) % 100 {
	case 98:
		return "dev"
	case 99:
		return "test"
	}
	return "train"
}
