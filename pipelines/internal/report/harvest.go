package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/ctxsim/ctxsim/schemas"
	"gonum.org/v1/plot"
)

// harvestSummary is the part of a harvest's summary.json the report reads.
type harvestSummary struct {
	Version           string             `json:"version"`
	Settings          json.RawMessage    `json:"settings"`
	ModelFingerprint  string             `json:"model_fingerprint"`
	IndexFingerprint  string             `json:"index_fingerprint"`
	Runner            string             `json:"runner"`
	Seconds           float64            `json:"seconds"`
	CPUSeconds        float64            `json:"cpu_seconds"`
	SentencesKept     int64              `json:"sentences_kept"`
	Queries           int64              `json:"sentences_retrieved"`
	ContextSets       int64              `json:"context_sets"`
	ContextSetsEmpty  int64              `json:"context_sets_empty"`
	SetsReused        int64              `json:"context_sets_reused"`
	MeanSetSize       float64            `json:"mean_set_size"`
	Labeled           int64              `json:"pairs_labeled"`
	Copied            int64              `json:"labels_copied"`
	Total             int64              `json:"pairs"`
	ByStratum         map[string]int64   `json:"pairs_by_stratum"`
	StageSeconds      map[string]float64 `json:"stage_seconds"`
	GenEvals          map[string]int64   `json:"gen_evals"`
	CtxPairs          map[string]int64   `json:"ctx_pairs"`
	CPUSecondsPerPair float64            `json:"cpu_seconds_per_pair"`
	CoreHours100M     float64            `json:"core_hours_per_100m_pairs"`
	PairSampler       pairSampler        `json:"pair_sampler"`
}

// Strata are the pair strata in the order reports list them.
var Strata = []string{"near", "mid", "far", "random"}

// HarvestInput is what a harvest report shows.
type HarvestInput struct {
	// Title heads the page; Output is the directory reported on.
	Title, Output string
	// Summary is the run's summary.json.
	Summary []byte
	// Pairs and Sets are the labeled pairs and context sets (all, or a
	// sample when the harvest is large; SampleNote then says so).
	Pairs      []schemas.LabeledPair
	Sets       []schemas.ContextSet
	SampleNote string
	// Context returns the sentences of a context (the chunk's sentences
	// before and after the slot, up to the window), or false when the
	// chunk is not known.
	Context func(chunkID string, slot int32) (left, right []string, ok bool)
	// Reuse, for a refresh version, compares it with a full run.
	Reuse *ReuseInput
	// ShowSets is the number of sentences whose context sets are shown.
	ShowSets int
	// Index, Chunks and Model are the harvest's inputs, for the command
	// that evaluates its labels (placeholders stand in when empty).
	Index, Chunks, Model string
}

// ReuseInput is what a refresh version reused from its parent.
type ReuseInput struct {
	Parent                     string
	ChunksAdded, ChunksRemoved int
	SetsReused, SetsComputed   int64
	LabelsCopied, PairsLabeled int64
	// StageSeconds are the refresh's steps (ingest, index, harvest).
	StageSeconds map[string]float64
}

