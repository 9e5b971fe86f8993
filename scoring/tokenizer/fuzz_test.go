package tokenizer

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func FuzzEncodeDecode(f *testing.F) {
	for _, s := range append(roundTripStrings(), smallCorpus...) {
		f.Add(s)
	}
	f.Add("\xff\xfe\xc3 \x80x\xed\xa0\x80")
	f.Fuzz(func(t *testing.T, s string) {
		tok := small(t)
		ids := tok.Encode(s)
		if got := tok.Decode(ids); got != s {
			t.Fatalf("Decode(Encode(%q)) = %q", s, got)
		}
		for _, id := range ids {
			if id < ByteOffset || int(id) >= tok.VocabSize() {
				t.Fatalf("Encode(%q) gave ID %d", s, id)
			}
		}
		if len(s) <= 256 {
			if want := naiveMergeWords(tok, s); !slices.Equal(ids, want) {
				t.Fatalf("Encode(%q) = %v, naive merge gives %v", s, ids, want)
			}
		}
		if strings.Join(split(s), "") != s {
			t.Fatalf("pre-tokenization of %q loses text", s)
		}
	})
}

func FuzzLoad(f *testing.F) {
	good := saved(f, small(f))
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(`{"format": "ctxsim-bpe/1", "vocab_size": 266, "special_tokens": ["<pad>", "<unk>", "<bos>", "<eos>", "<sep>", "<mask>", "<to_s>", "<to_left>", "<to_right>"], "merges": [[106, 106]]}`))
	f.Add([]byte(`{"format": "ctxsim-bpe/2"}`))
	f.Add([]byte(`{"merges": [[1e300, -0]]}`))
	f.Add([]byte("null"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := Load(bytes.NewReader(data))
		if err != nil {
			if tok != nil {
				t.Fatalf("Load returned a tokenizer and error %v", err)
			}
			return
		}
		again, err := Load(bytes.NewReader(saved(t, tok)))
		if err != nil {
			t.Fatalf("Load of a re-saved tokenizer: %v", err)
		}
		if again.Fingerprint() != tok.Fingerprint() {
			t.Fatalf("re-saved tokenizer has another fingerprint")
		}
		const s = "The quick brown fox, \xff 東京 👍"
		if got := tok.Decode(tok.Encode(s)); got != s {
			t.Fatalf("loaded tokenizer: Decode(Encode(%q)) = %q", s, got)
		}
		for id := range int32(tok.VocabSize()) {
			tok.TokenString(id)
		}
	})
}

func FuzzTrain(f *testing.F) {
	f.Add("aaab aaab aab", 1)
	f.Add("The cat sat on the mat. 東京 \xff\xfe", 2)
	f.Fuzz(func(t *testing.T, text string, minFreq int) {
		minFreq = 1 + min(max(minFreq, 0), 5)
		texts := []string{text, text, strings.ToUpper(text)}
		tok, err := Train(slices.Values(texts), TrainConfig{VocabSize: 320, MinFrequency: minFreq})
		if err != nil {
			t.Fatal(err)
		}
		data := saved(t, tok)
		if _, err := Load(bytes.NewReader(data)); err != nil {
			t.Fatalf("Load of a trained tokenizer: %v", err)
		}
		for _, s := range texts {
			if got := tok.Decode(tok.Encode(s)); got != s {
				t.Fatalf("Decode(Encode(%q)) = %q", s, got)
			}
		}
	})
}
