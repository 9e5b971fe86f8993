package harvest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/ctxsim/ctxsim/schemas"
)

var (
	collectMu sync.Mutex
	collected []Pair
)

func collectPair(p Pair) {
	collectMu.Lock()
	collected = append(collected, p)
	collectMu.Unlock()
}

func init() {
	register.Function1x0[Pair](collectPair)
}

func TestMain(m *testing.M) {
	beam.Init()
	os.Exit(m.Run())
}

// samplerInput returns n sentences, three per chunk, and retrievals that
// hit chunks at random.
func samplerInput(n int) ([]schemas.Sentence, []schemas.Retrieval) {
	r := rand.New(rand.NewPCG(3, 4))
	var sents []schemas.Sentence
	var rets []schemas.Retrieval
	chunks := (n + 2) / 3
	for i := range n {
		id := fmt.Sprintf("s%04d", i)
		sents = append(sents, schemas.Sentence{ID: id, Text: "x", ChunkIDs: []string{fmt.Sprintf("c%d", i/3)}})
		ret := schemas.Retrieval{SentenceID: id}
		for k := range 30 {
			c := r.IntN(chunks)
			if c == i/3 {
				continue
			}
			ret.Hits = append(ret.Hits, schemas.Hit{ChunkID: fmt.Sprintf("c%d", c), Score: float32(30 - k)})
		}
		rets = append(rets, ret)
	}
	return sents, rets
}

func runSampler(t *testing.T, cfg PairConfig, sents []schemas.Sentence, rets []schemas.Retrieval) []Pair {
	t.Helper()
	collectMu.Lock()
	collected = nil
	collectMu.Unlock()
	p, s := beam.NewPipelineWithRoot()
	pairs := SamplePairs(s, cfg, beam.CreateList(s, sents), beam.CreateList(s, rets))
	beam.ParDo0(s, collectPair, pairs)
	if _, err := prism.Execute(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	collectMu.Lock()
	defer collectMu.Unlock()
	out := append([]Pair(nil), collected...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func TestSamplePairs(t *testing.T) {
	sents, rets := samplerInput(300)
	cfg := DefaultPairConfig()
	cfg.NearRank, cfg.MidRank, cfg.Neighbours = 3, 10, 30
	pairs := runSampler(t, cfg, sents, rets)
	seen := map[string]bool{}
	by := map[string]int{}
	involved := map[string]int{}
	for _, p := range pairs {
		if p.A == p.B {
			t.Fatalf("self pair %+v", p)
		}
		if p.A > p.B || p.ID != PairID(p.B, p.A) {
			t.Fatalf("pair not canonical: %+v", p)
		}
		if seen[p.ID] {
			t.Fatalf("duplicate pair %+v", p)
		}
		seen[p.ID] = true
		by[p.Stratum]++
		involved[p.A]++
		involved[p.B]++
		switch {
		case p.Stratum == StratumRandom && p.Rank != -1,
			p.Stratum == StratumNear && !(p.Rank >= 0 && p.Rank < 3),
			p.Stratum == StratumMid && !(p.Rank >= 3 && p.Rank < 10),
			p.Stratum == StratumFar && p.Rank < 10:
			t.Fatalf("stratum does not match rank: %+v", p)
		}
	}
	// Each sentence owns at most one pair per stratum, so no stratum has
	// more pairs than sentences; with this much linking, each is well used.
	for _, st := range Strata {
		if by[st] > len(sents) || by[st] < len(sents)/4 {
			t.Fatalf("stratum %s: %d pairs for %d sentences (%v)", st, by[st], len(sents), by)
		}
	}
	if len(involved) < len(sents)*9/10 {
		t.Fatalf("only %d of %d sentences are in a pair", len(involved), len(sents))
	}
	// Deterministic, and a different seed gives a different sample.
	again := runSampler(t, cfg, sents, rets)
	if fmt.Sprint(again) != fmt.Sprint(pairs) {
		t.Fatal("sampler is not deterministic")
	}
	cfg.Seed = 2
	if other := runSampler(t, cfg, sents, rets); fmt.Sprint(other) == fmt.Sprint(pairs) {
		t.Fatal("seed has no effect")
	}
}

func TestParseQuota(t *testing.T) {
	q, err := ParseQuota("near:2, random:3")
	if err != nil || q != [4]int{2, 0, 0, 3} {
		t.Fatalf("%v %v", q, err)
	}
	for _, bad := range []string{"near", "near:x", "close:1", "mid:-1"} {
		if _, err := ParseQuota(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

func TestSplitProportions(t *testing.T) {
	n := map[string]int{}
	for i := range 100000 {
		n[Split(PairID(fmt.Sprint(i), "x"))]++
	}
	if n["train"] < 97500 || n["dev"] < 800 || n["dev"] > 1200 || n["test"] < 800 || n["test"] > 1200 {
		t.Fatalf("split %v", n)
	}
}

// The exported score is the label clipped to [0, 1].
func TestScore(t *testing.T) {
	for label, want := range map[float32]float32{-0.7: 0, 0: 0, 0.42: 0.42, 1: 1, 1.3: 1} {
		if got := Score(label); got != want {
			t.Errorf("Score(%v) = %v, want %v", label, got, want)
		}
	}
}
