package gen

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/nn"
)

// mixedTargets is requests whose targets range from 1 to maxTgt tokens,
// in all three directions, some sharing a context.
func mixedTargets(tok wordTok, n, maxTgt int, r *rand.Rand) []Request {
	words := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = string(rune('a' + r.IntN(26)))
		}
		return strings.Join(w, " ")
	}
	shared := examples.Context{Left: []string{words(5)}, Right: []string{words(4)}}
	reqs := make([]Request, n)
	for i := range reqs {
		ctx := examples.Context{Left: []string{words(1 + r.IntN(maxTgt))}, Right: []string{words(1 + r.IntN(maxTgt))}}
		if i%5 == 0 {
			ctx = shared
		}
		dir := []examples.Direction{examples.ToSentence, examples.ToLeft, examples.ToRight}[i%3]
		reqs[i] = NewRequest(tok, ctx, words(1+r.IntN(maxTgt)), dir)
	}
	return reqs
}

// TestDecodeInGroups checks that decoding a batch in groups of similar
// target length gives the scores of one padded pass, bit for bit, on a
// batch that is split, at a tiny size and at one whose products span
// several kernel tiles, in float32 and (where the CPU has it) bfloat16,
// with every Gemm backend of the build: the pure-Go one decodes in groups,
// OpenBLAS (whose rows may depend on a product's height) in one pass.
func TestDecodeInGroups(t *testing.T) {
	defer func() { decodeInGroups = true }()
	backends := []string{"go"}
	if nn.CheckBackend("openblas") == nil {
		backends = []string{"openblas", "go"}
	}
	defer nn.SetBackend(backends[0])
	for _, backend := range backends {
		if err := nn.SetBackend(backend); err != nil {
			t.Fatal(err)
		}
		if got, want := nn.RowExact(), backend == "go"; got != want {
			t.Fatalf("backend %s: RowExact() = %v, want %v", backend, got, want)
		}
		cfgs := []Config{tinyConfig(), {Vocab: 200, Dim: 64, Heads: 4, FF: 256, EncLayers: 2, DecLayers: 2,
			MaxSrc: 80, MaxTgt: 40, MaxSegments: 5}}
		for ci, cfg := range cfgs {
			for _, prec := range []string{PrecisionFP32, PrecisionBF16} {
				if CheckPrecision(prec) == nil {
					checkDecodeInGroups(t, backend, ci, cfg, prec)
				}
			}
		}
	}
}

// checkDecodeInGroups is TestDecodeInGroups for one backend, config and
// precision.
func checkDecodeInGroups(t *testing.T, backend string, ci int, cfg Config, prec string) {
	t.Helper()
	m, err := New(cfg, 21)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetPrecision(prec); err != nil {
		t.Fatal(err)
	}
	tok := wordTok{cfg.Vocab}
	reqs := mixedTargets(tok, 2*ScoreBatch+7, cfg.MaxTgt, rand.New(rand.NewPCG(uint64(ci), 3)))
	// The first batch of the sorted requests must be split, or the test
	// compares one pass with itself.
	seqs := make([]seq, ScoreBatch)
	for i := range seqs {
		seqs[i] = m.layout(&reqs[i])
	}
	b := newBatch(seqs, true)
	lens := make([]int, b.n)
	for _, o := range b.owner {
		lens[o]++
	}
	if g := targetGroups(lens, b.uniq, b.ts); len(g) < 2 {
		t.Fatalf("config %d: a batch of targets of 1 to %d tokens is not split", ci, cfg.MaxTgt)
	}
	decodeInGroups = true
	grouped := m.Score(reqs)
	decodeInGroups = false
	one := m.Score(reqs)
	decodeInGroups = true
	for i := range reqs {
		if math.Float32bits(grouped[i]) != math.Float32bits(one[i]) {
			t.Errorf("%s config %d %s request %d: in groups %v, in one pass %v", backend, ci, prec, i, grouped[i], one[i])
		}
	}
}

// TestTargetGroups checks that the groups cover every request once, in
// order of target length, and cost no more than one group; and that equal
// lengths stay in one group.
func TestTargetGroups(t *testing.T) {
	work := func(lens, blocks []int, ts int, groups [][]int) float64 {
		w := 0.0
		for _, g := range groups {
			longest, seen := 0, map[int]bool{}
			for _, i := range g {
				longest = max(longest, lens[i])
				seen[blocks[i]] = true
			}
			w += float64(len(g)*longest+groupRows) + kvShare*float64(len(seen)*ts)
		}
		return w
	}
	r := rand.New(rand.NewPCG(5, 5))
	for trial := range 200 {
		n := 1 + r.IntN(64)
		lens, blocks := make([]int, n), make([]int, n)
		all := make([]int, n)
		for i := range lens {
			lens[i] = 1 + r.IntN(1+r.IntN(40))
			blocks[i] = r.IntN(1 + r.IntN(n))
			all[i] = i
		}
		ts := 1 + r.IntN(80)
		groups := targetGroups(lens, blocks, ts)
		if groups == nil {
			continue
		}
		var got []int
		prev := 0
		for _, g := range groups {
			if len(g) == 0 {
				t.Fatalf("trial %d: an empty group in %v", trial, groups)
			}
			for _, i := range g {
				if lens[i] < prev {
					t.Fatalf("trial %d: groups %v not in order of length %v", trial, groups, lens)
				}
				prev = lens[i]
			}
			got = append(got, g...)
		}
		slices.Sort(got)
		if !slices.Equal(got, all) {
			t.Fatalf("trial %d: groups %v do not cover 0..%d once", trial, groups, n-1)
		}
		if w, one := work(lens, blocks, ts, groups), work(lens, blocks, ts, [][]int{all}); w > one {
			t.Errorf("trial %d: groups %v cost %v, one group %v", trial, groups, w, one)
		}
	}
	same := make([]int, 64)
	for i := range same {
		same[i] = 20
	}
	if g := targetGroups(same, make([]int, 64), 60); g != nil {
		t.Errorf("equal lengths split into %v", g)
	}
}
