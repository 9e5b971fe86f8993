package tokenizer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func saved(t testing.TB, tok *Tokenizer) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := tok.Save(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestSaveGolden(t *testing.T) {
	if want := FormatName + "/" + strconv.Itoa(FormatVersion); Format != want {
		t.Errorf("Format = %q, want %q", Format, want)
	}
	tok, err := Train(slices.Values([]string{"aaab aaab aab"}), TrainConfig{VocabSize: 300})
	if err != nil {
		t.Fatal(err)
	}
	// a is byte 97, token 106; b is 107; " " is 41; aa is token 265.
	want := `{
  "format": "ctxsim-bpe/1",
  "vocab_size": 268,
  "special_tokens": ["<pad>", "<unk>", "<bos>", "<eos>", "<sep>", "<mask>", "<to_s>", "<to_left>", "<to_right>"],
  "merges": [
    [106, 106],
    [41, 265],
    [106, 107]
  ]
}
`
	got := saved(t, tok)
	if string(got) != want {
		t.Errorf("Save wrote\n%s\nwant\n%s", got, want)
	}
	sum := sha256.Sum256([]byte(want))
	if fp := tok.Fingerprint(); fp != hex.EncodeToString(sum[:]) {
		t.Errorf("Fingerprint() = %s, want SHA-256 of the saved bytes", fp)
	}

	empty, err := Train(slices.Values([]string{}), TrainConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(saved(t, empty)); !strings.Contains(got, `"vocab_size": 265,`) || !strings.HasSuffix(got, "\"merges\": []\n}\n") {
		t.Errorf("Save of a tokenizer without merges wrote\n%s", got)
	}
	if _, err := Load(bytes.NewReader(saved(t, empty))); err != nil {
		t.Errorf("Load of a tokenizer without merges: %v", err)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	tok := small(t)
	data := saved(t, tok)
	got, err := Load(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(saved(t, got), data) {
		t.Errorf("Save after Load differs from the original file")
	}
	if got.Fingerprint() != tok.Fingerprint() || got.VocabSize() != tok.VocabSize() {
		t.Errorf("loaded tokenizer: fingerprint %s, vocab %d; want %s, %d", got.Fingerprint(), got.VocabSize(), tok.Fingerprint(), tok.VocabSize())
	}
	for _, s := range append(roundTripStrings(), smallCorpus...) {
		if a, b := tok.Encode(s), got.Encode(s); !slices.Equal(a, b) {
			t.Errorf("Encode(%q): %v before Save, %v after Load", s, a, b)
		}
	}
	for id := range int32(tok.VocabSize()) {
		if a, b := tok.TokenString(id), got.TokenString(id); a != b {
			t.Errorf("TokenString(%d): %q before Save, %q after Load", id, a, b)
		}
	}
	// Any JSON layout of the same content loads to the same tokenizer.
	compact := strings.Join(strings.Fields(string(data)), "")
	again, err := Load(strings.NewReader(compact))
	if err != nil {
		t.Fatalf("Load of compacted JSON: %v", err)
	}
	if again.Fingerprint() != tok.Fingerprint() {
		t.Errorf("compacted JSON loads with fingerprint %s, want %s", again.Fingerprint(), tok.Fingerprint())
	}
}

func TestLoadErrors(t *testing.T) {
	const specials = `["<pad>", "<unk>", "<bos>", "<eos>", "<sep>", "<mask>", "<to_s>", "<to_left>", "<to_right>"]`
	file := func(format, vocab, specials, merges string) string {
		return `{"format": ` + format + `, "vocab_size": ` + vocab + `, "special_tokens": ` + specials + `, "merges": ` + merges + `}`
	}
	good := file(`"ctxsim-bpe/1"`, "267", specials, "[[106, 106], [41, 265]]")
	if _, err := Load(strings.NewReader(good)); err != nil {
		t.Fatalf("Load of a valid file: %v", err)
	}
	tests := []struct {
		name, data, want string
	}{
		{"empty", "", "corrupt or truncated JSON"},
		{"truncated", good[:len(good)-10], "corrupt or truncated JSON"},
		{"garbage", "\x00\x01 not json", "corrupt or truncated JSON"},
		{"trailing data", good + "{}", "corrupt or truncated JSON"},
		{"array", "[1, 2]", "not a JSON object"},
		{"null", "null", "not a JSON object"},
		{"no format", `{"vocab_size": 265}`, `missing field "format"`},
		{"format not a string", file("1", "267", specials, "[]"), `field "format"`},
		{"unknown format", file(`"gpt2-bpe"`, "265", specials, "[]"), `unknown format "gpt2-bpe"`},
		{"unknown version", file(`"ctxsim-bpe/2"`, "265", specials, "[]"), `unsupported version "2"`},
		{"unknown field", `{"format": "ctxsim-bpe/1", "vocab_size": 265, "special_tokens": ` + specials + `, "merges": [], "extra": 1}`, `unknown field(s) "extra"`},
		{"no merges", `{"format": "ctxsim-bpe/1", "vocab_size": 265, "special_tokens": ` + specials + `}`, `missing field "merges"`},
		{"null merges", file(`"ctxsim-bpe/1"`, "265", specials, "null"), `field "merges" is null`},
		{"no vocab size", `{"format": "ctxsim-bpe/1", "special_tokens": ` + specials + `, "merges": []}`, `missing field "vocab_size"`},
		{"vocab size mismatch", file(`"ctxsim-bpe/1"`, "300", specials, "[[106, 106], [41, 265]]"), "vocab_size 300 does not match"},
		{"vocab size not a number", file(`"ctxsim-bpe/1"`, `"267"`, specials, "[[106, 106], [41, 265]]"), `field "vocab_size"`},
		{"wrong specials", file(`"ctxsim-bpe/1"`, "265", `["<pad>", "<unk>"]`, "[]"), "special_tokens"},
		{"reordered specials", file(`"ctxsim-bpe/1"`, "265", strings.Replace(specials, `"<bos>", "<eos>"`, `"<eos>", "<bos>"`, 1), "[]"), "special_tokens"},
		{"merge of a later token", file(`"ctxsim-bpe/1"`, "267", specials, "[[106, 266], [41, 265]]"), "merge 0 (token 265) refers to token 266"},
		{"merge of itself", file(`"ctxsim-bpe/1"`, "266", specials, "[[265, 106]]"), "refers to token 265"},
		{"merge of a special", file(`"ctxsim-bpe/1"`, "266", specials, "[[3, 106]]"), "refers to token 3"},
		{"merge of an unknown token", file(`"ctxsim-bpe/1"`, "266", specials, "[[106, 70000]]"), "refers to token 70000, outside the vocabulary"},
		{"negative ID", file(`"ctxsim-bpe/1"`, "266", specials, "[[-1, 106]]"), "refers to token -1"},
		{"huge ID", file(`"ctxsim-bpe/1"`, "266", specials, "[[106, 99999999999999]]"), "outside the vocabulary"},
		{"duplicate merge", file(`"ctxsim-bpe/1"`, "268", specials, "[[106, 106], [41, 265], [106, 106]]"), "merge 2 duplicates merge 0"},
		{"triple", file(`"ctxsim-bpe/1"`, "266", specials, "[[106, 106, 106]]"), "merge 0 has 3 elements"},
		{"single", file(`"ctxsim-bpe/1"`, "266", specials, "[[106]]"), "merge 0 has 1 elements"},
		{"fractional ID", file(`"ctxsim-bpe/1"`, "266", specials, "[[106.5, 106]]"), `field "merges"`},
		{"string ID", file(`"ctxsim-bpe/1"`, "266", specials, `[["a", "b"]]`), `field "merges"`},
		{"token too long", file(`"ctxsim-bpe/1"`, "274", specials, "[[106, 106], [265, 265], [266, 266], [267, 267], [268, 268], [269, 269], [270, 270], [271, 271], [272, 272]]"), "merge 8 (token 273) makes a token of 512 bytes"},
		{"too large", strings.Repeat(" ", maxFileBytes+1), "larger than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := Load(strings.NewReader(tc.data))
			if err == nil {
				t.Fatalf("Load succeeded with vocabulary %d, want an error mentioning %q", tok.VocabSize(), tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "tokenizer: load: ") {
				t.Errorf("Load error %q, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestLoadTooManyMerges(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"format": "ctxsim-bpe/1", "vocab_size": 65536, "special_tokens": ["<pad>", "<unk>", "<bos>", "<eos>", "<sep>", "<mask>", "<to_s>", "<to_left>", "<to_right>"], "merges": [`)
	for i := range MaxVocabSize + 1 - FirstMergeID {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("[9,9]")
	}
	b.WriteString("]}")
	_, err := Load(strings.NewReader(b.String()))
	if err == nil || !strings.Contains(err.Error(), "larger than the maximum") {
		t.Errorf("Load of 65536 tokens: error %v, want one about the maximum", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("read failed") }

func TestIOErrors(t *testing.T) {
	if err := small(t).Save(failingWriter{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Save to a failing writer: %v", err)
	}
	if _, err := Load(failingReader{}); err == nil || !strings.Contains(err.Error(), "read failed") {
		t.Errorf("Load from a failing reader: %v", err)
	}
}
