package surrogatejob

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/surrogate"
	"github.com/ctxsim/ctxsim/storage"
)

// parseObjectives returns the configurations of the named objectives, with
// threshold and topQuantile (--threshold and --top_quantile) applied, each
// checked.
func parseObjectives(list string, threshold, topQuantile float64) ([]surrogate.ObjectiveConfig, error) {
	names := jobrun.SplitList(list)
	if len(names) == 0 {
		return nil, errors.New("--objective: name at least one of l2, rank, contrastive, multisim")
	}
	seen := map[string]bool{}
	var out []surrogate.ObjectiveConfig
	for _, n := range names {
		if seen[n] {
			return nil, fmt.Errorf("--objective: %s given twice", n)
		}
		seen[n] = true
		c := surrogate.DefaultObjective(n)
		if c.HasPositives() {
			c.Threshold, c.TopQuantile = threshold, topQuantile
		}
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("--objective: %w", err)
		}
		out = append(out, c)
	}
	return out, nil
}

// readPairs reads every row of the pairs tables matched by globs. A local
// directory stands for its Parquet files.
func readPairs(ctx context.Context, globs []string) ([]schemas.LabeledPair, int, error) {
	if len(globs) == 0 {
		return nil, 0, errors.New("no pairs found: --pairs names no files")
	}
	var rows []schemas.LabeledPair
	seen, checked := map[string]bool{}, map[string]bool{}
	files := 0
	for _, g := range globs {
		if !storage.IsRemote(g) && !strings.ContainsAny(g, "*?[") {
			if st, err := os.Stat(g); err == nil && st.IsDir() {
				g = filepath.Join(g, "*.parquet")
			}
		}
		names, err := storage.Glob(ctx, g)
		if err != nil {
			return nil, 0, fmt.Errorf("no pairs found: --pairs %s: %w", g, err)
		}
		for _, name := range names {
			if seen[name] {
				continue
			}
			seen[name] = true
			files++
			if dir := name[:max(strings.LastIndex(name, "/"), 0)]; !checked[dir] {
				checked[dir] = true
				if err := jobrun.CheckCommitted(ctx, dir); err != nil {
					return nil, 0, fmt.Errorf("pairs: %w", err)
				}
			}
			if _, err := storage.ScanFile(ctx, name, func(p schemas.LabeledPair) bool {
				rows = append(rows, p)
				return true
			}); err != nil {
				return nil, 0, fmt.Errorf("pairs: %w", err)
			}
		}
	}
	if len(rows) == 0 {
		return nil, 0, fmt.Errorf("no pairs found: the %d files matching --pairs %s hold no rows", files, strings.Join(globs, ","))
	}
	return rows, files, nil
}

// checkFingerprints checks that every pair was labelled with the models of
// --model: the surrogate is trained on token IDs of that model directory's
// tokenizer, which is only right for labels made with it.
func checkFingerprints(rows []schemas.LabeledPair, modelFP, tokFP, dir string) error {
	count := map[string]int{}
	for _, r := range rows {
		count[r.ModelFingerprint]++
	}
	if len(count) == 1 && count[modelFP] > 0 {
		return nil
	}
	var fps []string
	for fp, n := range count {
		if fp == "" {
			fp = "(none)"
		}
		fps = append(fps, fmt.Sprintf("%s (%d pairs)", fp, n))
	}
	sort.Strings(fps)
	return fmt.Errorf("model fingerprint mismatch: the pairs were labelled with models %s, but --model %s holds models %s "+
		"(tokenizer %.12s…): train the surrogate with the tokenizer of the harvest that labelled the pairs",
		strings.Join(fps, ", "), dir, modelFP, tokFP)
}

// dedup sorts rows by pair ID and keeps the first row of each ID.
func dedup(rows []schemas.LabeledPair) ([]schemas.LabeledPair, int) {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].PairID < rows[j].PairID })
	out := rows[:0]
	for i, r := range rows {
		if i > 0 && r.PairID == rows[i-1].PairID {
			continue
		}
		out = append(out, r)
	}
	return out, len(rows) - len(out)
}

// splitPairs sorts rows into the pairs of the training splits and those
// of devSplit (none when devSplit is empty), keeping their order, and
// counts the rows of every split. With strata, only the pairs sampled as
// one of them are kept (in both); the others are counted in skipped.
func splitPairs(rows []schemas.LabeledPair, trainSplits []string, devSplit string, strata []string) (train, dev []schemas.LabeledPair, bySplit map[string]int, skipped int) {
	bySplit = map[string]int{}
	isTrain := map[string]bool{}
	for _, s := range trainSplits {
		isTrain[s] = true
	}
	for _, r := range rows {
		bySplit[r.Split]++
		if len(strata) > 0 && !slices.Contains(strata, r.Stratum) {
			skipped++
			continue
		}
		switch {
		case isTrain[r.Split]:
			train = append(train, r)
		case devSplit != "" && r.Split == devSplit:
			dev = append(dev, r)
		}
	}
	return train, dev, bySplit, skipped
}

// labelColumns reads each column --label may name from a pair.
var labelColumns = map[string]func(r *schemas.LabeledPair) float32{
	"label":   func(r *schemas.LabeledPair) float32 { return r.Label },
	"align":   func(r *schemas.LabeledPair) float32 { return r.LabelAlign },
	"embed":   func(r *schemas.LabeledPair) float32 { return r.LabelEmbed },
	"context": func(r *schemas.LabeledPair) float32 { return r.LabelContext },
	"lexical": func(r *schemas.LabeledPair) float32 { return r.LabelLexical },
}

// labelTerm is one column of --label and its weight.
type labelTerm struct {
	name   string
	weight float64
}

