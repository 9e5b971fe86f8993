// Package refreshjob is bin/refresh: it keeps a harvest up to date with a
// corpus that gains, changes and loses documents. Each run writes a new,
// complete version under the root (corpus tables, index, labeled pairs)
// and then makes it current (package storage/versions); earlier versions
// stay readable until enough newer ones exist.
package refreshjob

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/ctxsim/ctxsim/pipelines/internal/beamjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/encodejob"
	"github.com/ctxsim/ctxsim/pipelines/internal/harvestjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/pipelines/internal/report"
	"github.com/ctxsim/ctxsim/pipelines/internal/settings"
	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/retrieval/corpus"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/storage/versions"
	"github.com/ctxsim/ctxsim/transforms/harvest"
	"github.com/ctxsim/ctxsim/transforms/ingest"
	"github.com/ctxsim/ctxsim/transforms/parquetio"
)

const Usage = `
refresh: corpus + previous version -> new version of the index and labels.

Reads the corpus (--input, like the index job), compares it with the version
that <root>/CURRENT.json points at, and writes <root>/versions/vNNNNNN/:
  corpus/{sentences,chunks,dead_letters}/   the corpus tables
  corpus/index/                             the previous index, updated:
                                            chunks of removed or changed
                                            documents deleted, new ones added
  corpus/vectors/                           with --vectors=encode: the
                                            sentences' stored vectors
                                            (bin/encode), which the harvest
                                            loads instead of computing
  harvest/{pairs,context_sets,dead_letters}/, harvest/summary.json and
                                            harvest/report.html
  MANIFEST.json                             what the version holds
then rewrites CURRENT.json to point at it, by its path relative to the root
(the commit: readers never see a partial version; the root can be moved or
copied), and removes versions beyond --keep_versions.

Sentences already harvested keep their context sets, unless a set uses
text that left the corpus; only the other sentences are scored. Pairs are
sampled over the whole current corpus as the harvest job samples them; a
pair labeled before from the same two context sets keeps its label, the
others are labeled.
With no previous version, or one made with other settings or models, the
run harvests everything. A run whose corpus and settings equal the current
version's changes nothing.

The method flags are bin/harvest's, with its defaults: every sentence
(--sample=1) at the paper's depth (--preset=default, top_k 20000), the
slowest setting; --sample or --preset=small or demo make a quicker run.`

// Config is the refresh job's command line.
type Config struct {
	// Input is the comma-separated corpus files, globs or directories;
	// Root the versioned output's root; Model the train job's output.
	Input, Root, Model string
	// TextField and IDField name the JSONL fields or Parquet or CSV
	// columns of a document's text and ID, as bin/index reads them.
	TextField, IDField string
	// Method is the harvest's method, sampling and seed (settings.Harvest).
	Method settings.Harvest
	// Shards is the index shards of a first version, FileShards the files
	// per Parquet table, Keep the versions kept.
	Shards, FileShards, Keep int
	// WorkDir holds index shards while they are built for a remote root.
	WorkDir string
	// Vectors is "none" (the harvest's workers compute the sentence
	// vectors they need) or "encode" (each version's sentence vectors are
	// stored once beside its index, as bin/encode stores them, and the
	// harvest loads them).
	Vectors string

	flags *settings.HarvestFlags
}

