//go:build !amd64

package vecmath

func dotVec(a, b []float32, s *float32) bool { return false }

func addVec(dst, x []float32) bool { return false }

// Prefetch does nothing on this architecture (see the amd64 version).
func Prefetch(x []float32) {}
