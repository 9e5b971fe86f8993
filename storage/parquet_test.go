package storage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/parquet-go/parquet-go"
)

func TestReadParquetChecksVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "foreign.parquet")
	f, _ := os.Create(path)
	w := parquet.NewGenericWriter[schemas.Hit](f)
	w.Write([]schemas.Hit{{ChunkID: "x"}})
	w.Close()
	f.Close()
	if _, err := ReadParquet[schemas.Hit](context.Background(), path); err == nil || !strings.Contains(err.Error(), "not a ctxsim file") {
		t.Fatalf("foreign file: %v", err)
	}
	path2 := filepath.Join(t.TempDir(), "old.parquet")
	f, _ = os.Create(path2)
	w = parquet.NewGenericWriter[schemas.Hit](f, parquet.KeyValueMetadata(schemas.MetaVersionKey, "ctxsim/v0"))
	w.Write([]schemas.Hit{{ChunkID: "x"}})
	w.Close()
	f.Close()
	if _, err := ReadParquet[schemas.Hit](context.Background(), path2); err == nil || !strings.Contains(err.Error(), "ctxsim/v0") {
		t.Fatalf("old version: %v", err)
	}
}