// parseLabel reads --label: one column (a key of labelColumns), or a
// weighted mix of the parts, "align:3,embed:1", whose target is the
// weighted mean of the columns. A weight may be negative, which moves the
// target away from that part ("align:1.25,embed:-0.25"), as long as the
// weights add up to a positive number. The weights returned are divided
// by their sum, so the target is Σ weight·column.
func parseLabel(spec string) ([]labelTerm, error) {
	var terms []labelTerm
	var total float64
	seen := map[string]bool{}
	for _, f := range strings.Split(spec, ",") {
		name, w, weighted := strings.Cut(strings.TrimSpace(f), ":")
		if _, ok := labelColumns[name]; !ok {
			return nil, fmt.Errorf("--label %q: unknown column %q (want label, align, embed, context or lexical, or a mix such as align:3,embed:1)", spec, name)
		}
		if seen[name] {
			return nil, fmt.Errorf("--label %q: %s named twice", spec, name)
		}
		seen[name] = true
		weight := 1.0
		if weighted {
			v, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
			if err != nil || v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("--label %q: the weight of %s must be a nonzero number, not %q", spec, name, w)
			}
			weight = v
		}
		terms = append(terms, labelTerm{name, weight})
		total += weight
	}
	if !(total > 0) {
		return nil, fmt.Errorf("--label %q: the weights must add up to a positive number, not %g", spec, total)
	}
	for i := range terms {
		terms[i].weight /= total
	}
	return terms, nil
}

// useLabel puts the target --label names in the Label of every row: one
// column, or the weighted mean of several. A part the harvest did not
// record reads 0 in every row: that is an error, not a target.
func useLabel(spec string, sets ...[]schemas.LabeledPair) error {
	terms, err := parseLabel(spec)
	if err != nil {
		return err
	}
	if len(terms) == 1 && terms[0].name == "label" {
		return nil
	}
	recorded := make([]bool, len(terms))
	clipped := 0
	for _, rows := range sets {
		for i := range rows {
			var y float64
			for k, t := range terms {
				v := labelColumns[t.name](&rows[i])
				recorded[k] = recorded[k] || v != 0
				y += t.weight * float64(v)
			}
			// A mix with a negative weight can leave [-1, 1] (align 1
			// and embed 0.9 under align:1.25,embed:-0.25 give 1.025),
			// where a label must lie: such targets are clipped to it.
			if y > 1 || y < -1 {
				y = max(-1, min(1, y))
				clipped++
			}
			rows[i].Label = float32(y)
		}
	}
	for k, t := range terms {
		if !recorded[k] {
			return fmt.Errorf("--label=%s: the pairs hold no %s part (every value 0): their labeler did not record it", spec, t.name)
		}
	}
	if clipped > 0 {
		fmt.Printf("surrogate: --label=%s: %d targets outside [-1, 1] clipped to it\n", spec, clipped)
	}
	return nil
}

// strataLine says, for an error, which strata were kept and how many
// pairs the others held; empty without --strata.
func strataLine(strata []string, skipped int) string {
	if len(strata) == 0 {
		return ""
	}
	return fmt.Sprintf(" and strata %s (%d pairs of other strata)", strings.Join(strata, ","), skipped)
}

func splitLine(by map[string]int) string {
	var keys []string
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		name := k
		if name == "" {
			name = "(none)"
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, by[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// tokenizePairs turns rows into token-ID pairs, tokenizing each distinct
// sentence once.
func tokenizePairs(tok textVocab, trainRows, devRows []schemas.LabeledPair) (train, dev []surrogate.Pair, err error) {
	index := map[string]int{}
	var texts []string
	for _, rs := range [][]schemas.LabeledPair{trainRows, devRows} {
		for _, r := range rs {
			for _, s := range []string{r.Sentence1, r.Sentence2} {
				if _, ok := index[s]; !ok {
					index[s] = len(texts)
					texts = append(texts, s)
				}
			}
		}
	}
	ids := surrogate.IDs[int](tok.EncodeBatch(texts))
	conv := func(rs []schemas.LabeledPair, what string) ([]surrogate.Pair, error) {
		out := make([]surrogate.Pair, len(rs))
		for i, r := range rs {
			a, b := ids[index[r.Sentence1]], ids[index[r.Sentence2]]
			if len(a) == 0 || len(b) == 0 {
				return nil, fmt.Errorf("%s pair %s: a sentence has no tokens", what, r.PairID)
			}
			if !(r.Label >= -1 && r.Label <= 1) {
				return nil, fmt.Errorf("%s pair %s: label %v outside [-1, 1]", what, r.PairID, r.Label)
			}
			out[i] = surrogate.Pair{A: a, B: b, Label: r.Label}
		}
		return out, nil
	}
	if train, err = conv(trainRows, "training"); err != nil {
		return nil, nil, err
	}
	dev, err = conv(devRows, "dev")
	return train, dev, err
}

// parseSizes parses --max_pairs: one count, or a comma-separated list for a
// learning curve; 0 stands for every pair.
func parseSizes(v string) ([]int, error) {
	var out []int
	for _, f := range jobrun.SplitList(v) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("--max_pairs %q: want counts of pairs (0: all), comma-separated", v)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--max_pairs %q: name at least one count (0: all)", v)
	}
	return out, nil
}

// planSizes turns the requested sizes into the distinct training-set sizes
// to train at, ascending: 0, and any size beyond what is available, become
// every available pair.
func planSizes(sizes []int, available int) []int {
	var out []int
	for _, n := range sizes {
		if n == 0 || n > available {
			n = available
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func sizeLine(plan []int) string {
	parts := make([]string, len(plan))
	for i, n := range plan {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}
