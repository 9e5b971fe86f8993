package report

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/scoring/stats"
)

// lexicalZero is the TF-IDF cosine below which a pair's lexical part
// counts as none: the sentences share (almost) no stemmed word.
const lexicalZero = 0.05

// minSeparation is the gap between adjacent strata's median labels below
// which the report calls them overlapping.
const minSeparation = 0.02

// StratumStats are one stratum's labels: how many, and their quartiles.
type StratumStats struct {
	Name           string
	Pairs          int
	Q1, Median, Q3 float64
	// ContextMedian and LexicalMedian are the medians of Eq. 4 and of the
	// TF-IDF part; LexicalZero is the share of pairs whose TF-IDF part is
	// below lexicalZero.
	ContextMedian, LexicalMedian, LexicalZero float64
	// AboveRandom is the chance that a pair of this stratum has a higher
	// label than a random pair (0.5: no separation; ties count half).
	AboveRandom float64
}

// Quality is what the quality panel of a harvest report says, computed
// from the pairs (or a sample of them).
type Quality struct {
	Strata []StratumStats
	// Findings are the panel's sentences, warnings first.
	Findings []Finding
	// LexicalZero is the share of all pairs whose TF-IDF part is ~0.
	LexicalZero float64
	// LabelLexical and LabelContext are the Spearman correlations of the
	// label with its TF-IDF part and with Eq. 4, LabelAlign with its word
	// alignment part (NaN when not computable).
	LabelLexical, LabelContext, LabelAlign float64
}

// quantile is the q-quantile of sorted xs (linear interpolation).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(xs)-1)
	i := int(math.Floor(pos))
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[i] + (pos-float64(i))*(xs[i+1]-xs[i])
}

// aboveShare is the chance that a value of a exceeds one of b (ties half),
// both sorted.
func aboveShare(a, b []float64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return math.NaN()
	}
	var wins float64
	lo, hi := 0, 0 // b[:lo] < x, b[:hi] <= x
	for _, x := range a {
		for lo < len(b) && b[lo] < x {
			lo++
		}
		for hi < len(b) && b[hi] <= x {
			hi++
		}
		wins += float64(lo) + float64(hi-lo)/2
	}
	return wins / float64(len(a)) / float64(len(b))
}

