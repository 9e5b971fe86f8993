//go:build !amd64

package gogemm

// Kernels returns every micro-kernel this CPU can run, fastest last.
func Kernels() []Kernel { return []Kernel{Generic} }