// Register adds the job's flags to fs, bound to c; Resolve reads the
// method flags after parsing.
func (c *Config) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.Input, "input", "", "Comma-separated corpus files, globs or directories, local or gs://, in the formats bin/index reads (required).")
	fs.StringVar(&c.TextField, "text_field", corpus.DefaultTextField, "JSONL field (when a record has no \"paragraphs\"), or Parquet or CSV column, holding a document's text, as in bin/index.")
	fs.StringVar(&c.IDField, "id_field", corpus.DefaultIDField, "JSONL field (when a record has no \"doc_id\"), or Parquet or CSV column, holding a document's ID, as in bin/index.")
	fs.StringVar(&c.Root, "root", "", "Root of the versioned output, local or gs:// (required).")
	fs.StringVar(&c.Model, "model", "", "Model directory from the train job, local or gs:// (required).")
	c.flags = settings.RegisterHarvest(fs)
	fs.IntVar(&c.Shards, "shards", 4, "Index shards of a first version (later versions keep their parent's).")
	fs.IntVar(&c.FileShards, "parquet_shards", 4, "Files per Parquet table.")
	fs.IntVar(&c.Keep, "keep_versions", 3, "Versions kept, the current one included; older ones are removed (0: keep every version).")
	fs.StringVar(&c.Vectors, "vectors", VectorsNone, "Sentence vectors of each version: none (the harvest's workers compute those they need) or encode "+
		"(encode all of the version's sentences once into corpus/vectors, as bin/encode does, and load them: worth it when many workers would each compute them; the labels are the same).")
	fs.StringVar(&c.WorkDir, "work_dir", "", "Local scratch directory for index shards when --root is remote (default: the system's temporary directory).")
}

// Values of Config.Vectors.
const (
	VectorsNone   = "none"
	VectorsEncode = "encode"
)

// Resolve parses the method flags into c.Method.
func (c *Config) Resolve() error {
	if c.Vectors != "" && c.Vectors != VectorsNone && c.Vectors != VectorsEncode {
		return fmt.Errorf("--vectors must be %s or %s, got %q", VectorsNone, VectorsEncode, c.Vectors)
	}
	if c.flags == nil {
		return nil
	}
	h, err := c.flags.Harvest()
	c.Method = h
	if err == nil && !h.Method.NeedsContexts() {
		return fmt.Errorf("refresh reuses context sets, and --labeler=%s builds none: label with bin/harvest instead", method.LabelerLexical)
	}
	return err
}

// maxKeep bounds --keep_versions.
const maxKeep = 10000