// AssessQuality computes the quality panel from the pairs; counts are the
// pairs per stratum of the whole output (summary.json), which say whether
// a stratum is empty when pairs is a sample; labeler is the harvest's.
func AssessQuality(pairs []schemas.LabeledPair, counts map[string]int64, labeler string) Quality {
	var q Quality
	labels, ctx, lex := map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
	var all, allCtx, allLex, allAlign []float64
	zero := map[string]int{}
	for _, p := range pairs {
		labels[p.Stratum] = append(labels[p.Stratum], float64(p.Label))
		ctx[p.Stratum] = append(ctx[p.Stratum], float64(p.LabelContext))
		lex[p.Stratum] = append(lex[p.Stratum], float64(p.LabelLexical))
		all, allCtx, allLex = append(all, float64(p.Label)), append(allCtx, float64(p.LabelContext)), append(allLex, float64(p.LabelLexical))
		allAlign = append(allAlign, float64(p.LabelAlign))
		if p.LabelLexical < lexicalZero {
			zero[p.Stratum]++
			zero[""]++
		}
	}
	for _, m := range []map[string][]float64{labels, ctx, lex} {
		for _, v := range m {
			sort.Float64s(v)
		}
	}
	for _, name := range Strata {
		v := labels[name]
		st := StratumStats{Name: name, Pairs: len(v), Q1: quantile(v, .25), Median: quantile(v, .5), Q3: quantile(v, .75),
			ContextMedian: quantile(ctx[name], .5), LexicalMedian: quantile(lex[name], .5),
			AboveRandom: math.NaN(), LexicalZero: math.NaN()}
		if name != "random" {
			st.AboveRandom = aboveShare(v, labels["random"])
		}
		if len(v) > 0 {
			st.LexicalZero = float64(zero[name]) / float64(len(v))
		}
		q.Strata = append(q.Strata, st)
	}
	q.LexicalZero, q.LabelLexical, q.LabelContext, q.LabelAlign = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	if len(all) > 0 {
		q.LexicalZero = float64(zero[""]) / float64(len(all))
	}
	if len(all) > 2 {
		q.LabelLexical, q.LabelContext = stats.Spearman(all, allLex), stats.Spearman(all, allCtx)
		q.LabelAlign = stats.Spearman(all, allAlign)
	}

	var warn, good, info []Finding
	// Empty strata.
	var empty []string
	for _, st := range q.Strata {
		if counts[st.Name] == 0 && st.Pairs == 0 {
			empty = append(empty, st.Name)
		}
	}
	if len(empty) > 0 {
		warn = append(warn, Finding{Warn, fmt.Sprintf("Stratum %s has no pairs: the harvest sampled none there, so the labels cannot be "+
			"checked against it (and a surrogate trained on them never sees such pairs).", strings.Join(empty, ", "))})
	}
	// Order and overlap of the medians, near > mid > far > random.
	var present []StratumStats
	for _, st := range q.Strata {
		if st.Pairs > 0 {
			present = append(present, st)
		}
	}
	var medians []string
	for _, st := range present {
		medians = append(medians, fmt.Sprintf("%s %+.3f", st.Name, st.Median))
	}
	// Every closer stratum should be above every farther one; adjacent
	// ones should be apart.
	var wrong, close []string
	for i := range present {
		for j := i + 1; j < len(present); j++ {
			if a, b := present[i], present[j]; a.Median < b.Median {
				wrong = append(wrong, fmt.Sprintf("%s (%+.3f) is below %s (%+.3f)", a.Name, a.Median, b.Name, b.Median))
			}
		}
	}
	for i := 1; i < len(present); i++ {
		a, b := present[i-1], present[i]
		if d := a.Median - b.Median; d >= 0 && (d < minSeparation || a.Median < b.Q3 && b.Median > a.Q1 && d < (a.Q3-a.Q1)/4) {
			close = append(close, fmt.Sprintf("%s and %s (%+.3f, %+.3f)", a.Name, b.Name, a.Median, b.Median))
		}
	}
	if len(present) >= 2 {
		lo, hi := present[0].Median, present[0].Median
		for _, st := range present {
			lo, hi = math.Min(lo, st.Median), math.Max(hi, st.Median)
		}
		switch {
		case len(wrong) > 0:
			warn = append(warn, Finding{Warn, "The strata are in the wrong order: " + strings.Join(wrong, "; ") +
				". Pairs linked by a closer retrieval rank should get higher labels; here they do not. Medians: " +
				strings.Join(medians, ", ") + "."})
		case hi-lo < 2*minSeparation*float64(len(present)-1):
			warn = append(warn, Finding{Warn, fmt.Sprintf("The strata barely separate: their median labels span only %.3f (%s). "+
				"The labels hardly tell pairs of related sentences from random ones.", hi-lo, strings.Join(medians, ", "))})
		case len(close) > 0:
			warn = append(warn, Finding{Warn, "Adjacent strata overlap: " + strings.Join(close, "; ") +
				" have nearly the same median label. Medians: " + strings.Join(medians, ", ") + "."})
		default:
			good = append(good, Finding{Good, "The strata separate in the expected order (near > mid > far > random): median labels " +
				strings.Join(medians, ", ") + "."})
		}
		var above []string
		for _, st := range present {
			if st.Name != "random" && !math.IsNaN(st.AboveRandom) {
				above = append(above, fmt.Sprintf("%s %.0f%%", st.Name, 100*st.AboveRandom))
			}
		}
		if len(above) > 0 {
			info = append(info, Finding{Info, "How often a pair of each stratum gets a higher label than a random pair (50% = no better than chance): " +
				strings.Join(above, ", ") + "."})
		}
	} else if len(present) == 1 {
		warn = append(warn, Finding{Warn, "Only stratum " + present[0].Name + " has pairs: nothing to compare its labels with."})
	}
	// The lexical part.
	if len(all) > 0 && (labeler == method.LabelerHybrid || labeler == method.LabelerEnsemble) {
		part := "Eq. 4 halved"
		if labeler == method.LabelerEnsemble {
			part = "(Eq. 4 + label_embed)/3"
		}
		level := Info
		if q.LexicalZero > 0.5 {
			level = Warn
		}
		f := Finding{level, fmt.Sprintf("In %.0f%% of the pairs the label's TF-IDF part (label_lexical) is below %.2f: the two sentences share "+
			"almost no stemmed word, so the %s label there is %s.", 100*q.LexicalZero, lexicalZero, labeler, part)}
		if level == Warn {
			f.Text += " For most pairs the label is then the context signal alone, at half its range."
		}
		if level == Warn {
			warn = append(warn, f)
		} else {
			info = append(info, f)
		}
	}
	if labeler == method.LabelerAligned && !math.IsNaN(q.LabelAlign) && !math.IsNaN(q.LabelContext) {
		info = append(info, Finding{Info, fmt.Sprintf("Spearman correlation of the label with its word-alignment part: %.2f; with Eq. 4: %.2f; "+
			"with the TF-IDF cosine (not in the label): %.2f.", q.LabelAlign, q.LabelContext, q.LabelLexical)})
	} else if !math.IsNaN(q.LabelLexical) && !math.IsNaN(q.LabelContext) && labeler != method.LabelerOrigin && labeler != method.LabelerLexical {
		s := fmt.Sprintf("Spearman correlation of the label with its TF-IDF part: %.2f; with Eq. 4: %.2f.", q.LabelLexical, q.LabelContext)
		if q.LabelLexical > q.LabelContext {
			s += " The label follows word overlap more than the contexts."
		}
		info = append(info, Finding{Info, s})
	}
	q.Findings = append(append(warn, good...), info...)
	return q
}

