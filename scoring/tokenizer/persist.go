package tokenizer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

const (
	// FormatName is the name of the saved file format.
	FormatName = "ctxsim-bpe"
	// FormatVersion is the version of the saved file format that Save
	// writes and Load reads.
	FormatVersion = 1
	// Format is the value of the "format" field of saved files:
	// FormatName/FormatVersion.
	Format = "ctxsim-bpe/1"
	// maxFileBytes bounds what Load reads; a saved tokenizer of the largest
	// vocabulary takes about 1.3 MB.
	maxFileBytes = 4 << 20
)

// Save writes the tokenizer as JSON in its canonical form:
//
//	{
//	  "format": "ctxsim-bpe/1",
//	  "vocab_size": 12000,
//	  "special_tokens": ["<pad>", "<unk>", "<bos>", "<eos>", "<sep>", "<mask>", "<to_s>", "<to_left>", "<to_right>"],
//	  "merges": [
//	    [41, 113],
//	    ...
//	  ]
//	}
//
// format names the format and its version. vocab_size is the number of
// tokens, FirstMergeID plus the number of merges. special_tokens lists the
// special tokens by ID. merges lists the merges in rank order, one per
// line, each as the pair of token IDs it joins: byte b is token
// ByteOffset+b (9+b) and merge r makes token FirstMergeID+r (265+r), so
// merge r may only refer to bytes and to the tokens of merges 0..r-1.
// The same tokenizer always gives the same bytes.
func (t *Tokenizer) Save(w io.Writer) error {
	if _, err := w.Write(t.appendJSON(nil)); err != nil {
		return fmt.Errorf("tokenizer: save: %w", err)
	}
	return nil
}

// appendJSON appends the canonical saved form of t to b.
func (t *Tokenizer) appendJSON(b []byte) []byte {
	b = append(b, "{\n  \"format\": "...)
	b = strconv.AppendQuote(b, Format)
	b = append(b, ",\n  \"vocab_size\": "...)
	b = strconv.AppendInt(b, int64(t.VocabSize()), 10)
	b = append(b, ",\n  \"special_tokens\": ["...)
	for i, s := range specialNames {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendQuote(b, s)
	}
	b = append(b, "],\n  \"merges\": ["...)
	for i, m := range t.merges {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    ["...)
		b = strconv.AppendInt(b, int64(m[0]), 10)
		b = append(b, ", "...)
		b = strconv.AppendInt(b, int64(m[1]), 10)
		b = append(b, ']')
	}
	if len(t.merges) > 0 {
		b = append(b, "\n  "...)
	}
	return append(b, "]\n}\n"...)
}

// Fingerprint returns the hex SHA-256 of the bytes Save writes, which
// identifies the tokenizer's vocabulary and merges for provenance.
func (t *Tokenizer) Fingerprint() string {
	t.fingerprintOnce.Do(func() {
		sum := sha256.Sum256(t.appendJSON(nil))
		t.fingerprint = hex.EncodeToString(sum[:])
	})
	return t.fingerprint
}

// Load reads a tokenizer that Save wrote. Any JSON layout of the same
// fields is accepted. It returns an error, never panicking, for a file that
// is not valid JSON (truncated or corrupt), of another format or version,
// with missing or unknown fields, with special tokens other than this
// package's, with a merge that is not a pair of IDs of earlier tokens, with
// a duplicate merge, with a token longer than MaxTokenBytes, or whose
// vocab_size does not match its merges.
func Load(r io.Reader) (*Tokenizer, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: load: %w", err)
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("tokenizer: load: file larger than %d bytes", maxFileBytes)
	}
	t, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: load: %w", err)
	}
	return t, nil
}

// parse decodes and checks a saved tokenizer.
func parse(data []byte) (*Tokenizer, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, fmt.Errorf("not a JSON object: %w", err)
		}
		return nil, fmt.Errorf("corrupt or truncated JSON: %w", err)
	}
	if fields == nil {
		return nil, errors.New("not a JSON object: null")
	}

	var format string
	if err := decodeField(fields, "format", &format); err != nil {
		return nil, err
	}
	if format != Format {
		if v, ok := strings.CutPrefix(format, FormatName+"/"); ok {
			return nil, fmt.Errorf("unsupported version %q of format %s (this code reads version %d)", v, FormatName, FormatVersion)
		}
		return nil, fmt.Errorf("unknown format %q (want %q)", format, Format)
	}
	var unknown []string
	for k := range fields {
		switch k {
		case "format", "vocab_size", "special_tokens", "merges":
		default:
			unknown = append(unknown, strconv.Quote(k))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, fmt.Errorf("unknown field(s) %s", strings.Join(unknown, ", "))
	}

	var vocabSize int64
	if err := decodeField(fields, "vocab_size", &vocabSize); err != nil {
		return nil, err
	}
	var specials []string
	if err := decodeField(fields, "special_tokens", &specials); err != nil {
		return nil, err
	}
	if !slices.Equal(specials, specialNames[:]) {
		return nil, fmt.Errorf("special_tokens %q differ from this package's %q", specials, specialNames)
	}
	var rawMerges [][]int64
	if err := decodeField(fields, "merges", &rawMerges); err != nil {
		return nil, err
	}
	if want := int64(FirstMergeID + len(rawMerges)); vocabSize != want {
		return nil, fmt.Errorf("vocab_size %d does not match the %d special and byte tokens plus %d merges (%d)", vocabSize, FirstMergeID, len(rawMerges), want)
	}
	if vocabSize > MaxVocabSize {
		return nil, fmt.Errorf("vocab_size %d is larger than the maximum %d", vocabSize, MaxVocabSize)
	}
	merges := make([][2]int32, len(rawMerges))
	for r, m := range rawMerges {
		if len(m) != 2 {
			return nil, fmt.Errorf("merge %d has %d elements, want a pair of token IDs", r, len(m))
		}
		for i, id := range m {
			if id < 0 || id >= vocabSize {
				return nil, fmt.Errorf("merge %d refers to token %d, outside the vocabulary 0..%d", r, id, vocabSize-1)
			}
			merges[r][i] = int32(id)
		}
	}
	return newTokenizer(merges)
}

// decodeField decodes the required field name of fields into v.
func decodeField(fields map[string]json.RawMessage, name string, v any) error {
	raw, ok := fields[name]
	if !ok {
		return fmt.Errorf("missing field %q", name)
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return fmt.Errorf("field %q is null", name)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("field %q: %w", name, err)
	}
	return nil
}
