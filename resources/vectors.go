package resources

import (
	"context"
	"fmt"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/storage"
)

// VectorTable is the table of one model's sentence vectors under a vectors
// root (the encode job's output, by default <corpus>/vectors): a directory
// named by the scorer's vector key.
func VectorTable(root string, v method.VectorScorer) string {
	return storage.Join(root, v.VectorKey())
}

// StoredVectors reports, for each vector scorer, whether root holds a
// complete table of its vectors (checked against its manifest, rows not
// read): the tables a harvest over root would load.
func StoredVectors(ctx context.Context, root string, scorers []method.VectorScorer) (found, missing []string, err error) {
	for _, v := range scorers {
		dir := VectorTable(root, v)
		ok, err := storage.Exists(ctx, storage.Join(dir, storage.ManifestName))
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			missing = append(missing, dir)
			continue
		}
		if _, err := storage.CheckTable(ctx, dir); err != nil {
			return nil, nil, err
		}
		found = append(found, dir)
	}
	return found, missing, nil
}

// VectorsLoaded counts what LoadVectors installed.
type VectorsLoaded struct {
	Tables  int   // tables read
	Vectors int64 // vectors installed into a scorer's cache
	Unknown int64 // rows for sentences the chunk store does not hold
}

// LoadVectors reads the stored sentence vectors under root into the
// engine's vector scorers, so that the sentences they hold are not encoded
// again. A scorer with no table under root keeps computing its vectors as
// they are needed. A table that fails its manifest checks, or a vector of
// the wrong length, is an error; rows for sentences the store lacks (a
// table made from a larger corpus) are skipped and counted.
//
// With mapped, the vectors are written to a local file (under
// storage.CacheRoot, unlinked once mapped) and read through a read-only
// memory map instead of the heap: they are then page cache, which the
// kernel fills as they are read and can drop under memory pressure,
// rather than memory the worker must hold. On a 91M-word corpus they are
// 72% of a worker's heap.
func LoadVectors(ctx context.Context, root string, e *method.Engine, mapped bool) (VectorsLoaded, error) {
	var n VectorsLoaded
	found, _, err := StoredVectors(ctx, root, e.VectorScorers())
	if err != nil {
		return n, err
	}
	have := map[string]bool{}
	for _, dir := range found {
		have[dir] = true
	}
	for _, v := range e.VectorScorers() {
		dir := VectorTable(root, v)
		if !have[dir] {
			continue
		}
		dim := v.VectorDim()
		// One slab per table (grown in blocks), not one allocation per
		// sentence; or a file, mapped once written.
		const block = 1 << 14
		var slab []float32
		var ks []int32
		var vs [][]float32
		var bad error
		var file *vectorFile
		if mapped {
			var err error
			if file, err = newVectorFile(dim); err != nil {
				return n, fmt.Errorf("sentence vectors: %w", err)
			}
			defer file.discard()
		}
		err := storage.ScanTable(ctx, dir, func(r schemas.SentenceVector) bool {
			if len(r.Vector) != dim {
				bad = fmt.Errorf("%s: sentence %s has a vector of %d values, the model's are %d", dir, r.SentenceID, len(r.Vector), dim)
				return false
			}
			k, ok := e.Store.SentenceIndex(r.SentenceID)
			if !ok {
				n.Unknown++
				return true
			}
			if file != nil {
				if bad = file.add(r.Vector); bad != nil {
					return false
				}
				ks = append(ks, k)
				return true
			}
			if len(slab)+dim > cap(slab) {
				slab = make([]float32, 0, block*dim)
			}
			slab = append(slab, r.Vector...)
			ks = append(ks, k)
			vs = append(vs, slab[len(slab)-dim:len(slab):len(slab)])
			return true
		})
		if err == nil {
			err = bad
		}
		if err == nil && file != nil {
			vs, err = file.mapVectors()
		}
		if err != nil {
			return n, fmt.Errorf("sentence vectors: %w", err)
		}
		v.SetVectors(ks, vs)
		n.Tables++
		n.Vectors += int64(len(ks))
	}
	return n, nil
}
