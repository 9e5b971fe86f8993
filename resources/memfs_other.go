//go:build !linux

package resources

func warnIfMemoryFS(string) {}
