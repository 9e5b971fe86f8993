package harvestjob

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/lexical"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/harvest"
	"github.com/ctxsim/ctxsim/transforms/parquetio"
)

// A harvest with --corpus_parts=P runs the steps of transforms/harvest's
// parts.go as pipelines that each load one part of the corpus (its chunks,
// their vectors and its index shards), one after another, keeping what
// they pass on under _waves/ as a harvest in waves does, each step
// recorded so that a stopped run resumes:
//
//	parts-terms-p, parts-search-p, parts-cands-p   for each part p
//	parts-sets                                    the sets, once
//	wave-w-part-p, then wave-w                    for each wave w
//
// The sets and the hits the pair sampler reads end where a harvest in
// waves keeps them (context_sets/, hits/), with the sampled sentences
// (sentences/) and the dead letters (dead_letters/).

// checkParts refuses corpus parts the harvest cannot use: a labeler
// without context sets, random contexts, or more parts than index shards.
func checkParts(ctx context.Context, spec harvest.Spec, parts int) error {
	if !spec.Settings.NeedsContexts() {
		return fmt.Errorf("--corpus_parts splits the work of context sets; the %s labeler builds none (it needs the index and the chunks' word counts only)", method.LabelerLexical)
	}
	if spec.Paths.Mapped {
		// The maps of a store and its vectors stay until the process ends
		// (nothing may still point into them before), so every part loaded
		// would add its files to the local disk.
		return fmt.Errorf("--corpus_parts cannot be combined with --map_corpus: each part's memory maps would stay on the local disk until the harvest ends; the parts already bound what a worker holds")
	}
	if spec.Settings.RandomContexts {
		return fmt.Errorf("--corpus_parts cannot draw random contexts: they are drawn from the whole corpus")
	}
	meta, err := retrieval.ReadMetaAt(ctx, spec.Paths.Index)
	if err != nil {
		return err
	}
	if parts > meta.NumShards {
		return fmt.Errorf("--corpus_parts=%d: the index %s has %d shards, and a part is a set of shards; give at most %d, or index the corpus with more --shards",
			parts, spec.Paths.Index, meta.NumShards, meta.NumShards)
	}
	return nil
}

// partPaths are the resources of part p of parts.
func partPaths(p resources.Paths, part, parts int) resources.Paths {
	p.Part = resources.Part{Part: part, Parts: parts}
	return p
}

