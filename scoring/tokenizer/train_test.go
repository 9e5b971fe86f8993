package tokenizer

import (
	"bytes"
	"cmp"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// mergeStrings returns the merges of tok as pairs of token strings.
func mergeStrings(tok *Tokenizer) [][2]string {
	var out [][2]string
	for _, m := range tok.merges {
		out = append(out, [2]string{tok.tokens[m[0]], tok.tokens[m[1]]})
	}
	return out
}

func TestTrainHandChecked(t *testing.T) {
	// Words: "aaab", " aaab", " aab", once each.
	// Counts: (a,a)=5, (a,b)=3, (" ",a)=2          -> merge a+a.
	// Words: [aa a b] [" " aa a b] [" " aa b].
	// Counts: (aa,a)=2, (a,b)=2, (" ",aa)=2, (aa,b)=1; the tie goes to the
	// smallest left bytes, " "                     -> merge " "+aa.
	// Words: [aa a b] [" aa" a b] [" aa" b].
	// Counts: (a,b)=2, the rest 1                  -> merge a+b.
	// Words: [aa ab] [" aa" ab] [" aa" b]: every pair occurs once.
	// With MinFrequency 1 the ties go on: (" aa",ab) before (" aa",b)
	// before (aa,ab).
	texts := []string{"aaab aaab aab"}
	tests := []struct {
		minFreq int
		want    [][2]string
	}{
		{2, [][2]string{{"a", "a"}, {" ", "aa"}, {"a", "b"}}},
		{1, [][2]string{{"a", "a"}, {" ", "aa"}, {"a", "b"}, {" aa", "ab"}, {" aa", "b"}, {"aa", "ab"}}},
	}
	for _, tc := range tests {
		tok, err := Train(slices.Values(texts), TrainConfig{VocabSize: 300, MinFrequency: tc.minFreq})
		if err != nil {
			t.Fatal(err)
		}
		if got := mergeStrings(tok); !slices.Equal(got, tc.want) {
			t.Errorf("MinFrequency %d: merges %q, want %q", tc.minFreq, got, tc.want)
		}
		if got, want := tok.VocabSize(), FirstMergeID+len(tc.want); got != want {
			t.Errorf("MinFrequency %d: VocabSize() = %d, want %d", tc.minFreq, got, want)
		}
	}
}

func TestTrainWordFrequencies(t *testing.T) {
	// "ab" occurs 3 times as a word, "cd" 2 times and "ef" once, over
	// several texts: the merges follow the word frequencies.
	texts := []string{"ab ab", "cd", "ab,cd", "ef"}
	tok, err := Train(slices.Values(texts), TrainConfig{VocabSize: 300, MinFrequency: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Words: ab(2: "ab" twice at text starts), " ab"(1), cd(2), ","(1), ef(1).
	// Pairs: (a,b)=3, (c,d)=2, (" ",a)=1, (e,f)=1.
	want := [][2]string{{"a", "b"}, {"c", "d"}, {" ", "ab"}, {"e", "f"}}
	if got := mergeStrings(tok); !slices.Equal(got, want) {
		t.Errorf("merges %q, want %q", got, want)
	}
}

func TestTrainVocabSizeLimit(t *testing.T) {
	tok, err := Train(slices.Values(repeat(smallCorpus, 5)), TrainConfig{VocabSize: 300, MinFrequency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.VocabSize(); got != 300 {
		t.Errorf("VocabSize() = %d, want 300", got)
	}
}

func TestTrainDeterministic(t *testing.T) {
	texts := repeat(smallCorpus, 4)
	save := func(texts []string) ([]byte, string) {
		tok, err := Train(slices.Values(texts), TrainConfig{VocabSize: 700})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := tok.Save(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes(), tok.Fingerprint()
	}
	b1, f1 := save(texts)
	b2, f2 := save(texts)
	if !bytes.Equal(b1, b2) || f1 != f2 {
		t.Errorf("two trainings on the same texts differ: fingerprints %s, %s", f1, f2)
	}
	// The order of texts does not matter below MaxWords.
	shuffled := slices.Clone(texts)
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(shuffled), func(i, j int) {
		shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
	})
	if b3, f3 := save(shuffled); !bytes.Equal(b1, b3) || f1 != f3 {
		t.Errorf("training on shuffled texts changed the result: fingerprints %s, %s", f1, f3)
	}
	if len(f1) != 64 || strings.Trim(f1, "0123456789abcdef") != "" {
		t.Errorf("Fingerprint() = %q, want 64 hex digits", f1)
	}
}

// naiveTrain is a reference trainer that recounts every pair after each
// merge.
func naiveTrain(texts []string, vocabSize int, minFreq int64) [][2]string {
	words, freqs := countWords(slices.Values(texts), DefaultMaxWords)
	seqs := make([][]string, len(words))
	for i, w := range words {
		for j := range len(w) {
			seqs[i] = append(seqs[i], w[j:j+1])
		}
	}
	var merges [][2]string
	for FirstMergeID+len(merges) < vocabSize {
		counts := map[[2]string]int64{}
		for i, s := range seqs {
			for j := 0; j+1 < len(s); j++ {
				counts[[2]string{s[j], s[j+1]}] += freqs[i]
			}
		}
		var best [2]string
		var bestCount int64
		for p, c := range counts {
			if c > bestCount || c == bestCount && cmp.Or(cmp.Compare(p[0], best[0]), cmp.Compare(p[1], best[1])) < 0 {
				best, bestCount = p, c
			}
		}
		if bestCount < minFreq {
			break
		}
		merges = append(merges, best)
		for i, s := range seqs {
			var out []string
			for j := 0; j < len(s); {
				if j+1 < len(s) && s[j] == best[0] && s[j+1] == best[1] {
					out = append(out, best[0]+best[1])
					j += 2
				} else {
					out = append(out, s[j])
					j++
				}
			}
			seqs[i] = out
		}
	}
	return merges
}

func TestTrainMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	syllables := []string{"a", "b", "ab", "ba", "aa", "the", "ca", "t", "é", "東", " ", " ", ",", "'s", "1", "22"}
	for trial := range 5 {
		var texts []string
		for range 60 {
			var b strings.Builder
			for range rng.IntN(30) {
				b.WriteString(syllables[rng.IntN(len(syllables))])
			}
			texts = append(texts, b.String())
		}
		texts = append(texts, smallCorpus...)
		for _, minFreq := range []int{1, 3} {
			tok, err := Train(slices.Values(texts), TrainConfig{VocabSize: 450, MinFrequency: minFreq})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, tk := range tok.tokens[FirstMergeID:] {
				if seen[tk] {
					t.Fatalf("trial %d: two merges make %q; the naive comparison does not apply", trial, tk)
				}
				seen[tk] = true
			}
			got := mergeStrings(tok)
			want := naiveTrain(texts, 450, int64(minFreq))
			// The naive trainer works on strings, so it would differ if two
			// merges made tokens with equal bytes; these corpora make none.
			if !slices.Equal(got, want) {
				n := 0
				for n < min(len(got), len(want)) && got[n] == want[n] {
					n++
				}
				t.Fatalf("trial %d, MinFrequency %d: %d merges, naive %d; first difference at %d: %q vs %q",
					trial, minFreq, len(got), len(want), n, got[n:min(n+3, len(got))], want[n:min(n+3, len(want))])
			}
		}
	}
}

func TestTrainMaxWords(t *testing.T) {
	// With MaxWords 1 only the first word, "xy", is counted.
	tok, err := Train(slices.Values([]string{"xy ab ab ab ab xy"}), TrainConfig{VocabSize: 300, MaxWords: 1, MinFrequency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mergeStrings(tok), [][2]string{{"x", "y"}}; !slices.Equal(got, want) {
		t.Errorf("merges %q, want %q", got, want)
	}
}

func TestTrainLongWords(t *testing.T) {
	// Long runs of letters are counted in pieces; they still train and
	// encode.
	long := strings.Repeat("東京は日本の首都です", 50)
	tok, err := Train(slices.Values([]string{long, long, strings.Repeat("\xe6", 200)}), TrainConfig{VocabSize: 400})
	if err != nil {
		t.Fatal(err)
	}
	if tok.VocabSize() <= FirstMergeID {
		t.Errorf("no merges learned from long words")
	}
	ids := tok.Encode(long)
	if tok.Decode(ids) != long || len(ids) >= len(long)/3 {
		t.Errorf("Encode of a trained long word: %d tokens for %d bytes", len(ids), len(long))
	}
	for _, w := range []string{long, strings.Repeat("a", 65), "\xe6" + strings.Repeat("\x80", 100)} {
		for p := w; len(p) > 0; {
			n := pieceLen(p)
			if n <= 0 || n > maxTrainWordBytes {
				t.Fatalf("pieceLen gave %d", n)
			}
			p = p[n:]
		}
	}
}

func TestTrainEmpty(t *testing.T) {
	tok, err := Train(slices.Values([]string(nil)), TrainConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if tok.VocabSize() != FirstMergeID {
		t.Errorf("VocabSize() = %d, want %d", tok.VocabSize(), FirstMergeID)
	}
	if s := "any text ✓"; tok.Decode(tok.Encode(s)) != s {
		t.Errorf("round trip without merges failed")
	}
}

func TestTrainConfigErrors(t *testing.T) {
	for _, cfg := range []TrainConfig{
		{VocabSize: 299},
		{VocabSize: 65536},
		{VocabSize: -1},
		{MinFrequency: -1},
		{MaxWords: -5},
	} {
		if _, err := Train(slices.Values([]string{"x"}), cfg); err == nil {
			t.Errorf("Train with %+v: no error", cfg)
		}
	}
	for _, cfg := range []TrainConfig{{VocabSize: 300}, {VocabSize: 65535}, {}} {
		if _, err := Train(slices.Values([]string{"x"}), cfg); err != nil {
			t.Errorf("Train with %+v: %v", cfg, err)
		}
	}
}
