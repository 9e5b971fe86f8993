package retrieval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	segment "github.com/blevesearch/scorch_segment_api/v2"

	"github.com/ctxsim/ctxsim/schemas"
)

// shardMetaKey is the bleve internal key under which a shard stores its own
// ShardMeta, so that a shard directory describes itself.
var shardMetaKey = []byte("ctxsim.shard")

// ShardMeta is what a shard records about itself.
type ShardMeta struct {
	SchemaVersion string      `json:"schema_version"`
	Analyzer      string      `json:"analyzer"`
	Unigrams      bool        `json:"unigrams"`
	Shard         int         `json:"shard"`
	NumShards     int         `json:"num_shards"`
	Fingerprint   Fingerprint `json:"fingerprint"`
	// Files maps each file of the finished shard (a path relative to the
	// shard's directory) to "size:crc32c"; see ShardFiles.
	Files map[string]string `json:"files,omitempty"`
}

// BuildOptions configures index building.
type BuildOptions struct {
	// Unigrams adds a field of stop-word-free unigrams beside the bigrams.
	Unigrams bool
	// BatchSize is the number of chunks per bleve batch; 0 means 1000.
	BatchSize int
	// RunID names the run that builds the index, recorded in its metadata
	// (Meta.RunID) so that a run that fails can withdraw it.
	RunID string
}

// ErrDuplicateChunk is returned by ShardWriter.Add for a chunk ID already
// added to the shard.
var ErrDuplicateChunk = errors.New("duplicate chunk ID")

// ShardWriter builds one shard. It writes into a temporary directory beside
// the final one and renames it into place in Close, so an interrupted build
// never leaves a shard that looks complete.
type ShardWriter struct {
	final, tmp string
	meta       ShardMeta
	idx        bleve.Index
	batch      *bleve.Batch
	batchSize  int
	seen       map[string]struct{}
	doc        map[string]interface{}
	// appended: the shard held chunks before this writer (AppendShard),
	// which Add checks IDs against.
	appended bool
}

// CreateShard starts shard i of n in the index directory dir.
func CreateShard(dir string, shard, numShards int, opts BuildOptions) (*ShardWriter, error) {
	if numShards < 1 || shard < 0 || shard >= numShards {
		return nil, fmt.Errorf("shard %d of %d: out of range", shard, numShards)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	m, err := newMapping(opts.Unigrams)
	if err != nil {
		return nil, err
	}
	final := filepath.Join(dir, ShardDir(shard, numShards))
	tmp, err := os.MkdirTemp(dir, "."+ShardDir(shard, numShards)+".tmp-")
	if err != nil {
		return nil, err
	}
	// bleve wants to create the directory itself.
	if err := os.Remove(tmp); err != nil {
		return nil, err
	}
	idx, err := bleve.New(tmp, m)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("create shard %d: %w", shard, err)
	}
	return newShardWriter(final, tmp, ShardMeta{
		SchemaVersion: schemas.Version,
		Analyzer:      AnalyzerID,
		Unigrams:      opts.Unigrams,
		Shard:         shard,
		NumShards:     numShards,
	}, idx, opts, false), nil
}

// newShardWriter returns a writer adding to idx, open in tmp, whose shard
// goes to final on Close.
func newShardWriter(final, tmp string, meta ShardMeta, idx bleve.Index, opts BuildOptions, appended bool) *ShardWriter {
	bs := opts.BatchSize
	if bs <= 0 {
		bs = 1000
	}
	return &ShardWriter{final: final, tmp: tmp, meta: meta, idx: idx, batch: idx.NewBatch(), batchSize: bs,
		seen: make(map[string]struct{}), appended: appended}
}

