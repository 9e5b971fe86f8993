package harvest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/lexical"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/beamreg"
	"github.com/ctxsim/ctxsim/transforms/counter"
	"github.com/ctxsim/ctxsim/transforms/index"
)

// A harvest over a corpus split into parts by index shard
// (resources.Part), run as pipelines that each load one part, so that what
// a worker holds is about 1/Parts of the corpus (bin/harvest
// --corpus_parts). Each step of the method is computed part by part and
// merged (see method's parts.go and retrieval's split.go):
//
//  1. PartTerms, per part: each sampled sentence's query terms with their
//     document frequencies in the part's shards;
//  2. PartSearch, per part in turn: the frequencies added over the parts,
//     the part's shards searched with them, and the hits merged with those
//     of the parts before (so that no step moves more than about twice the
//     hits of the whole retrieval, whatever the number of parts);
//  3. PartCandidates, per part in turn: the candidates of the part's
//     chunks among the whole retrieval ranked and scored, and merged with
//     those of the parts before into the best R (so that no step moves
//     more than about 2R candidates a sentence, whatever the parts);
//  4. MergePartSets, once: the merged candidates selected into C_s;
//  5. LabelPart, per part and wave: each pair's sums of Eq. 4 over the
//     contexts of its two sets that the part holds;
//  6. FinishParts, once per wave: the sums added over the parts, and the
//     pairs labeled by workers that hold no corpus, with the stemmed
//     TF-IDF counted over every part.
//
// The retrievals and context sets are those of one pipeline over the
// whole corpus, and the labels too but for the order in which Eq. 4's sums
// are added.

func init() {
	for _, t := range []any{SentenceTerms{}, PartContext{}, PartCands{}, PartSums{}} {
		beam.RegisterType(reflect.TypeOf(t))
	}
	beamreg.DoFn(&partTermsFn{})
	beamreg.DoFn(&partSearchFn{})
	beamreg.DoFn(&partCandsFn{})
	beamreg.DoFn(&keepBestFn{})
	beamreg.DoFn(&mergeSetsFn{})
	beamreg.DoFn(&sideBPartFn{})
	beamreg.DoFn(&finishPartsFn{})
	register.Function1x2[SentenceTerms, string, SentenceTerms](keyTerms)
	register.Function1x2[schemas.Retrieval, string, schemas.Retrieval](keyRetrieval)
	register.Function1x2[PartCands, string, PartCands](keyCands)
	register.Function1x2[PartSums, string, PartSums](keySums)
	register.Emitter1[SentenceTerms]()
	register.Emitter1[PartCands]()
	register.Emitter1[PartSums]()
	register.Emitter1[schemas.Retrieval]()
	register.Iter1[schemas.Sentence]()
	register.Iter1[SentenceTerms]()
	register.Iter1[schemas.Retrieval]()
	register.Iter1[PartCands]()
	register.Iter1[PartSums]()
}

// SentenceTerms is a sampled sentence's query terms with their document
// frequencies in one part's shards (retrieval.QueryTerms).
type SentenceTerms struct {
	SentenceID string   `parquet:"sentence_id"`
	Bigrams    []string `parquet:"bigrams,list"`
	Unigrams   []string `parquet:"unigrams,list"`
	BigramDF   []int64  `parquet:"bigram_df,list"`
	UnigramDF  []int64  `parquet:"unigram_df,list"`
}

// Key is the sentence's ID.
func (t SentenceTerms) Key() string { return t.SentenceID }

// PartContext is a candidate context of one part (method.PartCand).
type PartContext struct {
	ChunkID string    `parquet:"chunk_id"`
	Slot    int32     `parquet:"slot"`
	Score   float32   `parquet:"score"`
	Terms   []float32 `parquet:"terms,list"`
	Rank    int32     `parquet:"rank"`
	Rerank  float32   `parquet:"rerank"`
	Words   []string  `parquet:"words,list"`
}

// PartCands are one part's candidate contexts of a sampled sentence.
type PartCands struct {
	SentenceID string        `parquet:"sentence_id"`
	Text       string        `parquet:"text"`
	Hits       int32         `parquet:"hits"`
	Contexts   []PartContext `parquet:"contexts,list"`
}