// Harvest builds the report of a harvest (or a refresh version's harvest).
func Harvest(in HarvestInput) (*Report, error) {
	var s harvestSummary
	if err := json.Unmarshal(in.Summary, &s); err != nil {
		return nil, fmt.Errorf("report: summary.json: %w", err)
	}
	r := New(in.Title)
	r.Text("Output: %s. Runner %s; models %s; index %s.", in.Output, s.Runner, s.ModelFingerprint, s.IndexFingerprint)
	if in.SampleNote != "" {
		r.Text("%s", in.SampleNote)
	}
	qualitySection(r, in, s)

	r.Heading("What was labeled, and at what cost")
	rows := [][]string{
		{"sentences kept by the length filter (before the sample)", fmt.Sprint(s.SentencesKept)},
		{"sentences sampled and retrieved for", fmt.Sprint(s.Queries)},
		{"context sets built (reused)", fmt.Sprintf("%d (%d)", s.ContextSets, s.SetsReused)},
		{"sentences left without contexts", fmt.Sprint(s.ContextSetsEmpty)},
		{"mean |C_s|", fmt.Sprintf("%.1f", s.MeanSetSize)},
		{"pairs labeled (copied from the parent)", fmt.Sprintf("%d (%d)", s.Labeled, s.Copied)},
		{"wall time", fmt.Sprintf("%.0f s", s.Seconds)},
		{"CPU time", fmt.Sprintf("%.0f s", s.CPUSeconds)},
		{"CPU seconds per labeled pair", fmt.Sprintf("%.4f", s.CPUSecondsPerPair)},
	}
	if s.Copied > 0 {
		// A refresh's CPU time also built the index and the sets it kept:
		// per pair of the version is what it cost to keep the labels
		// current; a projection from the few pairs it labeled would mislead.
		rows = append(rows, []string{"CPU seconds per pair of this version (labeled or copied)",
			fmt.Sprintf("%.4f", s.CPUSeconds/float64(max(s.Total, 1)))})
	} else {
		rows = append(rows, []string{"projection to 100M labeled pairs", fmt.Sprintf("%.0f core-hours", s.CoreHours100M)})
	}
	for _, st := range Strata {
		rows = append(rows, []string{"pairs, stratum " + st, fmt.Sprint(s.ByStratum[st])})
	}
	r.Table([]string{"", "value"}, rows)
	var stageRows [][]string
	for _, st := range []string{"context_sets", "labels"} {
		stageRows = append(stageRows, []string{st, fmt.Sprintf("%.1f", s.StageSeconds[st]),
			fmt.Sprint(s.GenEvals[st]), fmt.Sprint(s.CtxPairs[st])})
	}
	r.Table([]string{"stage", "worker seconds", "generative evaluations", "context-model scores"}, stageRows)
	var compact bytes.Buffer
	if json.Compact(&compact, s.Settings) != nil {
		compact.Write(s.Settings)
	}
	r.Pre("settings: " + compact.String())

	if in.Reuse != nil {
		reuseSection(r, in.Reuse)
	}

	if len(in.Pairs) > 0 {
		if err := labelSections(r, in.Pairs); err != nil {
			return nil, err
		}
	}
	if len(in.Sets) > 0 {
		if err := setSections(r, in); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func labelSections(r *Report, pairs []schemas.LabeledPair) error {
	r.Heading("Labels")
	byStratum := map[string][]float64{}
	parts := map[string][]float64{}
	for _, p := range pairs {
		byStratum[p.Stratum] = append(byStratum[p.Stratum], float64(p.Label))
		parts["label"] = append(parts["label"], float64(p.Label))
		parts["Eq. 4 alone"] = append(parts["Eq. 4 alone"], float64(p.LabelContext))
		parts["TF-IDF cosine"] = append(parts["TF-IDF cosine"], float64(p.LabelLexical))
		parts["sentence vectors"] = append(parts["sentence vectors"], float64(p.LabelEmbed))
		parts["word alignment"] = append(parts["word alignment"], float64(p.LabelAlign))
	}
	p, err := Histograms("Label histogram per stratum", "label", Strata, byStratum, -1, 1, 40)
	if err != nil {
		return err
	}
	if err := r.Plot(p, 11, 4.5, "Label histogram per stratum (fraction of each stratum's pairs in each of 40 bins over [-1, 1])"); err != nil {
		return err
	}
	p1, err := Boxes("Labels by stratum", "label", Strata, byStratum)
	if err != nil {
		return err
	}
	p2, err := Boxes("The label and its parts", "value", []string{"label", "Eq. 4 alone", "TF-IDF cosine", "sentence vectors", "word alignment"}, parts)
	if err != nil {
		return err
	}
	if err := r.PlotRow([]*plot.Plot{p1, p2}, 2, 5.4, 4, []string{"Labels by stratum (box: quartiles; whiskers: 1.5 IQR)",
		"The label and its parts over all pairs: Eq. 4 (label_context), the TF-IDF cosine of Porter stems (label_lexical) " +
			"the context model's sentence-vector cosine (label_embed) and its word alignment (label_align)"}); err != nil {
		return err
	}

	r.Heading("Pairs across the label range")
	r.Text("Within each stratum, the pairs at the 10th, 50th and 90th percentile of its labels (ties broken by pair ID), " +
		"and the highest and lowest labels overall.")
	var rows [][]string
	row := func(where string, p schemas.LabeledPair) []string {
		return []string{where, fmt.Sprintf("%+.3f", p.Label), fmt.Sprintf("%+.3f", p.LabelContext),
			fmt.Sprintf("%.3f", p.LabelLexical), fmt.Sprintf("%+.3f", p.LabelEmbed), fmt.Sprintf("%.3f", p.LabelAlign), p.Stratum,
			clip(p.Sentence1, 220), clip(p.Sentence2, 220)}
	}
	for _, ex := range Examples(pairs) {
		rows = append(rows, row(ex.Where, ex.Pair))
	}
	r.Table([]string{"where", "label", "Eq. 4", "TF-IDF", "f(s1)·f(s2)", "alignment", "stratum", "sentence 1", "sentence 2"}, rows)
	return nil
}

func setSections(r *Report, in HarvestInput) error {
	r.Heading("Context sets")
	labels, counts := sizeBins(in.Sets)
	p, err := Bars("|C_s| distribution", "|C_s|", "context sets", labels, counts)
	if err != nil {
		return err
	}
	if err := r.Plot(p, 11, 3.5, "Distribution of the context-set size |C_s|"); err != nil {
		return err
	}
	r.Text("The sentences below are chosen across the run: among the sets, ordered by the score of their best context, " +
		"the first (the sentence that fits its best context most), those at evenly spaced quantiles, and the last.")
	for _, cs := range ShownSets(in.Sets, in.ShowSets) {
		r.Text("Sentence %s: “%s” — its %d contexts, best first (the five best and the worst shown). "+
			"Each row is the text around the slot with the sentence in its place.", cs.SentenceID, clip(cs.Text, 300), len(cs.Contexts))
		var rows [][]string
		idx := []int{}
		for i := range min(5, len(cs.Contexts)) {
			idx = append(idx, i)
		}
		if n := len(cs.Contexts); n > 5 {
			idx = append(idx, n-1)
		}
		for _, i := range idx {
			c := cs.Contexts[i]
			left, right, ok := "", "", false
			if in.Context != nil {
				var l, rt []string
				l, rt, ok = in.Context(c.ChunkID, c.Slot)
				left, right = strings.Join(l, " "), strings.Join(rt, " ")
			}
			if !ok {
				left = "(chunk " + c.ChunkID + " not found)"
			}
			var terms []string
			for k, name := range cs.Terms {
				if k < len(c.Terms) {
					terms = append(terms, fmt.Sprintf("%s %.3f", name, c.Terms[k]))
				}
			}
			rows = append(rows, []string{fmt.Sprint(i + 1), fmt.Sprintf("%.3f", c.Score), strings.Join(terms, ", "),
				clip(left, 300), "[" + clip(cs.Text, 120) + "]", clip(right, 300)})
		}
		r.Table([]string{"rank", "S", "terms", "c_{i-1} (left)", "s", "c_{i+1} (right)"}, rows)
	}
	return nil
}

// sizeBins counts the context sets by size |C_s|: one bin per size up to
// 60, else 40 bins of equal width, labelled by their range.
func sizeBins(sets []schemas.ContextSet) (labels []string, counts []float64) {
	hi := 0
	for _, cs := range sets {
		hi = max(hi, len(cs.Contexts))
	}
	width := 1
	if hi > 60 {
		width = (hi + 40) / 40
	}
	n := hi/width + 1
	counts = make([]float64, n)
	for _, cs := range sets {
		counts[len(cs.Contexts)/width]++
	}
	for i := range n {
		if width == 1 {
			labels = append(labels, fmt.Sprint(i))
		} else {
			labels = append(labels, fmt.Sprintf("%d–%d", i*width, (i+1)*width-1))
		}
	}
	return labels, counts
}

// ShownSets returns the context sets a harvest report shows in full
// (show of them, 3 when not positive): among the sets with contexts,
// ordered by the score of their best context (ties by sentence ID), those
// at evenly spaced quantiles, from the best fitting sentence's to the
// worst's, so that the examples span the run rather than a corner of it.
func ShownSets(sets []schemas.ContextSet, show int) []schemas.ContextSet {
	if show <= 0 {
		show = 3
	}
	var sorted []schemas.ContextSet
	for _, cs := range sets {
		if len(cs.Contexts) > 0 {
			sorted = append(sorted, cs)
		}
	}
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i].Contexts[0].Score, sorted[j].Contexts[0].Score
		if a != b {
			return a > b
		}
		return sorted[i].SentenceID < sorted[j].SentenceID
	})
	if len(sorted) <= show {
		return sorted
	}
	out := make([]schemas.ContextSet, 0, show)
	for k := range show {
		out = append(out, sorted[int(math.Round(float64(k)*float64(len(sorted)-1)/float64(max(show-1, 1))))])
	}
	return out
}

