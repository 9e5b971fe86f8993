package retrieval

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
)

// TestUpdateEqualsRebuild checks that an index updated in place (chunks
// deleted, replaced and added) searches exactly like one built from
// scratch over the final chunks.
func TestUpdateEqualsRebuild(t *testing.T) {
	all := synthChunks(900, 7)
	base := all[:700]  // the first version's chunks
	final := all[100:] // 100 deleted, 200 added
	// Chunk 150 changes text under the same ID: deleted and added again.
	final = append([]schemas.Chunk(nil), final...)
	final[50].Sentences = append([]string{"w1 w2 w3 replaced text."}, final[50].Sentences[1:]...)
	opts := BuildOptions{Unigrams: true}
	const shards = 3

	rebuilt := buildIndex(t, filepath.Join(t.TempDir(), "rebuilt"), final, shards, opts)
	defer rebuilt.Close()

	dir := filepath.Join(t.TempDir(), "updated")
	old := buildIndex(t, filepath.Join(t.TempDir(), "old"), base, shards, opts)
	oldDir := old.dir
	old.Close()
	if err := CopyDir(oldDir, dir); err != nil {
		t.Fatal(err)
	}
	remove := make([][]string, shards)
	add := make([][]schemas.Chunk, shards)
	for _, c := range base[:100] {
		remove[ShardOf(c.ID, shards)] = append(remove[ShardOf(c.ID, shards)], c.ID)
	}
	changed := final[50]
	remove[ShardOf(changed.ID, shards)] = append(remove[ShardOf(changed.ID, shards)], changed.ID)
	add[ShardOf(changed.ID, shards)] = append(add[ShardOf(changed.ID, shards)], changed)
	for _, c := range all[700:] {
		add[ShardOf(c.ID, shards)] = append(add[ShardOf(c.ID, shards)], c)
	}
	sms := make([]ShardMeta, shards)
	for i := range shards {
		sm, err := UpdateShard(filepath.Join(dir, ShardDir(i, shards)), remove[i], add[i], opts)
		if err != nil {
			t.Fatal(err)
		}
		sms[i] = sm
	}
	m, err := MetaOf(sms, opts, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteMeta(dir, m); err != nil {
		t.Fatal(err)
	}
	updated, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer updated.Close()
	if updated.Meta.Corpus != rebuilt.Meta.Corpus {
		t.Fatalf("fingerprints differ: updated %v, rebuilt %v", updated.Meta.Corpus, rebuilt.Meta.Corpus)
	}
	ctx := context.Background()
	for _, q := range []int{0, 120, 150, 400, 650, 720, 899} {
		text := all[q].Text()
		want, _, err := rebuilt.Search(ctx, text, 50, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := updated.Search(ctx, text, 50, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Fatalf("query %d: updated index returned\n%v\nrebuilt returned\n%v", q, got, want)
		}
	}
	// The old index is untouched by the update of its copy.
	again, err := Open(oldDir)
	if err != nil {
		t.Fatalf("old index after the update: %v", err)
	}
	again.Close()

	// Deleting an absent chunk or adding a present one is refused.
	updated.Close()
	p := filepath.Join(dir, ShardDir(0, shards))
	if _, err := UpdateShard(p, []string{"no-such-chunk"}, nil, opts); err == nil {
		t.Fatal("deleting an absent chunk succeeded")
	}
	if _, err := UpdateShard(p, nil, add[0][:1], opts); err == nil {
		t.Fatal("adding a chunk twice succeeded")
	}
}

// TestUpdateDiffs checks Update's diff of two chunk lists: from a parent
// index it searches like a rebuild and reports what changed; with no
// parent it builds the index anew.
func TestUpdateDiffs(t *testing.T) {
	all := synthChunks(600, 11)
	base, final := all[:400], all[50:]
	opts := BuildOptions{Unigrams: true}
	rebuilt := buildIndex(t, filepath.Join(t.TempDir(), "rebuilt"), final, 2, opts)
	defer rebuilt.Close()
	old := buildIndex(t, filepath.Join(t.TempDir(), "old"), base, 2, opts)
	oldDir := old.dir
	old.Close()
	ids := make([]string, len(base))
	for i, c := range base {
		ids[i] = c.ID
	}
	// The repeated chunk counts once.
	withDup := append(append([]schemas.Chunk(nil), final...), final[0])
	// The shard count of a parent wins over the one asked for.
	u, err := Update(filepath.Join(t.TempDir(), "updated"), oldDir, ids, withDup, 5, BuildOptions{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if u.Added != 200 || u.Removed != 50 || u.Meta.NumShards != 2 || !u.Meta.Unigrams {
		t.Fatalf("update %+v, want 200 added, 50 removed, the parent's 2 shards with unigrams", u)
	}
	fresh, err := Update(filepath.Join(t.TempDir(), "fresh"), "", nil, final, 2, opts, "test")
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Added != len(final) || fresh.Removed != 0 {
		t.Fatalf("fresh index %+v, want %d added", fresh, len(final))
	}
	for _, m := range []Meta{u.Meta, fresh.Meta} {
		if m.Corpus != rebuilt.Meta.Corpus {
			t.Fatalf("fingerprint %v, rebuilt %v", m.Corpus, rebuilt.Meta.Corpus)
		}
	}
}