// Key is the sentence's ID.
func (c PartCands) Key() string { return c.SentenceID }

// PartSums is one part's share of a pair's sums of Eq. 4
// (method.Engine.LabelPart), with what its row needs.
type PartSums struct {
	PairID, A, B, Stratum string
	Rank                  int64 // see Pair.Rank
	TextA, TextB          string
	Digest                string
	N                     int32
	SA, SB, SAA, SBB, SAB float64
}

// Key is the pair's ID.
func (s PartSums) Key() string { return s.PairID }

func keyTerms(t SentenceTerms) (string, SentenceTerms)             { return t.SentenceID, t }
func keyRetrieval(r schemas.Retrieval) (string, schemas.Retrieval) { return r.SentenceID, r }
func keyCands(c PartCands) (string, PartCands)                     { return c.SentenceID, c }
func keySums(s PartSums) (string, PartSums)                        { return s.PairID, s }

// PartConfig is what the steps of one part need: the harvest's Config
// with Paths.Part naming the part.
type PartConfig struct {
	Config
}

func (c PartConfig) part() resources.Part { return c.Paths.Part }

// openShards opens the part's index shards.
func (c PartConfig) openShards(ctx context.Context) (*retrieval.Index, error) {
	local, err := storage.Fetch(ctx, c.Paths.Index)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", c.Paths.Index, err)
	}
	return retrieval.OpenShards(local, c.part().HasShard)
}

// PartTerms is step 1 on one part: each sentence's query terms and their
// document frequencies in the part's shards. Sentences without text go to
// the dead letters (the same in every part: keep one part's).
func PartTerms(s beam.Scope, cfg PartConfig, sampled beam.PCollection) (terms, dead beam.PCollection) {
	return beam.ParDo2(s.Scope("harvest.PartTerms"), &partTermsFn{Cfg: cfg}, sampled)
}

type partTermsFn struct {
	Cfg PartConfig
	ix  *retrieval.Index
}

func (f *partTermsFn) Setup(ctx context.Context) (err error) {
	f.ix, err = f.Cfg.openShards(ctx)
	return err
}

func (f *partTermsFn) ProcessElement(ctx context.Context, st schemas.Sentence, emit func(SentenceTerms), emitDead func(schemas.DeadLetter)) error {
	if st.Text == "" {
		emitDead(index.EmptyQuery(st))
		return nil
	}
	q, err := f.ix.QueryTerms(ctx, st.Text)
	if err != nil {
		return err
	}
	emit(SentenceTerms{SentenceID: st.ID, Bigrams: q.Bigrams, Unigrams: q.Unigrams, BigramDF: toInt64(q.BigramDF), UnigramDF: toInt64(q.UnigramDF)})
	return nil
}

func (f *partTermsFn) Teardown() {
	if f.ix != nil {
		f.ix.Close()
	}
}

func toInt64(x []uint64) []int64 {
	out := make([]int64, len(x))
	for i, v := range x {
		out[i] = int64(v)
	}
	return out
}

func toUint64(x []int64) []uint64 {
	out := make([]uint64, len(x))
	for i, v := range x {
		out[i] = uint64(v)
	}
	return out
}

// PartSearch is step 2 on one part: the sampled sentences' query terms
// from every part (terms, PartTerms of each) are added, the part's shards
// searched with them at the method's depth, and the hits merged with prev
// (PartSearch of the parts before, in turn; empty for the first part).
// After the last part, each retrieval is the whole index's.
func PartSearch(s beam.Scope, cfg PartConfig, sampled, prev beam.PCollection, terms []beam.PCollection) beam.PCollection {
	s = s.Scope("harvest.PartSearch")
	byID := beam.ParDo(s, keySentence, sampled)
	t := beam.ParDo(s, keyTerms, beam.Flatten(s, terms...))
	return beam.ParDo(s, &partSearchFn{Cfg: cfg}, beam.CoGroupByKey(s, byID, t, beam.ParDo(s, keyRetrieval, prev)))
}

