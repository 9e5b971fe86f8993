package corpus

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/schemas"
)

// Split normalises the paragraphs of doc, splits them into sentences and
// cuts the sentences into chunks.
//
// Sentence positions (Pos) count from 0 across the whole document, and
// Paragraph is the index of the paragraph in doc.Paragraphs. A paragraph
// longer than opts.MaxParagraphBytes (before normalisation) is
// dead-lettered and skipped; the rest of the document goes on. Paragraphs
// that are empty after normalisation are skipped silently. A document that
// yields no sentence at all gives one empty_document dead letter and no
// sentences or chunks.
//
// Chunks are windows of opts.ChunkSize consecutive sentences starting at
// positions 0, ChunkStride, 2*ChunkStride, ..., the last one being the
// first window that reaches the last sentence; a document shorter than
// ChunkSize gives one chunk of all its sentences. Each sentence's ChunkIDs
// lists the chunks that hold it, in order.
//
// Dead letters carry the file and line parsed from doc.Origin ("file:line"),
// or doc.Origin with Line 0 when it has no line number.
//
// Zero fields of opts take their defaults. Split panics if opts is invalid
// after that (see Options.Validate): that is a programming error, which
// ReadJSONL reports as an error before any document is read.
func Split(doc schemas.Document, opts Options) (sentences []schemas.Sentence, chunks []schemas.Chunk, dead []schemas.DeadLetter) {
	opts = opts.withDefaults()
	if err := opts.Validate(); err != nil {
		panic(err)
	}
	source, line := splitOrigin(doc)
	tooLong := 0
	for pi, raw := range doc.Paragraphs {
		if len(raw) > opts.MaxParagraphBytes {
			tooLong++
			dead = append(dead, newDeadLetter(source, line, ReasonParagraphTooLong,
				fmt.Sprintf("doc_id %q: paragraph %d is %d bytes, more than MaxParagraphBytes=%d; skipped",
					doc.DocID, pi, len(raw), opts.MaxParagraphBytes),
				recordOf(raw)))
			continue
		}
		for _, text := range SplitSentences(Normalize(raw)) {
			sentences = append(sentences, schemas.Sentence{
				DocID:     doc.DocID,
				Pos:       int32(len(sentences)),
				Paragraph: int32(pi),
				Text:      text,
			})
		}
	}
	if len(sentences) == 0 {
		dead = append(dead, newDeadLetter(source, line, ReasonEmptyDocument,
			fmt.Sprintf("doc_id %q: no sentence in %d paragraphs (%d too long)",
				doc.DocID, len(doc.Paragraphs), tooLong),
			recordOf(strings.Join(doc.Paragraphs[:min(len(doc.Paragraphs), 8)], "\n"))))
		return nil, nil, dead
	}
	for i := range sentences {
		s := &sentences[i]
		s.ID = SentenceID(doc.DocID, i, s.Text)
	}
	chunks = makeChunks(doc.DocID, sentences, opts.ChunkSize, opts.ChunkStride)
	return sentences, chunks, dead
}

// makeChunks cuts sentences into windows of size sentences with the given
// stride, and records each chunk's ID in the sentences it holds.
func makeChunks(docID string, sentences []schemas.Sentence, size, stride int) []schemas.Chunk {
	n := len(sentences)
	chunks := make([]schemas.Chunk, 0, numChunks(n, size, stride))
	for start := 0; ; start += stride {
		end := min(start+size, n)
		c := schemas.Chunk{
			DocID:       docID,
			Start:       int32(start),
			SentenceIDs: make([]string, 0, end-start),
			Sentences:   make([]string, 0, end-start),
		}
		for _, s := range sentences[start:end] {
			c.SentenceIDs = append(c.SentenceIDs, s.ID)
			c.Sentences = append(c.Sentences, s.Text)
		}
		c.ID = ChunkID(docID, start, c.SentenceIDs)
		for i := start; i < end; i++ {
			sentences[i].ChunkIDs = append(sentences[i].ChunkIDs, c.ID)
		}
		chunks = append(chunks, c)
		if end == n {
			return chunks
		}
	}
}

// numChunks returns the number of chunks makeChunks cuts from n >= 1
// sentences.
func numChunks(n, size, stride int) int {
	if n <= size {
		return 1
	}
	return 1 + (n-size+stride-1)/stride
}

// splitOrigin returns the file and line that doc.Origin names: "file:line"
// for JSONL documents, a plain file name (line 0) otherwise. A document
// without Origin is named by its DocID.
func splitOrigin(doc schemas.Document) (string, int64) {
	if doc.Origin == "" {
		return doc.DocID, 0
	}
	if i := strings.LastIndexByte(doc.Origin, ':'); i >= 0 {
		if n, err := strconv.ParseInt(doc.Origin[i+1:], 10, 64); err == nil && n > 0 {
			return doc.Origin[:i], n
		}
	}
	return doc.Origin, 0
}
