package method

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/lexical"
)

// The method over a corpus split into parts (resources.Part), for workers
// that each hold one part: each step is computed on every part and merged,
// and the result is the one an engine over the whole corpus gives.
//
//   - Context sets: each part ranks and scores the candidates of its own
//     chunks among the sentence's retrieved ones (PartCandidates); the
//     best R of the whole are among the parts' best R, so merging the
//     parts' lists and selecting C_s from them (MergeSet) gives the set
//     ContextSet builds over the whole store, context for context and
//     score for score.
//   - Labels: each part adds the contexts of C_a and C_b that it holds to
//     a pair's sums of Eq. 4 (LabelPart); Sums add over any split of C.
//     Only the order of the additions differs from the whole corpus's.
//   - The stemmed TF-IDF of the label's lexical part counts each part's
//     chunks (Store.TFIDF), and the counts add (AddTFIDF, UseLexical).

// PartCand is a candidate context of a sentence in one part of the corpus,
// with what merging the parts' candidates needs.
type PartCand struct {
	// Ref is the context with its score S and the values of the set's
	// terms (Engine.SetTerms), as a context set records it.
	Ref schemas.ScoredContext
	// Rank is the chunk's place in the sentence's whole retrieval.
	Rank int32
	// Rerank is the value of the rerank term (0 without one).
	Rerank float32
	// Words are the distinct words of the context's sentence c_{i-1},
	// sorted: the diversity constraint's word set.
	Words []string
}

// PartCandidates is the share of one part of the corpus in ContextSet: the
// candidates of the retrieved chunks (hits, the whole retrieval) that this
// engine's store holds, ranked by the rerank term with the best R kept,
// and scored with Eq. 3. Hits of other parts are counted in
// SetInfo.MissingChunks. Random contexts are not drawn from parts.
func (e *Engine) PartCandidates(s string, hits []schemas.Hit, st Settings) ([]PartCand, SetInfo, error) {
	info := SetInfo{Hits: len(hits)}
	if st.RandomContexts {
		return nil, info, fmt.Errorf("random contexts are drawn from the whole corpus, not from its parts")
	}
	cands, missing := e.Candidates(hits)
	info.MissingChunks, info.Candidates = missing, len(cands)
	k, rerank := e.index[st.RerankBy]
	if rerank && len(cands) > 0 {
		cands = e.rerank(s, cands, k, st.Rerank, &info.Work)
	}
	info.Reranked = len(cands)
	info.Work.add(e.Score(s, cands, st.Lambda))
	_, idx := e.SetTerms(st)
	out := make([]PartCand, len(cands))
	for i := range cands {
		c := &cands[i]
		out[i] = PartCand{Ref: c.Ref(idx), Rank: c.Rank, Words: sortedWords(e.Store.Text(c.Left[len(c.Left)-1]))}
		if rerank {
			out[i].Rerank = c.Comp[k]
		}
	}
	return out, info, nil
}

// sortedWords is wordSet of s as a sorted list.
func sortedWords(s string) []string {
	set := wordSet(s)
	out := make([]string, 0, len(set))
	for w := range set {
		out = append(out, w)
	}
	slices.Sort(out)
	return out
}

// MergeSet selects C_s from the parts' candidates of one sentence
// (PartCandidates on every part, or KeepBest of them): the best R by the
// rerank term (ties by retrieval order), sorted by S, then selected under
// the diversity constraints, as ContextSet does over the whole store.
// rerank says whether the settings rerank by a term the engines know
// (Engine.Term).
func MergeSet(parts [][]PartCand, st Settings, rerank bool) []schemas.ScoredContext {
	all := KeepBest(parts, st, rerank)
	slices.SortStableFunc(all, func(a, b PartCand) int { return cmp.Compare(b.Ref.Score, a.Ref.Score) })
	ids := map[string]uint32{}
	words := func(i int) []uint32 {
		out := make([]uint32, len(all[i].Words))
		for j, w := range all[i].Words {
			id, ok := ids[w]
			if !ok {
				id = uint32(len(ids))
				ids[w] = id
			}
			out[j] = id
		}
		slices.Sort(out)
		return out
	}
	keep := selectSet(len(all), func(i int) string { return all[i].Ref.ChunkID }, words, st.SetSize, st.Diversity, st.MaxJaccard)
	out := make([]schemas.ScoredContext, len(keep))
	for j, i := range keep {
		out[j] = all[i].Ref
	}
	return out
}

