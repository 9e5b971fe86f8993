package resources

import (
	"fmt"
	"os"
	"sync"
	"syscall"
)

var memFSOnce sync.Once

// warnIfMemoryFS says once, on standard error, when dir is on tmpfs or
// ramfs: pages mapped from files there are memory the kernel cannot drop,
// so mapping the corpus there saves nothing.
func warnIfMemoryFS(dir string) {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return
	}
	const tmpfs, ramfs = 0x01021994, 0x858458f6
	if st.Type == tmpfs || st.Type == ramfs {
		memFSOnce.Do(func() {
			fmt.Fprintf(os.Stderr, "warning: %s is in memory (tmpfs): the mapped corpus there is memory the kernel cannot drop; set CTXSIM_CACHE_DIR to a directory on disk\n", dir)
		})
	}
}

// reserve gives f size bytes of disk blocks. A writable shared map of a
// file with holes allocates blocks when a page is first written, and on a
// full disk that write kills the process (SIGBUS); reserved up front, a
// full disk is an error here instead. A file system without fallocate
// gets a file of that size with holes.
func reserve(f *os.File, size int64) error {
	err := syscall.Fallocate(int(f.Fd()), 0, 0, size)
	if err == syscall.EOPNOTSUPP {
		return f.Truncate(size)
	}
	return err
}
