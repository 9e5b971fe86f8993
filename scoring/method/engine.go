package method

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/lexical"
)

// MaxTerms bounds the number of terms an engine's scorers compute.
const MaxTerms = 8

// Components are the terms of Eq. 3 for one (sentence, context), indexed as
// the engine's Terms.
type Components [MaxTerms]float32

// Cand is a candidate context for a sentence: slot Slot of chunk ChunkID,
// with the indices (in the Store) of the sentences left and right of it.
type Cand struct {
	ChunkID string
	Slot    int32
	// Rank is the chunk's position in the retrieval results, from 0.
	Rank        int32
	Left, Right []int32
	Comp        Components
	S           float32
	// ctx identifies the context in its store (contextID), 0 when unknown.
	ctx uint64
}

// contextID identifies slot i of the stored chunk c, never 0: one more
// than its place among all stored chunks' places (Store.Slots).
func contextID(c storedChunk, i int) uint64 { return uint64(c.base) + uint64(i) + 1 }

// Key identifies the context.
func (c *Cand) Key() string { return contextKey(c.ChunkID, c.Slot) }

func contextKey(chunk string, slot int32) string {
	return chunk + "#" + string(rune('0'+slot))
}

// termRef locates an engine term: scorer s, its term k.
type termRef struct{ s, k int }

// Engine scores sentences against contexts of the corpus with its scorers,
// one per model, and caches per (sentence, context) the terms of Eq. 3, so
// nothing is computed twice while the cache has room. It is safe for
// concurrent use.
type Engine struct {
	Store *Store
	// Window is the most context sentences on each side of a slot.
	Window int

	scorers []Scorer
	names   []string
	refs    []termRef
	index   map[string]int

	mu    sync.Mutex
	cache map[string]cached
	// CacheMax bounds the (sentence, context) cache; when full it is
	// emptied. Zero means 4M entries.
	CacheMax int
	// ExactRerank computes the rerank term exactly for every candidate,
	// as the bounded rerank (rerankBounded) does only for those that can
	// be kept. Both keep the same candidates with the same values; this
	// is for checking that.
	ExactRerank bool
	seed        maphash.Seed
	stats       Stats

	lexOnce [2]sync.Once
	lex     [2]*lexical.TFIDF

	// reference are the models' reference contexts (see RefStats).
	reference []Cand
	refCache  map[string][2]float64
	// refBusy holds the reference statistics being computed, by key, so
	// that a second caller waits for them instead of computing (and
	// counting) them again.
	refBusy map[string]chan struct{}

	// whiteSample are the models' whitening contexts (white.json); white
	// is Eq. 4's whitening under zwhite over them (see white.go), built
	// once; whiteVecs caches W f(s) by sentence.
	whiteSample []Cand
	whiteOnce   sync.Once
	white       *whitening
	whiteMu     sync.Mutex
	whiteVecs   map[string]whiteVec
}

type cached struct {
	comp Components
	have uint64 // bit k: term k is computed
}

// Stats counts the work an Engine did, or one call's share of it.
type Stats struct {
	SentencesEncoded int64 // sentences through an encoder (BiLSTM or context model)
	DiscPairs        int64 // (sentence, context) pairs through the coherence head
	GenEvals         int64 // sequence log-likelihoods computed
	CtxPairs         int64 // (sentence, context) pairs scored by the context model
	CacheHits        int64 // (sentence, context, term) found in the cache
}

// NewEngine returns an engine over the stored chunks whose contexts hold up
// to window sentences on each side, scoring with the given scorers. Two
// scorers may not compute a term of the same name.
func NewEngine(st *Store, window int, scorers ...Scorer) (*Engine, error) {
	e := &Engine{Store: st, Window: window, scorers: scorers, index: map[string]int{},
		cache: map[string]cached{}, seed: maphash.MakeSeed()}
	for si, sc := range scorers {
		for k, name := range sc.Terms() {
			if _, dup := e.index[name]; dup {
				return nil, fmt.Errorf("harvest: two scorers compute the term %q", name)
			}
			e.index[name] = len(e.names)
			e.names = append(e.names, name)
			e.refs = append(e.refs, termRef{si, k})
		}
	}
	if len(e.names) > MaxTerms {
		return nil, fmt.Errorf("harvest: %d terms, at most %d", len(e.names), MaxTerms)
	}
	return e, nil
}

