package parquetio

import (
	"encoding/json"

	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

// readVerified reads a table the way every job does: storage.Glob, then ReadFile
// on each file.
func readVerified(dir string) (int, error) {
	ctx := context.Background()
	files, err := storage.Glob(ctx, filepath.Join(dir, "*.parquet"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range files {
		if _, err := storage.ReadRows(ctx, f, reflect.TypeOf(schemas.Sentence{}), func(any) error { n++; return nil }); err != nil {
			return n, err
		}
	}
	return n, nil
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one naming %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not name %q", err, p)
		}
	}
}

func TestManifestRecordsFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	writeTable(t, dir, 3, sentences(300))
	m, err := storage.CheckTable(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.RunID != storage.RunID() || m.Rows != 300 {
		t.Fatalf("manifest run %q rows %d, want %q 300", m.RunID, m.Rows, storage.RunID())
	}
	for _, e := range m.Files {
		st, err := os.Stat(filepath.Join(dir, e.Name))
		if err != nil || st.Size() != e.Bytes || len(e.CRC32C) != 8 {
			t.Fatalf("entry %+v, file %v %v", e, st, err)
		}
	}
	if n, err := readVerified(dir); err != nil || n != 300 {
		t.Fatalf("read %d rows, %v", n, err)
	}
}

// Each way a table can be damaged after its run committed it is refused
// by the readers, naming the file.
func TestReadersRefuseDamagedTables(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	writeTable(t, src, 2, sentences(200))
	other := filepath.Join(t.TempDir(), "other")
	writeTable(t, other, 2, sentences(50))

	copyTable := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "t")
		if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	part0, part1 := storage.FileName(0, 2), storage.FileName(1, 2)
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		names  string
	}{
		{"deleted part", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, part1)) }, part1},
		{"extra part", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, part0))
			os.WriteFile(filepath.Join(dir, storage.FileName(2, 3)), b, 0o644)
		}, storage.FileName(2, 3)},
		{"truncated", func(t *testing.T, dir string) {
			os.Truncate(filepath.Join(dir, part0), 100)
		}, part0},
		{"flipped byte", func(t *testing.T, dir string) {
			p := filepath.Join(dir, part1)
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 0x40
			os.WriteFile(p, b, 0o644)
		}, part1},
		{"file of another run", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(other, part0))
			os.WriteFile(filepath.Join(dir, part0), b, 0o644)
		}, part0},
		{"no manifest", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, storage.ManifestName)) }, "part-0000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyTable(t)
			if _, err := readVerified(dir); err != nil {
				t.Fatalf("undamaged copy: %v", err)
			}
			tc.damage(t, dir)
			_, err := readVerified(dir)
			wantErr(t, err, tc.names)
		})
	}
}

// A shard that was sent rows but never reported writing them fails the
// commit: no manifest, no empty file in its place.
func TestFinalizeRefusesLostShard(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	ctx := context.Background()
	os.MkdirAll(dir, 0o755)
	spec := storage.TableSpec{Dir: dir, NumShards: 2, Type: reflect.TypeOf(schemas.Sentence{}), RunID: "r1"}
	f := &finalizeFn{Table: tableOf(spec)}
	e, err := spec.WriteShard(ctx, 0, func(w func(any) error) error {
		return w(sentences(1)[0])
	})
	if err != nil {
		t.Fatal(err)
	}
	report := []string{mustJSON(t, e)}
	_, err = f.ProcessElement(ctx, nil, iter1(report), iter2([]int{0, 1}, []int64{1, 5}))
	wantErr(t, err, storage.FileName(1, 2), "sent 5 rows", "never reported")
	if _, err := os.Stat(filepath.Join(dir, storage.ManifestName)); !os.IsNotExist(err) {
		t.Fatalf("manifest written after a lost shard: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, storage.FileName(1, 2))); !os.IsNotExist(err) {
		t.Fatalf("lost shard became a file: %v", err)
	}
	// A shard that wrote fewer rows than it was sent fails too.
	_, err = f.ProcessElement(ctx, nil, iter1(report), iter2([]int{0}, []int64{2}))
	wantErr(t, err, storage.FileName(0, 2), "sent 2 rows but wrote 1")
	// A shard that was sent nothing becomes an empty file.
	if _, err := f.ProcessElement(ctx, nil, iter1(report), iter2([]int{0}, []int64{1})); err != nil {
		t.Fatal(err)
	}
	if n, err := readVerified(dir); err != nil || n != 1 {
		t.Fatalf("read %d rows, %v", n, err)
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func iter1(xs []string) func(*string) bool {
	return func(p *string) bool {
		if len(xs) == 0 {
			return false
		}
		*p, xs = xs[0], xs[1:]
		return true
	}
}

func iter2(ks []int, vs []int64) func(*int, *int64) bool {
	return func(k *int, v *int64) bool {
		if len(ks) == 0 {
			return false
		}
		*k, *v, ks, vs = ks[0], vs[0], ks[1:], vs[1:]
		return true
	}
}

// The Beam source refuses files of another record type than the one it
// reads (a sentences table copied under chunks/ with its manifest), naming
// the file and both records, instead of decoding them to empty chunks.
func TestReadRefusesAnotherRecordType(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "chunks")
	writeTable(t, dir, 2, sentences(20))
	p, s := beam.NewPipelineWithRoot()
	chunks := Read(s, filepath.Join(dir, "*.parquet"), reflect.TypeOf(schemas.Chunk{}))
	Write(s, Config{Dir: filepath.Join(t.TempDir(), "copy"), NumShards: 1}, chunks)
	_, err := prism.Execute(context.Background(), p)
	wantErr(t, err, filepath.Join(dir, "part-0000"), "Sentence records", "expected Chunk records")
}
