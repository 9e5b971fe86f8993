package jobrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/storage"
)

func TestCheckOutput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	mark := func(rel string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	harvest := []string{"pairs", "context_sets", "dead_letters"}
	if err := CheckOutput(ctx, "harvest", filepath.Join(dir, "absent"), harvest...); err != nil {
		t.Errorf("a new directory: %v", err)
	}
	mark("dead_letters/" + storage.ManifestName)
	mark("pairs/" + storage.ManifestName)
	mark("notes/readme.txt")
	if err := CheckOutput(ctx, "harvest", dir, harvest...); err != nil {
		t.Errorf("an earlier harvest's output: %v", err)
	}
	// The index job's output: its dead letters would be replaced.
	mark("chunks/" + storage.ManifestName)
	mark("index/" + indexMetaName)
	err := CheckOutput(ctx, "harvest", dir, harvest...)
	if err == nil || !strings.Contains(err.Error(), "chunks/, index/") || !strings.Contains(err.Error(), "another job's output") {
		t.Errorf("the index job's output: %v", err)
	}
	if err := CheckOutput(ctx, "index", dir, "sentences", "chunks", "dead_letters", "index"); err == nil || !strings.Contains(err.Error(), "pairs/") {
		t.Errorf("index into a harvest's output: %v", err)
	}
}