// Terms names the terms the engine can compute, in the order of
// Components.
func (e *Engine) Terms() []string { return e.names }

// Term returns the index of the named term, or false.
func (e *Engine) Term(name string) (int, bool) {
	k, ok := e.index[name]
	return k, ok
}

// weights returns the λ of each engine term; terms the engine lacks are
// ignored (Check reports them).
func (e *Engine) weights(lambda map[string]float64) (w [MaxTerms]float64, want uint64) {
	for name, l := range lambda {
		if k, ok := e.index[name]; ok && l != 0 {
			w[k] = l
			want |= 1 << k
		}
	}
	return w, want
}

// Check reports settings that name a term none of the engine's scorers
// computes (its model was not loaded), or that read Eq. 4 as "zref"
// without reference contexts. The lexical labeler needs no model.
func (e *Engine) Check(st Settings) error {
	if !st.NeedsContexts() {
		return nil
	}
	if st.Similarity == SimilarityZRef && len(e.reference) < 2 {
		return fmt.Errorf("harvest: similarity %q needs the models' reference contexts (%s), which the model directory lacks; "+
			"train the models again with bin/train, or choose --similarity=pearson", SimilarityZRef, ReferenceFile)
	}
	if Whitened(st.Similarity) {
		if _, err := e.whiteScorer(st); err != nil {
			return err
		}
		if len(e.whiteSample) < 2 {
			return fmt.Errorf("harvest: similarity %q needs the models' whitening contexts (%s), which the model directory lacks; "+
				"write them with bin/train --contexts_only (the training's --input and --seed), or choose --similarity=%s",
				st.Similarity, WhiteFile, SimilarityZRef)
		}
	}
	if (st.Labeler == LabelerEnsemble || st.Labeler == LabelerAligned) && (e.embedder() == nil || e.aligner() == nil) {
		return fmt.Errorf("harvest: labeler %q needs a model that compares sentences on their own (the contrastive model, ctx), "+
			"which is not loaded; train it (bin/train --models=ctx) or choose --labeler=%s", st.Labeler, LabelerHybrid)
	}
	for _, name := range st.TermsUsed() {
		if _, ok := e.index[name]; !ok {
			have := "none"
			if len(e.names) > 0 {
				have = strings.Join(e.names, ", ")
			}
			return fmt.Errorf("harvest: the settings use the term %q, but no loaded model computes it (loaded terms: %s); "+
				"train its model (bin/train --models) or change --lambda/--rerank_by", name, have)
		}
	}
	return nil
}

// embedder returns the first scorer that embeds sentences, or nil.
func (e *Engine) embedder() Embedder {
	for _, sc := range e.scorers {
		if em, ok := sc.(Embedder); ok {
			return em
		}
	}
	return nil
}

func (e *Engine) aligner() Aligner {
	for _, sc := range e.scorers {
		if al, ok := sc.(Aligner); ok {
			return al
		}
	}
	return nil
}

// Aligned is the word alignment of sentences a and b under the first
// scorer that aligns words (Aligner), and false when none does.
func (e *Engine) Aligned(a, b string) (float64, bool) {
	al := e.aligner()
	if al == nil {
		return 0, false
	}
	return al.AlignSimilarity(a, b), true
}

// Embedded is the similarity of sentences a and b under the first scorer
// that embeds sentences (Embedder), and false when none does.
func (e *Engine) Embedded(a, b string) (float64, bool) {
	em := e.embedder()
	if em == nil {
		return 0, false
	}
	return em.SentenceSimilarity(a, b), true
}

// DropScoreCache gives back the memory of the (sentence, context) cache:
// for a process whose next work scores other pairs (a harvest's waves
// after its context sets), where the entries would only be kept.
func (e *Engine) DropScoreCache() {
	e.mu.Lock()
	e.cache = map[string]cached{}
	e.mu.Unlock()
}

// Stats returns the counts so far.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stats
}

// Candidates expands retrieved chunks, in order, into their contexts: every
// slot with at least one sentence on each side (the models are trained on
// such slots). Chunks missing from the store are counted in missing.
func (e *Engine) Candidates(hits []schemas.Hit) (cands []Cand, missing int) {
	// Room for four contexts a chunk (a chunk of six sentences, the
	// default, has four): at the method's 20,000 chunks, growing the slice
	// as it filled took about 40% of this function.
	cands = make([]Cand, 0, 4*len(hits))
	for r, h := range hits {
		c, ok := e.Store.chunk(h.ChunkID)
		if !ok {
			missing++
			continue
		}
		for i := 1; i+1 < len(c.sents); i++ {
			cands = append(cands, e.cand(h.ChunkID, int32(r), c, i))
		}
	}
	return cands, missing
}

