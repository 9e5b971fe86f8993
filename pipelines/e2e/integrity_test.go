package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

// runExit runs a job and returns its exit code and stderr.
func runExit(t *testing.T, name string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), errb.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, errb.String()
}

// firstLine is the line of stderr that starts with "error:".
func firstLine(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "error:") {
			return l
		}
	}
	return ""
}

// Two index runs into one output: one gets the output, the other is refused
// naming the holder, and what is left is one run's complete, consistent
// table set.
func TestConcurrentWritersRefused(t *testing.T) {
	tmp := t.TempDir()
	a := cleanCorpus(t, filepath.Join(tmp), 40)
	bdir := filepath.Join(tmp, "b")
	os.MkdirAll(bdir, 0o755)
	b := cleanCorpus(t, bdir, 25)
	out := filepath.Join(tmp, "out")
	type res struct {
		code   int
		stderr string
	}
	done := make(chan res, 2)
	for _, in := range []string{a, b} {
		go func() {
			code, stderr := runExit(t, "index", "--input="+in, "--output="+out, "--shards=2", "--parquet_shards=2")
			done <- res{code, stderr}
		}()
	}
	r1, r2 := <-done, <-done
	ok := 0
	for _, r := range []res{r1, r2} {
		switch {
		case r.code == 0:
			ok++
		case !strings.Contains(r.stderr, "is in use by run") || !strings.Contains(r.stderr, "--take_over"):
			t.Errorf("refused run's error: %s", r.stderr)
		}
	}
	if ok == 0 {
		t.Fatalf("both runs failed:\n%s\n%s", r1.stderr, r2.stderr)
	}
	// Whatever ran (one run, or both one after the other), each table is
	// one run's, complete, and the index matches the chunks table.
	ctx := context.Background()
	var run string
	for _, table := range []string{"sentences", "chunks", "dead_letters"} {
		m, err := storage.CheckTable(ctx, filepath.Join(out, table))
		if err != nil {
			t.Fatal(err)
		}
		if run != "" && m.RunID != run {
			t.Fatalf("tables of two runs: %s and %s", run, m.RunID)
		}
		run = m.RunID
	}
	ix, err := retrieval.Open(filepath.Join(out, "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if n := len(readAll[schemas.Chunk](t, filepath.Join(out, "chunks"))); uint64(n) != ix.Meta.Corpus.Count {
		t.Fatalf("chunks table holds %d rows, the index %d chunks", n, ix.Meta.Corpus.Count)
	}
	if _, err := os.Stat(filepath.Join(out, "_lease.json")); !os.IsNotExist(err) {
		t.Fatalf("lease left behind: %v", err)
	}
}

// A disk that fills mid-run fails the job and leaves no table that claims
// to be complete. Needs root to mount a small tmpfs.
func TestDiskFullLeavesNoFalseTable(t *testing.T) {
	mnt := filepath.Join(t.TempDir(), "small")
	os.MkdirAll(mnt, 0o755)
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=300k"); err != nil {
		if os.Getenv("CTXSIM_REQUIRE_NETNS") != "" {
			t.Fatalf("cannot mount a tmpfs: %v", err)
		}
		t.Skipf("cannot mount a tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	in := cleanCorpus(t, t.TempDir(), 400)
	out := filepath.Join(mnt, "out")
	code, stderr := runExit(t, "index", "--input="+in, "--output="+out, "--shards=2", "--parquet_shards=2")
	if code == 0 {
		t.Skip("the corpus fitted in the tmpfs")
	}
	t.Logf("index into a full disk: exit %d: %s", code, firstLine(stderr))
	if l := firstLine(stderr); !strings.Contains(l, "no space left on device") {
		t.Errorf("error does not say the disk is full: %q", l)
	}
	// A failed run commits nothing: a table it finished before the disk
	// filled, or one whose finalize ran while the runner cancelled the job
	// (which once committed zero rows beside empty part files), would
	// claim to be complete output of a run that failed.
	manifests, _ := filepath.Glob(filepath.Join(out, "*", storage.ManifestName))
	for _, m := range manifests {
		t.Errorf("the failed run left a committed table: %s", m)
	}
	for _, table := range []string{"sentences", "chunks"} {
		if _, err := storage.CheckTable(context.Background(), filepath.Join(out, table)); err == nil {
			t.Errorf("%s/%s verifies as a complete table after the run failed", out, table)
		}
	}
}

// Damage to the index job's output after it finished: the next job fails
// with one line naming the damaged file.
func TestDamagedInputsRefused(t *testing.T) {
	corpusOut, model := harvestFixture(t)
	copyOut := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "corpus")
		if err := os.CopyFS(dir, os.DirFS(corpusOut)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	harvest := func(corpus string) (int, string) {
		return runExit(t, "harvest", harvestArgs(corpus, model, filepath.Join(t.TempDir(), "h"))...)
	}
	t.Run("deleted part file", func(t *testing.T) {
		for _, table := range []string{"chunks", "sentences"} {
			c := copyOut(t)
			part := filepath.Join(c, table, storage.FileName(1, 4))
			if err := os.Remove(part); err != nil {
				t.Fatal(err)
			}
			code, stderr := harvest(c)
			if l := firstLine(stderr); code == 0 || !strings.Contains(l, part) || !strings.Contains(l, "missing") {
				t.Fatalf("harvest without %s: exit %d: %q", part, code, l)
			}
			if table == "sentences" {
				code, stderr = runExit(t, "retrieve", "--index="+c+"/index", "--sentences="+c+"/sentences/*.parquet",
					"--output="+filepath.Join(t.TempDir(), "r"))
				if code == 0 || !strings.Contains(firstLine(stderr), part) {
					t.Fatalf("retrieve without %s: exit %d: %s", part, code, stderr)
				}
			}
		}
	})
	t.Run("flipped index byte", func(t *testing.T) {
		c := copyOut(t)
		zaps, _ := filepath.Glob(filepath.Join(c, "index", "shard-*", "store", "*.zap"))
		if len(zaps) == 0 {
			t.Fatal("no segment files")
		}
		b, _ := os.ReadFile(zaps[0])
		b[len(b)/2] ^= 1
		os.WriteFile(zaps[0], b, 0o644)
		code, stderr := harvest(c)
		if l := firstLine(stderr); code == 0 || !strings.Contains(l, "damaged") || !strings.Contains(l, filepath.Base(zaps[0])) {
			t.Fatalf("exit %d: %q", code, l)
		}
	})
	t.Run("rerun killed after rewriting context sets", func(t *testing.T) {
		h := filepath.Join(t.TempDir(), "h")
		run(t, "harvest", harvestArgs(corpusOut, model, h)...)
		// A second run with other settings got as far as its context sets,
		// then died: its summary was never written.
		other := filepath.Join(t.TempDir(), "h2")
		run(t, "harvest", append(harvestArgs(corpusOut, model, other), "--set_size=5")...)
		os.RemoveAll(filepath.Join(h, "context_sets"))
		os.Rename(filepath.Join(other, "context_sets"), filepath.Join(h, "context_sets"))
		os.Remove(filepath.Join(h, "summary.json"))
		code, stderr := runExit(t, "surrogate", "--pairs="+h+"/pairs", "--model="+model,
			"--output="+filepath.Join(t.TempDir(), "s"), "--objective=l2")
		if l := firstLine(stderr); code == 0 || !strings.Contains(l, "did not finish") {
			t.Fatalf("exit %d: %q", code, l)
		}
	})
}

// Nonsense flags and empty input are refused before anything runs, naming
// the flag or the input.
func TestBadFlagsAndEmptyInput(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "out")
	corpus := cleanCorpus(t, tmp, 5)
	for _, tc := range []struct {
		job  string
		args []string
		flag string
	}{
		{"harvest", []string{"--sample=-1"}, "--sample"},
		{"harvest", []string{"--sample=2"}, "--sample"},
		{"harvest", []string{"--sample=NaN"}, "--sample"},
		{"harvest", []string{"--top_k=0"}, "--top_k"},
		{"harvest", []string{"--rerank=0"}, "--rerank"},
		{"harvest", []string{"--set_size=0"}, "--set_size"},
		{"harvest", []string{"--parquet_shards=0"}, "--parquet_shards"},
		{"harvest", []string{"--parquet_shards=100000"}, "--parquet_shards"},
		{"index", []string{"--shards=0"}, "--shards"},
		{"index", []string{"--chunk_size=0"}, "--chunk_size"},
		{"index", []string{"--parquet_shards=0"}, "--parquet_shards"},
		{"retrieve", []string{"--k=0"}, "--k"},
		{"surrogate", []string{"--epochs=0"}, "--epochs"},
	} {
		args := append([]string{"--input=" + corpus, "--corpus=" + out, "--model=" + out, "--index=" + out,
			"--queries=" + corpus, "--pairs=" + out, "--output=" + out}, tc.args...)
		args = keepFlags(tc.job, args)
		code, stderr := runExit(t, tc.job, args...)
		if l := firstLine(stderr); code == 0 || !strings.Contains(l, tc.flag) {
			t.Errorf("%s %v: exit %d: %q", tc.job, tc.args, code, l)
		}
	}
	empty := filepath.Join(tmp, "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	for _, in := range []string{empty, tmp + "/nothing-here"} {
		if in == tmp+"/nothing-here" {
			os.MkdirAll(in, 0o755) // a directory given as the corpus
		}
		code, stderr := runExit(t, "index", "--input="+in, "--output="+filepath.Join(tmp, "e"))
		// An empty directory holds no corpus file; an empty file, no document.
		if l := firstLine(stderr); code == 0 || !(strings.Contains(l, "no documents") || strings.Contains(l, "no corpus files")) {
			t.Errorf("index of %s: exit %d: %q", in, code, l)
		}
		// The failed run leaves no index that opens: its metadata, the
		// file that completes an index, is withdrawn with the manifests.
		if _, err := os.Stat(filepath.Join(tmp, "e", "index", "ctxsim-index.json")); !os.IsNotExist(err) {
			t.Errorf("index of %s failed but left its index metadata (%v)", in, err)
		}
	}
	run(t, "index", "--input="+empty, "--output="+filepath.Join(tmp, "e2"), "--allow_empty")
}

// keepFlags drops the flags job does not define.
func keepFlags(job string, args []string) []string {
	known := map[string][]string{
		"harvest":   {"corpus", "model", "output", "sample", "top_k", "rerank", "set_size", "parquet_shards"},
		"index":     {"input", "output", "shards", "chunk_size", "parquet_shards"},
		"retrieve":  {"index", "queries", "output", "k"},
		"surrogate": {"pairs", "model", "output", "epochs"},
	}[job]
	var out []string
	for _, a := range args {
		name := strings.TrimPrefix(strings.SplitN(a, "=", 2)[0], "--")
		for _, k := range known {
			if k == name {
				out = append(out, a)
			}
		}
	}
	return out
}