type partSearchFn struct {
	Cfg PartConfig
	ix  *retrieval.Index

	queries, excluded, noHits counter.Counter
}

func (f *partSearchFn) Setup(ctx context.Context) (err error) {
	f.queries = counter.New("retrieve", "queries")
	f.excluded = counter.New("retrieve", "own_chunks_excluded")
	f.noHits = counter.New("retrieve", "queries_without_hits")
	f.ix, err = f.Cfg.openShards(ctx)
	return err
}

func (f *partSearchFn) ProcessElement(ctx context.Context, id string, sents func(*schemas.Sentence) bool,
	terms func(*SentenceTerms) bool, prev func(*schemas.Retrieval) bool, emit func(schemas.Retrieval)) error {
	var st schemas.Sentence
	if !sents(&st) {
		return nil
	}
	var q retrieval.QueryTerms
	n := 0
	var t SentenceTerms
	for terms(&t) {
		qt := retrieval.QueryTerms{Bigrams: t.Bigrams, Unigrams: t.Unigrams, BigramDF: toUint64(t.BigramDF), UnigramDF: toUint64(t.UnigramDF)}
		if n == 0 {
			q = qt
		} else if err := q.AddDF(qt); err != nil {
			return fmt.Errorf("harvest: sentence %s: %w", id, err)
		}
		n++
	}
	if n == 0 {
		return nil // no text: a dead letter of PartTerms
	}
	part := f.Cfg.part()
	if n != part.Parts {
		return fmt.Errorf("harvest: sentence %s has the document frequencies of %d parts of the corpus, not %d", id, n, part.Parts)
	}
	hits, excluded, err := f.ix.SearchTerms(ctx, q, f.Cfg.Settings.TopK, st.ChunkIDs)
	if err != nil {
		return err
	}
	out := schemas.Retrieval{SentenceID: st.ID, Text: st.Text, Excluded: int32(excluded), Hits: hits, IndexFingerprint: f.ix.Meta.ID()}
	var before schemas.Retrieval
	if prev(&before) {
		out.Hits = retrieval.MergeHits([][]schemas.Hit{before.Hits, hits}, f.Cfg.Settings.TopK)
		out.Excluded += before.Excluded
	} else if part.Part > 0 {
		return fmt.Errorf("harvest: sentence %s has no hits from the parts of the corpus before part %d", id, part.Part)
	}
	if part.Part == 0 {
		f.queries.Inc(ctx, 1)
	}
	if part.Part == part.Parts-1 && len(out.Hits) == 0 {
		f.noHits.Inc(ctx, 1)
	}
	f.excluded.Inc(ctx, int64(excluded))
	emit(out)
	return nil
}

func (f *partSearchFn) Teardown() {
	if f.ix != nil {
		f.ix.Close()
	}
}

// PartCandidates is step 3 on one part: the candidates of the part's
// chunks among each sentence's whole retrieval (PartSearch of the last
// part) are ranked and scored, and merged with prev (PartCandidates of
// the parts before; nil for the first part) into the best R
// (method.KeepBest; rerank as for MergePartSets). It also returns the
// retrievals cut to the depth the pair sampler looks at
// (Pairs.Neighbours).
func PartCandidates(s beam.Scope, cfg PartConfig, neighbours int, rerank bool, whole, prev beam.PCollection) (cands, top beam.PCollection) {
	s = s.Scope("harvest.PartCandidates")
	own := beam.ParDo(s, &partCandsFn{Cfg: cfg}, whole)
	top = beam.ParDo(s, &topHitsFn{N: neighbours}, whole)
	if !prev.IsValid() {
		return own, top
	}
	merged := beam.ParDo(s, &keepBestFn{Settings: cfg.Settings, Rerank: rerank},
		beam.CoGroupByKey(s, beam.ParDo(s, keyCands, own), beam.ParDo(s, keyCands, prev)))
	return merged, top
}

// keepBestFn merges one sentence's candidates of a part with those of the
// parts before.
type keepBestFn struct {
	Settings method.Settings
	Rerank   bool
}