func (e *Engine) cand(id string, rank int32, c storedChunk, i int) Cand {
	w := max(e.Window, 1)
	return Cand{ChunkID: id, Slot: int32(i), Rank: rank,
		Left: c.sents[max(0, i-w):i], Right: c.sents[i+1 : min(len(c.sents), i+1+w)], ctx: contextID(c, i)}
}

// Resolve turns context references, whose term values are named by terms,
// into candidates. A term the engine does not know is an error.
func (e *Engine) Resolve(refs []schemas.ScoredContext, terms []string) ([]Cand, error) {
	idx := make([]int, len(terms))
	for j, name := range terms {
		k, ok := e.index[name]
		if !ok {
			return nil, fmt.Errorf("harvest: context set has the term %q, which no loaded model computes", name)
		}
		idx[j] = k
	}
	out := make([]Cand, len(refs))
	for i, r := range refs {
		c, ok := e.Store.chunk(r.ChunkID)
		if !ok {
			return nil, fmt.Errorf("harvest: context chunk %s is not in the chunk store", r.ChunkID)
		}
		if r.Slot < 1 || int(r.Slot)+1 >= len(c.sents) {
			return nil, fmt.Errorf("harvest: chunk %s has no context slot %d", r.ChunkID, r.Slot)
		}
		if len(r.Terms) != len(terms) {
			return nil, fmt.Errorf("harvest: context %s#%d has %d term values for %d terms", r.ChunkID, r.Slot, len(r.Terms), len(terms))
		}
		out[i] = e.cand(r.ChunkID, int32(i), c, int(r.Slot))
		out[i].S = r.Score
		for j, k := range idx {
			out[i].Comp[k] = r.Terms[j]
		}
	}
	return out, nil
}

// Ref is the record form of a scored candidate, with the values of the
// engine terms idx.
func (c *Cand) Ref(idx []int) schemas.ScoredContext {
	r := schemas.ScoredContext{ChunkID: c.ChunkID, Slot: c.Slot, Score: c.S, Terms: make([]float32, len(idx))}
	for j, k := range idx {
		r.Terms[j] = c.Comp[k]
	}
	return r
}

// cacheKey identifies (sentence, context) in the cache.
func (e *Engine) cacheKey(sHash uint64, c *Cand) string {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], sHash)
	return string(b[:]) + c.Key()
}

// compute runs the scorers for the terms in need[i] of each candidate
// (a bitmask over the engine's terms), writing them into Comp.
func (e *Engine) compute(s string, cands []Cand, need []uint64, work *Stats) {
	e.computeMany([]ScoreJob{{S: s, Cands: cands}}, [][]uint64{need}, work)
}

// computeMany is compute for several sentences at once: each scorer is
// called once for all of them when it is a BatchScorer.
func (e *Engine) computeMany(jobs []ScoreJob, need [][]uint64, work *Stats) {
	var items []ScoreItem
	var owner []int // job of each item
	for si, sc := range e.scorers {
		nt := len(sc.Terms())
		items, owner = items[:0], owner[:0]
		for j, job := range jobs {
			var want []uint64
			some := false
			for i := range job.Cands {
				var w uint64
				for k, ref := range e.refs {
					if ref.s == si && need[j][i]&(1<<k) != 0 {
						w |= 1 << ref.k
					}
				}
				if w != 0 && want == nil {
					want = make([]uint64, len(job.Cands))
				}
				if want != nil {
					want[i] = w
				}
				some = some || w != 0
			}
			if !some {
				continue
			}
			out := make([][]float32, nt)
			for k := range out {
				out[k] = make([]float32, len(job.Cands))
			}
			items = append(items, ScoreItem{S: job.S, Cands: job.Cands, Want: want, Out: out})
			owner = append(owner, j)
		}
		if len(items) == 0 {
			continue
		}
		if bs, ok := sc.(BatchScorer); ok && len(items) > 1 {
			bs.ScoreBatch(items, work)
		} else {
			for _, it := range items {
				sc.Score(it.S, it.Cands, it.Want, it.Out, work)
			}
		}
		for n, it := range items {
			j := owner[n]
			for k, ref := range e.refs {
				if ref.s != si {
					continue
				}
				for i := range it.Cands {
					if need[j][i]&(1<<k) != 0 {
						it.Cands[i].Comp[k] = it.Out[ref.k][i]
					}
				}
			}
		}
	}
}

