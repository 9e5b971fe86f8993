// Package resources opens what running the method needs, local or gs://:
// the chunk store, the models and the index, each once per process, so
// that every worker thread (and every job that builds no pipeline) shares
// one copy with its caches.
package resources

import (
	"context"
	"fmt"
	"sync"

	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/scoring/nn"
	"github.com/ctxsim/ctxsim/storage"
)

// LoadStore reads the chunks tables (globs, local or gs://) into one
// store, in the order given.
func LoadStore(ctx context.Context, patterns ...string) (*method.Store, error) {
	return LoadStoreMapped(ctx, false, patterns...)
}

// arenaError is a failure to map more of the arena the store keeps its
// strings in, raised from inside Store.Add and returned by
// LoadStoreMapped.
type arenaError struct{ err error }

// LoadStoreMapped is LoadStore; with mapped, the store keeps its strings
// (the sentences' texts and IDs, the chunk and document IDs: 680 MB of its
// 1.4 GB at 91M words) in memory-mapped local files under
// storage.CacheRoot, unlinked at once, instead of the heap
// (method.Store.KeepStrings).
func LoadStoreMapped(ctx context.Context, mapped bool, patterns ...string) (st *method.Store, err error) {
	return LoadStorePart(ctx, mapped, nil, patterns...)
}

// LoadStorePart is LoadStoreMapped keeping only the chunks whose ID keep
// reports true for (all of them when keep is nil): a part of the corpus.
func LoadStorePart(ctx context.Context, mapped bool, keep func(chunkID string) bool, patterns ...string) (st *method.Store, err error) {
	st = method.NewStore()
	if mapped {
		a, aerr := newTextArena()
		if aerr != nil {
			return nil, aerr
		}
		st.KeepStrings(a.keep)
		defer func() {
			if r := recover(); r != nil {
				ae, ok := r.(arenaError)
				if !ok {
					panic(r)
				}
				st, err = nil, fmt.Errorf("chunks: %w", ae.err)
			}
		}()
	}
	for _, pattern := range patterns {
		var addErr error
		if err := storage.ScanGlob(ctx, pattern, func(c schemas.Chunk) bool {
			if keep != nil && !keep(c.ID) {
				return true
			}
			addErr = st.Add(c)
			return addErr == nil
		}); err != nil {
			return nil, fmt.Errorf("chunks: %w", err)
		}
		if addErr != nil {
			return nil, fmt.Errorf("chunks %s: %w", pattern, addErr)
		}
	}
	return st, nil
}

// CheckCorpus returns an error unless the chunks of st, read from the
// chunks table chunks, are the corpus of the index ix, in dir
// (retrieval.Meta.CheckChunks).
func CheckCorpus(ix *retrieval.Index, dir string, st *method.Store, chunks string) error {
	return ix.Meta.CheckChunks(dir, chunks, storeFingerprint(st))
}

// storeFingerprint is the corpus fingerprint of the chunks st holds.
func storeFingerprint(st *method.Store) retrieval.Fingerprint {
	var f retrieval.Fingerprint
	for i := range st.Len() {
		f.AddID(st.ChunkIDAt(i)) // the store holds each ID once
	}
	return f
}

// openIndex opens the index in dir, local or remote, and checks that it
// holds the chunks of st, read from the chunks table chunks; with a part
// of the corpus, only the part's shards are opened, and st must hold
// their chunks.
func openIndex(ctx context.Context, dir string, st *method.Store, chunks string, part Part) (*retrieval.Index, error) {
	if part.whole() {
		ix, err := retrieval.OpenAt(ctx, dir)
		if err != nil {
			return nil, err
		}
		if err := CheckCorpus(ix, dir, st, chunks); err != nil {
			ix.Close()
			return nil, err
		}
		return ix, nil
	}
	local, err := storage.Fetch(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", dir, err)
	}
	ix, err := retrieval.OpenShards(local, part.HasShard)
	if err != nil {
		return nil, err
	}
	var want retrieval.Fingerprint
	for s, f := range ix.Meta.Shards {
		if part.HasShard(s) {
			want.Merge(f)
		}
	}
	got := storeFingerprint(st)
	if want != got {
		ix.Close()
		return nil, fmt.Errorf("index %s and chunks table %s are not of one corpus: part %d of %d of the index holds %d chunks (fingerprint %s), the table's chunks of that part %d (%s); give the chunks table the index was built from",
			dir, chunks, part.Part, part.Parts, want.Count, want, got.Count, got)
	}
	return ix, nil
}

