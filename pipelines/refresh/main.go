// Command refresh keeps a harvest up to date with a corpus that gains,
// changes and loses documents. Each run writes a new, complete version under
// --root (corpus tables, index, labeled pairs) and then points
// <root>/CURRENT.json at it; earlier versions stay readable until
// --keep_versions newer ones exist.
//
//	go run ./pipelines/refresh --input='corpus/*.jsonl.gz' --model=out/model --root=out/labels
package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/ctxsim/ctxsim/pipelines/internal/beamjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/pipelines/internal/report"
	"github.com/ctxsim/ctxsim/pipelines/internal/settings"
	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/retrieval/corpus"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/harvest"
	"github.com/ctxsim/ctxsim/transforms/index"
	"github.com/ctxsim/ctxsim/transforms/ingest"
	"github.com/ctxsim/ctxsim/transforms/parquetio"
)

const usage = `
refresh: corpus + previous version -> new version of the index and labels.

Reads the corpus (--input, like the index job), compares it with the version
that <root>/CURRENT.json points at, and writes <root>/versions/vNNNNNN/:
  corpus/{sentences,chunks,dead_letters}/   the corpus tables
  corpus/index/                             the previous index, updated:
                                            chunks of removed or changed
                                            documents deleted, new ones added
  harvest/{pairs,context_sets,dead_letters}/, harvest/summary.json and
                                            harvest/report.html
  MANIFEST.json                             what the version holds
then rewrites CURRENT.json to point at it (the commit: readers never see a
partial version) and removes versions beyond --keep_versions.

Sentences already harvested keep their context sets, unless a set uses
text that left the corpus; only the other sentences are scored. Pairs are
sampled over the whole current corpus as the harvest job samples them; a
pair labeled before from the same two context sets keeps its label, the
others are labeled.
With no previous version, or one made with other settings or models, the
run harvests everything. A run whose corpus and settings equal the current
version's changes nothing.`

var (
	input      = flag.String("input", "", "Comma-separated corpus file globs, local or gs:// (required).")
	root       = flag.String("root", "", "Root of the versioned output, local or gs:// (required).")
	model      = flag.String("model", "", "Model directory from the train job, local or gs:// (required).")
	flags      = settings.Register(flag.CommandLine, "default")
	sample     = flag.Float64("sample", 1, "Fraction of corpus sentences to label, chosen by a hash of their IDs.")
	sampleFrom = flag.Float64("sample_from", 0, "Start of the sample's window of ID hashes: the sentences whose hash, as a fraction, lies in [sample_from, sample_from+sample). Runs with windows that do not overlap label disjoint sentences.")
	minWords   = flag.Int("min_words", 4, "Sentences with fewer words are not labelled.")
	quota      = flag.String("pair_quota", "near:1,mid:1,far:1,random:1", "Pairs each sentence owns per stratum.")
	neighbours = flag.Int("pair_neighbours", 200, "Top hits of a sentence that link it to other sentences.")
	seed       = flag.Uint64("seed", 1, "Seed of the pair sampler.")
	blas       = flag.String("blas", "go", "Matrix multiply: go (batch-invariant, reproducible bit for bit) or openblas.")
	shards     = flag.Int("shards", 4, "Index shards of a first version (later versions keep their parent's).")
	fileShards = flag.Int("parquet_shards", 4, "Files per Parquet table.")
	keep       = flag.Int("keep_versions", 3, "Versions kept, the current one included; older ones are removed.")
	workDir    = flag.String("work_dir", "", "Local scratch directory for index shards when --root is remote (default: the system's temporary directory).")
)

// Current is <root>/CURRENT.json.
type Current struct {
	Version  string `json:"version"`
	Manifest string `json:"manifest"`
}

// Manifest is <version>/MANIFEST.json.
type Manifest struct {
	Version          string             `json:"version"`
	Parent           string             `json:"parent,omitempty"`
	Created          string             `json:"created"`
	Inputs           []string           `json:"inputs"`
	Corpus           string             `json:"corpus_fingerprint"`
	Method           string             `json:"method_fingerprint"`
	IndexFingerprint string             `json:"index_fingerprint"`
	ModelFingerprint string             `json:"model_fingerprint"`
	Settings         method.Settings    `json:"settings"`
	Pairs            harvest.PairConfig `json:"pair_sampler"`
	Sample           float64            `json:"sample"`
	SampleFrom       float64            `json:"sample_from,omitempty"`
	MinWords         int                `json:"min_words"`
	Reused           bool               `json:"reused_parent"`
	Chunks           int                `json:"chunks"`
	ChunksAdded      int                `json:"chunks_added"`
	ChunksRemoved    int                `json:"chunks_removed"`
	Sentences        int                `json:"sentences"`
	Counters         jobrun.Counters    `json:"counters"`
	Seconds          map[string]float64 `json:"seconds"`
}