// AppendShard starts adding chunks to shard i of n of the index in dir,
// whose finished files are in the local directory src (the shard in dir
// itself, or a copy of a remote one). It copies the shard into a temporary
// directory beside its final place and adds there; Close replaces the
// final shard with the copy, so a failed append leaves the shard as it
// was. The shard's fingerprint goes on from the one it records. A bin/index
// in parts (indexjob) builds its shards with CreateShard in the first part
// and adds the later parts' chunks this way.
func AppendShard(src, dir string, shard, numShards int, opts BuildOptions) (*ShardWriter, error) {
	sm, err := readShardMeta(src)
	if err != nil {
		return nil, err
	}
	if sm.Shard != shard || sm.NumShards != numShards {
		return nil, fmt.Errorf("append to shard %d of %d: %s is shard %d of %d", shard, numShards, src, sm.Shard, sm.NumShards)
	}
	sm.Files = nil
	if sm.Unigrams != opts.Unigrams {
		return nil, fmt.Errorf("append to shard %s: it has unigrams=%t, the build asks for %t", src, sm.Unigrams, opts.Unigrams)
	}
	final := filepath.Join(dir, ShardDir(shard, numShards))
	tmp, err := os.MkdirTemp(dir, "."+ShardDir(shard, numShards)+".tmp-")
	if err != nil {
		return nil, err
	}
	if err := copyShard(tmp, src); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("copy shard %s to append to it: %w", src, err)
	}
	idx, err := bleve.Open(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("open shard %s to append to it: %w", src, err)
	}
	return newShardWriter(final, tmp, sm, idx, opts, true), nil
}

// copyShard copies the shard files under src into dst. Files and
// directories whose names start with a dot are not the shard's (bleve
// writes none; a copy fetched from remote storage has a marker file) and
// are left out.
func copyShard(dst, src string) error {
	return fs.WalkDir(os.DirFS(src), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		to := filepath.Join(dst, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		return copyFile(filepath.Join(src, filepath.FromSlash(p)), to)
	})
}

// Add indexes one chunk. It returns ErrDuplicateChunk for a chunk ID that
// the shard already holds; the chunk is then not indexed again.
func (w *ShardWriter) Add(c *schemas.Chunk) error {
	if _, dup := w.seen[c.ID]; dup {
		return ErrDuplicateChunk
	}
	if w.appended {
		doc, err := w.idx.Document(c.ID)
		if err != nil {
			return err
		}
		if doc != nil {
			return ErrDuplicateChunk
		}
	}
	w.seen[c.ID] = struct{}{}
	text := c.Text()
	doc := map[string]interface{}{BigramField: text}
	if w.meta.Unigrams {
		doc[UnigramField] = text
	}
	if err := w.batch.Index(c.ID, doc); err != nil {
		return err
	}
	w.meta.Fingerprint.AddID(c.ID)
	if w.batch.Size() >= w.batchSize {
		return w.flush()
	}
	return nil
}

// Count returns the number of chunks added so far.
func (w *ShardWriter) Count() uint64 { return w.meta.Fingerprint.Count }

func (w *ShardWriter) flush() error {
	if w.batch.Size() == 0 {
		return nil
	}
	if err := w.idx.Batch(w.batch); err != nil {
		return fmt.Errorf("index batch: %w", err)
	}
	w.batch.Reset()
	return nil
}

// Close finishes the shard, moves it into place (replacing a shard of the
// same name from an earlier run) and returns its fingerprint.
func (w *ShardWriter) Close() (ShardMeta, error) {
	if err := w.flush(); err != nil {
		w.Abort()
		return ShardMeta{}, err
	}
	live, err := mergeSegments(w.idx)
	if err != nil {
		w.Abort()
		return ShardMeta{}, fmt.Errorf("merge shard %d: %w", w.meta.Shard, err)
	}
	b, err := json.Marshal(w.meta)
	if err != nil {
		w.Abort()
		return ShardMeta{}, err
	}
	if err := w.idx.SetInternal(shardMetaKey, b); err != nil {
		w.Abort()
		return ShardMeta{}, err
	}
	if err := w.idx.Close(); err != nil {
		os.RemoveAll(w.tmp)
		return ShardMeta{}, err
	}
	if err := removeDeadSegments(w.tmp, live); err != nil {
		os.RemoveAll(w.tmp)
		return ShardMeta{}, err
	}
	if err := os.RemoveAll(w.final); err != nil {
		return ShardMeta{}, err
	}
	if err := os.Rename(w.tmp, w.final); err != nil {
		return ShardMeta{}, err
	}
	sm := w.meta
	sm.Files, err = ShardFiles(w.final)
	return sm, err
}

