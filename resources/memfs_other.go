//go:build !linux

package resources

import "os"

func warnIfMemoryFS(string) {}

// reserve sizes f (see the Linux version, which also reserves its blocks).
func reserve(f *os.File, size int64) error { return f.Truncate(size) }
