// Package index holds the Beam transforms that build a sharded chunk index
// and query it.
package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/beamreg"
	"github.com/ctxsim/ctxsim/transforms/counter"
	"github.com/ctxsim/ctxsim/transforms/progress"
)

func init() {
	beamreg.DoFn(&keyByShardFn{})
	register.Emitter2[int, schemas.Chunk]()
	beamreg.DoFn(&buildShardFn{})
	register.Iter1[schemas.Chunk]()
	register.Emitter1[string]()
	register.Emitter1[schemas.DeadLetter]()
	beamreg.DoFn(&finalizeFn{})
	register.Iter1[string]()
}

// Stage names this package's dead letters.
const Stage = "index"

// ReasonDuplicateChunk is the dead-letter reason of a chunk whose ID is
// already in the index.
const ReasonDuplicateChunk = "duplicate_chunk"

// BuildConfig configures Build.
type BuildConfig struct {
	// Dir is the index directory, local or remote (gs://). bleve writes to
	// a local filesystem, so remote shards are built in a local temporary
	// directory and published when complete.
	Dir string
	// NumShards is the number of shards, built in parallel.
	NumShards int
	// Unigrams adds a unigram field (see retrieval.BuildOptions).
	Unigrams bool
	// Chunking describes how chunks were cut, recorded in the metadata.
	Chunking string
	// RunID is recorded in the metadata; empty means storage.RunID().
	RunID string
	// Append adds the chunks to the shards of an index already in Dir
	// (retrieval.AppendShard) instead of building new shards: bin/index
	// in parts builds the shards in its first part and appends the
	// others. A shard that gets no chunk is left as it is.
	Append bool
}

// Build indexes chunks into cfg.NumShards shards under cfg.Dir. It returns
// the index metadata (JSON) once the index is complete, and dead letters for
// chunks that could not be indexed.
func Build(s beam.Scope, cfg BuildConfig, chunks beam.PCollection) (meta, dead beam.PCollection) {
	s = s.Scope("index.Build")
	if cfg.NumShards <= 0 {
		cfg.NumShards = 1
	}
	if cfg.RunID == "" {
		cfg.RunID = storage.RunID()
	}
	keyed := beam.ParDo(s, &keyByShardFn{NumShards: cfg.NumShards}, chunks)
	shards, dead := beam.ParDo2(s, &buildShardFn{Dir: cfg.Dir, NumShards: cfg.NumShards, Unigrams: cfg.Unigrams, Append: cfg.Append},
		beam.GroupByKey(s, keyed))
	meta = beam.ParDo(s, &finalizeFn{Dir: cfg.Dir, NumShards: cfg.NumShards, Unigrams: cfg.Unigrams, Chunking: cfg.Chunking, RunID: cfg.RunID, Append: cfg.Append},
		beam.Impulse(s), beam.SideInput{Input: shards})
	return meta, dead
}

