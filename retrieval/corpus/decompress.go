package corpus

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
)

// gzipMagic is the first two bytes of every gzip member (RFC 1952).
var gzipMagic = [2]byte{0x1f, 0x8b}

// Decompress returns a reader of the plain bytes of r: r itself (buffered)
// when it does not start with the gzip magic bytes, and a gzip reader over
// it when it does. The file name plays no part. Concatenated gzip members
// are read as one stream. A gzip stream that is truncated or corrupt makes
// the returned reader fail with a non-EOF error (io.ErrUnexpectedEOF,
// gzip.ErrChecksum, ...), never a silent short read.
func Decompress(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.Peek(len(gzipMagic))
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("corpus: sniffing compression: %w", err)
	}
	if len(head) < len(gzipMagic) || [2]byte(head) != gzipMagic {
		return br, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("corpus: opening gzip stream: %w", err)
	}
	return zr, nil
}