// ScoreJob is a sentence and candidate contexts to score it in.
type ScoreJob struct {
	S     string
	Cands []Cand
}

// Score fills the terms of Eq. 3 for sentence s and each candidate, for
// the terms whose λ is not zero (the others are left as they are), taking
// what it can from the cache and computing the rest, and sets S.
//
// It returns the work done by this call.
func (e *Engine) Score(s string, cands []Cand, lambda map[string]float64) Stats {
	return e.ScoreMany([]ScoreJob{{S: s, Cands: cands}}, lambda)
}

// ScoreMany is Score for several sentences in one call: what the cache
// lacks is computed together, so that scorers that batch across sentences
// (BatchScorer) fill their batches and share work between sentences, and a
// (sentence, context) asked for twice is computed once. The scores are
// those Score gives each job alone.
func (e *Engine) ScoreMany(jobs []ScoreJob, lambda map[string]float64) Stats {
	var work Stats
	w, want := e.weights(lambda)
	keys := make([][]string, len(jobs))
	need := make([][]uint64, len(jobs))
	type at struct{ j, i int }
	first := map[string]at{} // the computing candidate of each key
	var dups []at
	e.mu.Lock()
	for j, job := range jobs {
		sHash := maphash.String(e.seed, job.S)
		keys[j] = make([]string, len(job.Cands))
		need[j] = make([]uint64, len(job.Cands))
		for i := range job.Cands {
			c := &job.Cands[i]
			keys[j][i] = e.cacheKey(sHash, c)
			got := e.cache[keys[j][i]]
			for k := range len(e.names) {
				if got.have&(1<<k) != 0 {
					c.Comp[k] = got.comp[k]
					if want&(1<<k) != 0 {
						work.CacheHits++
					}
				}
			}
			need[j][i] = want &^ got.have
			if need[j][i] == 0 {
				continue
			}
			if f, ok := first[keys[j][i]]; ok && need[j][i]&^need[f.j][f.i] == 0 {
				dups = append(dups, at{j, i})
				need[j][i] = 0
				continue
			}
			first[keys[j][i]] = at{j, i}
		}
	}
	e.mu.Unlock()

	e.computeMany(jobs, need, &work)
	for _, d := range dups {
		f := first[keys[d.j][d.i]]
		m := need[f.j][f.i]
		src, dst := &jobs[f.j].Cands[f.i], &jobs[d.j].Cands[d.i]
		for k := range len(e.names) {
			if m&(1<<k) != 0 {
				dst.Comp[k] = src.Comp[k]
			}
		}
	}
	e.mu.Lock()
	e.stats.add(work)
	limit := e.CacheMax
	if limit <= 0 {
		limit = 4 << 20
	}
	if len(e.cache) > limit {
		clear(e.cache)
	}
	for j, job := range jobs {
		for i := range job.Cands {
			if need[j][i] == 0 {
				continue
			}
			got := e.cache[keys[j][i]]
			for k := range len(e.names) {
				if need[j][i]&(1<<k) != 0 {
					got.comp[k] = job.Cands[i].Comp[k]
				}
			}
			got.have |= need[j][i]
			e.cache[keys[j][i]] = got
		}
	}
	e.mu.Unlock()
	for _, job := range jobs {
		for i := range job.Cands {
			var sum float64
			for k := range len(e.names) {
				sum += w[k] * float64(job.Cands[i].Comp[k])
			}
			job.Cands[i].S = float32(sum)
		}
	}
	return work
}

// rerank keeps the n candidates with the best term k (ties broken by
// retrieval order), in that order, and caches their term k. Through a
// boundedScorer it computes the term exactly only for the candidates that
// can be kept (rerankBounded); otherwise, or with ExactRerank, for all
// (keepBest). Both give the same candidates and values.
func (e *Engine) rerank(s string, cands []Cand, k, n int, work *Stats) []Cand {
	if ref := e.refs[k]; !e.ExactRerank && ref.k == 0 {
		if bs, ok := e.scorers[ref.s].(boundedScorer); ok {
			if kept, ok := e.rerankBounded(bs, s, cands, k, n, work); ok {
				return kept
			}
		}
	}
	return e.keepBest(s, cands, k, n, work)
}

