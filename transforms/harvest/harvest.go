package harvest

import (
	"context"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/beamreg"
	"github.com/ctxsim/ctxsim/transforms/index"
	"github.com/ctxsim/ctxsim/transforms/ingest"
	"github.com/ctxsim/ctxsim/transforms/parquetio"
)

func init() {
	register.Function1x1[schemas.Sentence, schemas.ContextSet](textSet)
	register.Function2x0[schemas.Sentence, func(schemas.ContextSet)](noSet)
	register.Function2x0[schemas.ContextSet, func(schemas.ContextSet)](dropSet)
	beamreg.DoFn(&topHitsFn{})
	register.Emitter1[schemas.ContextSet]()
}

// Spec is a harvest's whole configuration: what every DoFn needs (the
// resources, the method's settings, the fingerprints recorded in each
// labeled pair), the pair sampler, and which sentences are labeled.
type Spec struct {
	LabelConfig
	Pairs    PairConfig
	MinWords int
	// Sample and SampleFrom choose the sentences labeled: those whose ID
	// hash, as a fraction, lies in [SampleFrom, SampleFrom+Sample).
	Sample, SampleFrom float64
}

// Previous is an earlier harvest made with the same method and models,
// whose work a new harvest reuses: its context sets (schemas.ContextSet)
// and labeled pairs (schemas.LabeledPair), with the chunks
// (schemas.Chunk) of the current corpus to tell which sets are stale.
type Previous struct {
	Sets, Pairs, Chunks beam.PCollection
}

// Outputs are a harvest's tables: labeled pairs, context sets and dead
// letters.
type Outputs struct {
	Pairs, Sets, Dead beam.PCollection
}

// Harvest labels sentence pairs of the corpus whose sentences
// (schemas.Sentence) are given: it keeps the sample's sentences long
// enough to label, retrieves their chunks, builds their context sets,
// samples pairs from their retrieval neighbourhoods and labels them.
//
// With a previous harvest (non-nil prev), sentences it has a context set
// for keep that set unless the set uses text that left the corpus (they
// are retrieved again only for the pair sampler, which looks at their top
// Pairs.Neighbours hits), and pairs it labeled from the same two context
// sets keep their labels.
//
// Under the lexical labeler (Settings.NeedsContexts false) no context set
// is built: sentences are retrieved only as deep as the pair sampler looks,
// every pair is labeled from its two texts, the context_sets table is
// empty, and a previous harvest is not consulted (its labels cost more to
// read than to make again).
func Harvest(s beam.Scope, spec Spec, sentences beam.PCollection, prev *Previous) Outputs {
	sents := Sample(s, spec, sentences)
	if !spec.Settings.NeedsContexts() {
		hits, rdead := RetrieveForPairs(s, spec, sents)
		return LabelLexical(s, spec, sents, hits, rdead)
	}
	if spec.Pairs.Wave.Of > 1 {
		// Each wave would build every context set again: waves read the
		// sets SetsForWaves stored (LabelWave).
		panic("harvest: a harvest in waves under a labeler with context sets runs SetsForWaves once and LabelWave per wave")
	}
	idx := spec.Paths.Index
	fresh := sents
	var old, reused, hits beam.PCollection
	var dead []beam.PCollection
	if prev != nil {
		fresh, old, reused = ReuseSets(s, sents, prev.Sets, prev.Chunks)
		oldHits, odead := index.Retrieve(s.Scope("old"),
			index.RetrieveConfig{IndexDir: idx, K: min(spec.Settings.TopK, spec.Pairs.Neighbours)}, old)
		hits, dead = oldHits, append(dead, odead)
	}
	newHits, rdead := index.Retrieve(s, index.RetrieveConfig{IndexDir: idx, K: spec.Settings.TopK}, fresh)
	sets, cdead := ContextSets(s, spec.Config, newHits)
	dead = append(dead, rdead, cdead)
	if prev != nil {
		hits = beam.Flatten(s, hits, newHits)
		sets = beam.Flatten(s, sets, reused)
	} else {
		hits = newHits
	}
	pairs := SamplePairs(s, spec.Pairs, sents, hits)
	var labeled, ldead beam.PCollection
	if prev != nil {
		labeled, ldead = LabelReusing(s, spec.LabelConfig, pairs, sets, prev.Pairs)
	} else {
		labeled, ldead = Label(s, spec.LabelConfig, pairs, sets)
	}
	return Outputs{Pairs: labeled, Sets: sets, Dead: beam.Flatten(s, append(dead, ldead)...)}
}

