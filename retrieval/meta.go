package retrieval

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxsim/ctxsim/schemas"
)

// MetaFile is the name of the index's metadata file in its directory.
const MetaFile = "ctxsim-index.json"

// Meta describes an index: how its text was analysed, how it is sharded,
// and which corpus it holds. It is written when every shard is complete, so
// a directory without it is not a usable index.
type Meta struct {
	SchemaVersion string `json:"schema_version"`
	Analyzer      string `json:"analyzer"`
	// Unigrams says whether the index also holds a unigram field.
	Unigrams  bool `json:"unigrams"`
	NumShards int  `json:"num_shards"`
	// Corpus fingerprints the set of chunk IDs in the index.
	Corpus Fingerprint `json:"corpus"`
	// Shards holds each shard's own fingerprint, in shard order.
	Shards []Fingerprint `json:"shards"`
	// Chunking records how chunks were cut ("size=6,stride=3").
	Chunking string `json:"chunking,omitempty"`
	// ShardFiles holds each shard's files with their sizes and checksums
	// (ShardMeta.Files), checked by Open.
	ShardFiles []map[string]string `json:"shard_files,omitempty"`
	// RunID names the run that wrote the metadata (storage.RunID of the
	// job that built or updated the index). It is not part of the
	// index's identity (ID): a failed run removes the metadata it wrote
	// (storage.RemoveRunManifests), so its index reads as incomplete.
	RunID string `json:"run_id,omitempty"`
}

// ID returns a short identifier of the index's content and analysis, for
// provenance columns.
func (m *Meta) ID() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s|%s|%t|%d|%s|%s", m.SchemaVersion, m.Analyzer, m.Unigrams,
		m.NumShards, m.Corpus.String(), m.Chunking)
	return fmt.Sprintf("%x", h.Sum(nil)[:8])
}

// Fingerprint is an order-independent digest of a set of chunk IDs: the
// count and two 64-bit sums of the IDs' hashes. Fingerprints of disjoint sets
// add up, so shards can be fingerprinted independently and combined.
type Fingerprint struct {
	Count uint64 `json:"count"`
	Sum1  uint64 `json:"sum1"`
	Sum2  uint64 `json:"sum2"`
}

// AddID adds one chunk ID to the fingerprint.
func (f *Fingerprint) AddID(id string) {
	h := sha256.Sum256([]byte(id))
	f.Count++
	f.Sum1 += binary.LittleEndian.Uint64(h[0:8])
	f.Sum2 += binary.LittleEndian.Uint64(h[8:16])
}

// Merge adds the fingerprint of a disjoint set.
func (f *Fingerprint) Merge(g Fingerprint) {
	f.Count += g.Count
	f.Sum1 += g.Sum1
	f.Sum2 += g.Sum2
}

// String renders the fingerprint compactly.
func (f Fingerprint) String() string {
	return fmt.Sprintf("%d-%016x%016x", f.Count, f.Sum1, f.Sum2)
}

// ShardDir returns the directory name of shard i of n.
func ShardDir(i, n int) string {
	return fmt.Sprintf("shard-%05d-of-%05d", i, n)
}

// ShardOf returns the shard a chunk ID belongs to among n shards.
func ShardOf(chunkID string, n int) int {
	h := sha256.Sum256([]byte(chunkID))
	return int(binary.LittleEndian.Uint64(h[:8]) % uint64(n))
}

// WriteMeta writes m into dir atomically (temporary file, then rename).
func WriteMeta(dir string, m Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+MetaFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, MetaFile))
}

// ReadMeta reads and checks the metadata of the index in dir. It fails with
// a clear error when the index is missing, incomplete, or was built with a
// different analyzer or schema version than this build uses.
func ReadMeta(dir string) (Meta, error) {
	var m Meta
	b, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if os.IsNotExist(err) {
		return m, fmt.Errorf("%s is not a complete ctxsim index: %s is missing", dir, MetaFile)
	}
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: corrupt index metadata: %w", dir, err)
	}
	if m.SchemaVersion != schemas.Version {
		return m, fmt.Errorf("%s: index schema version %q, this build reads %q: rebuild the index",
			dir, m.SchemaVersion, schemas.Version)
	}
	if m.Analyzer != AnalyzerID {
		return m, fmt.Errorf("%s: index built with analyzer %q, this build analyses queries with %q: rebuild the index",
			dir, m.Analyzer, AnalyzerID)
	}
	if m.NumShards < 1 || len(m.Shards) != m.NumShards {
		return m, fmt.Errorf("%s: corrupt index metadata: %d shards, %d shard fingerprints",
			dir, m.NumShards, len(m.Shards))
	}
	var sum Fingerprint
	for _, s := range m.Shards {
		sum.Merge(s)
	}
	if sum != m.Corpus {
		return m, fmt.Errorf("%s: corrupt index metadata: shard fingerprints do not add up to the corpus fingerprint", dir)
	}
	return m, nil
}

// CheckChunks returns an error unless f, the fingerprint of the distinct
// chunk IDs of the chunks table chunks (each added once, as the index job
// indexes one chunk of each ID), is the corpus
// fingerprint of this index, in dir: an index and a chunks table of
// different corpora, or of different versions of one, give hits the table
// does not hold, or hold chunks the index never returns.
func (m *Meta) CheckChunks(dir, chunks string, f Fingerprint) error {
	if f == m.Corpus {
		return nil
	}
	return fmt.Errorf("index %s and chunks table %s are not of one corpus: the index holds %d chunks (corpus fingerprint %s), the table %d (%s); give the chunks table the index was built from (the index job's <output>/chunks beside <output>/index)",
		dir, chunks, m.Corpus.Count, m.Corpus, f.Count, f)
}