func main() {
	beamjob.Init(usage)
	jobrun.Require("input", "root", "model")
	jobrun.CheckRanges(jobrun.Range{Name: "sample", Lo: 0, Hi: 1, Open: true}, jobrun.Range{Name: "sample_from", Lo: 0, Hi: 1 - *sample},
		jobrun.Range{Name: "parquet_shards", Lo: 1, Hi: 1000},
		jobrun.Range{Name: "shards", Lo: 1, Hi: 256})
	jobrun.Lease("refresh", *root)
	defer jobrun.Release()
	if err := refresh(context.Background()); err != nil {
		jobrun.Fail(err)
	}
}

func refresh(ctx context.Context) error {
	if jobrun.NotRun() {
		return fmt.Errorf("refresh runs its jobs one after the other and commits at the end: " +
			"it cannot be a dry run, a template or asynchronous; run the driver itself (see deploy/README.md)")
	}
	start := time.Now()
	rootDir := absPath(*root)
	st, err := flags.Settings()
	if err != nil {
		return err
	}
	q, err := harvest.ParseQuota(*quota)
	if err != nil {
		return err
	}
	pc := harvest.DefaultPairConfig()
	pc.Seed, pc.Quota, pc.Neighbours = *seed, q, *neighbours
	models, err := resources.LoadModels(ctx, *model)
	if err != nil {
		return err
	}
	if err := models.Check(st); err != nil {
		return err
	}
	copts := corpus.Defaults()
	m := Manifest{Inputs: jobrun.SplitList(*input), ModelFingerprint: models.Fingerprint, Settings: st,
		Pairs: pc, Sample: *sample, SampleFrom: *sampleFrom, MinWords: *minWords, Seconds: map[string]float64{}}
	key := []any{st, pc, *sample, *minWords, models.Fingerprint, copts.ChunkSize, copts.ChunkStride, schemas.Version}
	if *sampleFrom != 0 {
		// Only a moved window changes the fingerprint, so versions made
		// before the flag existed stay current.
		key = append(key, *sampleFrom)
	}
	m.Method = digest(key...)

	prev, err := readCurrent(ctx, rootDir)
	if err != nil {
		return err
	}
	seq := 1
	if prev != nil {
		fmt.Sscanf(prev.Version, "v%d", &seq)
		seq++
		m.Parent = prev.Version
	}
	m.Version = fmt.Sprintf("v%06d", seq)
	vdir := storage.Join(rootDir, "versions/"+m.Version)
	// A directory of this name is what an interrupted run left: start over.
	if err := storage.RemoveAll(ctx, vdir); err != nil {
		return err
	}
	corpusDir, harvestDir := storage.Join(vdir, "corpus"), storage.Join(vdir, "harvest")

	// 1. Ingest the corpus into the new version's tables.
	t0 := time.Now()
	p, s := beam.NewPipelineWithRoot()
	in := ingest.Ingest(s, m.Inputs, copts)
	for name, col := range map[string]beam.PCollection{"sentences": in.Sentences, "chunks": in.Chunks, "dead_letters": in.Dead} {
		parquetio.Write(s, parquetio.Config{Dir: storage.Join(corpusDir, name), NumShards: *fileShards}, col)
	}
	c1, err := beamjob.Run(ctx, "refresh: ingest", p)
	if err != nil {
		return err
	}
	if err := c1.Reconcile("ingest/records_read", "ingest/documents_parsed", "ingest/records_dead"); err != nil {
		return err
	}
	m.Seconds["ingest"] = time.Since(t0).Seconds()

	// 2. Compare with the previous version.
	chunks, err := storage.ReadTable[schemas.Chunk](ctx, storage.Join(corpusDir, "chunks"))
	if err != nil {
		return err
	}
	sentIDs, err := readSentenceIDs(ctx, storage.Join(corpusDir, "sentences"))
	if err != nil {
		return err
	}
	m.Corpus = corpusFingerprint(chunks, sentIDs)
	m.Chunks, m.Sentences = len(chunks), len(sentIDs)
	var pm *Manifest
	if prev != nil {
		if pm, err = readManifest(ctx, prev.Manifest); err != nil {
			return err
		}
		if pm.Corpus == m.Corpus && pm.Method == m.Method {
			fmt.Printf("refresh: the corpus and settings are those of %s; nothing to do\n", pm.Version)
			return storage.RemoveAll(ctx, vdir)
		}
	}

	// 3. The index: the parent's, updated; or built afresh.
	t0 = time.Now()
	if err := updateIndex(ctx, pm, rootDir, corpusDir, chunks, &m); err != nil {
		return err
	}
	m.Seconds["index"] = time.Since(t0).Seconds()
	chunks = nil

	// 4. Harvest, reusing the parent's context sets and labels.
	t0 = time.Now()
	m.Reused = pm != nil && pm.Method == m.Method
	prevHarvest := ""
	if m.Reused {
		prevHarvest = storage.Join(rootDir, "versions/"+pm.Version+"/harvest")
	}
	c2, err := harvestVersion(ctx, corpusDir, harvestDir, prevHarvest, st, pc, &m)
	if err != nil {
		return err
	}
	m.Seconds["harvest"] = time.Since(t0).Seconds()
	m.Seconds["total"] = time.Since(start).Seconds()
	m.Counters = c1
	for k, v := range c2 {
		m.Counters[k] += v
	}
	m.Created = time.Now().UTC().Format(time.RFC3339)

	// 5. Commit: the manifest, then the pointer.
	b, _ := json.MarshalIndent(m, "", "  ")
	mpath := storage.Join(vdir, "MANIFEST.json")
	if err := storage.WriteFile(ctx, mpath, append(b, '\n')); err != nil {
		return err
	}
	cb, _ := json.MarshalIndent(Current{Version: m.Version, Manifest: mpath}, "", "  ")
	if err := storage.WriteFile(ctx, storage.Join(rootDir, "CURRENT.json"), append(cb, '\n')); err != nil {
		return err
	}
	fmt.Printf("refresh: %s is current (%d chunks: +%d -%d; context sets: %d reused, %d computed; pairs: %d copied, %d labeled) in %s\n",
		m.Version, m.Chunks, m.ChunksAdded, m.ChunksRemoved, c2["refresh/context_sets_reused"], c2["harvest/context_sets"],
		c2["refresh/labels_copied"], c2["harvest/pairs_labeled"], time.Since(start).Round(time.Second))
	fmt.Printf("refresh: pairs in %s/pairs\n", harvestDir)
	fmt.Printf("refresh: report in %s\n", storage.Join(harvestDir, "report.html"))
	return expire(ctx, rootDir, m.Version)
}

