package corpus

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Magic numbers that open a compressed stream.
var (
	// gzipMagic opens every gzip member (RFC 1952).
	gzipMagic = []byte{0x1f, 0x8b}
	// zstdMagic opens every Zstandard frame (RFC 8878), little-endian
	// 0xFD2FB528.
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// zstdMaxWindow bounds the window a zstd stream may ask the decoder to
// hold: zstd -19 and --long=27 (the largest common settings) fit.
const zstdMaxWindow = 1 << 28

// Decompress returns a reader of the plain bytes of r: a gzip reader over r
// when it starts with the gzip magic bytes, a Zstandard reader when it
// starts with the zstd magic bytes, and r itself (buffered) otherwise. The
// file name plays no part. Concatenated gzip members and zstd frames are
// read as one stream. A compressed stream that is truncated or corrupt
// makes the returned reader fail with a non-EOF error
// (io.ErrUnexpectedEOF, gzip.ErrChecksum, a zstd error, ...), never a
// silent short read; but the bytes it returned before failing may be
// garbled, since a gzip member's or zstd frame's checksum is checked at its
// end (ReadInput checks a compressed file before parsing it).
//
// The zstd reader decodes in the calling goroutine and holds nothing that
// needs closing once r is closed.
func Decompress(r io.Reader) (io.Reader, error) {
	dr, _, err := decompress(r)
	return dr, err
}

// Names of the compressions decompress recognises.
const (
	compressionGzip = "gzip"
	compressionZstd = "zstd"
)

// decompress is Decompress, and also names the compression it found
// (compressionGzip, compressionZstd, or "" for plain bytes).
func decompress(r io.Reader) (io.Reader, string, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.Peek(len(zstdMagic))
	if err != nil && err != io.EOF {
		return nil, "", fmt.Errorf("corpus: sniffing compression: %w", err)
	}
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, compressionGzip, fmt.Errorf("corpus: opening gzip stream: %w", err)
		}
		return zr, compressionGzip, nil
	case bytes.HasPrefix(head, zstdMagic):
		// Concurrency 1 decodes synchronously, without goroutines, so a
		// reader abandoned before its end leaks nothing.
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(zstdMaxWindow))
		if err != nil {
			return nil, compressionZstd, fmt.Errorf("corpus: opening zstd stream: %w", err)
		}
		return zr, compressionZstd, nil
	}
	return br, "", nil
}
