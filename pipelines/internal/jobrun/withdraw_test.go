package jobrun

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

// inChild runs the test named name again in a child process and reports
// whether this is the child: a failed run's state (storage.Abandon) lasts
// for the process.
func inChild(t *testing.T, name string) bool {
	t.Helper()
	if os.Getenv("JOBRUN_CHILD") == name {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), "JOBRUN_CHILD="+name)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("child: %v\n%s", err, out)
	}
	return false
}

// resetRun forgets the leases and the failure state of an earlier test.
func resetRun(t *testing.T) {
	t.Helper()
	Release()
	leaseMu.Lock()
	leaseJob, abandonedRun, committed, kept = "", false, false, nil
	leaseMu.Unlock()
	t.Cleanup(Release)
}

// writeRunOutput writes, as this run, a table and a summary under dir.
func writeRunOutput(t *testing.T, dir string) (manifest, summary string) {
	t.Helper()
	ctx := context.Background()
	if err := storage.WriteTable(ctx, filepath.Join(dir, "context_sets"), []schemas.DeadLetter{{Stage: "t"}}); err != nil {
		t.Fatal(err)
	}
	summary = filepath.Join(dir, SummaryName)
	if err := os.WriteFile(summary, []byte(fmt.Sprintf(`{"run_id": %q}`, storage.RunID())), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "context_sets", storage.ManifestName), summary
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestFailWithdrawsOutput: a run that fails after committing a table and
// its summary (the harvest that read an expired version; the index job
// that found no documents) leaves neither.
func TestFailWithdrawsOutput(t *testing.T) {
	if !inChild(t, "TestFailWithdrawsOutput") {
		return
	}
	resetRun(t)
	dir := t.TempDir()
	Lease("harvest", dir)
	manifest, summary := writeRunOutput(t, dir)
	// Another run's summary in a second directory is left alone.
	other := t.TempDir()
	Lease("harvest", other)
	otherSummary := filepath.Join(other, SummaryName)
	os.WriteFile(otherSummary, []byte(`{"run_id": "someone-else"}`), 0o644)

	stderr := captureStderr(t)
	abandonOnFailure()
	msg := stderr()
	if exists(manifest) || exists(summary) {
		t.Errorf("after the failure: manifest there %v, summary there %v\n%s", exists(manifest), exists(summary), msg)
	}
	if !exists(otherSummary) {
		t.Error("another run's summary was removed")
	}
	if !strings.Contains(msg, "removed the "+summary) {
		t.Errorf("stderr does not name the summary removed:\n%s", msg)
	}
}

// TestFailKeepsResumableTables: a failed run withdraws its output but not
// the tables a later run resumes from (a harvest's _waves/, named by
// KeepOnFailure): a harvest in waves stopped by Ctrl-C resumes.
func TestFailKeepsResumableTables(t *testing.T) {
	if !inChild(t, "TestFailKeepsResumableTables") {
		return
	}
	resetRun(t)
	dir := t.TempDir()
	Lease("harvest", dir)
	manifest, _ := writeRunOutput(t, dir)
	waves := filepath.Join(dir, "_waves")
	hits := filepath.Join(waves, "hits")
	if err := storage.WriteTable(context.Background(), hits, []schemas.DeadLetter{{Stage: "t"}}); err != nil {
		t.Fatal(err)
	}
	KeepOnFailure(waves)
	abandonOnFailure()
	if exists(manifest) {
		t.Error("the output table's manifest was kept")
	}
	if !exists(filepath.Join(hits, storage.ManifestName)) {
		t.Error("the manifest of a table under _waves/ was withdrawn: the run cannot be resumed")
	}
}

// TestCommittedOutputKept: once the run has committed for good (a refresh
// whose CURRENT.json names its version), a later failure keeps the output.
func TestCommittedOutputKept(t *testing.T) {
	if !inChild(t, "TestCommittedOutputKept") {
		return
	}
	resetRun(t)
	dir := t.TempDir()
	Lease("refresh", dir)
	manifest, summary := writeRunOutput(t, dir)
	Committed()
	abandonOnFailure()
	if !exists(manifest) || !exists(summary) {
		t.Errorf("a committed run's output was withdrawn: manifest %v, summary %v", exists(manifest), exists(summary))
	}
}

// TestSignalWithdrawsOutput stops a process that holds a lease and has
// committed a table with SIGTERM: the table's manifest must be gone.
func TestSignalWithdrawsOutput(t *testing.T) {
	if d := os.Getenv("JOBRUN_SIGNAL_DIR"); d != "" {
		Lease("harvest", d)
		manifest, _ := writeRunOutput(t, d)
		fmt.Println("written", manifest)
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		time.Sleep(10 * time.Second) // the handler exits first
		t.Fatal("still running after SIGTERM")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSignalWithdrawsOutput$")
	cmd.Env = append(os.Environ(), "JOBRUN_SIGNAL_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 || !strings.Contains(string(out), "written") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if m := filepath.Join(dir, "context_sets", storage.ManifestName); exists(m) || exists(filepath.Join(dir, SummaryName)) {
		t.Errorf("a run stopped by SIGTERM left its manifest or summary\n%s", out)
	}
}