// keepSegments leaves built shards unmerged (for tests of several
// segments).
var keepSegments = false

// mergeSegments merges the shard's segments into one. Each batch adds a
// segment, and a search looks every query term up in every segment's
// dictionary and reads every segment's postings: on a shard of a million
// chunks left as 101 segments, that was most of a query's time.
//
// It returns the names of the segment files the merged shard reads (nil if
// unknown). The files of the segments merged away can outlive the index's
// Close (the index keeps the snapshot before the last for rollback), and
// removeDeadSegments deletes them.
func mergeSegments(idx bleve.Index) (live map[string]bool, err error) {
	if keepSegments {
		return nil, nil
	}
	adv, err := idx.Advanced()
	if err != nil {
		return nil, err
	}
	sc, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil, nil
	}
	// The merger takes only segments already persisted, and the last
	// batches' may still be in memory: merge until one is left.
	for try := 0; ; try++ {
		files, n, err := segmentFiles(sc)
		if err != nil {
			return nil, err
		}
		if n <= 1 {
			return files, nil
		}
		if try == 600 {
			return nil, fmt.Errorf("%d segments left after %d merges", n, try)
		}
		if try > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		if err := sc.ForceMerge(context.Background(), &mergeplan.SingleSegmentMergePlanOptions); err != nil {
			return nil, err
		}
	}
}

// segmentFiles returns the number of segments in sc's current snapshot and
// the names of their files (nil if any segment is not persisted).
func segmentFiles(sc *scorch.Scorch) (map[string]bool, int, error) {
	r, err := sc.Reader()
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return nil, 0, fmt.Errorf("reader is %T, want a scorch snapshot", r)
	}
	files := map[string]bool{}
	for _, ss := range snap.Segments() {
		ps, ok := ss.Segment().(segment.PersistedSegment)
		if !ok {
			files = nil
			break
		}
		files[filepath.Base(ps.Path())] = true
	}
	return files, len(snap.Segments()), nil
}

