package harvest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/transforms/beamreg"
	"github.com/ctxsim/ctxsim/transforms/counter"
)

func init() {
	beam.RegisterType(reflect.TypeOf(Pair{}))
	beam.RegisterType(reflect.TypeOf(member{}))
	beamreg.DoFn(&neighbourFn{})
	beamreg.DoFn(&ownChunksFn{})
	beamreg.DoFn(&chunkPairsFn{})
	beamreg.DoFn(&randomGroupFn{})
	beamreg.DoFn(&randomPairsFn{})
	beamreg.DoFn(&quotaFn{})
	register.Iter1[member]()
	register.Iter1[Pair]()
	register.Iter1[string]()
	register.Emitter2[string, member]()
	register.Emitter2[string, Pair]()
	register.Emitter2[int, string]()
	register.Emitter1[Pair]()
}

// Strata of sampled pairs. A pair is "random" when it was drawn at random,
// and otherwise "near", "mid" or "far" by the best retrieval rank that
// links its sentences (one sentence's chunk among the other's hits, or one
// chunk among both sentences' hits).
const (
	StratumNear   = "near"
	StratumMid    = "mid"
	StratumFar    = "far"
	StratumRandom = "random"
)

// Strata lists the strata in order.
var Strata = []string{StratumNear, StratumMid, StratumFar, StratumRandom}

// PairConfig configures the pair sampler.
type PairConfig struct {
	// Seed fixes every choice.
	Seed uint64
	// NearRank and MidRank bound the ranks of the near and mid strata:
	// near < NearRank <= mid < MidRank <= far < Neighbours.
	NearRank, MidRank int
	// Neighbours is how many top hits of each sentence link it to others.
	Neighbours int
	// Quota is the number of pairs each sentence owns per stratum, in the
	// order of Strata.
	Quota [4]int
	// RandomGroups is the number of groups random partners are drawn
	// within; each group holds about 1/RandomGroups of the sentences.
	RandomGroups int
	// MaxPerChunk bounds the sentences a single chunk links, so that a
	// chunk retrieved by many sentences does not produce quadratic pairs.
	MaxPerChunk int
	// Wave restricts the sampler to one wave of a harvest run in waves;
	// the zero value keeps every pair.
	Wave Wave `json:"wave,omitzero"`
}

// Wave is one of the Of waves a harvest can run in, one pipeline after
// another, so that each holds about 1/Of of the pairs in flight: a pair
// belongs to the wave its owner hashes to, and an owner's pairs all come
// to one wave, so the waves together choose the pairs one run would.
type Wave struct {
	Index, Of int
}

// keeps reports whether the pair owned by owner belongs to the wave.
func (w Wave) keeps(seed uint64, owner string) bool {
	return w.Of <= 1 || hash64(seed, "wave\x00"+owner)%uint64(w.Of) == uint64(w.Index)
}

// First reports whether w is the first wave (or the only one): the wave
// whose tables hold what is per sentence rather than per pair.
func (w Wave) First() bool { return w.Index == 0 }

// DefaultPairConfig samples up to one pair per stratum per sentence.
func DefaultPairConfig() PairConfig {
	return PairConfig{Seed: 1, NearRank: 5, MidRank: 50, Neighbours: 200, Quota: [4]int{1, 1, 1, 1},
		RandomGroups: 16, MaxPerChunk: 32}
}

// ParseQuota reads "near:1,mid:1,far:1,random:1" (missing strata get 0).
func ParseQuota(s string) ([4]int, error) {
	var q [4]int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, num, ok := strings.Cut(part, ":")
		n, err := strconv.Atoi(num)
		i := slices.Index(Strata, name)
		if !ok || err != nil || n < 0 || i < 0 {
			return q, fmt.Errorf("pair quota %q: want stratum:count with strata %v", part, Strata)
		}
		q[i] = n
	}
	return q, nil
}

// Pair is a sampled pair of sentences, A < B.
type Pair struct {
	ID      string
	A, B    string
	Stratum string
	// Rank is the retrieval rank linking the two, -1 for random pairs.
	// It is an int64, as is every possibly negative integer of a record
	// that crosses a shuffle: Beam's Go SDK writes a negative int32 of a
	// schema row as a 10-byte varint, which a Java runner (Flink) cannot
	// read back ("varint overflow").
	Rank int64
}

// member is a sentence linked to a chunk: by retrieval at Rank, or, with
// Rank -1, because the sentence lies in the chunk.
type member struct {
	Sentence string
	Rank     int64 // see Pair.Rank
}