func (f *keepBestFn) ProcessElement(id string, own, prev func(*PartCands) bool, emit func(PartCands)) error {
	var a, b PartCands
	if !own(&a) {
		return fmt.Errorf("harvest: sentence %s has candidates from the parts before, but none from this part", id)
	}
	if !prev(&b) {
		return fmt.Errorf("harvest: sentence %s has no candidates from the parts before this one", id)
	}
	kept := method.KeepBest([][]method.PartCand{fromRecord(a), fromRecord(b)}, f.Settings, f.Rerank)
	a.Contexts = toRecord(kept)
	emit(a)
	return nil
}

// fromRecord and toRecord convert candidates between their record and
// method's form.
func fromRecord(c PartCands) []method.PartCand {
	out := make([]method.PartCand, len(c.Contexts))
	for i, x := range c.Contexts {
		out[i] = method.PartCand{Ref: schemas.ScoredContext{ChunkID: x.ChunkID, Slot: x.Slot, Score: x.Score, Terms: x.Terms},
			Rank: x.Rank, Rerank: x.Rerank, Words: x.Words}
	}
	return out
}

func toRecord(pc []method.PartCand) []PartContext {
	out := make([]PartContext, len(pc))
	for i, c := range pc {
		out[i] = PartContext{ChunkID: c.Ref.ChunkID, Slot: c.Ref.Slot, Score: c.Ref.Score, Terms: c.Ref.Terms,
			Rank: c.Rank, Rerank: c.Rerank, Words: c.Words}
	}
	return out
}

type partCandsFn struct {
	Cfg PartConfig

	res                    *resources.Resources
	cands, millis, encoded counter.Counter
	ctxPairs, discPairs    counter.Counter
	genEvals               counter.Counter
	pending                []*candJob
}

func (f *partCandsFn) Setup(ctx context.Context) error {
	var err error
	if f.res, err = f.Cfg.open(ctx); err != nil {
		return err
	}
	if err := f.res.Engine.Check(f.Cfg.Settings); err != nil {
		return err
	}
	f.cands = counter.New("harvest", "candidate_contexts")
	f.millis = counter.New("harvest", "stage_ms_context_sets")
	f.genEvals = counter.New("harvest", "gen_evals_context_sets")
	f.discPairs = counter.New("harvest", "disc_pairs_context_sets")
	f.ctxPairs = counter.New("harvest", "ctx_pairs_context_sets")
	f.encoded = counter.New("harvest", "sentences_encoded")
	return nil
}

// ProcessElement starts ranking one sentence's candidates in the part in
// a goroutine (a slot of setSlots, so that a bundle uses every core, as
// contextSetFn does) and emits the finished ones in arrival order.
func (f *partCandsFn) ProcessElement(ctx context.Context, r schemas.Retrieval, emit func(PartCands)) error {
	j := &candJob{r: r, done: make(chan struct{})}
	go f.rank(j)
	f.pending = append(f.pending, j)
	return f.flush(ctx, cap(setSlots), emit)
}

// FinishBundle emits the bundle's remaining candidates.
func (f *partCandsFn) FinishBundle(ctx context.Context, emit func(PartCands)) error {
	return f.flush(ctx, 1, emit)
}

// candJob is one sentence's candidates being ranked.
type candJob struct {
	r    schemas.Retrieval
	done chan struct{}
	out  PartCands
	info method.SetInfo
	took time.Duration
	err  error
}

func (f *partCandsFn) rank(j *candJob) {
	setSlots <- struct{}{}
	defer func() {
		if p := recover(); p != nil {
			j.err = fmt.Errorf("harvest: candidates of sentence %s: %v", j.r.SentenceID, p)
		}
		<-setSlots
		close(j.done)
	}()
	t0 := time.Now()
	r := j.r
	pc, info, err := f.res.Engine.PartCandidates(r.Text, r.Hits, f.Cfg.Settings)
	if err != nil {
		j.err = err
		return
	}
	other := 0
	for _, h := range r.Hits {
		if !f.res.Part.Has(h.ChunkID) {
			other++
		}
	}
	if info.MissingChunks != other {
		j.err = fmt.Errorf("harvest: sentence %s: %d of its hits are in other parts of the corpus, but %d are missing from part %d's chunks (%s): the chunks table is not the index's corpus",
			r.SentenceID, other, info.MissingChunks, f.res.Part.Part, f.Cfg.Paths.Chunks)
		return
	}
	j.out = PartCands{SentenceID: r.SentenceID, Text: r.Text, Hits: int32(len(r.Hits)), Contexts: toRecord(pc)}
	j.info, j.took = info, time.Since(t0)
}