// keepBest computes term k of every candidate exactly (without caching
// it) and returns the n best in order, ties broken by position in cands;
// the kept candidates' term k is cached.
func (e *Engine) keepBest(s string, cands []Cand, k, n int, work *Stats) []Cand {
	var w Stats
	need := make([]uint64, len(cands))
	for i := range need {
		need[i] = 1 << k
	}
	e.compute(s, cands, need, &w)
	e.mu.Lock()
	e.stats.add(w)
	e.mu.Unlock()
	work.add(w)
	// The order of a stable sort by the term, best first, sorting indices
	// rather than the candidates themselves (which are large).
	order := make([]int32, len(cands))
	score := make([]float32, len(cands))
	for i := range order {
		order[i] = int32(i)
		score[i] = cands[i].Comp[k]
	}
	slices.SortFunc(order, func(x, y int32) int {
		if c := cmp.Compare(score[y], score[x]); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	kept := make([]Cand, min(n, len(cands)))
	for i := range kept {
		kept[i] = cands[order[i]]
	}
	e.remember(s, kept, 1<<k)
	return kept
}

// remember caches the terms in mask of sentence s for cands, as computed
// outside Score.
func (e *Engine) remember(s string, cands []Cand, mask uint64) {
	sHash := maphash.String(e.seed, s)
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range cands {
		key := e.cacheKey(sHash, &cands[i])
		got := e.cache[key]
		for k := range len(e.names) {
			if mask&(1<<k) != 0 {
				got.comp[k] = cands[i].Comp[k]
			}
		}
		got.have |= mask
		e.cache[key] = got
	}
}

func (s *Stats) add(o Stats) {
	s.SentencesEncoded += o.SentencesEncoded
	s.DiscPairs += o.DiscPairs
	s.GenEvals += o.GenEvals
	s.CtxPairs += o.CtxPairs
	s.CacheHits += o.CacheHits
}

// RefStats returns the mean and standard deviation of S(s, c) (Eq. 3 with
// weights lambda) over the engine's reference contexts, and the work done.
// The two numbers are cached per sentence and weights; the scores behind
// them are not.
func (e *Engine) RefStats(s string, lambda map[string]float64) (mean, std float64, work Stats) {
	w, want := e.weights(lambda)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], maphash.String(e.seed, s))
	key := string(b[:]) + FormatLambda(lambda)
	e.mu.Lock()
	for {
		if got, ok := e.refCache[key]; ok {
			e.mu.Unlock()
			return got[0], got[1], work
		}
		busy, ok := e.refBusy[key]
		if !ok {
			break
		}
		e.mu.Unlock()
		<-busy
		e.mu.Lock()
	}
	if e.refBusy == nil {
		e.refBusy = map[string]chan struct{}{}
	}
	done := make(chan struct{})
	e.refBusy[key] = done
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.refBusy, key)
		e.mu.Unlock()
		close(done)
	}()
	cands := make([]Cand, len(e.reference))
	copy(cands, e.reference)
	need := make([]uint64, len(cands))
	for i := range need {
		need[i] = want
	}
	e.compute(s, cands, need, &work)
	scores := make([]float64, len(cands))
	for i, c := range cands {
		for k := range len(e.names) {
			scores[i] += w[k] * float64(c.Comp[k])
		}
		scores[i] = float64(float32(scores[i])) // as S is stored
		mean += scores[i]
	}
	mean /= float64(max(len(cands), 1))
	for _, x := range scores {
		std += (x - mean) * (x - mean)
	}
	std = math.Sqrt(std / float64(max(len(cands), 1)))
	e.mu.Lock()
	if e.refCache == nil || len(e.refCache) > 1<<20 {
		e.refCache = map[string][2]float64{}
	}
	e.refCache[key] = [2]float64{mean, std}
	e.stats.add(work)
	e.mu.Unlock()
	return mean, std, work
}

// Lexical returns the unigram TF-IDF over the stored chunks (each chunk a
// document), of words or, with stem, of their Porter stems; it is counted
// once, on first use.
func (e *Engine) Lexical(stem bool) *lexical.TFIDF {
	i := 0
	if stem {
		i = 1
	}
	e.lexOnce[i].Do(func() { e.lex[i] = e.Store.TFIDF(stem) })
	return e.lex[i]
}

