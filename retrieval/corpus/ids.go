package corpus

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"io"
)

// ID kinds. Each is both hashed (domain separation) and written as the
// prefix of the ID, so that a sentence ID and a chunk ID never collide.
const (
	sentenceKind = "s"
	chunkKind    = "c"
)

// idBytes is how many bytes of the SHA-256 digest an ID keeps (96 bits).
const idBytes = 12

// SentenceID returns the stable ID of the sentence at position pos of
// document docID with the given text: "s_" followed by 24 hex digits of
// SHA-256 over a length-prefixed encoding of the inputs. The same inputs
// give the same ID on every run and machine.
func SentenceID(docID string, pos int, text string) string {
	h := newIDHash(sentenceKind)
	writeString(h, docID)
	writeInt(h, int64(pos))
	writeString(h, text)
	return finishID(h, sentenceKind)
}

// ChunkID returns the stable ID of the chunk of document docID that starts
// at sentence position start and holds the given sentences: "c_" followed
// by 24 hex digits, computed like SentenceID.
func ChunkID(docID string, start int, sentenceIDs []string) string {
	h := newIDHash(chunkKind)
	writeString(h, docID)
	writeInt(h, int64(start))
	writeInt(h, int64(len(sentenceIDs)))
	for _, id := range sentenceIDs {
		writeString(h, id)
	}
	return finishID(h, chunkKind)
}

// newIDHash returns a SHA-256 hash primed with the ID kind.
func newIDHash(kind string) hash.Hash {
	h := sha256.New()
	writeString(h, "ctxsim-id/"+kind)
	return h
}

// writeString writes s to h preceded by its length, so that the encoding
// of a sequence of strings is unambiguous ("ab","c" differs from "a","bc").
func writeString(h hash.Hash, s string) {
	writeInt(h, int64(len(s)))
	io.WriteString(h, s)
}

// writeInt writes v to h as 8 big-endian bytes.
func writeInt(h hash.Hash, v int64) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(v))
	h.Write(b[:])
}

// finishID formats the digest of h as an ID of the given kind.
func finishID(h hash.Hash, kind string) string {
	var sum [sha256.Size]byte
	digest := h.Sum(sum[:0])
	buf := make([]byte, len(kind)+1+2*idBytes)
	n := copy(buf, kind)
	buf[n] = '_'
	hex.Encode(buf[n+1:], digest[:idBytes])
	return string(buf)
}