// Ranges are the bounds of the job's numeric flags.
func (c *Config) Ranges() []jobrun.Range {
	return append(c.flags.Ranges(), jobrun.Range{Name: "parquet_shards", Lo: 1, Hi: 1000},
		jobrun.Range{Name: "shards", Lo: 1, Hi: 256}, jobrun.Range{Name: "keep_versions", Lo: 0, Hi: maxKeep})
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

// Run makes a new version of the index and labels for the corpus and
// commits it, or changes nothing when the corpus and settings are those of
// the current version.
func Run(ctx context.Context, c Config) error {
	if jobrun.NotRun() {
		return fmt.Errorf("refresh runs its jobs one after the other and commits at the end: " +
			"it cannot be a dry run, a template or asynchronous; run the driver itself (see deploy/README.md)")
	}
	if c.Keep < 0 || c.Keep > maxKeep {
		return fmt.Errorf("--keep_versions=%d is outside [0, %d] (0 keeps every version)", c.Keep, maxKeep)
	}
	start := time.Now()
	root := versions.Root(absPath(c.Root))
	models, err := resources.LoadModels(ctx, c.Model)
	if err != nil {
		return err
	}
	if err := models.Check(c.Method.Method); err != nil {
		return err
	}
	if err := harvestjob.CheckPrecision(c.Method.Method); err != nil {
		return err
	}
	pc, err := harvestjob.PairConfig(c.Method)
	if err != nil {
		return err
	}
	copts := corpus.Defaults()
	copts.TextField, copts.IDField = cmp.Or(c.TextField, copts.TextField), cmp.Or(c.IDField, copts.IDField)
	if err := copts.Validate(); err != nil {
		return err
	}
	m := Manifest{Inputs: jobrun.SplitList(c.Input), ModelFingerprint: models.Fingerprint, Settings: c.Method.Method,
		Pairs: pc, Sample: c.Method.Sample, SampleFrom: c.Method.SampleFrom, MinWords: c.Method.MinWords,
		Seconds: map[string]float64{}}
	if m.Method, err = methodFingerprint(c.Method, pc, models.Fingerprint, copts); err != nil {
		return err
	}

	prev, err := root.Current(ctx)
	if err != nil {
		return err
	}
	m.Version = versions.Next(prev)
	if prev != nil {
		m.Parent = prev.Version
	}
	vdir, err := root.Begin(ctx, m.Version)
	if err != nil {
		return err
	}
	corpusDir, harvestDir := storage.Join(vdir, "corpus"), storage.Join(vdir, "harvest")

	// 1. Ingest the corpus into the new version's tables.
	t0 := time.Now()
	c1, err := ingestVersion(ctx, m.Inputs, copts, corpusDir, c.FileShards)
	if err != nil {
		return err
	}
	m.Seconds["ingest"] = time.Since(t0).Seconds()

	// 2. Compare with the previous version.
	chunks, err := storage.ReadTable[schemas.Chunk](ctx, storage.Join(corpusDir, "chunks"))
	if err != nil {
		return err
	}
	sentIDs, err := readIDs(ctx, storage.Join(corpusDir, "sentences"), func(s schemas.Sentence) string { return s.ID })
	if err != nil {
		return err
	}
	m.Corpus = corpusFingerprint(chunks, sentIDs)
	m.Chunks, m.Sentences = len(chunks), len(sentIDs)
	var pm *Manifest
	if prev != nil {
		pm = &Manifest{}
		if err := root.ReadManifest(ctx, prev, pm); err != nil {
			return err
		}
		if pm.Corpus == m.Corpus && pm.Method == m.Method {
			fmt.Printf("refresh: the corpus and settings are those of %s; nothing to do\n", pm.Version)
			return storage.RemoveAll(ctx, vdir)
		}
	}

	harvestjob.WarnUnknownRevision(os.Stderr, "refresh", harvest.ThisTool())
	if pm == nil || pm.Method != m.Method || pm.ModelFingerprint != m.ModelFingerprint {
		// Every sentence is labeled: no earlier label can be reused.
		harvestjob.WarnWholeCorpus(os.Stderr, "refresh", c.Method, int64(m.Sentences))
	}

	// 3. The index: the parent's, updated; or built afresh.
	t0 = time.Now()
	if err := updateIndex(ctx, root, pm, corpusDir, chunks, c, &m); err != nil {
		return err
	}
	m.Seconds["index"] = time.Since(t0).Seconds()
	chunks = nil

	// 3b. The sentences' stored vectors, when asked for.
	if c.Vectors == VectorsEncode {
		t0 = time.Now()
		// The parent's vectors, where it stored them, are copied for the
		// sentences it shares with this version.
		reuse := ""
		if pm != nil {
			reuse = vectorsDir(storage.Join(root.Dir(pm.Version), "corpus"))
		}
		if err := encodejob.Run(ctx, encodejob.Config{Sentences: storage.Join(corpusDir, "sentences/*.parquet"),
			Output: vectorsDir(corpusDir), Model: c.Model, Shards: c.FileShards, BLAS: c.Method.BLAS,
			Reuse: reuse}); err != nil {
			return fmt.Errorf("encoding the sentence vectors: %w", err)
		}
		m.Seconds["encode"] = time.Since(t0).Seconds()
		fmt.Printf("refresh: the harvest loads the sentence vectors in %s\n", vectorsDir(corpusDir))
	}

	// 4. Harvest, reusing the parent's context sets and labels.
	t0 = time.Now()
	m.Reused = pm != nil && pm.Method == m.Method
	prevHarvest := ""
	if m.Reused {
		prevHarvest = storage.Join(root.Dir(pm.Version), "harvest")
	}
	c2, err := harvestVersion(ctx, c, corpusDir, harvestDir, prevHarvest, pc, &m)
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
	if err := root.Commit(ctx, m.Version, m); err != nil {
		return err
	}
	jobrun.Committed() // a failure to expire old versions keeps this one
	fmt.Printf("refresh: %s is current (%d chunks: +%d -%d; context sets: %d reused, %d computed; pairs: %d copied, %d labeled) in %s\n",
		m.Version, m.Chunks, m.ChunksAdded, m.ChunksRemoved, c2["refresh/context_sets_reused"], c2["harvest/context_sets"],
		c2["refresh/labels_copied"], c2["harvest/pairs_labeled"], time.Since(start).Round(time.Second))
	fmt.Printf("refresh: pairs in %s/pairs\n", harvestDir)
	fmt.Printf("refresh: report in %s\n", storage.Join(harvestDir, "report.html"))
	removed, err := root.Expire(ctx, c.Keep, m.Version)
	for _, v := range removed {
		fmt.Printf("refresh: removed expired version %s\n", v)
	}
	return err
}

// methodFingerprint digests what decides a version's labels besides its
// corpus: the method, the pair sampler, the sample, the models, the
// chunking and the schema.
func methodFingerprint(h settings.Harvest, pc harvest.PairConfig, modelFP string, copts corpus.Options) (string, error) {
	key := []any{h.Method, pc, h.Sample, h.MinWords, modelFP, copts.ChunkSize, copts.ChunkStride, schemas.Version}
	if d := corpus.Defaults(); copts.TextField != d.TextField || copts.IDField != d.IDField {
		// Other fields read other documents; the default ones leave the
		// fingerprint of versions made before the flags existed.
		key = append(key, copts.TextField, copts.IDField)
	}
	if h.SampleFrom != 0 {
		// Only a moved window changes the fingerprint, so versions made
		// before the window existed stay current.
		key = append(key, h.SampleFrom)
	}
	return digest(key...)
}

// vectorsDir is where --vectors=encode stores a version's sentence
// vectors, given its corpus directory.
func vectorsDir(corpusDir string) string { return storage.Join(corpusDir, "vectors") }

// ingestVersion reads the corpus into the version's corpus tables.
func ingestVersion(ctx context.Context, inputs []string, copts corpus.Options, corpusDir string, shards int) (jobrun.Counters, error) {
	p, s := beam.NewPipelineWithRoot()
	in := ingest.Ingest(s, inputs, copts)
	for name, col := range map[string]beam.PCollection{"sentences": in.Sentences, "chunks": in.Chunks, "dead_letters": in.Dead} {
		parquetio.Write(s, parquetio.Config{Dir: storage.Join(corpusDir, name), NumShards: shards}, col)
	}
	c, err := beamjob.Run(ctx, "refresh: ingest", p)
	if err != nil {
		return nil, err
	}
	return c, c.Reconcile("ingest/records_read", "ingest/documents_parsed", "ingest/records_dead")
}

// harvestVersion runs the harvest over the version's corpus. With a
// previous harvest, sentences it has context sets for keep them, and pairs
// it labeled are copied.
func harvestVersion(ctx context.Context, c Config, corpusDir, outDir, prevDir string, pc harvest.PairConfig, m *Manifest) (jobrun.Counters, error) {
	chunksGlob := storage.Join(corpusDir, "chunks/*.parquet")
	paths := resources.Paths{Chunks: chunksGlob, Models: absPath(c.Model), Index: storage.Join(corpusDir, "index")}
	if c.Vectors == VectorsEncode {
		paths.Vectors = vectorsDir(corpusDir)
	}
	spec := harvestjob.NewSpec(c.Method, pc, paths, m.ModelFingerprint, m.IndexFingerprint)
	prov := harvest.NewProvenance(spec, c.Method.Preset)
	prov.RunID, prov.Command, prov.Inputs, prov.Version = storage.RunID(), os.Args, m.Inputs, m.Version
	prov.Corpus, prov.Sentences, prov.Output = corpusDir, storage.Join(corpusDir, "sentences/*.parquet"), outDir
	prov.Model = absPath(c.Model)
	meta, err := prov.Metadata()
	if err != nil {
		return nil, err
	}

	start, cpu0 := time.Now(), harvest.ProcessCPUSeconds()
	p, s := beam.NewPipelineWithRoot()
	sents := parquetio.Read(s, storage.Join(corpusDir, "sentences/*.parquet"), reflect.TypeOf(schemas.Sentence{}))
	var prev *harvest.Previous
	if prevDir != "" {
		prev = &harvest.Previous{
			Sets:   parquetio.Read(s, storage.Join(prevDir, "context_sets/*.parquet"), reflect.TypeOf(schemas.ContextSet{})),
			Chunks: parquetio.Read(s, chunksGlob, reflect.TypeOf(schemas.Chunk{})),
			Pairs:  parquetio.Read(s, storage.Join(prevDir, "pairs/*.parquet"), reflect.TypeOf(schemas.LabeledPair{})),
		}
	}
	harvest.Harvest(s, spec, sents, prev).Write(s, outDir, c.FileShards, meta)
	counters, err := beamjob.Run(ctx, "refresh: harvest", p)
	if err != nil {
		return nil, err
	}
	sum := harvest.Summarize(counters, spec.Settings, pc, m.ModelFingerprint, m.IndexFingerprint, jobrun.RunnerName(),
		time.Since(start).Seconds(), harvest.ProcessCPUSeconds()-cpu0)
	sum.Version = m.Version
	sum.Provenance = &prov
	b, err := harvestjob.WriteSummary(ctx, outDir, sum)
	if err != nil {
		return nil, err
	}
	var reuse *report.ReuseInput
	if m.Parent != "" {
		reuse = &report.ReuseInput{Parent: m.Parent, ChunksAdded: m.ChunksAdded, ChunksRemoved: m.ChunksRemoved,
			SetsReused: sum.SetsReused, SetsComputed: sum.ContextSets, LabelsCopied: sum.Copied,
			PairsLabeled: sum.Labeled, StageSeconds: m.Seconds}
	}
	title := fmt.Sprintf("ctxsim refresh %s: %s", m.Version, outDir)
	_, err = jobrun.WriteHarvestReport(ctx, title, outDir, chunksGlob, b, reuse)
	return counters, err
}

// updateIndex writes the version's index (retrieval.Update): a copy of
// the parent's with the chunks of removed or changed documents deleted
// and new chunks added, or, without a parent, a new one. A remote index is
// built in a local scratch directory and published.
func updateIndex(ctx context.Context, root versions.Root, pm *Manifest, corpusDir string, chunks []schemas.Chunk, c Config, m *Manifest) error {
	dst := storage.Join(corpusDir, "index")
	local := dst
	if storage.IsRemote(dst) {
		tmp, err := os.MkdirTemp(c.WorkDir, "ctxsim-refresh-index-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		local = filepath.Join(tmp, "index")
	}
	parent, parentIDs := "", []string(nil)
	if pm != nil {
		pdir := storage.Join(root.Dir(pm.Version), "corpus")
		pidx, err := storage.Fetch(ctx, storage.Join(pdir, "index"))
		if err != nil {
			return err
		}
		if parentIDs, err = readIDs(ctx, storage.Join(pdir, "chunks"), func(c schemas.Chunk) string { return c.ID }); err != nil {
			return err
		}
		parent = pidx
	}
	u, err := retrieval.Update(local, parent, parentIDs, chunks, c.Shards, retrieval.BuildOptions{Unigrams: true, RunID: storage.RunID()},
		fmt.Sprintf("size=%d,stride=%d", corpus.DefaultChunkSize, corpus.DefaultChunkStride))
	if err != nil {
		return err
	}
	m.ChunksAdded, m.ChunksRemoved, m.IndexFingerprint = u.Added, u.Removed, u.Meta.ID()
	return storage.Publish(ctx, local, dst, retrieval.MetaFile)
}

// readIDs reads the IDs of a table's rows.
func readIDs[T any](ctx context.Context, dir string, id func(T) string) ([]string, error) {
	var ids []string
	err := storage.ScanTable(ctx, dir, func(v T) bool {
		ids = append(ids, id(v))
		return true
	})
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

// digest is a short SHA-256 of vs encoded as JSON; it fails for values
// JSON cannot encode (a NaN setting), which would otherwise all digest
// alike.
func digest(vs ...any) (string, error) {
	b, err := json.Marshal(vs)
	if err != nil {
		return "", fmt.Errorf("fingerprint of the settings: %w", err)
	}
	h := sha256.Sum256(b)
	return fmt.Sprintf("%x", h[:12]), nil
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