// SortByS orders candidates by S, best first; ties keep their order.
func SortByS(cands []Cand) {
	slices.SortStableFunc(cands, func(a, b Cand) int { return cmp.Compare(b.S, a.S) })
}

// BuildSet selects C_s from candidates sorted by S: it adds them one at a
// time, up to size; with diversity on, each chunk contributes at most one
// context and a candidate whose sentence c_{i-1} has Jaccard similarity
// >= maxJaccard with that of an already selected context is skipped.
func (e *Engine) BuildSet(sorted []Cand, size int, diversity bool, maxJaccard float64) []Cand {
	keep := selectSet(len(sorted), func(i int) string { return sorted[i].ChunkID },
		func(i int) []uint32 { return e.Store.wordIDs(sorted[i].Left[len(sorted[i].Left)-1]) },
		size, diversity, maxJaccard)
	out := make([]Cand, len(keep))
	for j, i := range keep {
		out[j] = sorted[i]
	}
	return out
}

// selectSet is BuildSet over n candidates sorted by S, given each one's
// chunk ID and the sorted, distinct word IDs of its sentence c_{i-1}: the
// indices of the candidates kept, in order.
func selectSet(n int, chunk func(i int) string, words func(i int) []uint32, size int, diversity bool, maxJaccard float64) []int {
	out := make([]int, 0, min(size, n))
	if !diversity {
		for i := range min(size, n) {
			out = append(out, i)
		}
		return out
	}
	chunks := map[string]bool{}
	var d diverseSets
	for i := range n {
		if len(out) >= size {
			break
		}
		id := chunk(i)
		if chunks[id] {
			continue
		}
		if !d.add(words(i), maxJaccard) {
			continue
		}
		chunks[id] = true
		out = append(out, i)
	}
	return out
}

// diverseSets holds the word sets accepted so far, with which sets hold
// each word, so that a new set's overlap with every accepted set is
// counted by walking its own words' lists rather than merging it with
// each accepted set in turn.
type diverseSets struct {
	holders map[uint32][]int32 // word -> the accepted sets that hold it
	sizes   []int32
	counts  []int32 // scratch: words in common, by accepted set
	touched []int32
	empty   bool // an accepted set is empty
}

// add accepts the sorted, distinct word IDs w unless some accepted set p
// has jaccardAtLeast(w, p, t), and reports whether it did: the same
// decision as calling jaccardAtLeast against every accepted set (t > 0).
func (d *diverseSets) add(w []uint32, t float64) bool {
	if d.holders == nil {
		d.holders = map[uint32][]int32{}
	}
	ok := true
	if len(w) == 0 {
		// Two empty sets have similarity 1; an empty and a non-empty one 0.
		ok = !(d.empty && 1 >= t)
	} else {
		d.touched = d.touched[:0]
		for _, x := range w {
			for _, j := range d.holders[x] {
				if d.counts[j] == 0 {
					d.touched = append(d.touched, j)
				}
				d.counts[j]++
			}
		}
		// A set sharing no word has similarity 0 < t.
		for _, j := range d.touched {
			inter := int(d.counts[j])
			if ok && float64(inter)/float64(len(w)+int(d.sizes[j])-inter) >= t {
				ok = false
			}
			d.counts[j] = 0
		}
	}
	if !ok {
		return false
	}
	j := int32(len(d.sizes))
	for _, x := range w {
		d.holders[x] = append(d.holders[x], j)
	}
	d.sizes = append(d.sizes, int32(len(w)))
	d.counts = append(d.counts, 0)
	d.empty = d.empty || len(w) == 0
	return true
}

// wordSet is the set of distinct words of s (lexical.Words).
func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range lexical.Words(s) {
		out[w] = true
	}
	return out
}

// jaccardAtLeast reports whether the Jaccard similarity of the sorted,
// distinct word IDs a and b is at least t (two empty sets have similarity
// 1). Sets whose sizes alone bound the similarity below t are not merged.
func jaccardAtLeast(a, b []uint32, t float64) bool {
	if len(a) == 0 && len(b) == 0 {
		return 1 >= t
	}
	lo, hi := min(len(a), len(b)), max(len(a), len(b))
	// |a∩b| <= lo and |a∪b| >= hi, so the similarity is at most lo/hi.
	if float64(lo)/float64(hi) < t {
		return false
	}
	inter, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			inter++
			i++
			j++
		}
	}
	return float64(inter)/float64(len(a)+len(b)-inter) >= t
}