// flush emits the finished jobs from the oldest on (flushJobs).
func (f *partCandsFn) flush(ctx context.Context, limit int, emit func(PartCands)) error {
	return flushJobs(&f.pending, limit, func(j *candJob) <-chan struct{} { return j.done }, func(j *candJob) error {
		if j.err != nil {
			return j.err
		}
		f.cands.Inc(ctx, int64(j.info.Candidates))
		f.genEvals.Inc(ctx, j.info.Work.GenEvals)
		f.discPairs.Inc(ctx, j.info.Work.DiscPairs)
		f.ctxPairs.Inc(ctx, j.info.Work.CtxPairs)
		f.encoded.Inc(ctx, j.info.Work.SentencesEncoded)
		f.millis.Inc(ctx, j.took.Milliseconds())
		emit(j.out)
		return nil
	})
}

// MergePartSets is step 4: each sentence's candidates, merged over every
// part into the best R (PartCandidates of the last part), are selected
// into C_s (method.MergeSet) and recorded with the set's terms
// (Engine.SetTerms); rerank says whether the settings rerank by a term the
// models compute. Sentences left with no context go to the dead letters.
func MergePartSets(s beam.Scope, cfg Config, terms []string, rerank bool, cands beam.PCollection) (sets, dead beam.PCollection) {
	s = s.Scope("harvest.MergePartSets")
	return beam.ParDo2(s, &mergeSetsFn{Settings: cfg.Settings, Terms: terms, Rerank: rerank}, cands)
}

type mergeSetsFn struct {
	Settings method.Settings
	Terms    []string
	Rerank   bool

	sets, empty, ctxs, reranked counter.Counter
}

func (f *mergeSetsFn) Setup() {
	f.sets = counter.New("harvest", "context_sets")
	f.empty = counter.New("harvest", "context_sets_empty")
	f.ctxs = counter.New("harvest", "selected_contexts")
	f.reranked = counter.New("harvest", "reranked_contexts")
}

func (f *mergeSetsFn) ProcessElement(ctx context.Context, c PartCands, emit func(schemas.ContextSet), emitDead func(schemas.DeadLetter)) {
	f.reranked.Inc(ctx, int64(len(c.Contexts)))
	set := method.MergeSet([][]method.PartCand{fromRecord(c)}, f.Settings, f.Rerank)
	if len(set) == 0 {
		f.empty.Inc(ctx, 1)
		emitDead(schemas.DeadLetter{Stage: "harvest", Source: c.SentenceID, Reason: ReasonNoContexts,
			Detail: fmt.Sprintf("%d hits gave no candidate context", c.Hits), Record: clip(c.Text, 200)})
		return
	}
	f.sets.Inc(ctx, 1)
	f.ctxs.Inc(ctx, int64(len(set)))
	emit(schemas.ContextSet{SentenceID: c.SentenceID, Text: c.Text, Terms: f.Terms, Contexts: set})
}

// LabelPart is step 5 on one part: the pairs meet their two context sets
// as labelBySides has them meet (three shuffles, no set carried), and each
// pair's sums cover the contexts of the part's chunks. Only the first part
// sends pairs without a set to the dead letters (every part would).
func LabelPart(s beam.Scope, cfg LabelConfig, pairs, sets beam.PCollection) (partial, dead beam.PCollection) {
	return sidesPlane(s.Scope("harvest.LabelPart"), cfg, pairs, sets, &sideBPartFn{Cfg: cfg})
}

// sideBPartFn is sideBFn for one part of the corpus: it emits the pair's
// sums over the part's contexts rather than its row.
type sideBPartFn struct {
	Cfg LabelConfig
	sideBase
}

