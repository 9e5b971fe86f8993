// Package vectors holds the Beam transform that computes the sentence
// vectors of a corpus under one model (the coherence model's BiLSTM
// vectors, the contrastive model's context-table sums) once, for harvest
// workers to load instead of computing them each (resources.LoadVectors).
package vectors

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/beamreg"
	"github.com/ctxsim/ctxsim/transforms/counter"
	"github.com/ctxsim/ctxsim/transforms/parquetio"
	"github.com/ctxsim/ctxsim/transforms/progress"
)

func init() {
	// Registered so that the table's manifest names its record type: an
	// unregistered type reaches the committing DoFn without its name.
	beam.RegisterType(reflect.TypeOf(schemas.SentenceVector{}))
	beamreg.DoFn(&encodeShardFn{})
	register.Iter1[schemas.Sentence]()
}

// Config configures Write.
type Config struct {
	// Models is the model directory, local or remote.
	Models string
	// Key is the vector key (method.VectorScorer.VectorKey) of the model
	// whose vectors are computed.
	Key string
	// BLAS selects the matrix multiply (see resources.UseBackend); empty
	// keeps the process's.
	BLAS string
	// Batch is the sentences a shard's writer gathers before encoding
	// them; 0 means 4,096.
	Batch int
	// Threads encode parts of a batch at once; 0 means GOMAXPROCS. A
	// runner that runs a stage as one bundle (Prism) would otherwise
	// encode on one core.
	Threads int
	// Reuse, when not empty, is a complete table of the same key (an
	// earlier corpus version's): a sentence whose ID it holds gets that
	// vector instead of being encoded (an ID hashes the sentence's text).
	// Each shard reads only its own file of Reuse, which needs the same
	// number of files (all parts' together, for a table in parts); a
	// table with another number is not used.
	Reuse string
}

// part is the sentences one thread encodes at a time.
const part = 256

// Scorer returns the vector scorer of the models in dir with the given key.
func Scorer(ctx context.Context, dir, key string) (method.VectorScorer, error) {
	m, err := resources.OpenModels(ctx, dir)
	if err != nil {
		return nil, err
	}
	all, err := m.VectorScorers()
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, v := range all {
		if v.VectorKey() == key {
			return v, nil
		}
		keys = append(keys, v.VectorKey())
	}
	return nil, fmt.Errorf("models %s have no sentence vectors %q (they have %v)", dir, key, keys)
}

// vectorRowGroup is the rows per row group of a vector table: vectors are
// kilobytes each, so the writer's buffer stays tens of megabytes.
const vectorRowGroup = 4096

// Write computes the vector of every sentence (schemas.Sentence) under the
// model cfg.Key names and writes them as the table (schemas.SentenceVector)
// that table describes. The sentences are grouped into the table's shards
// first and each shard's writer encodes its own, so the vectors (kilobytes
// each) never pass through the runner: Prism holds a stage's elements in
// memory, and a million of them did not fit. It returns a PCollection
// holding the manifest's path once the table is complete. With
// table.Parts > 1 it encodes and writes only the sentences of part
// table.Part (parquetio.KeyByShardPart) and commits the part; the table is
// complete once storage.TableSpec.CommitParts has run after every part.
func Write(s beam.Scope, cfg Config, table parquetio.Config, sentences beam.PCollection) beam.PCollection {
	s = s.Scope("vectors.Write")
	table.NumShards = max(table.NumShards, 1)
	if table.RunID == "" {
		table.RunID = storage.RunID()
	}
	if table.RowGroupRows == 0 {
		table.RowGroupRows = vectorRowGroup
	}
	keyed := parquetio.KeyByShardPart(s, table.NumShards, table.Part, table.Parts, sentences)
	written := beam.ParDo(s, &encodeShardFn{Cfg: cfg, Dir: table.Dir, NumShards: table.NumShards,
		RunID: table.RunID, RowGroupRows: table.RowGroupRows, Part: table.Part, Parts: table.Parts}, beam.GroupByKey(s, keyed))
	return parquetio.Commit(s, table, reflect.TypeOf(schemas.SentenceVector{}), keyed, written)
}

// encodeShardFn encodes one shard's sentences in batches and writes their
// vectors as the shard's file; it emits the file's storage.FileEntry as
// JSON.
type encodeShardFn struct {
	Cfg          Config
	Dir          string
	NumShards    int
	RunID        string
	RowGroupRows int64
	// Part and Parts: the part of the table this pipeline writes
	// (parquetio.Config.Part); Parts 0 means 1.
	Part, Parts int

	scorer          method.VectorScorer
	ids             []string
	texts           []string
	encoded, reused counter.Counter
	prog            *progress.Reporter
	// reuse is Cfg.Reuse when it can be used (see Config.Reuse).
	reuse string
}

