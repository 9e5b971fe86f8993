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
	// SkipReason, when set, is why Path is not read (ReasonBrokenLink,
	// ReasonLinkOutside, ReasonNotRegularFile): ReadInput gives it one
	// dead letter with this reason and SkipDetail instead of reading it.
	SkipReason, SkipDetail string
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

// FileStats counts what ReadInput saw in one file. Records = Documents +
// Dead. A file that was not read (Input.SkipReason), could not be read to
// its end, or was refused as a whole (a Parquet or CSV file without a
// usable text column) is Failed and gets one more dead letter for the file
// itself, not counted in Dead.
type FileStats struct {
	Records, Documents, Dead, UnknownFields int64
	Failed                                  bool
	// Corrupt is set when the file is a gzip or zstd stream that fails its
	// checks (a checksum, a format error, a truncation): it is also Failed,
	// and every document read from it is withdrawn, dead-lettered as
	// corrupt_file and counted in Dead and in Withdrawn.
	Corrupt   bool
	Withdrawn int64
}

// ReadFile reads one corpus file as ReadInput does, with the file's own
// directory as its root: a plain-text file's document ID is its base name.
func ReadFile(ctx context.Context, name string, opts Options,
	onDoc func(schemas.Document), onDead func(schemas.DeadLetter)) (FileStats, error) {
	return ReadInput(ctx, Input{Path: name}, opts, onDoc, onDead)
}

// ReadInput parses one corpus file (local or remote, gzipped, zstd or
// plain) into documents and dead letters: JSONL by name (IsJSONL, see
// ReadJSONL), CSV and TSV by name (IsCSV, see ReadCSV), Parquet by name
// (IsParquet, see ReadParquet), anything else plain text, one document per
// file whose ID is in.RelPath() (see ParseText). A plain-text file longer
// than opts.MaxLineBytes is dead-lettered as line_too_long without being
// held in memory, as a JSONL line is.
//
// A compressed file is decompressed to its end once before it is parsed,
// since a gzip member or zstd frame is verified only at its end, after its
// text has been decoded. When that check fails, the file is parsed all the
// same but its documents are withdrawn: each becomes a corrupt_file dead
// letter, and the file gets a read_error dead letter naming the failure.
// (A zstd frame written without a checksum, zstd --no-check, can hide
// corruption that decodes.)
//
// An Input with a SkipReason is not opened: it gives one dead letter with
// that reason. ReadInput returns an error only when opts are invalid or
// the file's filesystem is unknown; every problem with the file or its
// records becomes a dead letter.
func ReadInput(ctx context.Context, in Input, opts Options,
	onDoc func(schemas.Document), onDead func(schemas.DeadLetter)) (FileStats, error) {
	name := in.Path
	var st FileStats
	opts = opts.withDefaults()
	if err := opts.Validate(); err != nil {
		return st, err
	}
	fail := func(line int64, err error) {
		st.Failed = true
		onDead(ReadErrorDeadLetter(name, line, err))
	}
	if in.SkipReason != "" {
		st.Failed = true
		onDead(newDeadLetter(name, 0, in.SkipReason, in.SkipDetail, ""))
		return st, nil
	}
	fs, err := storage.New(ctx, name)
	if err != nil {
		return st, err
	}
	defer fs.Close()
	if IsParquet(name) {
		return readParquetFile(ctx, fs, in, opts, onDoc, onDead), nil
	}
	kind, bad, err := checkCompressed(ctx, fs, name)
	if err != nil {
		fail(0, err)
		return st, nil
	}
	if bad != nil {
		st.Corrupt = true
		onDoc = func(d schemas.Document) {
			st.Withdrawn++
			_, line := splitOrigin(d)
			onDead(newDeadLetter(name, line, ReasonCorruptFile,
				fmt.Sprintf("document %q comes from a %s stream that fails its check (%v); every document of the file is withdrawn",
					d.DocID, kind, bad), recordOf(d.DocID)))
		}
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
	rs, err := readStream(r, in, opts, onDoc, onDead)
	st.Records = rs.Documents + rs.DeadLetters
	st.Documents = rs.Documents - st.Withdrawn
	st.Dead = rs.DeadLetters + st.Withdrawn
	st.UnknownFields = rs.UnknownFields
	st.Failed = rs.Refused
	switch {
	case err != nil:
		fail(rs.Lines, err)
	case bad != nil:
		// The file changed between the two reads.
		fail(rs.Lines, bad)
	}
	return st, nil
}

// checkCompressed decompresses the file name to its end when it is gzip or
// zstd, and returns the compression and the error that ended the
// decompression (bad), or a nil bad for a plain file or a stream that
// checks out. err is an error opening the file or its stream.
func checkCompressed(ctx context.Context, fs storage.FS, name string) (kind string, bad, err error) {
	rc, err := fs.OpenRead(ctx, name)
	if err != nil {
		return "", nil, err
	}
	defer rc.Close()
	r, kind, err := decompress(rc)
	if err != nil || kind == "" {
		return kind, nil, err
	}
	n, err := io.Copy(io.Discard, r)
	if err != nil {
		return kind, fmt.Errorf("%w, at byte %d of its decompressed text", err, n), nil
	}
	return kind, nil, nil
}

// readStream parses the plain bytes of in by its name: JSONL, CSV or TSV,
// or one plain-text document.
func readStream(r io.Reader, in Input, opts Options,
	onDoc func(schemas.Document), onDead func(schemas.DeadLetter)) (Stats, error) {
	switch {
	case IsJSONL(in.Path):
		return ReadJSONL(r, in.Path, opts, onDoc, onDead)
	case IsCSV(in.Path):
		return ReadCSV(r, in.Path, in.RelPath(), opts, onDoc, onDead)
	}
	return readText(r, in.Path, in.RelPath(), opts, onDoc, onDead)
}

// readText reads r as one plain-text document with the given ID (see
// ParseText), holding at most opts.MaxLineBytes+1 bytes of it: a longer
// text is read to its end, to report its size, and dead-lettered as
// line_too_long. Stats count one record; a read error returns no record.
func readText(r io.Reader, source, docID string, opts Options,
	onDoc func(schemas.Document), onDead func(schemas.DeadLetter)) (Stats, error) {
	var st Stats
	data, err := io.ReadAll(io.LimitReader(r, int64(opts.MaxLineBytes)+1))
	if err != nil {
		return st, err
	}
	if len(data) > opts.MaxLineBytes {
		rest, err := io.Copy(io.Discard, r)
		if err != nil {
			return st, err
		}
		st.Lines, st.DeadLetters = 1, 1
		onDead(newDeadLetter(source, 0, ReasonLineTooLong,
			fmt.Sprintf("text file is %d bytes, more than MaxLineBytes=%d (--max_line_bytes), the bound of one document; skipped",
				int64(len(data))+rest, opts.MaxLineBytes), recordOf(data)))
		return st, nil
	}
	st.Lines = 1
	doc, dl := ParseText(data, source, opts)
	if dl != nil {
		st.DeadLetters = 1
		onDead(*dl)
		return st, nil
	}
	doc.DocID = docID
	st.Documents = 1
	onDoc(doc)
	return st, nil
}