func (f *sideBPartFn) Setup(ctx context.Context) error { return f.setup(ctx, f.Cfg) }

func (f *sideBPartFn) ProcessElement(ctx context.Context, _ string, halves func(*halfSums) bool,
	sets func(*schemas.ContextSet) bool, emit func(PartSums), emitDead func(schemas.DeadLetter)) {
	f.sideB(ctx, halves, sets, emitDead, func(h halfSums, digest string) {
		emit(PartSums{PairID: h.Pair.ID, A: h.Pair.A, B: h.Pair.B, Stratum: h.Pair.Stratum, Rank: h.Pair.Rank,
			TextA: h.TextA, TextB: h.TextB, Digest: digest,
			N: h.Sums.N, SA: h.Sums.A, SB: h.Sums.B, SAA: h.Sums.AA, SBB: h.Sums.BB, SAB: h.Sums.AB})
	})
}

// FinishParts is step 6: each pair's sums from every part (LabelPart of
// each) are added, and the pair is labeled and made a row by a worker
// that loads the models but no corpus; the lexical part's TF-IDF is read
// from lexicalPath (WriteLexical's file of the parts' added counts).
func FinishParts(s beam.Scope, cfg LabelConfig, parts int, lexicalPath string, partial []beam.PCollection) (labeled, dead beam.PCollection) {
	s = s.Scope("harvest.FinishParts")
	grouped := beam.GroupByKey(s, beam.ParDo(s, keySums, beam.Flatten(s, partial...)))
	return beam.ParDo2(s, &finishPartsFn{Cfg: cfg, Parts: parts, Lexical: lexicalPath}, grouped)
}

type finishPartsFn struct {
	Cfg     LabelConfig
	Parts   int
	Lexical string

	e    *method.Engine
	rows *rowMaker
}

func (f *finishPartsFn) Setup(ctx context.Context) error {
	m, err := resources.OpenModels(ctx, f.Cfg.Paths.Models)
	if err != nil {
		return err
	}
	if f.e, err = m.Engine(method.NewStore()); err != nil {
		return err
	}
	lex, err := ReadLexical(ctx, f.Lexical)
	if err != nil {
		return err
	}
	f.e.UseLexical(lex)
	f.rows = newRowMaker(f.Cfg)
	return nil
}

func (f *finishPartsFn) ProcessElement(ctx context.Context, id string, parts func(*PartSums) bool,
	emit func(schemas.LabeledPair), emitDead func(schemas.DeadLetter)) error {
	var sums method.Sums
	var first PartSums
	n := 0
	var p PartSums
	for parts(&p) {
		if n == 0 {
			first = p
		}
		sums.Add(method.Sums{N: p.N, A: p.SA, B: p.SB, AA: p.SAA, BB: p.SBB, AB: p.SAB})
		n++
	}
	pair := Pair{ID: id, A: first.A, B: first.B, Stratum: first.Stratum, Rank: first.Rank}
	if n != f.Parts {
		emitDead(unresolved(pair, fmt.Errorf("harvest: pair %s has the sums of %d parts of the corpus, not %d", id, n, f.Parts)))
		return nil
	}
	row := f.rows.row(f.e, pair, first.TextA, first.TextB, sums, first.Digest)
	f.rows.count(ctx, row, pair)
	emit(row)
	return nil
}

func (f *finishPartsFn) Teardown() {
	if f.rows != nil {
		f.rows.prog.Done()
	}
}

// WriteLexical writes the stemmed TF-IDF counts t (of all parts, added
// with method.AddTFIDF) to path as JSON, for FinishParts.
func WriteLexical(ctx context.Context, path string, t *lexical.TFIDF) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return storage.WriteFile(ctx, path, b)
}

// ReadLexical reads WriteLexical's file.
func ReadLexical(ctx context.Context, path string) (*lexical.TFIDF, error) {
	b, err := storage.ReadFile(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("the corpus's TF-IDF counts: %w", err)
	}
	var t lexical.TFIDF
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("the corpus's TF-IDF counts %s: %w", path, err)
	}
	return &t, nil
}
