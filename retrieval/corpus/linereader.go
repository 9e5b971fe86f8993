package corpus

import (
	"bufio"
	"errors"
	"io"
)

// lineReader reads newline-terminated lines of any length from a
// bufio.Reader, holding at most max bytes of one line in memory.
type lineReader struct {
	br  *bufio.Reader
	max int
	buf []byte
}

// line is one line returned by lineReader.next.
type line struct {
	// text is the line without its '\n'. When tooLong is set it holds only
	// the first MaxRecordBytes bytes. It is valid until the next call.
	text []byte
	// size is the length of the line in bytes, without its '\n'.
	size int64
	// tooLong is set when size exceeds the reader's max.
	tooLong bool
}

// newLineReader returns a lineReader over r that treats lines longer than
// max bytes as too long.
func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 1<<16), max: max}
}

// next returns the next line. It returns io.EOF, and no line, at the end of
// the input; a last line without a final newline is returned as a line. Any
// other error is a read error; the partial line read before it is dropped.
func (lr *lineReader) next() (line, error) {
	frag, err := lr.br.ReadSlice('\n')
	if err == nil && len(frag)-1 <= lr.max {
		// Fast path: the whole line sits in the bufio buffer.
		return line{text: frag[:len(frag)-1], size: int64(len(frag) - 1)}, nil
	}
	lr.buf = lr.buf[:0]
	var l line
	for {
		content := frag
		if err == nil {
			content = frag[:len(frag)-1]
		}
		l.size += int64(len(content))
		switch {
		case l.tooLong:
			// Skip: the record already holds the start of the line.
		case l.size > int64(lr.max):
			l.tooLong = true
			keep := min(len(content), max(0, MaxRecordBytes-len(lr.buf)))
			lr.buf = append(lr.buf, content[:keep]...)
		default:
			lr.buf = append(lr.buf, content...)
		}
		switch {
		case err == nil:
			l.text = lr.buf
			return l, nil
		case errors.Is(err, bufio.ErrBufferFull):
			frag, err = lr.br.ReadSlice('\n')
		case err == io.EOF:
			if l.size == 0 && !l.tooLong {
				// Either no bytes at all, or nothing after the last '\n'.
				return line{}, io.EOF
			}
			l.text = lr.buf
			return l, nil
		default:
			return line{}, err
		}
	}
}
