package harvestjob

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/ctxsim/ctxsim/pipelines/internal/settings"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/harvest"
)

// paperTopK is the paper's retrieval depth (--preset=default and paper).
const paperTopK = 20000

// WarnWholeCorpus warns, before a harvest or a refresh runs, when it is
// about to label every sentence of the corpus (--sample=1) at the paper's
// depth: the slowest run there is, and rarely the one meant on a first
// try. sentences is the corpus's number of sentences, or negative when
// unknown.
func WarnWholeCorpus(w io.Writer, job string, h settings.Harvest, sentences int64) {
	if !wholeCorpusAtDepth(h) {
		return
	}
	n := "every sentence of the corpus"
	if sentences >= 0 {
		n = fmt.Sprintf("all %d sentences of the corpus", sentences)
	}
	fmt.Fprintf(w, "warning: %s: labeling %s (--sample=1) at the paper's depth (top_k %d): the slowest run there is; "+
		"--sample=0.01 or --preset=small or demo gives a first result much sooner\n", job, n, h.Method.TopK)
}

// wholeCorpusAtDepth is WarnWholeCorpus's condition.
func wholeCorpusAtDepth(h settings.Harvest) bool {
	return h.Sample >= 1 && h.Method.TopK >= paperTopK && h.Method.NeedsContexts()
}

// SentenceCount is the number of rows of a sentences table, read from its
// manifest (no row is read); negative when it cannot be known cheaply.
func SentenceCount(ctx context.Context, glob string) int64 {
	dir := glob
	if strings.ContainsAny(path.Base(glob), "*?[") {
		dir = path.Dir(glob)
	}
	m, err := storage.CheckTable(ctx, dir)
	if err != nil {
		return -1
	}
	return m.Rows
}

// emptyStrata lists the strata that the quota asks pairs of but that got
// none.
func emptyStrata(sum harvest.Summary, quota string) []string {
	q, err := harvest.ParseQuota(quota)
	if err != nil {
		return nil
	}
	var empty []string
	for i, name := range harvest.Strata {
		if q[i] > 0 && sum.ByStratum[name] == 0 {
			empty = append(empty, name)
		}
	}
	return empty
}

// WarnEmptyStrata warns, after a harvest, of the strata that got no pair
// although --pair_quota asks for them: the labels then lack that kind of
// pair (near, mid and far pair a sentence with sampled sentences among its
// --pair_neighbours hits, which a small sample may not hold).
func WarnEmptyStrata(w io.Writer, sum harvest.Summary, h settings.Harvest) {
	empty := emptyStrata(sum, h.Quota)
	if len(empty) == 0 || sum.Labeled == 0 {
		return
	}
	more := fmt.Sprintf("a larger --sample (now %g) gives the sentences more sampled neighbours to pair with", h.Sample)
	if h.Sample >= 1 {
		more = "the corpus gives the sentences too few neighbours to pair with"
	}
	fmt.Fprintf(w, "warning: harvest: no pair in the %s %s (%s): %s; a larger --pair_neighbours (now %d) reaches further\n",
		strings.Join(empty, " and "), plural(len(empty), "stratum", "strata"), sum.StrataLine(), more, h.Neighbours)
}

// fewPairsPerSet is the pairs per context set below which a harvest at the
// paper's depth is told how to spread its sets' cost.
const fewPairsPerSet = 20

// WarnFewPairsPerSet notes, after a harvest at the paper's depth, when its
// sentences own few pairs each: a sentence's retrieval and context set are
// paid once however many pairs it owns, so at a few pairs a set they are
// most of what a pair costs, and a larger --pair_quota, not a larger
// --sample, brings the cost per pair down.
func WarnFewPairsPerSet(w io.Writer, sum harvest.Summary, h settings.Harvest) {
	if h.Method.TopK < paperTopK || !h.Method.NeedsContexts() || sum.ContextSets == 0 || sum.Labeled == 0 {
		return
	}
	per := float64(sum.Labeled) / float64(sum.ContextSets)
	if per >= fewPairsPerSet {
		return
	}
	fmt.Fprintf(w, "note: harvest: %.1f pairs per context set at the paper's depth (top_k %d), %.3g CPU seconds per pair: "+
		"a sentence's retrieval and context set are paid once however many pairs it owns; a larger --pair_quota (now %s) "+
		"spreads them (at near:4,mid:32,far:48,random:110, about 179 pairs a sentence, the default labeler cost 1.7 ms per pair on mixed-20m)\n",
		per, h.Method.TopK, sum.CPUSecondsPerPair, h.Quota)
}

// WarnUnknownRevision warns, before a job runs, when the running build
// records no source revision (harvest.UnknownRevision): the provenance of
// the job's outputs then cannot say what made them. `make build` stamps
// the revision even where GOFLAGS has -buildvcs=false.
func WarnUnknownRevision(w io.Writer, job string, t harvest.Tool) {
	if t.Revision != harvest.UnknownRevision {
		return
	}
	fmt.Fprintf(w, "warning: %s: this build records no source revision (built with -buildvcs=false or outside a git work tree, "+
		"and not by make build): its outputs' provenance says vcs_revision %q\n", job, harvest.UnknownRevision)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// warnBefore and warnAfter are the harvest's calls of the warnings.
func (c Config) warnBefore(ctx context.Context) {
	WarnUnknownRevision(os.Stderr, "harvest", harvest.ThisTool())
	if wholeCorpusAtDepth(c.Method) {
		WarnWholeCorpus(os.Stderr, "harvest", c.Method, SentenceCount(ctx, c.Sentences))
	}
}

func (c Config) warnAfter(sum harvest.Summary) {
	WarnEmptyStrata(os.Stderr, sum, c.Method)
	WarnFewPairsPerSet(os.Stderr, sum, c.Method)
}
