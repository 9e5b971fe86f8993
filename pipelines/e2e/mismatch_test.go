package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMismatchedInputsRefused is issue 36 items 1.1 and 1.2: a model
// directory whose ctx.json was edited (one vocabulary word), and an index
// used with the chunks table of another corpus, are refused with an error
// naming the files, where the jobs used to exit 0 with changed labels.
func TestMismatchedInputsRefused(t *testing.T) {
	corpusOut, model := harvestFixture(t)
	t.Run("edited model vocabulary", func(t *testing.T) {
		edited := filepath.Join(t.TempDir(), "model")
		if err := os.CopyFS(edited, os.DirFS(model)); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(edited, "ctx.json")
		b, _ := os.ReadFile(p)
		e := strings.Replace(string(b), `"the"`, `"xhe"`, 1)
		if e == string(b) {
			t.Fatalf("no \"the\" in %s", p)
		}
		if err := os.WriteFile(p, []byte(e), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stderr := runExit(t, "harvest", harvestArgs(corpusOut, edited, filepath.Join(t.TempDir(), "h"))...)
		if l := firstLine(stderr); code == 0 || !strings.Contains(l, p+": checksum mismatch") {
			t.Fatalf("harvest with an edited ctx.json: exit %d: %q", code, l)
		}
	})
	t.Run("index of another corpus", func(t *testing.T) {
		// Another corpus: half the fixture's documents and as many others,
		// so that some hits are in the fixture's chunks table and some
		// are not (a harvest used to label from those that are, and exit 0).
		tmp := t.TempDir()
		var docs []string
		for i := range 40 {
			docs = append(docs, goodDoc(20+i))
		}
		in := filepath.Join(tmp, "other.jsonl.gz")
		gz(t, in, []byte(strings.Join(docs, "\n")))
		other := filepath.Join(tmp, "other")
		run(t, "index", "--input="+in, "--output="+other, "--shards=2")

		// A corpus directory whose index/ came from the other corpus.
		mixed := filepath.Join(tmp, "mixed")
		if err := os.CopyFS(mixed, os.DirFS(corpusOut)); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(filepath.Join(mixed, "index"))
		if err := os.CopyFS(filepath.Join(mixed, "index"), os.DirFS(filepath.Join(other, "index"))); err != nil {
			t.Fatal(err)
		}
		code, stderr := runExit(t, "harvest", harvestArgs(mixed, model, filepath.Join(tmp, "h"))...)
		if l := firstLine(stderr); code == 0 || !strings.Contains(l, "not of one corpus") ||
			!strings.Contains(l, filepath.Join(mixed, "index")) || !strings.Contains(l, filepath.Join(mixed, "chunks")) {
			t.Errorf("harvest over a corpus with another corpus's index: exit %d: %q", code, l)
		}

		index, chunks := filepath.Join(other, "index"), corpusOut+"/chunks/*.parquet"
		for _, job := range [][]string{
			{"evaluate", "--sts=" + smallSTS(t, tmp), "--index=" + index, "--chunks=" + chunks, "--model=" + model,
				"--output=" + filepath.Join(tmp, "e"), "--preset=demo", "--top_k=40", "--rerank=20", "--set_size=6", "--pairs=10"},
			{"retrieve", "--index=" + index, "--sentences=" + corpusOut + "/sentences/*.parquet", "--chunks=" + chunks,
				"--print=2", "--output=" + filepath.Join(tmp, "r")},
		} {
			code, stderr := runExit(t, job[0], job[1:]...)
			if l := firstLine(stderr); code == 0 || !strings.Contains(l, fmt.Sprintf("index %s and chunks table %s are not of one corpus", index, chunks)) {
				t.Errorf("%s --index=<other corpus> --chunks=<this corpus>: exit %d: %q", job[0], code, l)
			}
		}
	})
}