// partSets runs the steps that build the context sets over the parts (the
// first three per part, then the merge), writing what the waves read.
func (c *Config) partSets(ctx context.Context, spec harvest.Spec, parts int, shared string, run *resumed, counters jobrun.Counters) error {
	dir := func(name string, p int) string { return storage.Join(shared, fmt.Sprintf("%s-%03d", name, p)) }
	glob := func(d string) string { return storage.Join(d, "*.parquet") }
	sampledDir, hitsDir := storage.Join(shared, "sentences"), storage.Join(shared, "hits")
	setsDir, deadDir := storage.Join(shared, "context_sets"), storage.Join(shared, "dead_letters")
	add := func(rc jobrun.Counters) {
		for k, v := range rc {
			if k != "parquetio/rows_written" {
				counters[k] += v
			}
		}
	}
	readAll := func(s beam.Scope, name string, t reflect.Type) []beam.PCollection {
		var out []beam.PCollection
		for p := range parts {
			out = append(out, parquetio.Read(s.Scope(fmt.Sprintf("%s%d", name, p)), glob(dir(name, p)), t))
		}
		return out
	}
	cfg := func(p int) harvest.PartConfig {
		pc := harvest.PartConfig{Config: spec.Config}
		pc.Paths = partPaths(spec.Paths, p, parts)
		return pc
	}
	for p := range parts {
		rc, _, err := step(ctx, shared, fmt.Sprintf("step-parts-terms-%03d.json", p), fmt.Sprintf("harvest part %d of %d: query terms", p+1, parts), func() *beam.Pipeline {
			pl, s := beam.NewPipelineWithRoot()
			var sampled beam.PCollection
			if p == 0 {
				sents := parquetio.Read(s, absGlob(c.Sentences), reflect.TypeOf(schemas.Sentence{}))
				sampled = harvest.Sample(s, spec, sents)
				parquetio.Write(s, parquetio.Config{Dir: sampledDir, NumShards: c.Shards}, sampled)
			} else {
				sampled = parquetio.Read(s, glob(sampledDir), reflect.TypeOf(schemas.Sentence{}))
			}
			terms, dead := harvest.PartTerms(s, cfg(p), sampled)
			parquetio.Write(s, parquetio.Config{Dir: dir("terms", p), NumShards: c.Shards}, terms)
			if p == 0 {
				// Every part finds the same sentences without text.
				parquetio.Write(s, parquetio.Config{Dir: dir("dead", p), NumShards: 1}, dead)
			}
			return pl
		}, run)
		if err != nil {
			return err
		}
		add(rc)
	}
	for p := range parts {
		rc, _, err := step(ctx, shared, fmt.Sprintf("step-parts-search-%03d.json", p), fmt.Sprintf("harvest part %d of %d: retrieval", p+1, parts), func() *beam.Pipeline {
			pl, s := beam.NewPipelineWithRoot()
			sampled := parquetio.Read(s, glob(sampledDir), reflect.TypeOf(schemas.Sentence{}))
			prev := beam.CreateList(s, []schemas.Retrieval{})
			if p > 0 {
				prev = parquetio.Read(s.Scope("before"), glob(dir("hits", p-1)), reflect.TypeOf(schemas.Retrieval{}))
			}
			hits := harvest.PartSearch(s, cfg(p), sampled, prev, readAll(s, "terms", reflect.TypeOf(harvest.SentenceTerms{})))
			parquetio.Write(s, parquetio.Config{Dir: dir("hits", p), NumShards: c.Shards}, hits)
			return pl
		}, run)
		if err != nil {
			return tooLarge(err, spec)
		}
		add(rc)
		// The parts' retrievals so far are merged into this part's: the
		// earlier table is not read again (about 270 KB a sentence at the
		// default preset).
		if p > 0 {
			if err := storage.RemoveAll(ctx, dir("hits", p-1)); err != nil {
				return err
			}
		}
	}
	m, err := resources.OpenModels(ctx, spec.Paths.Models)
	if err != nil {
		return err
	}
	e, err := m.Engine(method.NewStore())
	if err != nil {
		return err
	}
	terms, _ := e.SetTerms(spec.Settings)
	_, rerank := e.Term(spec.Settings.RerankBy)
	lex := &lexical.TFIDF{DF: map[string]int{}, Stem: true}
	for p := range parts {
		rc, _, err := step(ctx, shared, fmt.Sprintf("step-parts-cands-%03d.json", p), fmt.Sprintf("harvest part %d of %d: candidate contexts", p+1, parts), func() *beam.Pipeline {
			pl, s := beam.NewPipelineWithRoot()
			whole := parquetio.Read(s, glob(dir("hits", parts-1)), reflect.TypeOf(schemas.Retrieval{}))
			var prev beam.PCollection
			if p > 0 {
				prev = parquetio.Read(s.Scope("before"), glob(dir("cands", p-1)), reflect.TypeOf(harvest.PartCands{}))
			}
			cands, top := harvest.PartCandidates(s, cfg(p), spec.Pairs.Neighbours, rerank, whole, prev)
			parquetio.Write(s, parquetio.Config{Dir: dir("cands", p), NumShards: c.Shards}, cands)
			if p == 0 {
				parquetio.Write(s, parquetio.Config{Dir: hitsDir, NumShards: c.Shards}, top)
			}
			return pl
		}, run)
		if err != nil {
			return tooLarge(err, spec)
		}
		add(rc)
		// The part's word counts for the lexical part of the labels, from
		// the resources its pipeline loaded (or loaded again, when a
		// resumed run took the step over), which are then let go.
		path := storage.Join(shared, fmt.Sprintf("tfidf-%03d.json", p))
		have, err := storage.Exists(ctx, path)
		if err != nil {
			return err
		}
		var t *lexical.TFIDF
		if have {
			if t, err = harvest.ReadLexical(ctx, path); err != nil {
				return err
			}
		} else {
			r, err := resources.Open(ctx, cfg(p).Paths)
			if err != nil {
				return err
			}
			t = r.Engine.Store.TFIDF(true)
			if err := harvest.WriteLexical(ctx, path, t); err != nil {
				return err
			}
		}
		if err := method.AddTFIDF(lex, t); err != nil {
			return err
		}
		resources.Release(cfg(p).Paths)
		if p > 0 {
			if err := storage.RemoveAll(ctx, dir("cands", p-1)); err != nil {
				return err
			}
		}
	}
	if err := harvest.WriteLexical(ctx, storage.Join(shared, "tfidf.json"), lex); err != nil {
		return err
	}
	rc, _, err := step(ctx, shared, "step-parts-sets.json", fmt.Sprintf("harvest: context sets from %d parts", parts), func() *beam.Pipeline {
		pl, s := beam.NewPipelineWithRoot()
		last := parquetio.Read(s, glob(dir("cands", parts-1)), reflect.TypeOf(harvest.PartCands{}))
		sets, dead := harvest.MergePartSets(s, spec.Config, terms, rerank, last)
		parquetio.Write(s, parquetio.Config{Dir: setsDir, NumShards: c.Shards}, sets)
		rdead := parquetio.Read(s, glob(dir("dead", 0)), reflect.TypeOf(schemas.DeadLetter{}))
		parquetio.Write(s, parquetio.Config{Dir: deadDir, NumShards: 1}, beam.Flatten(s, rdead, dead))
		return pl
	}, run)
	if err != nil {
		return err
	}
	add(rc)
	for p := range parts {
		for _, name := range []string{"terms", "cands"} {
			if err := storage.RemoveAll(ctx, dir(name, p)); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(os.Stderr, "harvest: %d context sets from %d parts of the corpus\n", rc["harvest/context_sets"], parts)
	return nil
}

// partWave labels one wave over the parts: each part adds its share of
// the wave's pairs' sums, then one pipeline adds them and writes the
// wave's rows.
func (c *Config) partWave(ctx context.Context, spec harvest.Spec, parts int, shared string, wave harvest.Wave, plan wavePlan,
	meta map[string]string, run *resumed) (jobrun.Counters, bool, error) {
	glob := func(d string) string { return storage.Join(d, "*.parquet") }
	sampledDir, hitsDir := storage.Join(shared, "sentences"), storage.Join(shared, "hits")
	setsDir, deadDir := storage.Join(shared, "context_sets"), storage.Join(shared, "dead_letters")
	waveDir := func(p int) string { return storage.Join(shared, fmt.Sprintf("wave-%05d-part-%03d", wave.Index, p)) }
	waveDead := storage.Join(shared, fmt.Sprintf("wave-%05d-dead", wave.Index))
	spec.Pairs.Wave = wave
	total := jobrun.Counters{}
	for p := range parts {
		lc := spec.LabelConfig
		lc.Paths = partPaths(spec.Paths, p, parts)
		rc, _, err := step(ctx, shared, fmt.Sprintf("step-wave-%05d-part-%03d.json", wave.Index, p),
			fmt.Sprintf("harvest wave %d of %d, part %d of %d", wave.Index+1, wave.Of, p+1, parts), func() *beam.Pipeline {
				pl, s := beam.NewPipelineWithRoot()
				sampled := parquetio.Read(s, glob(sampledDir), reflect.TypeOf(schemas.Sentence{}))
				hits := parquetio.Read(s, glob(hitsDir), reflect.TypeOf(schemas.Retrieval{}))
				sets := parquetio.Read(s, glob(setsDir), reflect.TypeOf(schemas.ContextSet{}))
				pairs := harvest.SamplePairs(s, spec.Pairs, sampled, hits)
				partial, dead := harvest.LabelPart(s, lc, pairs, sets)
				parquetio.Write(s, parquetio.Config{Dir: waveDir(p), NumShards: c.Shards}, partial)
				if p == 0 {
					parquetio.Write(s, parquetio.Config{Dir: waveDead, NumShards: 1}, dead)
				}
				return pl
			}, run)
		if err != nil {
			return nil, false, err
		}
		for k, v := range rc {
			// A pair is sampled in every part's pipeline: its per-pair
			// sampling counters once.
			if k != "parquetio/rows_written" && !harvest.PerSentenceCounter(k) && (p == 0 || !isSamplerCounter(k)) {
				total[k] += v
			}
		}
		resources.Release(lc.Paths)
	}
	rc, done, err := step(ctx, shared, fmt.Sprintf("step-wave-%05d.json", wave.Index),
		fmt.Sprintf("harvest wave %d of %d: labels from %d parts", wave.Index+1, wave.Of, parts), func() *beam.Pipeline {
			pl, s := beam.NewPipelineWithRoot()
			var partial []beam.PCollection
			for p := range parts {
				partial = append(partial, parquetio.Read(s.Scope(fmt.Sprintf("part%d", p)), glob(waveDir(p)), reflect.TypeOf(harvest.PartSums{})))
			}
			labeled, ldead := harvest.FinishParts(s, spec.LabelConfig, parts, storage.Join(shared, "tfidf.json"), partial)
			dead := beam.Flatten(s, ldead, parquetio.Read(s, glob(waveDead), reflect.TypeOf(schemas.DeadLetter{})))
			out := harvest.Outputs{Pairs: labeled, Sets: beam.CreateList(s, []schemas.ContextSet{})}
			if wave.First() {
				out.Sets = parquetio.Read(s, glob(setsDir), reflect.TypeOf(schemas.ContextSet{}))
				dead = beam.Flatten(s, dead, parquetio.Read(s, glob(deadDir), reflect.TypeOf(schemas.DeadLetter{})))
			}
			out.Dead = dead
			out.WriteWave(s, c.Output, c.Shards, wave, plan.RunID, meta)
			return pl
		}, run)
	if err != nil {
		return nil, false, err
	}
	for k, v := range rc {
		if !harvest.PerSentenceCounter(k) {
			total[k] += v
		}
	}
	return total, done, nil
}

// isSamplerCounter reports whether counter k counts the pair sampler's
// work, which every part's pipeline of a wave repeats.
func isSamplerCounter(k string) bool {
	return k == "harvest/pair_links" || k == "harvest/pairs_distinct"
}

// tooLarge adds to a step's error what to do when Prism could not move a
// stage's input in one message (2 GiB): the parts' steps pass each
// sentence's whole retrieval between pipelines, about 15 bytes a hit.
func tooLarge(err error, spec harvest.Spec) error {
	if !strings.Contains(err.Error(), "larger than max") {
		return err
	}
	return fmt.Errorf("%w\n--corpus_parts moves each sampled sentence's whole retrieval (--top_k=%d hits, about 15 bytes each, twice) between its pipelines, and a local run moves a stage's input in one message of at most 2 GiB: "+
		"harvest the sample in windows (--sample and --sample_from, about %d sentences each at most), or lower --top_k", err, spec.Settings.TopK, (1<<31)/(30*max(spec.Settings.TopK, 1)))
}