// removeDeadSegments deletes the segment files (*.zap) of the closed shard
// in dir that live does not name. With live nil it does nothing.
func removeDeadSegments(dir string, live map[string]bool) error {
	if live == nil {
		return nil
	}
	store := filepath.Join(dir, "store")
	ents, err := os.ReadDir(store)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if name := e.Name(); filepath.Ext(name) == ".zap" && !live[name] {
			if err := os.Remove(filepath.Join(store, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Abort discards the shard being built.
func (w *ShardWriter) Abort() {
	w.idx.Close()
	os.RemoveAll(w.tmp)
}

// Finalize completes an index whose shards have been written: it creates
// any shard that received no chunk as an empty shard, checks every shard's
// own metadata, removes leftovers of interrupted builds, and writes the
// index metadata that makes the index openable. chunking is recorded as is.
func Finalize(dir string, numShards int, opts BuildOptions, chunking string) (Meta, error) {
	shards := make([]ShardMeta, numShards)
	for i := 0; i < numShards; i++ {
		p := filepath.Join(dir, ShardDir(i, numShards))
		if _, err := os.Stat(p); os.IsNotExist(err) {
			w, err := CreateShard(dir, i, numShards, opts)
			if err != nil {
				return Meta{}, err
			}
			if _, err := w.Close(); err != nil {
				return Meta{}, err
			}
		}
		sm, err := readShardMeta(p)
		if err != nil {
			return Meta{}, err
		}
		if sm.Files, err = ShardFiles(p); err != nil {
			return Meta{}, err
		}
		shards[i] = sm
	}
	meta, err := MetaOf(shards, opts, chunking)
	if err != nil {
		return meta, fmt.Errorf("%s: %w", dir, err)
	}
	if err := removeStale(dir, numShards); err != nil {
		return meta, err
	}
	return meta, WriteMeta(dir, meta)
}

// MetaOf returns the metadata of an index made of shards, which must be
// shards 0..len(shards)-1 of len(shards), in order, built with opts.
func MetaOf(shards []ShardMeta, opts BuildOptions, chunking string) (Meta, error) {
	n := len(shards)
	meta := Meta{
		SchemaVersion: schemas.Version,
		Analyzer:      AnalyzerID,
		Unigrams:      opts.Unigrams,
		NumShards:     n,
		Chunking:      chunking,
		Shards:        make([]Fingerprint, n),
		RunID:         opts.RunID,
	}
	for i, sm := range shards {
		if sm.Shard != i || sm.NumShards != n || sm.Unigrams != opts.Unigrams {
			return meta, fmt.Errorf("shard metadata %+v does not match shard %d of %d", sm, i, n)
		}
		meta.Shards[i] = sm.Fingerprint
		meta.Corpus.Merge(sm.Fingerprint)
		if sm.Files != nil {
			if meta.ShardFiles == nil {
				meta.ShardFiles = make([]map[string]string, n)
			}
			meta.ShardFiles[i] = sm.Files
		}
	}
	return meta, nil
}

// removeStale deletes temporary shard directories and shards of another
// shard count left in dir by earlier runs.
func removeStale(dir string, numShards int) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	keep := make(map[string]bool, numShards)
	for i := 0; i < numShards; i++ {
		keep[ShardDir(i, numShards)] = true
	}
	for _, e := range ents {
		name := e.Name()
		stale := false
		var a, b int
		if n, _ := fmt.Sscanf(name, "shard-%05d-of-%05d", &a, &b); n == 2 && !keep[name] {
			stale = true
		}
		if len(name) > 7 && name[:7] == ".shard-" {
			stale = true
		}
		if stale {
			if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReadShardMeta returns what the finished shard in the local directory
// path records about itself, with the checksums of its files.
func ReadShardMeta(path string) (ShardMeta, error) {
	sm, err := readShardMeta(path)
	if err != nil {
		return sm, err
	}
	sm.Files, err = ShardFiles(path)
	return sm, err
}

func readShardMeta(path string) (ShardMeta, error) {
	var sm ShardMeta
	idx, err := bleve.OpenUsing(path, map[string]interface{}{"read_only": true})
	if err != nil {
		return sm, fmt.Errorf("open shard %s: %w", path, err)
	}
	defer idx.Close()
	return shardMetaOf(path, idx)
}

func shardMetaOf(path string, idx bleve.Index) (ShardMeta, error) {
	var sm ShardMeta
	b, err := idx.GetInternal(shardMetaKey)
	if err != nil {
		return sm, fmt.Errorf("shard %s: %w", path, err)
	}
	if b == nil {
		return sm, fmt.Errorf("shard %s has no ctxsim metadata: incomplete or not a ctxsim index", path)
	}
	if err := json.Unmarshal(b, &sm); err != nil {
		return sm, fmt.Errorf("shard %s: corrupt metadata: %w", path, err)
	}
	if sm.SchemaVersion != schemas.Version || sm.Analyzer != AnalyzerID {
		return sm, fmt.Errorf("shard %s built with schema %q analyzer %q; this build uses %q and %q: rebuild the index",
			path, sm.SchemaVersion, sm.Analyzer, schemas.Version, AnalyzerID)
	}
	return sm, nil
}
