package report

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
)

func TestNiceTicks(t *testing.T) {
	for _, c := range []struct{ lo, hi float64 }{{-1, 1}, {0, 1}, {0, 37}, {0.02, 0.05}, {-3.3, 812}, {0, 0.4}} {
		var labels []string
		for _, tk := range (NiceTicks{}).Ticks(c.lo, c.hi) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
				if tk.Value < c.lo-1e-9 || tk.Value > c.hi+1e-9 {
					t.Errorf("[%g, %g]: tick %g outside", c.lo, c.hi, tk.Value)
				}
			}
		}
		if len(labels) < 5 || len(labels) > 10 {
			t.Errorf("[%g, %g]: %d labels %v, want 5 to 10", c.lo, c.hi, len(labels), labels)
		}
	}
	var labels []string
	for _, tk := range (NiceTicks{}).Ticks(-1, 1) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "-1.00 -0.75 -0.50 -0.25 0.00 0.25 0.50 0.75 1.00" {
		t.Errorf("ticks over [-1, 1]: %s", got)
	}
}

// pairsOf makes n pairs per stratum, stratum k's labels around centre[k]
// with spread, and lexical parts lex.
func pairsOf(centre map[string]float64, n int, spread float64, lex float32) []schemas.LabeledPair {
	var out []schemas.LabeledPair
	for _, st := range Strata {
		c, ok := centre[st]
		if !ok {
			continue
		}
		for i := range n {
			l := c + spread*(float64(i)/float64(n-1)-0.5)
			out = append(out, schemas.LabeledPair{PairID: fmt.Sprintf("%s-%03d", st, i), Stratum: st, Label: float32(l),
				LabelContext: float32(2*l) - lex, LabelLexical: lex, LabelAlign: float32(0.5 + l/2), Sentence1: "a " + st,
				Sentence2: fmt.Sprint("b ", i)})
		}
	}
	return out
}

func findings(q Quality, level string) string {
	var out []string
	for _, f := range q.Findings {
		if f.Level == level {
			out = append(out, f.Text)
		}
	}
	return strings.Join(out, "\n")
}

func TestAssessQuality(t *testing.T) {
	counts := map[string]int64{"near": 1, "mid": 1, "far": 1, "random": 1}
	good := AssessQuality(pairsOf(map[string]float64{"near": 0.6, "mid": 0.4, "far": 0.2, "random": 0}, 50, 0.1, 0.3), counts, method.LabelerHybrid)
	if w := findings(good, Warn); w != "" {
		t.Errorf("separated strata warned: %s", w)
	}
	if g := findings(good, Good); !strings.Contains(g, "expected order") {
		t.Errorf("separated strata: %q", g)
	}
	if near := good.Strata[0]; near.AboveRandom != 1 || math.Abs(near.Median-0.6) > 1e-6 {
		t.Errorf("near %+v", near)
	}

	// The user's corpus: medians 0.02-0.05, the lexical part ~0.
	flat := AssessQuality(pairsOf(map[string]float64{"near": 0.05, "mid": 0.04, "far": 0.03, "random": 0.02}, 50, 0.3, 0), counts, method.LabelerHybrid)
	w := findings(flat, Warn)
	if !strings.Contains(w, "barely separate") || !strings.Contains(w, "Eq. 4 halved") || !strings.Contains(w, "100%") {
		t.Errorf("overlapping strata, lexical part 0: %s", w)
	}

	wrong := AssessQuality(pairsOf(map[string]float64{"near": 0.1, "mid": 0.5, "random": 0}, 50, 0.1, 0.3),
		map[string]int64{"near": 50, "mid": 50, "random": 50}, method.LabelerOrigin)
	w = findings(wrong, Warn)
	if !strings.Contains(w, "wrong order") || !strings.Contains(w, "Stratum far has no pairs") {
		t.Errorf("wrong order and an empty stratum: %s", w)
	}
	mixed := AssessQuality(pairsOf(map[string]float64{"near": 0.09, "mid": 0.063, "far": 0.009, "random": 0.064}, 50, 0.3, 0.3), counts, method.LabelerHybrid)
	if w := findings(mixed, Warn); !strings.Contains(w, "mid (+0.063) is below random (+0.064); far (+0.009) is below random (+0.064)") ||
		!strings.Contains(w, "Medians: near +0.090") {
		t.Errorf("strata out of order beyond adjacent ones: %s", w)
	}
	if strings.Contains(w, "halved") {
		t.Errorf("origin labeler warned of the lexical part: %s", w)
	}
}

func TestExamplesAndShownSets(t *testing.T) {
	pairs := pairsOf(map[string]float64{"near": 0.6, "random": 0}, 21, 0.2, 0.3)
	ex := Examples(pairs)
	var got []string
	for _, e := range ex {
		got = append(got, e.Where+"="+e.Pair.PairID)
	}
	want := "near, 90th percentile=near-018 near, median=near-010 near, 10th percentile=near-002 " +
		"random, 90th percentile=random-018 random, median=random-010 random, 10th percentile=random-002 " +
		"highest overall=near-020 lowest overall=random-000"
	if strings.Join(got, " ") != want {
		t.Errorf("examples %v, want %s", got, want)
	}
	var sets []schemas.ContextSet
	for i := range 11 {
		sets = append(sets, schemas.ContextSet{SentenceID: fmt.Sprintf("s%02d", i),
			Contexts: []schemas.ScoredContext{{Score: float32(i)}}})
	}
	sets = append(sets, schemas.ContextSet{SentenceID: "empty"})
	var ids []string
	for _, cs := range ShownSets(sets, 3) {
		ids = append(ids, cs.SentenceID)
	}
	if fmt.Sprint(ids) != "[s10 s05 s00]" {
		t.Errorf("shown sets %v", ids)
	}
}