// shardBuildDir returns where a shard of dir is built: dir itself when
// local, else a new local temporary directory (removed by the caller).
func shardBuildDir(dir string) (string, func(), error) {
	if !storage.IsRemote(dir) {
		return dir, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "ctxsim-index-")
	if err != nil {
		return "", nil, err
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

type keyByShardFn struct {
	NumShards int
}

func (f *keyByShardFn) ProcessElement(c schemas.Chunk, emit func(int, schemas.Chunk)) {
	emit(retrieval.ShardOf(c.ID, f.NumShards), c)
}

// buildShardFn writes one shard from all of its chunks.
type buildShardFn struct {
	Dir       string
	NumShards int
	Unigrams  bool
	Append    bool

	indexed, dups counter.Counter
}

func (f *buildShardFn) Setup() {
	f.indexed = counter.New("index", "chunks_indexed")
	f.dups = counter.New("index", "chunks_duplicate")
}

func (f *buildShardFn) ProcessElement(ctx context.Context, shard int, chunks func(*schemas.Chunk) bool,
	emit func(string), emitDead func(schemas.DeadLetter)) error {
	dir, cleanup, err := shardBuildDir(f.Dir)
	if err != nil {
		return err
	}
	defer cleanup()
	name := retrieval.ShardDir(shard, f.NumShards)
	opts := retrieval.BuildOptions{Unigrams: f.Unigrams}
	var w *retrieval.ShardWriter
	if f.Append {
		src, ferr := storage.Fetch(ctx, storage.Join(f.Dir, name))
		if ferr != nil {
			return fmt.Errorf("append to shard %d: %w", shard, ferr)
		}
		w, err = retrieval.AppendShard(src, dir, shard, f.NumShards, opts)
	} else {
		w, err = retrieval.CreateShard(dir, shard, f.NumShards, opts)
	}
	if err != nil {
		return err
	}
	prog := progress.New(fmt.Sprintf("index shard %d/%d", shard, f.NumShards), "chunks")
	var c schemas.Chunk
	for chunks(&c) {
		err := w.Add(&c)
		if errors.Is(err, retrieval.ErrDuplicateChunk) {
			f.dups.Inc(ctx, 1)
			emitDead(schemas.DeadLetter{Stage: Stage, Source: c.DocID, Reason: ReasonDuplicateChunk,
				Detail: fmt.Sprintf("chunk %s (doc %s, start %d) is already indexed", c.ID, c.DocID, c.Start),
				Record: c.ID})
			continue
		}
		if err != nil {
			w.Abort()
			return err
		}
		f.indexed.Inc(ctx, 1)
		prog.Add(1)
	}
	sm, err := w.Close()
	if err != nil {
		return err
	}
	if err := storage.Publish(ctx, filepath.Join(dir, name), storage.Join(f.Dir, name)); err != nil {
		return err
	}
	prog.Done()
	b, err := json.Marshal(sm)
	if err != nil {
		return err
	}
	emit(string(b))
	return nil
}

// finalizeFn completes the index once every shard is written.
type finalizeFn struct {
	Dir       string
	NumShards int
	Unigrams  bool
	Chunking  string
	RunID     string
	Append    bool
}

func (f *finalizeFn) ProcessElement(ctx context.Context, _ []byte, shards func(*string) bool) (string, error) {
	opts := retrieval.BuildOptions{Unigrams: f.Unigrams, RunID: f.RunID}
	if !storage.IsRemote(f.Dir) {
		var s string
		for shards(&s) {
			// The shard metadata is re-read from the shards themselves;
			// iterating makes the dependency on every shard explicit.
		}
		m, err := retrieval.Finalize(f.Dir, f.NumShards, opts, f.Chunking)
		if err != nil {
			return "", err
		}
		b, err := json.Marshal(m)
		return string(b), err
	}
	m, err := finalizeRemote(ctx, f.Dir, f.NumShards, opts, f.Chunking, f.Append, shards)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// finalizeRemote completes a remote index from the metadata its shard
// builders emitted: it publishes an empty shard for every shard that got no
// chunk (when appending, it reads that shard's own metadata instead),
// removes what earlier builds left that is not part of this index, and
// writes the metadata file last.
func finalizeRemote(ctx context.Context, dir string, n int, opts retrieval.BuildOptions, chunking string, appending bool,
	shards func(*string) bool) (retrieval.Meta, error) {
	all := make([]retrieval.ShardMeta, n)
	have := make([]bool, n)
	var s string
	for shards(&s) {
		var sm retrieval.ShardMeta
		if err := json.Unmarshal([]byte(s), &sm); err != nil {
			return retrieval.Meta{}, fmt.Errorf("shard metadata %q: %w", s, err)
		}
		if sm.Shard < 0 || sm.Shard >= n {
			return retrieval.Meta{}, fmt.Errorf("shard metadata %q: shard out of range", s)
		}
		all[sm.Shard], have[sm.Shard] = sm, true
	}
	for i := range n {
		if have[i] {
			continue
		}
		if appending {
			src, err := storage.Fetch(ctx, storage.Join(dir, retrieval.ShardDir(i, n)))
			if err != nil {
				return retrieval.Meta{}, fmt.Errorf("shard %d, which this part left as it was: %w", i, err)
			}
			if all[i], err = retrieval.ReadShardMeta(src); err != nil {
				return retrieval.Meta{}, err
			}
			continue
		}
		tmp, err := os.MkdirTemp("", "ctxsim-index-")
		if err != nil {
			return retrieval.Meta{}, err
		}
		defer os.RemoveAll(tmp)
		w, err := retrieval.CreateShard(tmp, i, n, opts)
		if err != nil {
			return retrieval.Meta{}, err
		}
		if all[i], err = w.Close(); err != nil {
			return retrieval.Meta{}, err
		}
		name := retrieval.ShardDir(i, n)
		if err := storage.Publish(ctx, filepath.Join(tmp, name), storage.Join(dir, name)); err != nil {
			return retrieval.Meta{}, err
		}
	}
	m, err := retrieval.MetaOf(all, opts, chunking)
	if err != nil {
		return m, fmt.Errorf("%s: %w", dir, err)
	}
	keep := []string{retrieval.MetaFile}
	for i := range n {
		keep = append(keep, retrieval.ShardDir(i, n)+"/")
	}
	if err := storage.RemoveExcept(ctx, dir, keep); err != nil {
		return m, err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return m, err
	}
	// Written as a table's manifest is: not at all once the run has failed.
	return m, storage.CommitFile(ctx, dir, retrieval.MetaFile, append(b, '\n'))
}
