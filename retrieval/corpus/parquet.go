package corpus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

// parquetBatchRows is how many rows readParquet reads at a time.
const parquetBatchRows = 64

// ReadParquet reads a Parquet file of documents, one per row, such as the
// shards of FineWeb or C4: the text is the column opts.TextField, split
// into paragraphs on blank lines; the ID is the column opts.IDField (a
// string or an integer), or, when the file has no such column,
// idStem + "#" + the row number (from 1). Other columns are ignored. Only
// top-level, non-repeated columns are read: a text or ID column that is a
// group (STRUCT, LIST, MAP) or repeated, a text column that does not hold
// strings, or an ID column that holds neither strings nor integers refuses
// the file.
//
// Rows are numbered from 1; a row's Document.Origin is "source:row" and
// its dead letters carry the row as their Line, as ReadJSONL does for
// lines. A row whose text is null, blank, not UTF-8 or longer than
// opts.MaxLineBytes, or whose ID is null or blank, is dead-lettered. A
// refused file (without the text column, or with a text or ID column of
// the wrong shape) gives one missing_field dead letter naming the columns
// it has, with Line 0, and no records: Stats.Lines is 0 and Stats.Refused
// is set.
//
// The returned error is an invalid opts, a file that is not Parquet, or a
// read error; the Stats count the rows read before it.
func ReadParquet(r io.ReaderAt, size int64, source, idStem string, opts Options,
	onDoc func(schemas.Document), onDead func(schemas.DeadLetter)) (Stats, error) {
	opts = opts.withDefaults()
	var st Stats
	if err := opts.Validate(); err != nil {
		return st, err
	}
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return st, fmt.Errorf("corpus: opening Parquet file %s: %w", source, err)
	}
	schema := f.Schema()
	refuse := func(format string, args ...any) (Stats, error) {
		st.Refused = true
		onDead(newDeadLetter(source, 0, ReasonMissingField,
			fmt.Sprintf(format, args...)+"; the file has columns "+columnNames(schema), ""))
		return st, nil
	}
	text, found, problem := topColumn(schema, opts.TextField)
	switch {
	case !found:
		return refuse("no text column %q", opts.TextField)
	case problem != "":
		return refuse("text column %q %s, not strings", opts.TextField, problem)
	}
	if k := text.Node.Type().Kind(); k != parquet.ByteArray && k != parquet.FixedLenByteArray {
		return refuse("text column %q holds %s values, not strings", opts.TextField, k)
	}
	id, hasID, problem := topColumn(schema, opts.IDField)
	if problem != "" {
		return refuse("ID column %q %s, not strings or integers (--id_field names the ID column)", opts.IDField, problem)
	}
	if hasID {
		switch k := id.Node.Type().Kind(); k {
		case parquet.ByteArray, parquet.FixedLenByteArray, parquet.Int32, parquet.Int64:
		default:
			return refuse("ID column %q holds %s values, not strings or integers (--id_field names the ID column)", opts.IDField, k)
		}
	}
	for _, rg := range f.RowGroups() {
		if err := readRowGroup(rg, source, idStem, text.ColumnIndex, id.ColumnIndex, hasID, opts, &st, onDoc, onDead); err != nil {
			return st, fmt.Errorf("corpus: reading %s after row %d: %w", source, st.Lines, err)
		}
	}
	return st, nil
}