// PairID is the stable identity of an unordered pair.
func PairID(a, b string) string {
	if b < a {
		a, b = b, a
	}
	h := sha256.Sum256([]byte(a + "\x00" + b))
	return hex.EncodeToString(h[:16])
}

func newPair(a, b string, rank int64, cfg PairConfig) Pair {
	if b < a {
		a, b = b, a
	}
	p := Pair{ID: PairID(a, b), A: a, B: b, Rank: rank}
	switch {
	case rank < 0:
		p.Stratum = StratumRandom
	case int(rank) < cfg.NearRank:
		p.Stratum = StratumNear
	case int(rank) < cfg.MidRank:
		p.Stratum = StratumMid
	default:
		p.Stratum = StratumFar
	}
	return p
}

// hash64 mixes the seed into a string hash, for seeded choices.
func hash64(seed uint64, s string) uint64 {
	h := sha256.Sum256([]byte(strconv.FormatUint(seed, 16) + "\x00" + s))
	return binary.LittleEndian.Uint64(h[:8])
}

// SamplePairs chooses pairs among the sentences that have retrievals:
// pairs linked through retrieval neighbourhoods, stratified by the rank of
// the link, and random pairs for the low range of similarity. Every pair is
// unordered, appears once, never pairs a sentence with itself, and is
// chosen deterministically under cfg.Seed. Each sentence owns (by a hash of
// the pair) up to cfg.Quota pairs per stratum; it may take part in more
// that others own.
//
// Every link is keyed by its pair's owner as it is made, so one shuffle
// brings an owner all the links of its pairs: the owner keeps each pair's
// best link and then its quota. (Grouping the links by pair first, and the
// pairs by owner after, chose the same pairs with one more shuffle of all
// the links.)
func SamplePairs(s beam.Scope, cfg PairConfig, sentences, retrievals beam.PCollection) beam.PCollection {
	s = s.Scope("harvest.SamplePairs")
	links := beam.ParDo(s, &neighbourFn{Cfg: cfg}, retrievals)
	own := beam.ParDo(s, &ownChunksFn{}, sentences)
	byChunk := beam.GroupByKey(s, beam.Flatten(s, links, own))
	linked := beam.ParDo(s, &chunkPairsFn{Cfg: cfg}, byChunk)
	groups := beam.GroupByKey(s, beam.ParDo(s, &randomGroupFn{Cfg: cfg}, sentences))
	random := beam.ParDo(s, &randomPairsFn{Cfg: cfg}, groups)
	return beam.ParDo(s, &quotaFn{Cfg: cfg}, beam.GroupByKey(s, beam.Flatten(s, linked, random)))
}

type neighbourFn struct{ Cfg PairConfig }

func (f *neighbourFn) ProcessElement(r schemas.Retrieval, emit func(string, member)) {
	for i, h := range r.Hits[:min(len(r.Hits), f.Cfg.Neighbours)] {
		emit(h.ChunkID, member{Sentence: r.SentenceID, Rank: int64(i)})
	}
}

type ownChunksFn struct{}

func (f *ownChunksFn) ProcessElement(s schemas.Sentence, emit func(string, member)) {
	for _, c := range s.ChunkIDs {
		emit(c, member{Sentence: s.ID, Rank: -1})
	}
}

// chunkPairsFn links, through one chunk, each sentence that retrieved it
// with each sentence inside it and with the other sentences that retrieved
// it; the link's rank is the worse of the ranks involved.
type chunkPairsFn struct {
	Cfg   PairConfig
	links counter.Counter
}

func (f *chunkPairsFn) Setup() { f.links = counter.New("harvest", "pair_links") }

func (f *chunkPairsFn) ProcessElement(ctx context.Context, _ string, it func(*member) bool, emit func(string, Pair)) {
	var retrievers, inside []member
	var m member
	for it(&m) {
		if m.Rank < 0 {
			inside = append(inside, m)
		} else {
			retrievers = append(retrievers, m)
		}
	}
	if len(retrievers) == 0 {
		return
	}
	order := func(ms []member) {
		sort.Slice(ms, func(i, j int) bool {
			if ms[i].Rank != ms[j].Rank {
				return ms[i].Rank < ms[j].Rank
			}
			return ms[i].Sentence < ms[j].Sentence
		})
	}
	order(retrievers)
	order(inside)
	retrievers = retrievers[:min(len(retrievers), f.Cfg.MaxPerChunk)]
	inside = inside[:min(len(inside), f.Cfg.MaxPerChunk)]
	n := int64(0)
	for i, r := range retrievers {
		for _, in := range inside {
			if in.Sentence != r.Sentence {
				n += f.Cfg.emit(newPair(r.Sentence, in.Sentence, r.Rank, f.Cfg), emit)
			}
		}
		for _, r2 := range retrievers[i+1:] {
			if r2.Sentence != r.Sentence {
				n += f.Cfg.emit(newPair(r.Sentence, r2.Sentence, max(r.Rank, r2.Rank), f.Cfg), emit)
			}
		}
	}
	f.links.Inc(ctx, n)
}