// Part is one of Parts parts of a corpus, split by index shard: part p
// holds the chunks of the shards s with s mod Parts = p (the index routes a
// chunk to its shard by retrieval.ShardOf). A worker that loads a part
// holds that part's chunks, vectors and index shards only, about 1/Parts
// of the corpus. The zero Part (and Parts 1) is the whole corpus.
type Part struct {
	Part, Parts int
	// Shards is the index's number of shards, set by Open.
	Shards int
}

func (p Part) whole() bool { return p.Parts <= 1 }

// HasShard reports whether index shard s is in the part.
func (p Part) HasShard(s int) bool { return p.whole() || s%p.Parts == p.Part }

// Has reports whether the chunk with the given ID is in the part.
func (p Part) Has(chunkID string) bool {
	return p.whole() || p.HasShard(retrieval.ShardOf(chunkID, p.Shards))
}

// part returns p's part with the index's shard count, checked.
func (p Paths) part(ctx context.Context) (Part, error) {
	pt := p.Part
	if pt.whole() {
		return Part{}, nil
	}
	if p.Index == "" {
		return pt, fmt.Errorf("a part of a corpus (%d of %d) is a set of index shards: give the index", pt.Part, pt.Parts)
	}
	meta, err := retrieval.ReadMetaAt(ctx, p.Index)
	if err != nil {
		return pt, err
	}
	if pt.Parts > meta.NumShards || pt.Part < 0 || pt.Part >= pt.Parts {
		return pt, fmt.Errorf("index %s has %d shards: it splits into at most %d parts, and part %d of %d is not one of them",
			p.Index, meta.NumShards, meta.NumShards, pt.Part, pt.Parts)
	}
	pt.Shards = meta.NumShards
	return pt, nil
}

// LoadModels loads the models in dir, local or remote (fetched into the
// local cache first).
func LoadModels(ctx context.Context, dir string) (*method.Models, error) {
	local, err := storage.Fetch(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("models %s: %w", dir, err)
	}
	return method.LoadModels(local)
}

var (
	modelsMu sync.Mutex
	models   = map[string]*modelsEntry{}
)

type modelsEntry struct {
	once sync.Once
	m    *method.Models
	err  error
}

// OpenModels returns the models in dir (LoadModels), loading them once per
// process for every DoFn instance that asks.
func OpenModels(ctx context.Context, dir string) (*method.Models, error) {
	modelsMu.Lock()
	e, ok := models[dir]
	if !ok {
		e = &modelsEntry{}
		models[dir] = e
	}
	modelsMu.Unlock()
	e.once.Do(func() { e.m, e.err = LoadModels(ctx, dir) })
	return e.m, e.err
}

// Resources are what a worker needs to run the method.
type Resources struct {
	Engine *method.Engine
	Models *method.Models
	Index  *retrieval.Index // nil when no index was asked for
	// Part is the part of the corpus loaded (the zero Part for all of it),
	// with the index's shard count.
	Part Part
}

// Paths locate the resources.
type Paths struct {
	Chunks string // chunks table glob
	Models string // model directory, local or remote; empty for none
	Index  string // index directory, local or remote; empty for none
	// Vectors is a directory of stored sentence vectors (the encode
	// job's output), local or remote; empty for none. The models' vectors
	// found there are loaded instead of computed (LoadVectors).
	Vectors string
	// Mapped keeps the chunk store's strings and the stored vectors in
	// memory maps of local files instead of the heap (LoadStoreMapped,
	// LoadVectors with mapped).
	Mapped bool
	// Part, when Parts > 1, loads one part of the corpus: its chunks, their
	// sentences' stored vectors and its index shards (see Part).
	Part Part
	// GenPrecision is the generative model's arithmetic
	// (gen.Model.SetPrecision; empty for float32). Resources of two
	// precisions are two sets of models, each with its own caches.
	GenPrecision string
}