// KeepBest merges candidates of one sentence from several parts (or from
// earlier merges) into the best R by the rerank term, ties broken by
// retrieval order and slot, in that order; without rerank it keeps them
// all, in retrieval order. The order is total, so merging parts in turn
// (KeepBest of an earlier KeepBest and the next part) keeps what merging
// them at once does.
func KeepBest(parts [][]PartCand, st Settings, rerank bool) []PartCand {
	var all []PartCand
	for _, p := range parts {
		all = append(all, p...)
	}
	// The order of the candidates over the whole store: retrieval order,
	// then slot.
	slices.SortFunc(all, func(a, b PartCand) int {
		if c := cmp.Compare(a.Rank, b.Rank); c != 0 {
			return c
		}
		return cmp.Compare(a.Ref.Slot, b.Ref.Slot)
	})
	if rerank {
		slices.SortStableFunc(all, func(a, b PartCand) int { return cmp.Compare(b.Rerank, a.Rerank) })
		all = all[:min(len(all), st.Rerank)]
	}
	return all
}

// ResolveIn is Resolve for the contexts of refs whose chunks has reports
// true for (those of this engine's part of the corpus), in their order;
// the others are left out.
func (e *Engine) ResolveIn(refs []schemas.ScoredContext, terms []string, has func(chunkID string) bool) ([]Cand, error) {
	mine := make([]schemas.ScoredContext, 0, len(refs))
	for _, r := range refs {
		if has(r.ChunkID) {
			mine = append(mine, r)
		}
	}
	return e.Resolve(mine, terms)
}

// LabelPart adds to sums the share of this engine's part of the corpus in
// Eq. 4 for the pair (a, b): the contexts of C_a and then of C_b \ C_a
// that the part holds (setA and setB, resolved by ResolveIn), as the two
// sides of LabelSide add them. Added over every part (Sums.Add), the sums
// are those of the whole C but for the order of their additions.
func (e *Engine) LabelPart(a, b string, setA, setB []Cand, st Settings, sums *Sums) (Stats, error) {
	var work Stats
	w, err := e.LabelSide(e.NewSide(a, setA), []SideJob{{Other: b, Sums: sums}}, true, st)
	work.add(w)
	if err != nil {
		return work, err
	}
	var skip []byte
	if len(setA) > 0 {
		if skip, err = e.SetSkip(setA); err != nil {
			return work, err
		}
	}
	w, err = e.LabelSide(e.NewSide(b, setB), []SideJob{{Other: a, Skip: skip, Sums: sums}}, false, st)
	work.add(w)
	return work, err
}

// Add adds the sums of other contexts of the same pair.
func (s *Sums) Add(o Sums) {
	s.N += o.N
	s.A += o.A
	s.B += o.B
	s.AA += o.AA
	s.BB += o.BB
	s.AB += o.AB
}

// AddTFIDF adds the document counts of o, counted over other chunks of the
// same corpus, to t's (t.Stem and o.Stem must agree).
func AddTFIDF(t, o *lexical.TFIDF) error {
	if t.Stem != o.Stem {
		return fmt.Errorf("the TF-IDF of words and that of stems do not add")
	}
	t.N += o.N
	for w, n := range o.DF {
		t.DF[w] += n
	}
	return nil
}

// UseLexical makes t the engine's TF-IDF (of stems when t.Stem), in place
// of counting its own store's: the whole corpus's counts for an engine over
// one part. It has no effect once the engine has counted its own.
func (e *Engine) UseLexical(t *lexical.TFIDF) {
	i := 0
	if t.Stem {
		i = 1
	}
	e.lexOnce[i].Do(func() { e.lex[i] = t })
}
