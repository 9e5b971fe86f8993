//go:build unix

package resources

import (
	"bufio"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"github.com/ctxsim/ctxsim/storage"
)

// vectorFile collects vectors of one length in a local file and maps it
// (LoadVectors with mapped). Values are written in the machine's byte
// order, since the same process maps them back.
type vectorFile struct {
	f   *os.File
	w   *bufio.Writer
	dim int
	n   int
}

func newVectorFile(dim int) (*vectorFile, error) {
	root := storage.CacheRoot()
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(root, "vectors-*.f32")
	if err != nil {
		return nil, fmt.Errorf("a file to map the vectors from: %w", err)
	}
	// Unlinked at once: the open file and then the mapping keep it, and
	// nothing is left behind however the process ends.
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return &vectorFile{f: f, w: bufio.NewWriterSize(f, 1<<20), dim: dim}, nil
}

func (v *vectorFile) add(x []float32) error {
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), 4*len(x))
	if _, err := v.w.Write(b); err != nil {
		return fmt.Errorf("write the vectors to map: %w", err)
	}
	v.n++
	return nil
}

// mapVectors maps the file read-only and returns its vectors in the order
// they were added. The mapping lives as long as the process.
func (v *vectorFile) mapVectors() ([][]float32, error) {
	if err := v.w.Flush(); err != nil {
		return nil, fmt.Errorf("write the vectors to map: %w", err)
	}
	out := make([][]float32, v.n)
	size := 4 * v.dim * v.n
	if size == 0 {
		return out, nil
	}
	m, err := syscall.Mmap(int(v.f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map the vectors (%d bytes): %w", size, err)
	}
	all := unsafe.Slice((*float32)(unsafe.Pointer(&m[0])), v.dim*v.n)
	for i := range out {
		out[i] = all[i*v.dim : (i+1)*v.dim : (i+1)*v.dim]
	}
	return out, nil
}

// discard closes the file; a mapping made from it stays.
func (v *vectorFile) discard() { v.f.Close() }
