package repocheck

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestReason(t *testing.T) {
	for _, c := range []struct {
		name string
		head []byte
		size int64
		bad  bool
	}{
		{"Go source", []byte("package main\n\nfunc main() {}\n"), 30, false},
		{"UTF-8 text", []byte("Les vœux de l'année — 2026\n"), 30, false},
		{"ELF", []byte("\x7fELF\x02\x01\x01"), 66909806, true},
		{"ELF, small", []byte("\x7fELF"), 4, true},
		{"Mach-O", []byte{0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1}, 8, true},
		{"PE", []byte("MZ\x90\x00"), 4, true},
		{"Go archive", []byte("!<arch>\n__.PKGDEF"), 100, true},
		{"gzip", []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0}, 8, true},
		{"Parquet", append([]byte("PAR1\x15\x04"), 0, 0), 8, true},
		{"large text", []byte("a,b\n1,2\n"), MaxFileBytes + 1, true},
		{"text at the limit", []byte("a,b\n1,2\n"), MaxFileBytes, false},
	} {
		if got := Reason(c.head, c.size); (got != "") != c.bad {
			t.Errorf("%s: reason %q, want one: %v", c.name, got, c.bad)
		}
	}
}

// TestNoBinaryTracked runs the check on every file git tracks (committed
// or staged), so that `make test` fails before a binary is committed.
func TestNoBinaryTracked(t *testing.T) {
	root := filepath.Join("..", "..")
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git work tree (git ls-files: %v): nothing to check", err)
	}
	names := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(names) < 100 {
		t.Fatalf("git ls-files lists %d files; the repository has hundreds", len(names))
	}
	for _, name := range names {
		f, err := os.Open(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		var head bytes.Buffer
		if _, err := io.CopyN(&head, f, sniffBytes); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		f.Close()
		if why := Reason(head.Bytes(), st.Size()); why != "" {
			t.Errorf("%s is tracked but is %s: build or fetch it instead, and ignore it (.gitignore)", name, why)
		}
	}
}
