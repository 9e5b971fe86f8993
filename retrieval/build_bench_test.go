package retrieval

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxsim/ctxsim/retrieval/corpus"
	"github.com/ctxsim/ctxsim/schemas"
)

// realChunks returns up to n chunks of ../shared/data's mixed-2m corpus, or
// skips the benchmark when it is absent.
func realChunks(b *testing.B, n int) []schemas.Chunk {
	b.Helper()
	f, err := os.Open("../../shared/data/corpus/mixed-2m.jsonl.gz")
	if err != nil {
		b.Skip("../shared/data/corpus/mixed-2m.jsonl.gz not available")
	}
	defer f.Close()
	r, err := corpus.Decompress(f)
	if err != nil {
		b.Fatal(err)
	}
	var chunks []schemas.Chunk
	corpus.ReadJSONL(r, "mixed-2m", corpus.Defaults(), func(d schemas.Document) {
		if len(chunks) >= n {
			return
		}
		_, cs, _ := corpus.Split(d, corpus.Defaults())
		chunks = append(chunks, cs...)
	}, func(schemas.DeadLetter) {})
	if len(chunks) > n {
		chunks = chunks[:n]
	}
	return chunks
}

// BenchmarkShardWriter indexes 20,000 real chunks into one shard and
// reports chunks/s, by batch size.
func BenchmarkShardWriter(b *testing.B) {
	chunks := realChunks(b, 20000)
	for _, c := range []struct {
		name string
		opts BuildOptions
	}{
		{"batch1000", BuildOptions{BatchSize: 1000}},
		{"unigrams-batch1000", BuildOptions{BatchSize: 1000, Unigrams: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				dir := filepath.Join(b.TempDir(), fmt.Sprint(i))
				w, err := CreateShard(dir, 0, 1, c.opts)
				if err != nil {
					b.Fatal(err)
				}
				for j := range chunks {
					if err := w.Add(&chunks[j]); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(chunks)*b.N)/b.Elapsed().Seconds(), "chunks/s")
		})
	}
}
