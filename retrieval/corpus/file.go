package corpus

import (
	"context"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

// MaxTextFileBytes is the largest plain-text file read as one document.
const MaxTextFileBytes = 256 << 20

// ReasonDuplicateDocID is the dead-letter reason of a document whose doc_id
// was already taken by another document of the corpus.
const ReasonDuplicateDocID = "duplicate_doc_id"

// compressionSuffixes are the file name endings of the compressions
// Decompress sniffs.
var compressionSuffixes = []string{".gz", ".zst", ".zstd"}

// trimCompression returns name, lowercased, without a compression suffix.
func trimCompression(name string) string {
	n := strings.ToLower(name)
	for _, suf := range compressionSuffixes {
		if t, ok := strings.CutSuffix(n, suf); ok {
			return t
		}
	}
	return n
}

// IsJSONL reports whether a file name denotes JSONL (".jsonl", ".ndjson",
// ".json", optionally followed by ".gz", ".zst" or ".zstd"); other files
// are Parquet (IsParquet) or plain text.
func IsJSONL(name string) bool {
	n := trimCompression(name)
	return strings.HasSuffix(n, ".jsonl") || strings.HasSuffix(n, ".ndjson") || strings.HasSuffix(n, ".json")
}

// IsParquet reports whether a file name denotes a Parquet file (".parquet";
// Parquet compresses inside the file).
func IsParquet(name string) bool {
	return strings.HasSuffix(strings.ToLower(name), ".parquet")
}

// Input is one corpus file to read, with the directory its document IDs
// are relative to (see ExpandInput).
type Input struct {
	// Path is the file, local or gs://, as listed.
	Path string
	// Root is the input root: the directory given as --input, or the
	// directory part of a glob before its first wildcard. Empty means the
	// file's own directory.
	Root string
}

// RelPath returns Path relative to Root, with "/" separators: the document
// ID of a plain-text file, and the stem of the row IDs of a Parquet file
// without an ID column. The same files under the same root give the same
// RelPath whatever the working directory. A local Path that is not under
// Root (which ExpandInput never makes) gives Path itself.
func (in Input) RelPath() string {
	if storage.IsRemote(in.Path) {
		root := in.Root
		if root == "" {
			root = in.Path[:strings.LastIndex(in.Path, "/")+1]
		}
		if root != "" && !strings.HasSuffix(root, "/") {
			root += "/"
		}
		if rel, ok := strings.CutPrefix(in.Path, root); ok && rel != "" {
			return rel
		}
		return in.Path
	}
	if in.Root == "" {
		return filepath.Base(in.Path)
	}
	root, err1 := filepath.Abs(in.Root)
	p, err2 := filepath.Abs(in.Path)
	if err1 != nil || err2 != nil {
		return filepath.ToSlash(in.Path)
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(in.Path)
	}
	return path.Clean(filepath.ToSlash(rel))
}

// FileStats counts what ReadFile saw in one file. Records =
// Documents + Dead; a file that could not be read to its end is Failed and
// gets one more, read_error, dead letter (not counted in Dead).
type FileStats struct {
	Records, Documents, Dead, UnknownFields int64
	Failed                                  bool
}

// ReadFile reads one corpus file as ReadInput does, with the file's own
// directory as its root: a plain-text file's document ID is its base name.
func ReadFile(ctx context.Context, name string, opts Options,
	onDoc func(schemas.Document), onDead func(schemas.DeadLetter)) (FileStats, error) {
	return ReadInput(ctx, Input{Path: name}, opts, onDoc, onDead)
}

// ReadInput parses one corpus file (local or remote, gzipped, zstd or
// plain) into documents and dead letters: JSONL by name (IsJSONL, see
// ReadJSONL), Parquet by name (IsParquet, see ReadParquet), anything else
// plain text, one document per file (see ParseText) whose ID is
// in.RelPath(). It returns an error only when the file's filesystem is
// unknown; every problem with the file or its records becomes a dead
// letter.
func ReadInput(ctx context.Context, in Input, opts Options,
	onDoc func(schemas.Document), onDead func(schemas.DeadLetter)) (FileStats, error) {
	name := in.Path
	var st FileStats
	fail := func(line int64, err error) {
		st.Failed = true
		onDead(ReadErrorDeadLetter(name, line, err))
	}
	fs, err := storage.New(ctx, name)
	if err != nil {
		return st, err
	}
	defer fs.Close()
	if IsParquet(name) {
		return readParquetFile(ctx, fs, in, opts, onDoc, onDead), nil
	}
	rc, err := fs.OpenRead(ctx, name)
	if err != nil {
		fail(0, err)
		return st, nil
	}
	defer rc.Close()
	r, err := Decompress(rc)
	if err != nil {
		fail(0, err)
		return st, nil
	}
	if IsJSONL(name) {
		js, err := ReadJSONL(r, name, opts, onDoc, onDead)
		st.Records = js.Lines - js.BlankLines
		st.Documents = js.Documents
		st.Dead = js.DeadLetters
		st.UnknownFields = js.UnknownFields
		if err != nil {
			fail(js.Lines, err)
		}
		return st, nil
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxTextFileBytes+1))
	if err != nil {
		fail(0, err)
		return st, nil
	}
	st.Records = 1
	if len(data) > MaxTextFileBytes {
		st.Dead = 1
		onDead(schemas.DeadLetter{Stage: Stage, Source: name, Reason: ReasonLineTooLong,
			Detail: fmt.Sprintf("text file over %d bytes", MaxTextFileBytes)})
		return st, nil
	}
	doc, dl := ParseText(data, name, opts)
	if dl != nil {
		st.Dead = 1
		onDead(*dl)
		return st, nil
	}
	doc.DocID = in.RelPath()
	st.Documents = 1
	onDoc(doc)
	return st, nil
}