// scaleText says what a label's value means under the settings, and where
// random pairs lie in this run.
func scaleText(st method.Settings, randomMedian float64) string {
	var eq4 string
	switch st.Similarity {
	case method.SimilarityCosine:
		eq4 = "the cosine of the two sentences' context-score vectors [S(s, c) for c in C = C_s1 + C_s2]"
	case method.SimilarityPearson:
		eq4 = "the Pearson correlation of the two sentences' context-score vectors over C = C_s1 + C_s2 (each vector's mean removed)"
	case method.SimilarityZRef:
		eq4 = "the cosine of the two sentences' context-score vectors over C = C_s1 + C_s2, each score standardised by the sentence's " +
			"mean and spread over the models' reference contexts"
	case method.SimilarityZWhite:
		eq4 = "the cosine of the two sentences' context-score vectors over C = C_s1 + C_s2, scored with the context vectors whitened " +
			"(mapped so that their covariance over a random sample of the corpus's contexts is the identity) and centred on that sample's mean"
	case method.SimilarityOverlap:
		eq4 = "the overlap of the two sentences' distributions over the contexts C = C_s1 + C_s2 (each sentence's whitened scores, " +
			"as under zwhite, turned into probabilities by a softmax over C; the sum over C of the square root of their product)"
	default:
		eq4 = "Eq. 4 under " + st.Similarity
	}
	text := "Scale: Eq. 4 (label_context) is " + eq4 + ", in [-1, 1]: 1 when both sentences fit the same contexts equally well, " +
		"0 when their fits are unrelated."
	if st.Similarity == method.SimilarityOverlap {
		text = "Scale: Eq. 4 (label_context) is " + eq4 + ", in [0, 1]: 1 when both sentences favour the same contexts alike, " +
			"near 0 when they favour different ones."
	}
	switch st.Labeler {
	case method.LabelerHybrid:
		text += " The hybrid label is (Eq. 4 + label_lexical)/2, where label_lexical is the TF-IDF cosine of the sentences' Porter stems " +
			"(in [0, 1]): the label lies in [-0.5, 1]."
	case method.LabelerEnsemble:
		text += " The ensemble label is (Eq. 4 + label_lexical + label_embed)/3: the TF-IDF cosine of Porter stems and the context model's " +
			"sentence-vector cosine beside Eq. 4."
	case method.LabelerAligned:
		text += " The aligned label is (8 label_align + Eq. 4 + label_embed)/10: label_align is the word alignment of the two sentences " +
			"under the context model (the F1 of each word's best match in the other sentence, IDF-weighted, in [0, 1]), label_embed " +
			"the model's sentence-vector cosine."
	case method.LabelerLexical:
		text = "Scale: the lexical label is the TF-IDF cosine of the sentences' Porter stems, in [0, 1]; no contexts are used."
	default:
		text += " The label is Eq. 4 alone (labeler origin, the paper's)."
	}
	if !math.IsNaN(randomMedian) {
		text += fmt.Sprintf(" Random pairs have a median label of %+.3f in this run: that, not 0, is the level of unrelated sentences here; "+
			"read other labels against it. Labels rank pairs; they are not calibrated to STS's 0–5 scale.", randomMedian)
	}
	return text
}

