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

// LoadStore reads the chunks table (a glob, local or gs://) into a store.
func LoadStore(ctx context.Context, pattern string) (*method.Store, error) {
	st := method.NewStore()
	var addErr error
	if err := storage.ScanGlob(ctx, pattern, func(c schemas.Chunk) bool {
		addErr = st.Add(c)
		return addErr == nil
	}); err != nil {
		return nil, fmt.Errorf("chunks: %w", err)
	}
	if addErr != nil {
		return nil, fmt.Errorf("chunks %s: %w", pattern, addErr)
	}
	return st, nil
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
// their caches) and one open index.
func Open(ctx context.Context, p Paths) (*Resources, error) {
	resMu.Lock()
	e, ok := res[p]
	if !ok {
		e = &resEntry{}
		res[p] = e
	}
	resMu.Unlock()
	e.once.Do(func() {
		st, err := LoadStore(ctx, p.Chunks)
		if err != nil {
			e.err = err
			return
		}
		if p.Models == "" {
			// No models: an engine that scores nothing, for the
			// lexical labeler.
			m := &method.Models{}
			eng, err := m.Engine(st)
			e.r, e.err = &Resources{Engine: eng, Models: m}, err
			if err == nil && p.Index != "" {
				e.r.Index, e.err = retrieval.OpenAt(ctx, p.Index)
			}
			return
		}
		m, err := LoadModels(ctx, p.Models)
		if err != nil {
			e.err = err
			return
		}
		if m.Gen != nil {
			if err := m.Gen.SetPrecision(p.GenPrecision); err != nil {
				e.err = fmt.Errorf("models %s: %w", p.Models, err)
				return
			}
		}
		eng, err := m.Engine(st)
		if err != nil {
			e.err = err
			return
		}
		r := &Resources{Engine: eng, Models: m}
		if p.Vectors != "" {
			if _, err = LoadVectors(ctx, p.Vectors, eng); err != nil {
				e.err = err
				return
			}
		}
		if p.Index != "" {
			if r.Index, err = retrieval.OpenAt(ctx, p.Index); err != nil {
				e.err = err
				return
			}
		}
		e.r = r
	})
	return e.r, e.err
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