func TestSizeBins(t *testing.T) {
	sets := make([]schemas.ContextSet, 3)
	sets[1].Contexts = make([]schemas.ScoredContext, 2)
	sets[2].Contexts = make([]schemas.ScoredContext, 2)
	if l, c := sizeBins(sets); fmt.Sprint(l, c) != "[0 1 2] [1 0 2]" {
		t.Errorf("bins %v %v", l, c)
	}
	sets[2].Contexts = make([]schemas.ScoredContext, 500)
	if l, c := sizeBins(sets); len(l) != 39 || l[0] != "0–12" || c[0] != 2 || c[38] != 1 {
		t.Errorf("bins %v %v", l, c)
	}
}

func TestEvaluateCommand(t *testing.T) {
	st, _ := method.Preset("demo")
	st.TopK = 60
	got := EvaluateCommand(st, "c/index", "c/chunks/*.parquet", "m", "out")
	if !strings.Contains(got, "--preset=demo --top_k=60 ") || !strings.Contains(got, "--model=m ") || !strings.Contains(got, "--chunks='c/chunks/*.parquet'") {
		t.Errorf("command %s", got)
	}
}

func TestHarvestReport(t *testing.T) {
	st, _ := method.Preset("demo")
	summary := fmt.Sprintf(`{"settings": %s, "pairs_by_stratum": {"near": 50, "mid": 50, "far": 50, "random": 50},
		"pair_sampler": {"NearRank": 5, "MidRank": 20, "Neighbours": 60, "Quota": [2, 2, 2, 2]}}`, mustJSON(st))
	var sets []schemas.ContextSet
	for i := range 30 {
		cs := schemas.ContextSet{SentenceID: fmt.Sprint("s", i), Text: "a sentence"}
		for k := range i % 9 {
			cs.Contexts = append(cs.Contexts, schemas.ScoredContext{ChunkID: "c", Score: float32(10 - k)})
		}
		sets = append(sets, cs)
	}
	r, err := Harvest(HarvestInput{Title: "t", Output: "out", Summary: []byte(summary), Sets: sets,
		Pairs: pairsOf(map[string]float64{"near": 0.05, "mid": 0.04, "far": 0.03, "random": 0.02}, 50, 0.3, 0)})
	if err != nil {
		t.Fatal(err)
	}
	page := string(r.HTML())
	for _, want := range []string{"Are the labels any good?", "barely separate", "with its word-alignment part", "The aligned label is (8 label_align + Eq. 4 + label_embed)/10", "bin/evaluate --sts=",
		"Random pairs have a median label of +0.020", "rank below 5, mid below 20", "Pairs across the label range",
		`font-family:"Liberation Sans"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Index(page, "Are the labels any good?") > strings.Index(page, "What was labeled") {
		t.Error("the quality panel is not at the top")
	}
	imgs := regexp.MustCompile(`src="data:image/svg\+xml;base64,([^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(imgs) != 4 || r.Images() != 4 {
		t.Fatalf("%d SVG images (%d counted), want 4", len(imgs), r.Images())
	}
	svg, err := base64.StdEncoding.DecodeString(imgs[0][1])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(svg), "font-family:'Liberation Sans',Arial") || strings.Contains(string(svg), "Serif") ||
		!strings.Contains(string(svg), "viewBox=") {
		t.Errorf("plot SVG not in the page's font or not scalable: %.400s", svg)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestPlotsLeaveRoom checks the layout rules that keep a plot's text off
// its data and inside its frame (legends and tick labels had been seen
// overlapping and clipped in the browser).
func TestPlotsLeaveRoom(t *testing.T) {
	if got := strings.Join(wrapLabels([]string{"label", "Eq. 4 alone", "sentence vectors", "alignment"}), "|"); got != "label|Eq. 4\nalone|sentence\nvectors|alignment" {
		t.Errorf("wrapLabels: %q", got)
	}
	if got := strings.Join(wrapLabels([]string{"near", "far (3)"}), "|"); got != "near|far (3)" {
		t.Errorf("wrapLabels of short labels: %q", got)
	}
	b, err := Bars("t", "x", "y", []string{"a", "b", "c"}, []float64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if b.X.Min != -0.5 || b.X.Max != 2.5 {
		t.Errorf("bars' x range [%g, %g], want [-0.5, 2.5]: the end bars would be cut in half", b.X.Min, b.X.Max)
	}
	h, err := Histograms("t", "x", nil, map[string][]float64{"a": {0.1, 0.2}, "b": {0.5}}, 0, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	// The tallest bin is a fraction 1 (group b); the legend's two entries
	// need room above it.
	if h.Y.Max < 1.2 {
		t.Errorf("histograms' y axis ends at %g: no room above the data (1) for the legend", h.Y.Max)
	}
	bx, err := Boxes("t", "y", []string{"near", "random"}, map[string][]float64{"near": {1, 2, 3}, "random": {1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if bx.X.Tick.Marker == nil {
		t.Fatal("no tick marker")
	}
	var labels []string
	for _, tk := range bx.X.Tick.Marker.Ticks(bx.X.Min, bx.X.Max) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if strings.Join(labels, "|") != "near\n(3)|random\n(2)" {
		t.Errorf("box labels %q", labels)
	}
}
