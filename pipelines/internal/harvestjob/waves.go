package harvestjob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/ctxsim/ctxsim/pipelines/internal/beamjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/harvest"
	"github.com/ctxsim/ctxsim/transforms/parquetio"
)

// wavesDir is where a harvest in waves keeps what its waves share (the
// retrievals) and its progress, under its output; it is removed once the
// summary is written.
const wavesDir = "_waves"

// wavesLayout numbers what _waves/ holds; it is part of the fingerprint, so
// a run left by a build that stored less (before 2, no sentences/) is
// started over rather than resumed.
const wavesLayout = 2

// A harvest in waves records its progress under <output>/_waves, so that a
// run stopped midway (a crash, a killed process, a full disk) is resumed
// by the same command rather than started over:
//
//	plan.json              the harvest's fingerprint and run ID
//	step-retrieval.json    the shared retrieval is stored (sentences/, hits/)
//	step-wave-00002.json   wave 2 has written its files and part records
//
// A step's record is written only after its pipeline succeeded, with the
// counters, wall time and CPU time it took. A new run with the same
// fingerprint takes the plan's run ID (every wave's files and part records
// must name one run for CommitParts), skips the recorded steps and adds
// their counters and times (a wave's files carry the provenance of the
// attempt that wrote them, the summary the last attempt's); a step that
// had started but left no record is run again from the start, and its
// files, written under the same names, replace the earlier attempt's. A run with another fingerprint discards
// the directory and starts over.

// wavePlan is _waves/plan.json.
type wavePlan struct {
	RunID       string `json:"run_id"`
	Fingerprint string `json:"fingerprint"`
	Waves       int    `json:"waves"`
}

// waveStep is the record of one finished step of a harvest in waves.
type waveStep struct {
	Counters   jobrun.Counters `json:"counters"`
	Seconds    float64         `json:"seconds"`
	CPUSeconds float64         `json:"cpu_seconds"`
}

// resumed is what Run needs to know of a harvest's earlier, unfinished
// attempts: the run ID its tables carry, the waves taken over, and the time
// those steps took.
type resumed struct {
	runID        string
	waves        int
	seconds, cpu float64
}

// newRunID gives a new plan its run ID (tests set it to tell attempts
// apart).
var newRunID = storage.RunID

// afterStep, when set (by tests), is called once a step's pipeline has run
// and before its record is written; an error stops the harvest there, as a
// crash would.
var afterStep func(name string) error