// readRowGroup reads the rows of one row group; see ReadParquet.
func readRowGroup(rg parquet.RowGroup, source, idStem string, textCol, idCol int, hasID bool, opts Options,
	st *Stats, onDoc func(schemas.Document), onDead func(schemas.DeadLetter)) error {
	rows := rg.Rows()
	defer rows.Close()
	buf := make([]parquet.Row, parquetBatchRows)
	for {
		n, err := rows.ReadRows(buf)
		for _, row := range buf[:n] {
			st.Lines++
			doc, dl := parquetRow(row, source, idStem, textCol, idCol, hasID, st.Lines, opts)
			st.deliver(doc, dl, onDoc, onDead)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// parquetRow makes the document of row number line, or its dead letter.
func parquetRow(row parquet.Row, source, idStem string, textCol, idCol int, hasID bool, line int64, opts Options) (schemas.Document, *schemas.DeadLetter) {
	fail := func(reason, record, format string, args ...any) (schemas.Document, *schemas.DeadLetter) {
		dl := newDeadLetter(source, line, reason, fmt.Sprintf(format, args...), recordOf(record))
		return schemas.Document{}, &dl
	}
	var textVal, idVal *parquet.Value
	for i := range row {
		switch row[i].Column() {
		case textCol:
			textVal = &row[i]
		case idCol:
			if hasID {
				idVal = &row[i]
			}
		}
	}
	docID := idStem + "#" + strconv.FormatInt(line, 10)
	if hasID {
		if idVal == nil || idVal.IsNull() {
			return fail(ReasonMissingField, "", "row %d: column %q is null", line, opts.IDField)
		}
		docID = parquetString(*idVal)
		if strings.TrimSpace(docID) == "" {
			return fail(ReasonMissingField, "", "row %d: column %q is empty", line, opts.IDField)
		}
	}
	if textVal == nil || textVal.IsNull() {
		return fail(ReasonMissingField, docID, "row %d (id %q): column %q is null", line, docID, opts.TextField)
	}
	b := textVal.ByteArray()
	if len(b) > opts.MaxLineBytes {
		return fail(ReasonLineTooLong, string(b[:min(len(b), MaxRecordBytes)]),
			"row %d (id %q): text is %d bytes, more than MaxLineBytes=%d; skipped", line, docID, len(b), opts.MaxLineBytes)
	}
	if off := invalidUTF8Offset(b); off >= 0 {
		return fail(ReasonInvalidUTF8, string(b), "row %d (id %q): invalid UTF-8 at byte offset %d of the text", line, docID, off)
	}
	paragraphs := splitParagraphs(string(b))
	if !anyText(paragraphs) {
		return fail(ReasonEmptyDocument, string(b), "document %q (row %d) has no text", docID, line)
	}
	return schemas.Document{
		DocID:      docID,
		Paragraphs: paragraphs,
		Origin:     source + ":" + strconv.FormatInt(line, 10),
	}, nil
}

// parquetString renders an ID value: strings as they are, numbers in
// decimal.
func parquetString(v parquet.Value) string {
	switch v.Kind() {
	case parquet.ByteArray, parquet.FixedLenByteArray:
		if b := v.ByteArray(); utf8.Valid(b) {
			return string(b)
		}
		return strings.ToValidUTF8(string(v.ByteArray()), "\uFFFD")
	case parquet.Int32:
		return strconv.FormatInt(int64(v.Int32()), 10)
	case parquet.Int64:
		return strconv.FormatInt(v.Int64(), 10)
	}
	return v.String()
}

// topColumn finds the top-level column name of schema. found is false
// when the schema has no top-level field of that name; problem describes
// a field of that name that is not one column of single values (a group,
// a repeated field), which Parquet readers would otherwise pass over.
func topColumn(schema *parquet.Schema, name string) (leaf parquet.LeafColumn, found bool, problem string) {
	for _, f := range schema.Fields() {
		if f.Name() != name {
			continue
		}
		switch {
		case !f.Leaf():
			var under [][]string
			for _, c := range schema.Columns() {
				if c[0] == name {
					under = append(under, c)
				}
			}
			return leaf, true, "is a group (a STRUCT, LIST or MAP) of the columns " + quotePaths(under)
		case f.Repeated():
			return leaf, true, "is repeated (a list of values in each row)"
		}
		leaf, _ = schema.Lookup(name)
		return leaf, true, ""
	}
	return leaf, false, ""
}

// columnNames lists a schema's leaf columns, dotted and quoted.
func columnNames(s *parquet.Schema) string {
	return quotePaths(s.Columns())
}

// quotePaths lists column paths, dotted and quoted (see quoteNames).
func quotePaths(cols [][]string) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = strings.Join(c, ".")
	}
	return quoteNames(names)
}

// readParquetFile reads in as Parquet (see ReadParquet); remote files are
// copied to a local temporary file first, since Parquet needs random
// access. Every problem becomes a dead letter.
func readParquetFile(ctx context.Context, fs storage.FS, in Input, opts Options,
	onDoc func(schemas.Document), onDead func(schemas.DeadLetter)) FileStats {
	var st FileStats
	fail := func(line int64, err error) FileStats {
		st.Failed = true
		onDead(ReadErrorDeadLetter(in.Path, line, err))
		return st
	}
	local := in.Path
	if storage.IsRemote(in.Path) {
		tmp, err := copyToTemp(ctx, fs, in.Path)
		if err != nil {
			return fail(0, err)
		}
		defer os.Remove(tmp)
		local = tmp
	}
	fh, err := os.Open(local)
	if err != nil {
		return fail(0, err)
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return fail(0, err)
	}
	ps, err := ReadParquet(fh, info.Size(), in.Path, in.RelPath(), opts, onDoc, onDead)
	st.Records = ps.Lines
	st.Documents = ps.Documents
	st.Dead = ps.DeadLetters
	st.Failed = ps.Refused
	if err != nil {
		return fail(ps.Lines, err)
	}
	return st
}

// copyToTemp copies the file name of fs to a new local temporary file and
// returns its name.
func copyToTemp(ctx context.Context, fs storage.FS, name string) (string, error) {
	rc, err := fs.OpenRead(ctx, name)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	tmp, err := os.CreateTemp("", "ctxsim-corpus-*.parquet")
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(tmp, rc); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", fmt.Errorf("copying %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}