// harvestVersion runs the harvest over the version's corpus. With a
// previous harvest, sentences it has context sets for keep them, and pairs
// it labeled are copied.
func harvestVersion(ctx context.Context, corpusDir, outDir, prevDir string, st method.Settings,
	pc harvest.PairConfig, m *Manifest) (jobrun.Counters, error) {
	idx := storage.Join(corpusDir, "index")
	cfg := harvest.Config{Paths: resources.Paths{Chunks: storage.Join(corpusDir, "chunks/*.parquet"),
		Models: absPath(*model), Index: idx}, Settings: st, Seed: *seed, BLAS: *blas}
	lcfg := harvest.LabelConfig{Config: cfg, ModelFingerprint: m.ModelFingerprint, IndexFingerprint: m.IndexFingerprint}

	start, cpu0 := time.Now(), harvest.ProcessCPUSeconds()
	p, s := beam.NewPipelineWithRoot()
	sents := parquetio.Read(s, storage.Join(corpusDir, "sentences/*.parquet"), reflect.TypeOf(schemas.Sentence{}))
	sents = ingest.SampleWindow(s, *sampleFrom, *sample, harvest.FilterSentences(s, *minWords, sents))
	var fresh, reused beam.PCollection
	var hits, pairs, labeled beam.PCollection
	var dead []beam.PCollection
	if prevDir == "" {
		fresh = sents
	} else {
		prevSets := parquetio.Read(s, storage.Join(prevDir, "context_sets/*.parquet"), reflect.TypeOf(schemas.ContextSet{}))
		chunks := parquetio.Read(s, storage.Join(corpusDir, "chunks/*.parquet"), reflect.TypeOf(schemas.Chunk{}))
		var old beam.PCollection
		fresh, old, reused = harvest.ReuseSets(s, sents, prevSets, chunks)
		// Old sentences are retrieved again only for the pair sampler,
		// which looks at their top pc.Neighbours hits.
		oldHits, odead := index.Retrieve(s.Scope("old"), index.RetrieveConfig{IndexDir: idx, K: min(st.TopK, pc.Neighbours)}, old)
		hits, dead = oldHits, append(dead, odead)
	}
	newHits, rdead := index.Retrieve(s, index.RetrieveConfig{IndexDir: idx, K: st.TopK}, fresh)
	sets, cdead := harvest.ContextSets(s, cfg, newHits)
	dead = append(dead, rdead, cdead)
	if prevDir != "" {
		hits = beam.Flatten(s, hits, newHits)
		sets = beam.Flatten(s, sets, reused)
	} else {
		hits = newHits
	}
	pairs = harvest.SamplePairs(s, pc, sents, hits)
	var ldead beam.PCollection
	if prevDir != "" {
		prevPairs := parquetio.Read(s, storage.Join(prevDir, "pairs/*.parquet"), reflect.TypeOf(schemas.LabeledPair{}))
		labeled, ldead = harvest.LabelReusing(s, lcfg, pairs, sets, prevPairs)
	} else {
		labeled, ldead = harvest.Label(s, lcfg, pairs, sets)
	}
	dead = append(dead, ldead)
	parquetio.Write(s, parquetio.Config{Dir: storage.Join(outDir, "pairs"), NumShards: *fileShards}, labeled)
	parquetio.Write(s, parquetio.Config{Dir: storage.Join(outDir, "context_sets"), NumShards: *fileShards}, sets)
	parquetio.Write(s, parquetio.Config{Dir: storage.Join(outDir, "dead_letters"), NumShards: 1}, beam.Flatten(s, dead...))
	c, err := beamjob.Run(ctx, "refresh: harvest", p)
	if err != nil {
		return nil, err
	}
	sum := harvest.Summarize(c, st, pc, m.ModelFingerprint, m.IndexFingerprint, jobrun.RunnerName(),
		time.Since(start).Seconds(), harvest.ProcessCPUSeconds()-cpu0)
	sum.Version = m.Version
	b, _ := json.MarshalIndent(sum, "", "  ")
	if err := storage.WriteFile(ctx, storage.Join(outDir, "summary.json"), append(b, '\n')); err != nil {
		return nil, err
	}
	var reuse *report.ReuseInput
	if m.Parent != "" {
		reuse = &report.ReuseInput{Parent: m.Parent, ChunksAdded: m.ChunksAdded, ChunksRemoved: m.ChunksRemoved,
			SetsReused: sum.SetsReused, SetsComputed: sum.ContextSets, LabelsCopied: sum.Copied,
			PairsLabeled: sum.Labeled, StageSeconds: m.Seconds}
	}
	title := fmt.Sprintf("ctxsim refresh %s: %s", m.Version, outDir)
	_, err = jobrun.WriteHarvestReport(ctx, title, outDir, storage.Join(corpusDir, "chunks/*.parquet"), b, reuse)
	return c, err
}