// Sample keeps the sentences of the spec's sample that are long enough to
// label.
func Sample(s beam.Scope, spec Spec, sentences beam.PCollection) beam.PCollection {
	return ingest.SampleWindow(s, spec.SampleFrom, spec.Sample, FilterSentences(s, spec.MinWords, sentences))
}

// RetrieveForPairs retrieves the sampled sentences (Sample) as deep as the
// pair sampler looks (schemas.Retrieval), with the dead letters of those
// that could not be: what LabelLexical needs, and what a harvest in waves
// retrieves once for all its waves.
func RetrieveForPairs(s beam.Scope, spec Spec, sampled beam.PCollection) (hits, dead beam.PCollection) {
	return index.Retrieve(s, index.RetrieveConfig{IndexDir: spec.Paths.Index,
		K: min(spec.Settings.TopK, spec.Pairs.Neighbours)}, sampled)
}

// LabelLexical is the harvest under the lexical labeler, given the sampled
// sentences (Sample) and their retrievals from RetrieveForPairs (rdead, its
// dead letters, goes to the first wave's dead letters only): it samples
// the pairs of the spec's wave and labels each from its two texts.
func LabelLexical(s beam.Scope, spec Spec, sampled, hits, rdead beam.PCollection) Outputs {
	pairs := SamplePairs(s, spec.Pairs, sampled, hits)
	labeled, ldead := Label(s, spec.LabelConfig, pairs, beam.ParDo(s, textSet, sampled))
	dead := ldead
	if spec.Pairs.Wave.First() {
		dead = beam.Flatten(s, rdead, ldead)
	}
	return Outputs{Pairs: labeled, Sets: beam.ParDo(s, noSet, sampled), Dead: dead}
}

// SetsForWaves is what the waves of a harvest under a labeler that builds
// context sets share, computed once before them: the sampled sentences
// (Sample) retrieved at the method's depth, their context sets, and their
// hits cut to the depth the pair sampler looks at (Pairs.Neighbours), with
// the dead letters of both steps.
func SetsForWaves(s beam.Scope, spec Spec, sampled beam.PCollection) (hits, sets, dead beam.PCollection) {
	full, rdead := index.Retrieve(s, index.RetrieveConfig{IndexDir: spec.Paths.Index, K: spec.Settings.TopK}, sampled)
	sets, cdead := ContextSets(s, spec.Config, full)
	return beam.ParDo(s, &topHitsFn{N: spec.Pairs.Neighbours}, full), sets, beam.Flatten(s, rdead, cdead)
}

// LabelWave is one wave of a harvest under a labeler that builds context
// sets, from what SetsForWaves stored: it samples the pairs of the spec's
// wave and labels them against the stored sets. The first wave writes the
// context sets and the shared step's dead letters (sdead); the others
// write their pairs and their own dead letters only.
func LabelWave(s beam.Scope, spec Spec, sampled, hits, sets, sdead beam.PCollection) Outputs {
	pairs := SamplePairs(s, spec.Pairs, sampled, hits)
	labeled, ldead := Label(s, spec.LabelConfig, pairs, sets)
	if spec.Pairs.Wave.First() {
		return Outputs{Pairs: labeled, Sets: sets, Dead: beam.Flatten(s, sdead, ldead)}
	}
	return Outputs{Pairs: labeled, Sets: beam.ParDo(s, dropSet, sets), Dead: ldead}
}

// topHitsFn keeps a retrieval's first N hits.
type topHitsFn struct{ N int }