var (
	resMu sync.Mutex
	res   = map[Paths]*resEntry{}
)

type resEntry struct {
	once sync.Once
	r    *Resources
	err  error
}

// Open returns the resources at p, loading them once per process: every
// DoFn instance of a worker shares one store, one set of models (with
// their caches) and one open index. An index whose corpus is not the
// chunks table's (CheckCorpus) is an error naming both.
func Open(ctx context.Context, p Paths) (*Resources, error) {
	resMu.Lock()
	e, ok := res[p]
	if !ok {
		e = &resEntry{}
		res[p] = e
	}
	resMu.Unlock()
	e.once.Do(func() { e.r, e.err = open(ctx, p) })
	return e.r, e.err
}

// open loads the resources at p: the store, then the index (checked
// against the store's chunks before anything slower is loaded), then the
// models and their stored vectors.
func open(ctx context.Context, p Paths) (_ *Resources, err error) {
	part, err := p.part(ctx)
	if err != nil {
		return nil, err
	}
	var keep func(string) bool
	if !part.whole() {
		keep = part.Has
	}
	st, err := LoadStorePart(ctx, p.Mapped, keep, p.Chunks)
	if err != nil {
		return nil, err
	}
	r := &Resources{Part: part}
	if p.Index != "" {
		if r.Index, err = openIndex(ctx, p.Index, st, p.Chunks, part); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				r.Index.Close()
			}
		}()
	}
	if p.Models == "" {
		// No models: an engine that scores nothing, for the lexical
		// labeler.
		r.Models = &method.Models{}
		if r.Engine, err = r.Models.Engine(st); err != nil {
			return nil, err
		}
		return r, nil
	}
	if r.Models, err = LoadModels(ctx, p.Models); err != nil {
		return nil, err
	}
	if r.Models.Gen != nil {
		if err := r.Models.Gen.SetPrecision(p.GenPrecision); err != nil {
			return nil, fmt.Errorf("models %s: %w", p.Models, err)
		}
	}
	if r.Engine, err = r.Models.Engine(st); err != nil {
		return nil, err
	}
	if p.Vectors != "" {
		if _, err := LoadVectors(ctx, p.Vectors, r.Engine, p.Mapped); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Release forgets the resources at p, closing their index, so that a
// process that works through the parts of a corpus one after another
// (Paths.Part) holds one part at a time. Resources still in use must not
// be released.
func Release(p Paths) {
	resMu.Lock()
	e, ok := res[p]
	delete(res, p)
	resMu.Unlock()
	if ok && e.r != nil && e.r.Index != nil {
		e.r.Index.Close()
	}
}

// DropScoreCaches empties the score cache of every engine this process
// has loaded (method.Engine.DropScoreCache), keeping the rest.
func DropScoreCaches() {
	resMu.Lock()
	defer resMu.Unlock()
	for _, e := range res {
		if e.r != nil && e.r.Engine != nil {
			e.r.Engine.DropScoreCache()
		}
	}
}

var (
	backendMu sync.Mutex
	backend   string
)

// UseBackend selects the matrix multiply of this process ("go" or
// "openblas"; see nn.SetBackend) the first time it is called, before any
// model runs; later calls must name the same one. Workers of one process
// share the models, so they cannot use two backends.
func UseBackend(name string) error {
	if err := nn.CheckBackend(name); err != nil {
		return err
	}
	backendMu.Lock()
	defer backendMu.Unlock()
	switch backend {
	case name:
		return nil
	case "":
		if err := nn.SetBackend(name); err != nil {
			return err
		}
		backend = name
		return nil
	}
	return fmt.Errorf("this process already multiplies matrices with %s; it cannot switch to %s", backend, name)
}
