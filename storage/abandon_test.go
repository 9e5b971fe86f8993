package storage

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
)

func TestRemoveRunManifests(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	// Tables of the failed run "r1" at several depths, and one of another
	// run beside them.
	mine := []string{"pairs", "versions/v000001/corpus/sentences"}
	other := "context_sets"
	for _, table := range append(slices.Clone(mine), other) {
		run := "r1"
		if table == other {
			run = "r0"
		}
		f := TableSpec{Dir: filepath.Join(root, table), NumShards: 1, RunID: run, Type: reflect.TypeOf(schemas.Sentence{})}
		os.MkdirAll(f.Dir, 0o755)
		if _, err := f.Commit(ctx, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := RemoveRunManifests(ctx, root, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != len(mine) {
		t.Errorf("removed %v, want the manifests of %v", removed, mine)
	}
	for _, table := range mine {
		if _, err := CheckTable(ctx, filepath.Join(root, table)); err == nil {
			t.Errorf("%s still verifies after its run's manifests were removed", table)
		}
	}
	if _, err := CheckTable(ctx, filepath.Join(root, other)); err != nil {
		t.Errorf("another run's table was touched: %v", err)
	}
}

func TestAbandonedRunCommitsNothing(t *testing.T) {
	Abandon()
	t.Cleanup(func() { abandoned.Store(false) })
	dir := filepath.Join(t.TempDir(), "t")
	os.MkdirAll(dir, 0o755)
	f := TableSpec{Dir: dir, NumShards: 1, RunID: "r1", Type: reflect.TypeOf(schemas.Sentence{})}
	_, err := f.Commit(context.Background(), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "run has failed") {
		t.Fatalf("commit after Abandon: %v, want an error saying the run has failed", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); !os.IsNotExist(err) {
		t.Fatalf("a failed run committed its table: %v", err)
	}
	// Nor does it write an index's metadata.
	if err := CommitFile(context.Background(), dir, indexMetaName, []byte("{}\n")); err == nil || !strings.Contains(err.Error(), "run has failed") {
		t.Fatalf("CommitFile after Abandon: %v, want an error saying the run has failed", err)
	}
	if _, err := os.Stat(filepath.Join(dir, indexMetaName)); !os.IsNotExist(err) {
		t.Fatalf("a failed run wrote its index metadata: %v", err)
	}
	// Before Abandon it writes the file whole.
	abandoned.Store(false)
	if err := CommitFile(context.Background(), dir, indexMetaName, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, indexMetaName)); err != nil || string(b) != "{}\n" {
		t.Fatalf("CommitFile wrote %q (%v)", b, err)
	}
}

// A chunk index's metadata file names the run that wrote it: the failed
// run's is removed (its index then reads as incomplete), another run's and
// one naming no run are kept.
func TestRemoveRunIndexMeta(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	write := func(dir, body string) string {
		p := filepath.Join(root, dir, indexMetaName)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mine := write("index", `{"schema_version":"x","run_id":"r1"}`)
	deep := write("versions/v000002/corpus/index", `{"run_id":"r1"}`)
	other := write("versions/v000001/corpus/index", `{"run_id":"r0"}`)
	old := write("old/index", `{"schema_version":"x"}`)
	removed, err := RemoveRunManifests(ctx, root, "r1")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	if want := []string{mine, deep}; !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	for _, p := range []string{other, old} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}
