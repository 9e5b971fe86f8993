package corpus

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

// MaxTextFileBytes is the largest plain-text file read as one document.
const MaxTextFileBytes = 256 << 20

// ReasonDuplicateDocID is the dead-letter reason of a document whose doc_id
// was already taken by another document of the
const ReasonDuplicateDocID = "duplicate_doc_id"

// IsJSONL reports whether a file name denotes JSONL (".jsonl", ".ndjson",
// ".json", optionally followed by ".gz"); other files are plain text.
func IsJSONL(name string) bool {
	n := strings.TrimSuffix(strings.ToLower(name), ".gz")
	return strings.HasSuffix(n, ".jsonl") || strings.HasSuffix(n, ".ndjson") || strings.HasSuffix(n, ".json")
}

// FileStats counts what ReadFile saw in one file. Records =
// Documents + Dead; a file that could not be read to its end is Failed and
// gets one more, read_error, dead letter (not counted in Dead).
type FileStats struct {
	Records, Documents, Dead, UnknownFields int64
	Failed                                  bool
}

// ReadFile parses one corpus file (local or remote, gzipped or not;
// JSONL by name, else plain text) into documents and dead letters. It
// returns an error only when the file's filesystem is unknown; every
// problem with the file or its records becomes a dead letter.
func ReadFile(ctx context.Context, name string, opts Options,
	onDoc func(schemas.Document), onDead func(schemas.DeadLetter)) (FileStats, error) {
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
	st.Documents = 1
	onDoc(doc)
	return st, nil
}