func (f *topHitsFn) ProcessElement(r schemas.Retrieval) schemas.Retrieval {
	r.Hits = r.Hits[:min(len(r.Hits), f.N)]
	return r
}

func dropSet(schemas.ContextSet, func(schemas.ContextSet)) {}

// textSet stands a sentence in for its context set where the labeler
// needs only the text: a set with no contexts.
func textSet(st schemas.Sentence) schemas.ContextSet {
	return schemas.ContextSet{SentenceID: st.ID, Text: st.Text}
}

// noSet emits nothing: the context_sets table of a harvest that builds
// none.
func noSet(schemas.Sentence, func(schemas.ContextSet)) {}

// Write writes the tables under dir: pairs/ and context_sets/ in shards
// files each, dead_letters/ in one, and the export of the pairs for
// training (Export): export/train/ in shards files, export/dev/ and
// export/test/ in one each. Every file carries meta (the harvest's
// Provenance.Metadata) in its key/value metadata, and the export's files
// the score's mapping (ScoreMapping) too.
func (o Outputs) Write(s beam.Scope, dir string, shards int, meta map[string]string) {
	o.WriteWave(s, dir, shards, Wave{}, storage.RunID(), meta)
}

// WriteWave writes the tables of one wave under dir (as Write does, each
// table's files for this wave; see parquetio.Config.Part). Once every wave
// has run, CommitWaves completes them. The files record run as the run
// that wrote them: every wave of a harvest gives the same, even when a
// later process resumes the harvest.
func (o Outputs) WriteWave(s beam.Scope, dir string, shards int, w Wave, run string, meta map[string]string) {
	cols := map[string]beam.PCollection{"pairs": o.Pairs, "context_sets": o.Sets, "dead_letters": o.Dead}
	for i, col := range Export(s, o.Pairs) {
		cols[exportTable(Splits[i])] = col
	}
	for _, t := range tables(dir, shards, w, run, meta) {
		parquetio.Write(s, t.cfg, cols[t.name])
	}
}

// exportTable is the export's table of split, under a harvest's output.
func exportTable(split string) string { return ExportDir + "/" + split }

type table struct {
	name string
	cfg  parquetio.Config
	row  reflect.Type
}

// tables are a harvest's tables under dir, as wave w of run writes them,
// with meta in their files' metadata.
func tables(dir string, shards int, w Wave, run string, meta map[string]string) []table {
	exportMeta := map[string]string{schemas.MetaScoreKey: ScoreMapping}
	for k, v := range meta {
		exportMeta[k] = v
	}
	type spec struct {
		name   string
		shards int
		row    reflect.Type
		meta   map[string]string
	}
	specs := []spec{{"pairs", shards, reflect.TypeOf(schemas.LabeledPair{}), meta},
		{"context_sets", shards, reflect.TypeOf(schemas.ContextSet{}), meta},
		{"dead_letters", 1, reflect.TypeOf(schemas.DeadLetter{}), meta}}
	for _, sp := range Splits {
		// About 98% of the pairs are train pairs, 1% each dev and test.
		n := 1
		if sp == "train" {
			n = shards
		}
		specs = append(specs, spec{exportTable(sp), n, reflect.TypeOf(schemas.TrainingPair{}), exportMeta})
	}
	var out []table
	for _, t := range specs {
		out = append(out, table{t.name, parquetio.Config{Dir: storage.Join(dir, t.name), NumShards: t.shards,
			RunID: run, Part: w.Index, Parts: w.Of, Metadata: t.meta}, t.row})
	}
	return out
}

// CommitWaves completes the tables a harvest wrote under dir in waves
// (WriteWave) for run, once every wave has run: it writes each table's
// manifest.
func CommitWaves(ctx context.Context, dir string, shards, waves int, run string) error {
	for _, t := range tables(dir, shards, Wave{Of: waves}, run, nil) {
		spec := storage.TableSpec{Dir: t.cfg.Dir, NumShards: t.cfg.NumShards, Type: t.row, RunID: t.cfg.RunID, Parts: waves}
		if _, err := spec.CommitParts(ctx); err != nil {
			return err
		}
	}
	return nil
}
