package harvest

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
)

// ShuffleSize is what a labeling plane moves through one of its shuffles,
// in bytes as Beam encodes the keyed elements: per labeled pair for the
// pairs' shuffles, and for the context sets' shuffles their total divided
// by the pairs.
type ShuffleSize struct {
	Shuffle string
	Bytes   float64
}

// ShuffleBytes measures both labeling planes on real records (pairs
// labeled by a harvest, and the context sets it built): the plane that
// carries the first sentence's whole set with each pair (still the one
// LabelReusing runs) and the plane of per-side sums (Label), whose pairs
// carry their first set's contexts numbered in st, the corpus's chunk
// store. Pairs whose first set does not resolve in st are left out.
// skipA is what those contexts cost a pair in the third shuffle, as store
// numbers (Numbers) and as the 8-byte hashes pairs carried before
// 2026-11-28 (Hashes).
func ShuffleBytes(pairs []schemas.LabeledPair, sets map[string]schemas.ContextSet, st *method.Store) (whole, sides []ShuffleSize, skipA SkipBytes) {
	enc := func(key string, v any) int {
		var b bytes.Buffer
		if err := beam.NewElementEncoder(reflect.TypeOf(key)).Encode(key, &b); err != nil {
			panic(err)
		}
		if err := beam.NewElementEncoder(reflect.TypeOf(v)).Encode(v, &b); err != nil {
			panic(err)
		}
		return b.Len()
	}
	var w [2]int
	var s [3]int
	var numbers, hashes int
	n := 0
	for _, lp := range pairs {
		a, okA := sets[lp.SentenceID1]
		b, okB := sets[lp.SentenceID2]
		if !okA || !okB {
			continue
		}
		skip, err := st.Skip(a.Contexts)
		if err != nil {
			continue
		}
		n++
		numbers, hashes = numbers+len(skip), hashes+8*len(a.Contexts)
		p := Pair{ID: lp.PairID, A: lp.SentenceID1, B: lp.SentenceID2, Stratum: lp.Stratum}
		w[0] += enc(p.A, p)
		w[1] += enc(p.B, halfPair{Pair: p, SetA: a})
		s[0] += enc(p.B, p)
		s[1] += enc(p.A, pairText{Pair: p, TextB: b.Text})
		h := sha256.New()
		digestSet(h, a)
		state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil {
			panic(err)
		}
		s[2] += enc(p.B, halfSums{Pair: p, TextA: a.Text, TextB: b.Text, SkipA: skip, Digest: state,
			Sums: method.Sums{N: int32(len(a.Contexts)), A: 1, B: 1, AA: 1, BB: 1, AB: 1}})
	}
	var setBytes, textBytes int
	for id, cs := range sets {
		setBytes += enc(id, cs)
		textBytes += enc(id, sentenceText{Text: cs.Text})
	}
	if n == 0 {
		return nil, nil, SkipBytes{}
	}
	per := func(x int) float64 { return float64(x) / float64(n) }
	whole = []ShuffleSize{{"pairs by first sentence", per(w[0])}, {"pairs with C_a, by second sentence", per(w[1])},
		{"context sets, twice (per pair)", per(2 * setBytes)}}
	sides = []ShuffleSize{{"pairs by second sentence", per(s[0])}, {"pairs with the second text, by first sentence", per(s[1])},
		{"pairs with the sums over C_a, by second sentence", per(s[2])},
		{"texts and context sets, twice (per pair)", per(textBytes + 2*setBytes)}}
	return whole, sides, SkipBytes{Numbers: per(numbers), Hashes: per(hashes)}
}

// SkipBytes is what a pair carries of its first set's contexts, in bytes
// per pair, as store numbers and as 64-bit hashes.
type SkipBytes struct{ Numbers, Hashes float64 }