// EvaluateCommand is the bin/evaluate command that measures the labels of
// a harvest with settings st against human scores: its corpus index and
// chunks, model directory and output directory (placeholders when empty).
func EvaluateCommand(st method.Settings, index, chunks, model, output string) string {
	or := func(s, placeholder string) string {
		if s == "" {
			return placeholder
		}
		return s
	}
	args := []string{"bin/evaluate", "--sts=STS_FILE", "--index=" + or(index, "CORPUS/index"),
		"--chunks='" + or(chunks, "CORPUS/chunks/*.parquet") + "'", "--model=" + or(model, "MODEL"),
		"--output=" + or(output, "OUTPUT") + "/evaluate"}
	args = append(args, settingsFlags(st)...)
	return strings.Join(args, " ") + " --variants=origin --pairs=300"
}

// settingsFlags are the method flags that give st: the nearest preset and
// the overrides of it.
func settingsFlags(st method.Settings) []string {
	var best []string
	for _, name := range method.PresetNames() {
		p, err := method.Preset(name)
		if err != nil {
			continue
		}
		flags := []string{"--preset=" + name}
		if st.TopK != p.TopK {
			flags = append(flags, fmt.Sprintf("--top_k=%d", st.TopK))
		}
		if st.Rerank != p.Rerank {
			flags = append(flags, fmt.Sprintf("--rerank=%d", st.Rerank))
		}
		if st.SetSize != p.SetSize {
			flags = append(flags, fmt.Sprintf("--set_size=%d", st.SetSize))
		}
		if st.RerankBy != p.RerankBy {
			flags = append(flags, "--rerank_by="+st.RerankBy)
		}
		if lambdaString(st.Lambda) != lambdaString(p.Lambda) {
			flags = append(flags, "--lambda="+lambdaString(st.Lambda))
		}
		if !st.Diversity && p.Diversity {
			flags = append(flags, "--no_diversity")
		}
		if st.Similarity != p.Similarity {
			flags = append(flags, "--similarity="+st.Similarity)
		}
		if st.Labeler != p.Labeler {
			flags = append(flags, "--labeler="+st.Labeler)
		}
		if st.GenPrecision != p.GenPrecision && st.GenPrecision != "" {
			flags = append(flags, "--gen_precision="+st.GenPrecision)
		}
		if best == nil || len(flags) < len(best) {
			best = flags
		}
	}
	return best
}