// updateIndex writes the version's index: a copy of the parent's with the
// chunks of removed or changed documents deleted and new chunks added, or,
// without a usable parent index, a new one.
func updateIndex(ctx context.Context, pm *Manifest, rootDir, corpusDir string, chunks []schemas.Chunk, m *Manifest) error {
	dst := storage.Join(corpusDir, "index")
	local := dst
	if storage.IsRemote(dst) {
		tmp, err := os.MkdirTemp(*workDir, "ctxsim-refresh-index-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		local = filepath.Join(tmp, "index")
	}
	opts := retrieval.BuildOptions{Unigrams: true}
	n := *shards
	prevIDs := map[string]bool{}
	if pm != nil {
		pidx, err := storage.Fetch(ctx, storage.Join(rootDir, "versions/"+pm.Version+"/corpus/index"))
		if err != nil {
			return err
		}
		meta, err := retrieval.ReadMeta(pidx)
		if err != nil {
			return err
		}
		n, opts.Unigrams = meta.NumShards, meta.Unigrams
		if err := retrieval.CopyDir(pidx, local); err != nil {
			return err
		}
		os.Remove(filepath.Join(local, ".ctxsim-fetched.json"))
		pchunks, err := readChunkIDs(ctx, storage.Join(rootDir, "versions/"+pm.Version+"/corpus/chunks"))
		if err != nil {
			return err
		}
		for _, id := range pchunks {
			prevIDs[id] = true
		}
	} else {
		for i := range n {
			w, err := retrieval.CreateShard(local, i, n, opts)
			if err != nil {
				return err
			}
			if _, err := w.Close(); err != nil {
				return err
			}
		}
	}
	remove := make([][]string, n)
	add := make([][]schemas.Chunk, n)
	cur := make(map[string]bool, len(chunks))
	for _, c := range chunks {
		if cur[c.ID] {
			continue // a duplicate, dead-lettered by the index job too
		}
		cur[c.ID] = true
		if !prevIDs[c.ID] {
			sh := retrieval.ShardOf(c.ID, n)
			add[sh] = append(add[sh], c)
			m.ChunksAdded++
		}
	}
	for id := range prevIDs {
		if !cur[id] {
			sh := retrieval.ShardOf(id, n)
			remove[sh] = append(remove[sh], id)
			m.ChunksRemoved++
		}
	}
	sms := make([]retrieval.ShardMeta, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		sort.Strings(remove[i])
		sort.Slice(add[i], func(a, b int) bool { return add[i][a].ID < add[i][b].ID })
		wg.Add(1)
		go func() {
			defer wg.Done()
			sms[i], errs[i] = retrieval.UpdateShard(filepath.Join(local, retrieval.ShardDir(i, n)), remove[i], add[i], opts)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	meta, err := retrieval.MetaOf(sms, opts, fmt.Sprintf("size=%d,stride=%d", corpus.DefaultChunkSize, corpus.DefaultChunkStride))
	if err != nil {
		return err
	}
	if err := retrieval.WriteMeta(local, meta); err != nil {
		return err
	}
	m.IndexFingerprint = meta.ID()
	return storage.Publish(ctx, local, dst, retrieval.MetaFile)
}

// expire removes versions older than the newest --keep_versions, never the
// current one.
func expire(ctx context.Context, rootDir, current string) error {
	if *keep < 1 {
		return nil
	}
	found, err := storage.Glob(ctx, storage.Join(rootDir, "versions/*/MANIFEST.json"))
	if err != nil {
		return err
	}
	var versions []string
	for _, f := range found {
		v := filepath.Base(strings.TrimSuffix(f, "/MANIFEST.json"))
		if strings.HasPrefix(v, "v") {
			versions = append(versions, v)
		}
	}
	sort.Strings(versions)
	for i, v := range versions {
		if i < len(versions)-*keep && v != current {
			if err := storage.RemoveAll(ctx, storage.Join(rootDir, "versions/"+v)); err != nil {
				return err
			}
			fmt.Printf("refresh: removed expired version %s\n", v)
		}
	}
	return nil
}

func readCurrent(ctx context.Context, rootDir string) (*Current, error) {
	name := storage.Join(rootDir, "CURRENT.json")
	ok, err := storage.Exists(ctx, name)
	if err != nil || !ok {
		return nil, err
	}
	b, err := storage.ReadFile(ctx, name)
	if err != nil {
		return nil, err
	}
	var c Current
	if err := json.Unmarshal(b, &c); err != nil || c.Version == "" {
		return nil, fmt.Errorf("%s: corrupt pointer (%v): fix or remove it", name, err)
	}
	return &c, nil
}

func readManifest(ctx context.Context, name string) (*Manifest, error) {
	b, err := storage.ReadFile(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("current version's manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &m, nil
}

func readChunkIDs(ctx context.Context, dir string) ([]string, error) {
	cs, err := storage.ReadTable[schemas.Chunk](ctx, dir)
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids, err
}

func readSentenceIDs(ctx context.Context, dir string) ([]string, error) {
	ss, err := storage.ReadTable[schemas.Sentence](ctx, dir)
	ids := make([]string, len(ss))
	for i, s := range ss {
		ids[i] = s.ID
	}
	return ids, err
}

// corpusFingerprint digests the sets of chunk and sentence IDs (IDs hash
// the text, so an edited document changes them).
func corpusFingerprint(chunks []schemas.Chunk, sentIDs []string) string {
	var fc, fs retrieval.Fingerprint
	seen := map[string]bool{}
	for _, c := range chunks {
		if !seen[c.ID] {
			seen[c.ID] = true
			fc.AddID(c.ID)
		}
	}
	seen = map[string]bool{}
	for _, id := range sentIDs {
		if !seen[id] {
			seen[id] = true
			fs.AddID(id)
		}
	}
	return fc.String() + "/" + fs.String()
}

func digest(vs ...any) string {
	b, _ := json.Marshal(vs)
	h := sha256.Sum256(b)
	return fmt.Sprintf("%x", h[:12])
}

func absPath(p string) string {
	if storage.IsRemote(p) {
		return strings.TrimSuffix(p, "/")
	}
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}
