// Package index holds the Beam transforms that build a sharded chunk index
// and query it.
package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/transforms/progress"
)

func init() {
	register.DoFn2x0[schemas.Chunk, func(int, schemas.Chunk)](&keyByShardFn{})
	register.Emitter2[int, schemas.Chunk]()
	register.DoFn5x1[context.Context, int, func(*schemas.Chunk) bool, func(string), func(schemas.DeadLetter), error](&buildShardFn{})
	register.Iter1[schemas.Chunk]()
	register.Emitter1[string]()
	register.Emitter1[schemas.DeadLetter]()
	register.DoFn3x2[context.Context, []byte, func(*string) bool, string, error](&finalizeFn{})
	register.Iter1[string]()
}

// Stage names this package's dead letters.
const Stage = "index"

// ReasonDuplicateChunk is the dead-letter reason of a chunk whose ID is
// already in the index.
const ReasonDuplicateChunk = "duplicate_chunk"

// BuildConfig configures Build.
type BuildConfig struct {
	// Dir is the index directory. It must be a local path: bleve writes to
	// a local filesystem.
	Dir string
	// NumShards is the number of shards, built in parallel.
	NumShards int
	// Unigrams adds a unigram field (see retrieval.BuildOptions).
	Unigrams bool
	// Chunking describes how chunks were cut, recorded in the metadata.
	Chunking string
}

// Build indexes chunks into cfg.NumShards shards under cfg.Dir. It returns
// the index metadata (JSON) once the index is complete, and dead letters for
// chunks that could not be indexed.
func Build(s beam.Scope, cfg BuildConfig, chunks beam.PCollection) (meta, dead beam.PCollection) {
	s = s.Scope("index.Build")
	if cfg.NumShards <= 0 {
		cfg.NumShards = 1
	}
	keyed := beam.ParDo(s, &keyByShardFn{NumShards: cfg.NumShards}, chunks)
	shards, dead := beam.ParDo2(s, &buildShardFn{Dir: cfg.Dir, NumShards: cfg.NumShards, Unigrams: cfg.Unigrams},
		beam.GroupByKey(s, keyed))
	meta = beam.ParDo(s, &finalizeFn{Dir: cfg.Dir, NumShards: cfg.NumShards, Unigrams: cfg.Unigrams, Chunking: cfg.Chunking},
		beam.Impulse(s), beam.SideInput{Input: shards})
	return meta, dead
}

// CheckLocal returns an error unless dir is a local path.
func CheckLocal(dir string) error {
	if strings.Contains(dir, "://") {
		return fmt.Errorf("index directory %s: indexes are built and searched on a local filesystem", dir)
	}
	return nil
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

	indexed, dups beam.Counter
}

func (f *buildShardFn) Setup() {
	f.indexed = beam.NewCounter("index", "chunks_indexed")
	f.dups = beam.NewCounter("index", "chunks_duplicate")
}

func (f *buildShardFn) ProcessElement(ctx context.Context, shard int, chunks func(*schemas.Chunk) bool,
	emit func(string), emitDead func(schemas.DeadLetter)) error {
	if err := CheckLocal(f.Dir); err != nil {
		return err
	}
	w, err := retrieval.CreateShard(f.Dir, shard, f.NumShards, retrieval.BuildOptions{Unigrams: f.Unigrams})
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
}

func (f *finalizeFn) ProcessElement(ctx context.Context, _ []byte, shards func(*string) bool) (string, error) {
	var s string
	for shards(&s) {
		// The shard metadata is re-read from the shards themselves;
		// iterating makes the dependency on every shard explicit.
	}
	m, err := retrieval.Finalize(f.Dir, f.NumShards, retrieval.BuildOptions{Unigrams: f.Unigrams}, f.Chunking)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(m)
	return string(b), err
}
