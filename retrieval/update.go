package retrieval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/blevesearch/bleve/v2"

	"github.com/ctxsim/ctxsim/schemas"
)

// Remove takes one chunk ID out of the fingerprint (the inverse of AddID).
func (f *Fingerprint) Remove(id string) {
	var g Fingerprint
	g.AddID(id)
	f.Count -= g.Count
	f.Sum1 -= g.Sum1
	f.Sum2 -= g.Sum2
}

// UpdateShard brings the shard at path (a shard directory of an index) up
// to date in place: it deletes the chunks in remove and indexes those in
// add, and records the new fingerprint. A chunk ID in both lists is
// replaced. Deleting an ID the shard does not hold is an error, as is
// adding one it holds, since either means the caller's view of the shard is
// wrong. Search results over the updated shard equal those of a shard built
// from scratch with the same chunks: bleve's document frequencies and
// document counts leave deleted chunks out.
func UpdateShard(path string, remove []string, add []schemas.Chunk, opts BuildOptions) (ShardMeta, error) {
	// A shard open elsewhere holds a lock; fail instead of waiting for it.
	idx, err := bleve.OpenUsing(path, map[string]interface{}{"bolt_timeout": "10s"})
	if err != nil {
		return ShardMeta{}, fmt.Errorf("open shard %s for update: %w", path, err)
	}
	sm, err := shardMetaOf(path, idx)
	if err != nil {
		idx.Close()
		return sm, err
	}
	fail := func(err error) (ShardMeta, error) {
		idx.Close()
		return ShardMeta{}, fmt.Errorf("update shard %s: %w", path, err)
	}
	if sm.Unigrams != opts.Unigrams {
		return fail(fmt.Errorf("shard has unigrams=%t, the update asks for %t", sm.Unigrams, opts.Unigrams))
	}
	bs := opts.BatchSize
	if bs <= 0 {
		bs = 1000
	}
	b := idx.NewBatch()
	flush := func() error {
		if b.Size() == 0 {
			return nil
		}
		err := idx.Batch(b)
		b.Reset()
		return err
	}
	removed := map[string]bool{}
	for _, id := range remove {
		if removed[id] {
			continue
		}
		doc, err := idx.Document(id)
		if err != nil {
			return fail(err)
		}
		if doc == nil {
			return fail(fmt.Errorf("chunk %s to delete is not in the shard", id))
		}
		removed[id] = true
		b.Delete(id)
		sm.Fingerprint.Remove(id)
		if b.Size() >= bs {
			if err := flush(); err != nil {
				return fail(err)
			}
		}
	}
	if err := flush(); err != nil {
		return fail(err)
	}
	seen := map[string]bool{}
	for i := range add {
		c := &add[i]
		if seen[c.ID] {
			return fail(fmt.Errorf("chunk %s added twice: %w", c.ID, ErrDuplicateChunk))
		}
		seen[c.ID] = true
		doc, err := idx.Document(c.ID)
		if err != nil {
			return fail(err)
		}
		if doc != nil {
			return fail(fmt.Errorf("chunk %s is already in the shard: %w", c.ID, ErrDuplicateChunk))
		}
		text := c.Text()
		fields := map[string]interface{}{BigramField: text}
		if opts.Unigrams {
			fields[UnigramField] = text
		}
		if err := b.Index(c.ID, fields); err != nil {
			return fail(err)
		}
		sm.Fingerprint.AddID(c.ID)
		if b.Size() >= bs {
			if err := flush(); err != nil {
				return fail(err)
			}
		}
	}
	if err := flush(); err != nil {
		return fail(err)
	}
	raw, err := json.Marshal(sm)
	if err != nil {
		return fail(err)
	}
	if err := idx.SetInternal(shardMetaKey, raw); err != nil {
		return fail(err)
	}
	n, err := idx.DocCount()
	if err != nil {
		return fail(err)
	}
	if n != sm.Fingerprint.Count {
		return fail(fmt.Errorf("shard holds %d chunks after the update, its fingerprint counts %d", n, sm.Fingerprint.Count))
	}
	if err := idx.Close(); err != nil {
		return ShardMeta{}, err
	}
	sm.Files, err = ShardFiles(path)
	return sm, err
}

// CopyDir copies the directory tree src to dst, which must not exist.
// Refreshes copy the previous version's shards before updating them, so
// that the previous version stays readable.
func CopyDir(src, dst string) error {
	var files []string
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		files = append(files, rel)
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, rel := range files {
		if err := copyFile(filepath.Join(src, rel), filepath.Join(dst, rel)); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	r, err := os.Open(src)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// IndexUpdate is the change Update made.
type IndexUpdate struct {
	Meta           Meta
	Added, Removed int
}

// Update writes into dir (which must not exist) an index of chunks: a copy
// of the index in parent (a local directory, holding the chunks whose IDs
// are parentIDs) with the chunks that left the corpus deleted and the new
// ones added, shard by shard in parallel. With parent empty it builds a new
// index of numShards shards; otherwise the parent's shard count and
// analysis are kept. chunking describes how the chunks were cut. Chunk IDs
// repeated in chunks count once.
func Update(dir, parent string, parentIDs []string, chunks []schemas.Chunk, numShards int, opts BuildOptions, chunking string) (IndexUpdate, error) {
	var u IndexUpdate
	n := numShards
	if parent != "" {
		meta, err := ReadMeta(parent)
		if err != nil {
			return u, err
		}
		n, opts.Unigrams = meta.NumShards, meta.Unigrams
		if err := CopyDir(parent, dir); err != nil {
			return u, err
		}
	} else {
		for i := range n {
			w, err := CreateShard(dir, i, n, opts)
			if err != nil {
				return u, err
			}
			if _, err := w.Close(); err != nil {
				return u, err
			}
		}
	}
	prev := make(map[string]bool, len(parentIDs))
	for _, id := range parentIDs {
		prev[id] = true
	}
	remove := make([][]string, n)
	add := make([][]schemas.Chunk, n)
	cur := make(map[string]bool, len(chunks))
	for _, c := range chunks {
		if cur[c.ID] {
			continue
		}
		cur[c.ID] = true
		if !prev[c.ID] {
			sh := ShardOf(c.ID, n)
			add[sh] = append(add[sh], c)
			u.Added++
		}
	}
	for id := range prev {
		if !cur[id] {
			sh := ShardOf(id, n)
			remove[sh] = append(remove[sh], id)
			u.Removed++
		}
	}
	sms := make([]ShardMeta, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		sort.Strings(remove[i])
		sort.Slice(add[i], func(a, b int) bool { return add[i][a].ID < add[i][b].ID })
		wg.Add(1)
		go func() {
			defer wg.Done()
			sms[i], errs[i] = UpdateShard(filepath.Join(dir, ShardDir(i, n)), remove[i], add[i], opts)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return u, err
	}
	meta, err := MetaOf(sms, opts, chunking)
	if err != nil {
		return u, err
	}
	u.Meta = meta
	return u, WriteMeta(dir, meta)
}