// Example is a pair shown in a report, and where it lies.
type Example struct {
	Where string
	Pair  schemas.LabeledPair
}

// Examples are the pairs a harvest report shows: in each stratum, those at
// the 10th, 50th and 90th percentile of its labels, then the highest and
// lowest labels overall; ties are broken by pair ID, so the choice depends
// only on the labels.
func Examples(pairs []schemas.LabeledPair) []Example {
	byLabel := func(ps []schemas.LabeledPair) []schemas.LabeledPair {
		out := append([]schemas.LabeledPair(nil), ps...)
		sort.Slice(out, func(i, j int) bool {
			if out[i].Label != out[j].Label {
				return out[i].Label < out[j].Label
			}
			return out[i].PairID < out[j].PairID
		})
		return out
	}
	groups := map[string][]schemas.LabeledPair{}
	for _, p := range pairs {
		groups[p.Stratum] = append(groups[p.Stratum], p)
	}
	var out []Example
	seen := map[string]bool{}
	add := func(where string, p schemas.LabeledPair) {
		if !seen[p.PairID] {
			seen[p.PairID] = true
			out = append(out, Example{where, p})
		}
	}
	for _, st := range Strata {
		g := byLabel(groups[st])
		if len(g) == 0 {
			continue
		}
		for _, q := range []struct {
			name string
			at   float64
		}{{"90th percentile", 0.9}, {"median", 0.5}, {"10th percentile", 0.1}} {
			add(st+", "+q.name, g[int(math.Round(q.at*float64(len(g)-1)))])
		}
	}
	if all := byLabel(pairs); len(all) > 0 {
		add("highest overall", all[len(all)-1])
		add("lowest overall", all[0])
	}
	return out
}

