package harvest

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/index"
	"github.com/ctxsim/ctxsim/transforms/ingest"
	"github.com/ctxsim/ctxsim/transforms/parquetio"
)

func init() {
	register.Function1x1[schemas.Sentence, schemas.ContextSet](textSet)
	register.Function2x0[schemas.Sentence, func(schemas.ContextSet)](noSet)
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
	sents := ingest.SampleWindow(s, spec.SampleFrom, spec.Sample, FilterSentences(s, spec.MinWords, sentences))
	idx := spec.Paths.Index
	if !spec.Settings.NeedsContexts() {
		hits, rdead := index.Retrieve(s, index.RetrieveConfig{IndexDir: idx, K: min(spec.Settings.TopK, spec.Pairs.Neighbours)}, sents)
		pairs := SamplePairs(s, spec.Pairs, sents, hits)
		labeled, ldead := Label(s, spec.LabelConfig, pairs, beam.ParDo(s, textSet, sents))
		return Outputs{Pairs: labeled, Sets: beam.ParDo(s, noSet, sents), Dead: beam.Flatten(s, rdead, ldead)}
	}
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

// textSet stands a sentence in for its context set where the labeler
// needs only the text: a set with no contexts.
func textSet(st schemas.Sentence) schemas.ContextSet {
	return schemas.ContextSet{SentenceID: st.ID, Text: st.Text}
}

// noSet emits nothing: the context_sets table of a harvest that builds
// none.
func noSet(schemas.Sentence, func(schemas.ContextSet)) {}

// Write writes the tables under dir: pairs/ and context_sets/ in shards
// files each, dead_letters/ in one.
func (o Outputs) Write(s beam.Scope, dir string, shards int) {
	parquetio.Write(s, parquetio.Config{Dir: storage.Join(dir, "pairs"), NumShards: shards}, o.Pairs)
	parquetio.Write(s, parquetio.Config{Dir: storage.Join(dir, "context_sets"), NumShards: shards}, o.Sets)
	parquetio.Write(s, parquetio.Config{Dir: storage.Join(dir, "dead_letters"), NumShards: 1}, o.Dead)
}