type randomGroupFn struct{ Cfg PairConfig }

func (f *randomGroupFn) ProcessElement(s schemas.Sentence, emit func(int, string)) {
	n := max(f.Cfg.RandomGroups, 1)
	emit(int(hash64(f.Cfg.Seed, "group\x00"+s.ID)%uint64(n)), s.ID)
}

// randomPairsFn orders a group's sentences by a seeded hash and pairs each
// with the next ones, as many as the random quota asks.
type randomPairsFn struct{ Cfg PairConfig }

func (f *randomPairsFn) ProcessElement(_ int, it func(*string) bool, emit func(string, Pair)) {
	var ids []string
	var id string
	for it(&id) {
		ids = append(ids, id)
	}
	h := func(s string) uint64 { return hash64(f.Cfg.Seed, "order\x00"+s) }
	sort.Slice(ids, func(i, j int) bool {
		hi, hj := h(ids[i]), h(ids[j])
		if hi != hj {
			return hi < hj
		}
		return ids[i] < ids[j]
	})
	q := f.Cfg.Quota[3]
	for i := range ids {
		for k := 1; k <= q && k < len(ids); k++ {
			j := (i + k) % len(ids)
			if ids[j] != ids[i] {
				f.Cfg.emit(newPair(ids[i], ids[j], -1, f.Cfg), emit)
			}
		}
	}
}

// emit emits p keyed by its owner when it belongs to the config's wave,
// and returns the pairs emitted (0 or 1).
func (cfg PairConfig) emit(p Pair, emit func(string, Pair)) int64 {
	o := owner(cfg.Seed, p)
	if !cfg.Wave.keeps(cfg.Seed, o) {
		return 0
	}
	emit(o, p)
	return 1
}

// owner is the sentence of p that owns it (the one whose quota it counts
// against), chosen by a seeded hash of the pair.
func owner(seed uint64, p Pair) string {
	if hash64(seed, "owner\x00"+p.ID)&1 == 1 {
		return p.B
	}
	return p.A
}

// better prefers a random draw (the rarer channel, which covers the low
// range of similarity even when the two sentences happen to be linked),
// then the strongest link.
func better(p, q Pair) bool {
	switch {
	case p.Rank < 0 && q.Rank >= 0:
		return true
	case p.Rank >= 0 && q.Rank < 0:
		return false
	}
	return p.Rank < q.Rank
}

// quotaFn keeps, of the pairs a sentence owns, one record per pair (see
// better), and of those up to the quota of each stratum, chosen by a seeded
// hash.
type quotaFn struct {
	Cfg      PairConfig
	distinct counter.Counter
}

func (f *quotaFn) Setup() { f.distinct = counter.New("harvest", "pairs_distinct") }

func (f *quotaFn) ProcessElement(ctx context.Context, _ string, it func(*Pair) bool, emit func(Pair)) {
	best := map[string]Pair{}
	var p Pair
	for it(&p) {
		if q, ok := best[p.ID]; !ok || better(p, q) {
			best[p.ID] = p
		}
	}
	f.distinct.Inc(ctx, int64(len(best)))
	type picked struct {
		h uint64
		p Pair
	}
	by := map[string][]picked{}
	for _, p := range best {
		by[p.Stratum] = append(by[p.Stratum], picked{hash64(f.Cfg.Seed, "pick\x00"+p.ID), p})
	}
	for i, st := range Strata {
		ps := by[st]
		sort.Slice(ps, func(a, b int) bool {
			if ps[a].h != ps[b].h {
				return ps[a].h < ps[b].h
			}
			return ps[a].p.ID < ps[b].p.ID
		})
		for _, x := range ps[:min(len(ps), f.Cfg.Quota[i])] {
			emit(x.p)
		}
	}
}
