package retrieval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Any damage to a shard's files after the index was built is refused at
// Open, naming the file: bleve itself reads most damaged segment bytes
// without noticing (and panics on others).
func TestDamagedShardIsRefused(t *testing.T) {
	chunks := synthChunks(400, 3)
	query := strings.Join(chunks[7].Sentences, " ")
	build := func(t *testing.T) (string, string) {
		dir := t.TempDir()
		buildIndex(t, dir, chunks, 2, BuildOptions{}).Close()
		zaps, _ := filepath.Glob(filepath.Join(dir, ShardDir(1, 2), "store", "*.zap"))
		if len(zaps) == 0 {
			t.Fatal("no segment files")
		}
		return dir, zaps[0]
	}
	for _, tc := range []struct {
		name   string
		damage func(zap string)
	}{
		{"one flipped byte", func(zap string) {
			b, _ := os.ReadFile(zap)
			b[len(b)/2] ^= 0x01
			os.WriteFile(zap, b, 0o644)
		}},
		{"truncated", func(zap string) { os.Truncate(zap, 10) }},
		{"deleted", func(zap string) { os.Remove(zap) }},
		{"extra file", func(zap string) { os.WriteFile(zap+".extra", []byte("x"), 0o644) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, zap := build(t)
			ix, err := Open(dir)
			if err != nil {
				t.Fatalf("undamaged: %v", err)
			}
			if _, _, err := ix.Search(context.Background(), query, 10, nil); err != nil {
				t.Fatal(err)
			}
			ix.Close()
			tc.damage(zap)
			_, err = Open(dir)
			if err == nil || !strings.Contains(err.Error(), ShardDir(1, 2)) || !strings.Contains(err.Error(), "damaged") {
				t.Fatalf("Open of a damaged index: %v", err)
			}
		})
	}
}
