package tokenizer

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// smallCorpus is a few paragraphs of mixed text for a small tokenizer.
var smallCorpus = []string{
	"The cat sat on the mat. The cat was happy, and the dog was not.",
	"It's a truth universally acknowledged that a single man in possession of a good fortune must be in want of a wife.",
	"Café au lait, crème brûlée, naïve façade — déjà vu!",
	"東京は日本の首都です。 北京是中国的首都。",
	"Numbers: 1, 22, 333, 2024-05-01; prices $3.50 and €4,20.",
	"Emoji: 👍🏽 🎉 and the end.\tTabs\nand newlines\n\n  indented   text  ",
	"func main() { fmt.Println(\"hello, world\") }",
	"They'll say we're sure you've seen it; I'd think I'm right, don’t you?",
}

var (
	smallOnce sync.Once
	smallTok  *Tokenizer
)

// small returns a tokenizer trained on smallCorpus repeated, shared by tests.
func small(t testing.TB) *Tokenizer {
	t.Helper()
	smallOnce.Do(func() {
		tok, err := Train(slices.Values(repeat(smallCorpus, 3)), TrainConfig{VocabSize: 600, MinFrequency: 2})
		if err != nil {
			panic(err)
		}
		smallTok = tok
	})
	return smallTok
}

func repeat(texts []string, n int) []string {
	var out []string
	for range n {
		out = append(out, texts...)
	}
	return out
}

// split returns the pre-tokenized words of s.
func split(s string) []string {
	var words []string
	for i := 0; i < len(s); {
		j := wordEnd(s, i)
		words = append(words, s[i:j])
		i = j
	}
	return words
}

func TestPretokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello, world!", []string{"Hello", ",", " world", "!"}},
		{"a  b", []string{"a", " ", " b"}},
		{"a \n  b", []string{"a", " \n ", " b"}},
		{"a\n b", []string{"a", "\n", " b"}},
		{"a ", []string{"a", " "}},
		{" ", []string{" "}},
		{"  x", []string{" ", " x"}},
		{"tab\tx", []string{"tab", "\t", "x"}},
		{"it's We'LL don’t", []string{"it", "'s", " We", "'LL", " don", "’t"}},
		{"'sand 'd", []string{"'", "sand", " '", "d"}},
		{"rock'n'roll", []string{"rock", "'", "n", "'", "roll"}},
		{"x 2024-05-01", []string{"x", " 2024", "-", "05", "-", "01"}},
		{"cafe\u0301 au", []string{"cafe\u0301", " au"}},
		{"東京は日本", []string{"東京は日本"}},
		{"\xff\xfeab", []string{"\xff\xfe", "ab"}},
		{"👍🏽 ok", []string{"👍🏽", " ok"}},
		{" (see: x)", []string{" (", "see", ":", " x", ")"}},
		{"a\u00a0b", []string{"a", "\u00a0", "b"}},
		{"Case KEPT", []string{"Case", " KEPT"}},
		{"x²³ Ⅻ", []string{"x", "²³", " Ⅻ"}},
	}
	for _, tc := range tests {
		if got := split(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("split(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func roundTripStrings() []string {
	return []string{
		"",
		"a",
		"The cat sat on the mat.",
		"  leading and trailing spaces  ",
		"Crème brûlée, naïve façade, Ångström, Ærø, Œuvre",
		"東京は日本の首都です。北京是中国的首都。서울은 한국의 수도입니다.",
		"Emoji 👍🏽👩‍👩‍👧‍👦🏳️‍🌈 end",
		"combining: e\u0301 a\u0308 o\u0302\u0323 Z\u0335\u0321\u0322",
		"controls: \x00\x01\x07\x1b[0m\x7f\r\n\t\v\f end",
		"<pad><unk><bos><eos><sep><mask><to_s><to_left><to_right>",
		"text with <pad> inside and <eos>",
		"\u2028\u2029\u00a0\u3000\ufeff\u200b",
		"Ελληνικά, русский, עברית, العربية, हिन्दी",
		"1234567890 3.14159 -42 1e10 ½ ²",
		strings.Repeat("long", 40),
		strings.Repeat("ab", 500),
		strings.Repeat(" ", 100),
		"\n\n\n",
		"it's they'll we're I'd I'm you've don't DON'T",
		"\U0010FFFF\U0001F600\uFFFD",
	}
}

func TestRoundTrip(t *testing.T) {
	tok := small(t)
	for _, s := range append(roundTripStrings(), smallCorpus...) {
		ids := tok.Encode(s)
		if got := tok.Decode(ids); got != s {
			t.Errorf("Decode(Encode(%q)) = %q", s, got)
		}
		for _, id := range ids {
			if id < ByteOffset || int(id) >= tok.VocabSize() {
				t.Errorf("Encode(%q) gave ID %d outside byte and merge tokens", s, id)
			}
		}
	}
}

func TestEncodeCompresses(t *testing.T) {
	tok := small(t)
	s := smallCorpus[0]
	ids := tok.Encode(s)
	if len(ids) >= len(s)/2 {
		t.Errorf("Encode(%q) gave %d tokens for %d bytes of training text; merges are not applied", s, len(ids), len(s))
	}
	if got := tok.Encode(" cat"); len(got) != 1 {
		t.Errorf("Encode(\" cat\") = %v, want one token", got)
	}
}

func TestInvalidUTF8(t *testing.T) {
	tok := small(t)
	for _, s := range []string{"\xff", "\xff\xfe", "ab\x80cd", "\xc3", "caf\xc3", "\xed\xa0\x80", "x\xf4\x90\x80\x80y", " \xfe \xff"} {
		ids := tok.Encode(s)
		if got := tok.Decode(ids); got != s {
			t.Errorf("Decode(Encode(%q)) = %q", s, got)
		}
		// Bytes that never occur in UTF-8 cannot be in any merge learned from
		// valid text, so each must appear as its own byte token.
		for i := range len(s) {
			if c := s[i]; c >= 0xf5 || c == 0xc0 || c == 0xc1 {
				if !slices.Contains(ids, ByteOffset+int32(c)) {
					t.Errorf("Encode(%q) = %v lacks byte token %d for byte %#x", s, ids, ByteOffset+int32(c), c)
				}
			}
		}
	}
	if got, want := tok.Encode("\xff\xfe"), []int32{ByteOffset + 0xff, ByteOffset + 0xfe}; !slices.Equal(got, want) {
		t.Errorf("Encode(\"\\xff\\xfe\") = %v, want %v", got, want)
	}
}

func TestSpecialStringsAreText(t *testing.T) {
	tok := small(t)
	for _, s := range specialNames {
		ids := tok.Encode(s)
		if slices.ContainsFunc(ids, func(id int32) bool { return id < NumSpecial }) {
			t.Errorf("Encode(%q) = %v contains a special token", s, ids)
		}
		if got := tok.Decode(ids); got != s {
			t.Errorf("Decode(Encode(%q)) = %q", s, got)
		}
	}
}

func TestSpecialIDs(t *testing.T) {
	ids := []int32{PadID, UnkID, BOSID, EOSID, SepID, MaskID, ToSentenceID, ToLeftID, ToRightID}
	names := []string{"<pad>", "<unk>", "<bos>", "<eos>", "<sep>", "<mask>", "<to_s>", "<to_left>", "<to_right>"}
	tok := small(t)
	for i, id := range ids {
		if id != int32(i) {
			t.Errorf("special %s has ID %d, want %d", names[i], id, i)
		}
		if got := tok.TokenString(id); got != names[i] {
			t.Errorf("TokenString(%d) = %q, want %q", id, got, names[i])
		}
	}
	if !slices.Equal(SpecialTokens(), names) {
		t.Errorf("SpecialTokens() = %q, want %q", SpecialTokens(), names)
	}
	if ByteOffset != 9 || FirstMergeID != 265 {
		t.Errorf("ByteOffset, FirstMergeID = %d, %d, want 9, 265", ByteOffset, FirstMergeID)
	}
}

func TestDecodeSkipsSpecialAndInvalidIDs(t *testing.T) {
	tok := small(t)
	ids := []int32{BOSID, ByteOffset + 'h', -1, ByteOffset + 'i', int32(tok.VocabSize()), EOSID, PadID, 1 << 30}
	if got := tok.Decode(ids); got != "hi" {
		t.Errorf("Decode(%v) = %q, want %q", ids, got, "hi")
	}
	if got := tok.Decode(nil); got != "" {
		t.Errorf("Decode(nil) = %q", got)
	}
}

func TestTokenString(t *testing.T) {
	tok := small(t)
	tests := []struct {
		id   int32
		want string
	}{
		{ByteOffset + 'a', "a"},
		{ByteOffset + 0xff, `\xff`},
		{ByteOffset + '\n', `\x0a`},
		{ByteOffset + '\\', `\\`},
		{-3, "<invalid:-3>"},
		{int32(tok.VocabSize()), fmt.Sprintf("<invalid:%d>", tok.VocabSize())},
	}
	for _, tc := range tests {
		if got := tok.TokenString(tc.id); got != tc.want {
			t.Errorf("TokenString(%d) = %q, want %q", tc.id, got, tc.want)
		}
	}
	ids := tok.Encode(" cat")
	if len(ids) != 1 || tok.TokenString(ids[0]) != " cat" {
		t.Errorf("TokenString of Encode(\" cat\") = %v", ids)
	}
}

// naiveMerge applies the merges of tok to a word by repeatedly merging all
// occurrences of the lowest-ranked pair, the textbook definition.
func naiveMerge(tok *Tokenizer, w string) []int32 {
	var syms []int32
	for i := range len(w) {
		syms = append(syms, ByteOffset+int32(w[i]))
	}
	for {
		best := int32(noRank)
		for i := 0; i+1 < len(syms); i++ {
			best = min(best, tok.rank(syms[i], syms[i+1]))
		}
		if best == noRank {
			return syms
		}
		m := tok.merges[best]
		var out []int32
		for i := 0; i < len(syms); {
			if i+1 < len(syms) && syms[i] == m[0] && syms[i+1] == m[1] {
				out = append(out, FirstMergeID+best)
				i += 2
			} else {
				out = append(out, syms[i])
				i++
			}
		}
		syms = out
	}
}

func TestMergeMethodsAgree(t *testing.T) {
	tok := small(t)
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "t", "h", "e", " ", "c", "s", "n", "é", "東", "京", "👍", "\xff", "1", "'"}
	for range 2000 {
		var b strings.Builder
		for n := rng.IntN(150) + 2; b.Len() < n; {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		w := b.String()
		want := naiveMerge(tok, w)
		if got := tok.mergeLong(nil, w); !slices.Equal(got, want) {
			t.Fatalf("mergeLong(%q) = %v, want %v", w, got, want)
		}
		if len(w) <= shortWordBytes {
			if got := tok.mergeShort(nil, w); !slices.Equal(got, want) {
				t.Fatalf("mergeShort(%q) = %v, want %v", w, got, want)
			}
		}
	}
}

func TestEncodeLongWord(t *testing.T) {
	tok := small(t)
	s := strings.Repeat("thecat", 100_000) // one 600 kB word
	ids := tok.Encode(s)
	if got := tok.Decode(ids); got != s {
		t.Fatalf("round trip of a 600 kB word failed")
	}
	if len(ids) >= len(s) {
		t.Errorf("a 600 kB word took %d tokens: merges are not applied", len(ids))
	}
	w := s[:6000]
	if got, want := tok.Encode(w), naiveMerge(tok, w); !slices.Equal(got, want) {
		t.Errorf("Encode of a 6 kB word differs from the naive merge")
	}
}

func TestCacheTurnover(t *testing.T) {
	tok, err := Train(slices.Values(repeat(smallCorpus, 2)), TrainConfig{VocabSize: 500})
	if err != nil {
		t.Fatal(err)
	}
	// More distinct words than the cache holds, twice, must encode the same
	// way as without a cache.
	n := 3 * cacheShards * cacheGeneration
	for pass := range 2 {
		for i := range n {
			w := fmt.Sprintf(" the%dcat", i%(n/2))
			got := tok.Encode(w)
			want := append(tok.Encode(" the"), naiveMergeWords(tok, w[4:])...)
			if !slices.Equal(got, want) {
				t.Fatalf("pass %d: Encode(%q) = %v, want %v", pass, w, got, want)
			}
		}
	}
}

// naiveMergeWords encodes s word by word with naiveMerge.
func naiveMergeWords(tok *Tokenizer, s string) []int32 {
	var out []int32
	for _, w := range split(s) {
		out = append(out, naiveMerge(tok, w)...)
	}
	return out
}

func TestEncodeBatch(t *testing.T) {
	tok := small(t)
	var texts []string
	for i := range 1000 {
		texts = append(texts, fmt.Sprintf("%s #%d", smallCorpus[i%len(smallCorpus)], i))
	}
	got := tok.EncodeBatch(texts)
	if len(got) != len(texts) {
		t.Fatalf("EncodeBatch gave %d results for %d texts", len(got), len(texts))
	}
	for i, s := range texts {
		if want := naiveMergeWords(tok, s); !slices.Equal(got[i], want) {
			t.Fatalf("EncodeBatch(...)[%d] = %v, want %v", i, got[i], want)
		}
	}
	if got := tok.EncodeBatch(nil); len(got) != 0 {
		t.Errorf("EncodeBatch(nil) = %v", got)
	}
}
