// Package repocheck checks what the repository tracks: source and text,
// no binaries. Built tools, model weights, corpora and tables are made or
// fetched by the project's own commands and never committed; its test runs
// the check on `git ls-files` in `make test`.
package repocheck

import (
	"bytes"
	"fmt"
)

// MaxFileBytes is the largest file the repository tracks. bench/results.txt,
// the largest text file, was 0.55 MB at the end of 2026.
const MaxFileBytes = 4 << 20

// sniffBytes is how much of a file Reason looks at for NUL bytes.
const sniffBytes = 8000

// Reason says why a tracked file of the given size, whose contents begin
// with head, should not be in the repository, or returns "" when it may
// be: an executable or object file (ELF, Mach-O, PE, an ar archive), a
// file with NUL bytes in its first 8,000 (compressed data, Parquet,
// weights), or one larger than MaxFileBytes.
func Reason(head []byte, size int64) string {
	magic := []struct {
		prefix []byte
		what   string
	}{
		{[]byte("\x7fELF"), "an ELF executable or object"},
		{[]byte{0xcf, 0xfa, 0xed, 0xfe}, "a Mach-O executable"},
		{[]byte{0xce, 0xfa, 0xed, 0xfe}, "a Mach-O executable"},
		{[]byte{0xca, 0xfe, 0xba, 0xbe}, "a Mach-O universal binary or Java class"},
		{[]byte("MZ"), "a Windows executable"},
		{[]byte("!<arch>\n"), "an ar archive (Go or C objects)"},
	}
	for _, m := range magic {
		if bytes.HasPrefix(head, m.prefix) {
			return m.what
		}
	}
	if i := bytes.IndexByte(head[:min(len(head), sniffBytes)], 0); i >= 0 {
		return fmt.Sprintf("binary data (a NUL byte at offset %d)", i)
	}
	if size > MaxFileBytes {
		return fmt.Sprintf("%d bytes, over the %d a tracked file may have", size, MaxFileBytes)
	}
	return ""
}