// fingerprint identifies what a harvest in waves computes: the spec (the
// method, the pair sampler, the models' and the index's fingerprints), the
// sentences read and the layout of the tables. Two runs with the same
// fingerprint write the same rows to the same files.
func (c *Config) fingerprint(ctx context.Context, spec harvest.Spec, waves, parts int) (string, error) {
	spec.Pairs.Wave = harvest.Wave{}
	sb, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("fingerprint the harvest: %w", err)
	}
	// The sentences table's manifest names the run that wrote it, so a
	// corpus rebuilt under the same path is another input.
	sents := "no manifest"
	if dir, ok := strings.CutSuffix(c.Sentences, "/*.parquet"); ok {
		if m, err := storage.CheckTable(ctx, dir); err == nil {
			sents = fmt.Sprintf("%s %d rows", m.RunID, m.Rows)
		}
	}
	h := sha256.New()
	fmt.Fprintf(h, "schema %s\nlayout %d\nspec %s\nsentences %s (%s)\nshards %d\nwaves %d\n",
		schemas.Version, wavesLayout, sb, c.Sentences, sents, c.Shards, waves)
	if parts > 1 {
		fmt.Fprintf(h, "corpus parts %d\n", parts)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// openPlan returns the plan of the harvest in waves under shared: the
// earlier run's when it has the same fingerprint, a new one otherwise (the
// earlier run's directory then removed).
func openPlan(ctx context.Context, shared, fp string, waves int) (wavePlan, bool, error) {
	path := storage.Join(shared, "plan.json")
	var p wavePlan
	if ok, err := readJSON(ctx, path, &p); err != nil {
		return p, false, err
	} else if ok && p.Fingerprint == fp && p.Waves == waves && p.RunID != "" {
		return p, true, nil
	} else if ok {
		fmt.Fprintf(os.Stderr, "harvest: %s holds an unfinished harvest of other settings, inputs or waves (run %s); starting over\n",
			shared, p.RunID)
	}
	if err := storage.RemoveAll(ctx, shared); err != nil {
		return p, false, err
	}
	p = wavePlan{RunID: newRunID(), Fingerprint: fp, Waves: waves}
	return p, false, writeJSON(ctx, path, p)
}

// writeJSON writes v to path as indented JSON.
func writeJSON(ctx context.Context, path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return storage.WriteFile(ctx, path, append(b, '\n'))
}

// readJSON reads path into v, reporting false when there is no such file.
func readJSON(ctx context.Context, path string, v any) (bool, error) {
	if ok, err := storage.Exists(ctx, path); err != nil || !ok {
		return false, err
	}
	b, err := storage.ReadFile(ctx, path)
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return true, nil
}

// step runs one step of a harvest in waves unless the plan's earlier run
// recorded it: build makes its pipeline. It returns the step's counters
// and whether they come from the record.
func step(ctx context.Context, shared, file, name string, build func() *beam.Pipeline, run *resumed) (jobrun.Counters, bool, error) {
	path := storage.Join(shared, file)
	var st waveStep
	if ok, err := readJSON(ctx, path, &st); err != nil {
		return nil, false, err
	} else if ok {
		run.seconds += st.Seconds
		run.cpu += st.CPUSeconds
		fmt.Fprintf(os.Stderr, "%s: done by an earlier attempt of run %s, taken over\n", name, run.runID)
		return st.Counters, true, nil
	}
	start, cpu0 := time.Now(), harvest.ProcessCPUSeconds()
	counters, err := beamjob.Run(ctx, name, build())
	if err != nil {
		return nil, false, err
	}
	if afterStep != nil {
		if err := afterStep(name); err != nil {
			return nil, false, err
		}
	}
	st = waveStep{Counters: counters, Seconds: time.Since(start).Seconds(), CPUSeconds: harvest.ProcessCPUSeconds() - cpu0}
	return counters, false, writeJSON(ctx, path, st)
}

// runWaves runs the harvest in waves (Config.Waves): one pipeline
// retrieves the sample's sentences as deep as the pair sampler looks and
// stores them and their hits under the output's _waves/ (under a labeler
// that builds context sets, it retrieves them at the method's depth and
// stores their context sets too), then each wave reads them, samples and
// labels the pairs its owners own, and writes its files of every table
// (the context sets in the first wave). The tables are committed after the
// last wave, and Run removes _waves/ after the summary. The run's counters
// are added into counters: the retrieval's, but for the rows it stored,
// and the waves' per-pair counters (the per-sentence ones are the
// retrieval's). A run stopped midway resumes where it stopped (see
// wavePlan).
func (c *Config) runWaves(ctx context.Context, spec harvest.Spec, waves, parts int, counters jobrun.Counters, start time.Time,
	prov harvest.Provenance) (resumed, error) {
	shared := storage.Join(c.Output, wavesDir)
	// A run stopped by a signal or a failure withdraws the tables it
	// committed, but not these: the next run resumes from them.
	jobrun.KeepOnFailure(shared)
	fp, err := c.fingerprint(ctx, spec, waves, parts)
	if err != nil {
		return resumed{}, err
	}
	plan, again, err := openPlan(ctx, shared, fp, waves)
	if err != nil {
		return resumed{}, err
	}
	run := resumed{runID: plan.RunID}
	prov.RunID = plan.RunID
	meta, err := prov.Metadata()
	if err != nil {
		return run, err
	}
	if again {
		fmt.Fprintf(os.Stderr, "harvest: resuming the unfinished run %s from %s\n", plan.RunID, shared)
	}
	hitsDir, deadDir := storage.Join(shared, "hits"), storage.Join(shared, "dead_letters")
	// The sample's sentences, kept once: a wave reads them rather than the
	// whole corpus (on mixed-20m, 40 s of one core per wave).
	sampledDir := storage.Join(shared, "sentences")
	setsDir := storage.Join(shared, "context_sets")
	withSets := spec.Settings.NeedsContexts()
	what := "retrieval"
	if withSets {
		what = "retrieval and context sets"
	}
	if parts > 1 {
		if err := c.partSets(ctx, spec, parts, shared, &run, counters); err != nil {
			return run, err
		}
		for w := range waves {
			wave := harvest.Wave{Index: w, Of: waves}
			wc, done, err := c.partWave(ctx, spec, parts, shared, wave, plan, meta, &run)
			if err != nil {
				return run, err
			}
			if done {
				run.waves++
			}
			for k, v := range wc {
				counters[k] += v
			}
			fmt.Fprintf(os.Stderr, "harvest wave %d of %d: %d pairs labeled (%d in all so far), %s since the start\n",
				w+1, waves, wc["harvest/pairs_labeled"], counters["harvest/pairs_labeled"], time.Since(start).Round(time.Second))
		}
		return run, c.commitWaves(ctx, waves, plan)
	}
	rc, _, err := step(ctx, shared, "step-retrieval.json", fmt.Sprintf("harvest %s for %d waves", what, waves), func() *beam.Pipeline {
		p, s := beam.NewPipelineWithRoot()
		sents := parquetio.Read(s, absGlob(c.Sentences), reflect.TypeOf(schemas.Sentence{}))
		sampled := harvest.Sample(s, spec, sents)
		var hits, dead beam.PCollection
		if withSets {
			var sets beam.PCollection
			hits, sets, dead = harvest.SetsForWaves(s, spec, sampled)
			parquetio.Write(s, parquetio.Config{Dir: setsDir, NumShards: c.Shards}, sets)
		} else {
			hits, dead = harvest.RetrieveForPairs(s, spec, sampled)
		}
		parquetio.Write(s, parquetio.Config{Dir: hitsDir, NumShards: c.Shards}, hits)
		parquetio.Write(s, parquetio.Config{Dir: deadDir, NumShards: 1}, dead)
		parquetio.Write(s, parquetio.Config{Dir: sampledDir, NumShards: c.Shards}, sampled)
		return p
	}, &run)
	if err != nil {
		return run, err
	}
	for k, v := range rc {
		if k != "parquetio/rows_written" {
			counters[k] += v
		}
	}
	// The waves score pairs against stored sets: the scores cached while
	// the sets were built (up to about 0.6 GB on mixed-20m) are not used
	// again.
	resources.DropScoreCaches()
	for w := range waves {
		name := fmt.Sprintf("harvest wave %d of %d", w+1, waves)
		wave := harvest.Wave{Index: w, Of: waves}
		spec.Pairs.Wave = wave
		wc, done, err := step(ctx, shared, fmt.Sprintf("step-wave-%05d.json", w), name, func() *beam.Pipeline {
			p, s := beam.NewPipelineWithRoot()
			sampled := parquetio.Read(s, storage.Join(sampledDir, "*.parquet"), reflect.TypeOf(schemas.Sentence{}))
			hits := parquetio.Read(s, storage.Join(hitsDir, "*.parquet"), reflect.TypeOf(schemas.Retrieval{}))
			rdead := beam.CreateList(s, []schemas.DeadLetter{})
			if wave.First() {
				rdead = parquetio.Read(s, storage.Join(deadDir, "*.parquet"), reflect.TypeOf(schemas.DeadLetter{}))
			}
			out := harvest.LabelLexical
			if withSets {
				sets := parquetio.Read(s, storage.Join(setsDir, "*.parquet"), reflect.TypeOf(schemas.ContextSet{}))
				out = func(s beam.Scope, spec harvest.Spec, sampled, hits, rdead beam.PCollection) harvest.Outputs {
					return harvest.LabelWave(s, spec, sampled, hits, sets, rdead)
				}
			}
			out(s, spec, sampled, hits, rdead).WriteWave(s, c.Output, c.Shards, wave, plan.RunID, meta)
			return p
		}, &run)
		if err != nil {
			return run, err
		}
		if done {
			run.waves++
		}
		for k, v := range wc {
			if !harvest.PerSentenceCounter(k) {
				counters[k] += v
			}
		}
		fmt.Fprintf(os.Stderr, "%s: %d pairs labeled (%d in all so far), %s since the start\n",
			name, wc["harvest/pairs_labeled"], counters["harvest/pairs_labeled"], time.Since(start).Round(time.Second))
	}
	if err := c.commitWaves(ctx, waves, plan); err != nil {
		return run, err
	}
	// _waves/ stays until the summary is written (Run removes it): a run
	// stopped before that resumes with every step recorded and commits
	// again, which keeps the tables already committed.
	return run, nil
}

// commitWaves commits the tables the waves wrote.
func (c *Config) commitWaves(ctx context.Context, waves int, plan wavePlan) error {
	if err := harvest.CommitWaves(ctx, c.Output, c.Shards, waves, plan.RunID); err != nil {
		return err
	}
	if afterStep != nil {
		return afterStep("commit")
	}
	return nil
}