func lambdaString(l map[string]float64) string {
	var parts []string
	for _, k := range sortedKeys(l) {
		parts = append(parts, fmt.Sprintf("%s:%g", k, l[k]))
	}
	return strings.Join(parts, ",")
}

// qualitySection is the panel at the top of a harvest report: whether the
// strata separate, what the lexical part does, what the scale means, and
// how to measure the labels against human scores.
func qualitySection(r *Report, in HarvestInput, s harvestSummary) {
	var st method.Settings
	var settingsErr error
	if len(s.Settings) > 0 {
		settingsErr = json.Unmarshal(s.Settings, &st)
	}
	q := AssessQuality(in.Pairs, s.ByStratum, st.Labeler)
	r.Heading("Are the labels any good?")
	findings := q.Findings
	if settingsErr != nil {
		findings = append(findings, Finding{Warn, fmt.Sprintf("The settings in summary.json could not be read (%v): the text below "+
			"describes the default labeler and scale, which may not be this run's.", settingsErr)})
	}
	if len(in.Pairs) == 0 {
		findings = append(findings, Finding{Warn, "No labeled pairs to judge."})
	}
	r.Callout("At a glance (from "+fmt.Sprint(len(in.Pairs))+" pairs)", findings)
	var rows [][]string
	f := func(x float64, format string) string {
		if math.IsNaN(x) {
			return "-"
		}
		return fmt.Sprintf(format, x)
	}
	for _, x := range q.Strata {
		rows = append(rows, []string{x.Name, fmt.Sprint(x.Pairs), f(x.Median, "%+.3f"),
			f(x.Q1, "%+.3f") + " … " + f(x.Q3, "%+.3f"), f(x.ContextMedian, "%+.3f"), f(x.LexicalMedian, "%.3f"),
			f(100*x.LexicalZero, "%.0f%%"), f(100*x.AboveRandom, "%.0f%%")})
	}
	r.Table([]string{"stratum", "pairs", "median label", "quartiles", "median Eq. 4", "median label_lexical",
		fmt.Sprintf("label_lexical < %.2f", lexicalZero), "above a random pair"}, rows)
	r.Text("%s", strataText(s.PairSampler))
	random := math.NaN()
	for _, x := range q.Strata {
		if x.Name == "random" && x.Pairs > 0 {
			random = x.Median
		}
	}
	r.Text("%s", scaleText(st, random))
	r.Text("These checks say whether the labels are consistent with how the pairs were sampled, not whether they match human " +
		"judgement. That is measured by bin/evaluate: it labels STS pairs with the same settings and reports the Spearman " +
		"correlation (×100) with the human scores beside the TF-IDF baselines (labels that do not beat the stemmed TF-IDF " +
		"baseline are not worth their cost). For this harvest, with STS_FILE an STS file with human scores (such as the STS " +
		"Benchmark's sts-dev.csv; the formats bin/evaluate -help lists):")
	r.Code(EvaluateCommand(st, in.Index, in.Chunks, in.Model, in.Output))
}

// strataText says how the strata were sampled, from the pair sampler's
// settings in summary.json (empty when absent).
func strataText(pc pairSampler) string {
	if pc.NearRank == 0 {
		return "Strata: near, mid and far pairs are linked by the retrieval rank of one sentence's chunk in the other's results; random pairs are not linked."
	}
	return fmt.Sprintf("Strata: a near pair's sentences are linked by a retrieval rank below %d, mid below %d, far below %d "+
		"(the rank of the chunk holding one sentence among the other's hits); random pairs are drawn at random. "+
		"Quotas per sentence: near %d, mid %d, far %d, random %d.", pc.NearRank, pc.MidRank, pc.Neighbours,
		pc.Quota[0], pc.Quota[1], pc.Quota[2], pc.Quota[3])
}

// pairSampler is the part of summary.json's pair_sampler the report reads.
type pairSampler struct {
	NearRank, MidRank, Neighbours int
	Quota                         [4]int
}