func (f *encodeShardFn) Setup(ctx context.Context) error {
	if f.Cfg.BLAS != "" {
		if err := resources.UseBackend(f.Cfg.BLAS); err != nil {
			return err
		}
	}
	var err error
	if f.scorer, err = Scorer(ctx, f.Cfg.Models, f.Cfg.Key); err != nil {
		return err
	}
	if f.Cfg.Batch <= 0 {
		f.Cfg.Batch = 4096
	}
	if f.Cfg.Threads <= 0 {
		f.Cfg.Threads = runtime.GOMAXPROCS(0)
	}
	term, _, _ := strings.Cut(f.Cfg.Key, "-")
	f.encoded = counter.New("encode", "vectors_"+term)
	f.reused = counter.New("encode", "vectors_reused_"+term)
	if f.Cfg.Reuse != "" {
		m, err := storage.CheckTable(ctx, f.Cfg.Reuse)
		switch {
		case err != nil:
			return fmt.Errorf("vectors to reuse: %w", err)
		case m.NumShards == f.NumShards*max(f.Parts, 1):
			f.reuse = f.Cfg.Reuse
		}
	}
	f.prog = progress.New("encode", "sentences ("+f.Cfg.Key+")")
	return nil
}

// spec is the table (of the part) the shards are written to.
func (f *encodeShardFn) spec() storage.TableSpec {
	return storage.TableSpec{Dir: f.Dir, NumShards: f.NumShards, Type: reflect.TypeOf(schemas.SentenceVector{}),
		RunID: f.RunID, RowGroupRows: f.RowGroupRows, Part: f.Part, Parts: f.Parts}
}

func (f *encodeShardFn) ProcessElement(ctx context.Context, shard int, sents func(*schemas.Sentence) bool) (string, error) {
	t := f.spec()
	f.ids, f.texts = f.ids[:0], f.texts[:0]
	prev, err := f.previous(ctx, shard)
	if err != nil {
		return "", err
	}
	e, err := t.WriteShard(ctx, shard, func(write func(any) error) error {
		var st schemas.Sentence
		for sents(&st) {
			if v, ok := prev[st.ID]; ok {
				if err := write(schemas.SentenceVector{SentenceID: st.ID, Vector: v}); err != nil {
					return err
				}
				f.reused.Inc(ctx, 1)
				f.prog.Add(1)
				continue
			}
			f.ids, f.texts = append(f.ids, st.ID), append(f.texts, st.Text)
			if len(f.ids) >= f.Cfg.Batch {
				if err := f.flush(ctx, write); err != nil {
					return err
				}
			}
		}
		return f.flush(ctx, write)
	})
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(e)
	return string(b), err
}

// previous returns the vectors of the reused table's file for the shard,
// by sentence ID, or nil without one.
func (f *encodeShardFn) previous(ctx context.Context, shard int) (map[string][]float32, error) {
	if f.reuse == "" {
		return nil, nil
	}
	out := map[string][]float32{}
	// The reused table has as many files as this one's parts together,
	// and a sentence's file has the same name in both (see KeyByShardPart).
	_, err := storage.ScanFile(ctx, storage.Join(f.reuse, f.spec().ShardName(shard)), func(v schemas.SentenceVector) bool {
		out[v.SentenceID] = v.Vector
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("vectors to reuse: %w", err)
	}
	return out, nil
}

// flush encodes the gathered sentences, parts of them on several threads
// (a sentence's vector does not depend on what it is encoded with), and
// writes their rows.
func (f *encodeShardFn) flush(ctx context.Context, write func(any) error) error {
	if len(f.ids) == 0 {
		return nil
	}
	vs := make([][]float32, len(f.texts))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(f.Cfg.Threads, (len(f.texts)+part-1)/part) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				copy(vs[b:], f.scorer.SentenceVectors(f.texts[b:min(b+part, len(f.texts))]))
			}
		}()
	}
	for b := 0; b < len(f.texts); b += part {
		next <- b
	}
	close(next)
	wg.Wait()
	for i, id := range f.ids {
		if err := write(schemas.SentenceVector{SentenceID: id, Vector: vs[i]}); err != nil {
			return err
		}
	}
	f.encoded.Inc(ctx, int64(len(f.ids)))
	f.prog.Add(int64(len(f.ids)))
	f.ids, f.texts = f.ids[:0], f.texts[:0]
	return nil
}

func (f *encodeShardFn) Teardown() {
	if f.prog != nil {
		f.prog.Done()
	}
}
