package report

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/ctxsim/ctxsim/schemas"
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
	r.Pre("settings: " + string(s.Settings))

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
	}
	p, err := Histograms("Label histogram per stratum", "label", Strata, byStratum, -1, 1, 20)
	if err != nil {
		return err
	}
	if err := r.Plot(p, 8, 4, "Label histogram per stratum (fraction of each stratum's pairs in each of 20 bins over [-1, 1])"); err != nil {
		return err
	}
	p, err = Boxes("Labels by stratum", "label", Strata, byStratum)
	if err != nil {
		return err
	}
	if err := r.Plot(p, 8, 4, "Labels by stratum (box: quartiles; whiskers: 1.5 IQR)"); err != nil {
		return err
	}
	p, err = Boxes("The label and its parts", "value", []string{"label", "Eq. 4 alone", "TF-IDF cosine", "sentence vectors"}, parts)
	if err != nil {
		return err
	}
	if err := r.Plot(p, 8, 4, "The label and its parts over all pairs"); err != nil {
		return err
	}

	r.Heading("Pairs across the label range")
	sorted := append([]schemas.LabeledPair(nil), pairs...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].Label != sorted[j].Label {
			return sorted[i].Label > sorted[j].Label
		}
		return sorted[i].PairID < sorted[j].PairID
	})
	var rows [][]string
	for _, q := range []struct {
		name string
		at   float64
	}{{"highest", 0}, {"upper quartile", 0.25}, {"median", 0.5}, {"lower quartile", 0.75}, {"lowest", 1}} {
		i := int(math.Round(q.at * float64(len(sorted)-1)))
		for _, k := range []int{i - 1, i, i + 1} {
			if k < 0 || k >= len(sorted) || (k != i && len(sorted) < 15) {
				continue
			}
			p := sorted[k]
			rows = append(rows, []string{q.name, fmt.Sprintf("%+.3f", p.Label), fmt.Sprintf("%+.3f", p.LabelContext),
				fmt.Sprintf("%.3f", p.LabelLexical), fmt.Sprintf("%+.3f", p.LabelEmbed), p.Stratum, clip(p.Sentence1, 220), clip(p.Sentence2, 220)})
		}
	}
	r.Table([]string{"where", "label", "Eq. 4", "TF-IDF", "f(s1)·f(s2)", "stratum", "sentence 1", "sentence 2"}, rows)
	return nil
}

func setSections(r *Report, in HarvestInput) error {
	r.Heading("Context sets")
	var sizes []float64
	for _, cs := range in.Sets {
		sizes = append(sizes, float64(len(cs.Contexts)))
	}
	hi := 1.0
	for _, x := range sizes {
		hi = math.Max(hi, x+1)
	}
	p, err := Histograms("|C_s| distribution", "|C_s|", nil, map[string][]float64{"context sets": sizes}, 0, hi, min(40, int(hi)))
	if err != nil {
		return err
	}
	if err := r.Plot(p, 8, 3.5, "Distribution of the context-set size |C_s|"); err != nil {
		return err
	}
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

// ShownSets returns the context sets a harvest report shows in full: the
// first show (3 when not positive) by sentence ID.
func ShownSets(sets []schemas.ContextSet, show int) []schemas.ContextSet {
	if show <= 0 {
		show = 3
	}
	sorted := append([]schemas.ContextSet(nil), sets...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].SentenceID < sorted[j].SentenceID })
	return sorted[:min(show, len(sorted))]
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
