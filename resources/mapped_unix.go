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

// unlinkedFile creates a file under storage.CacheRoot and unlinks it at
// once: the open file, and then its mappings, keep it, and nothing is left
// behind however the process ends.
func unlinkedFile(pattern string) (*os.File, error) {
	root := storage.CacheRoot()
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	warnIfMemoryFS(root)
	f, err := os.CreateTemp(root, pattern)
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

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
	f, err := unlinkedFile("vectors-*.f32")
	if err != nil {
		return nil, fmt.Errorf("a file to map the vectors from: %w", err)
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

// textArena keeps strings in shared, writable memory maps of an unlinked
// local file, grown in blocks (LoadStore with mapped): the pages are page
// cache, written back by the kernel and then dropped under memory pressure
// like any file's, instead of heap.
type textArena struct {
	block []byte
	off   int
}

// arenaBlock is the size of one mapped block; a longer string gets a block
// of its own.
const arenaBlock = 64 << 20

func newTextArena() (*textArena, error) { return &textArena{}, nil }

// grow maps a new block of at least n bytes.
func (a *textArena) grow(n int) error {
	size := max(n, arenaBlock)
	f, err := unlinkedFile("texts-*.bin")
	if err != nil {
		return fmt.Errorf("a file to map the corpus texts in: %w", err)
	}
	defer f.Close()
	if err := reserve(f, int64(size)); err != nil {
		return fmt.Errorf("size the file to map the corpus texts in: %w", err)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("map the corpus texts (%d bytes): %w", size, err)
	}
	a.block, a.off = m, 0
	return nil
}

// keep returns a copy of s in the arena. It panics when no block can be
// mapped (a full disk), since the store has no way to report it; LoadStore
// recovers it as an error.
func (a *textArena) keep(s string) string {
	if len(s) == 0 {
		return ""
	}
	if a.off+len(s) > len(a.block) {
		if err := a.grow(len(s)); err != nil {
			panic(arenaError{err})
		}
	}
	b := a.block[a.off : a.off+len(s)]
	copy(b, s)
	a.off += len(s)
	return unsafe.String(&b[0], len(b))
}