func reuseSection(r *Report, u *ReuseInput) {
	r.Heading("Reuse against a full run")
	r.Text("This version refreshed %s: %d chunks added to the parent's index and %d removed. A full run on the same "+
		"corpus would compute every context set and label; this one computed only the ones below.", u.Parent,
		u.ChunksAdded, u.ChunksRemoved)
	frac := func(a, total int64) string {
		if total == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(total))
	}
	r.Table([]string{"", "computed now", "kept from the parent", "a full run", "computed / full run"}, [][]string{
		{"context sets", fmt.Sprint(u.SetsComputed), fmt.Sprint(u.SetsReused), fmt.Sprint(u.SetsComputed + u.SetsReused),
			frac(u.SetsComputed, u.SetsComputed+u.SetsReused)},
		{"pair labels", fmt.Sprint(u.PairsLabeled), fmt.Sprint(u.LabelsCopied), fmt.Sprint(u.PairsLabeled + u.LabelsCopied),
			frac(u.PairsLabeled, u.PairsLabeled+u.LabelsCopied)},
	})
	var stages [][]string
	for _, k := range sortedKeys(u.StageSeconds) {
		stages = append(stages, []string{k, fmt.Sprintf("%.1f", u.StageSeconds[k])})
	}
	r.Table([]string{"refresh step", "seconds"}, stages)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + " …"
}
