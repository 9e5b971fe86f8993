package surrogatejob

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
)

func pairIDs(rows []schemas.LabeledPair) []string {
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.PairID+"/"+r.Split)
	}
	return ids
}

func TestDedupAndSplit(t *testing.T) {
	rows := []schemas.LabeledPair{
		{PairID: "c", Split: "train"},
		{PairID: "a", Split: "dev"},
		{PairID: "b", Split: "train", Label: 0.5},
		{PairID: "e", Split: "test"},
		{PairID: "b", Split: "train", Label: -1}, // a duplicate: the first row of b stays
		{PairID: "d", Split: "extra"},
		{PairID: "a", Split: "dev"},
	}
	rows, dups := dedup(rows)
	if dups != 2 {
		t.Errorf("%d duplicates dropped, want 2", dups)
	}
	if got, want := pairIDs(rows), []string{"a/dev", "b/train", "c/train", "d/extra", "e/test"}; !slices.Equal(got, want) {
		t.Fatalf("dedup: %v, want %v", got, want)
	}
	if rows[1].Label != 0.5 {
		t.Errorf("dedup kept the label %v of pair b, want the first row's 0.5", rows[1].Label)
	}

	train, dev, by, _ := splitPairs(rows, []string{"train", "extra"}, "dev", nil)
	if got, want := pairIDs(train), []string{"b/train", "c/train", "d/extra"}; !slices.Equal(got, want) {
		t.Errorf("training pairs %v, want %v", got, want)
	}
	if got, want := pairIDs(dev), []string{"a/dev"}; !slices.Equal(got, want) {
		t.Errorf("dev pairs %v, want %v", got, want)
	}
	if len(by) != 4 || by["train"] != 2 || by["dev"] != 1 || by["extra"] != 1 || by["test"] != 1 {
		t.Errorf("pairs by split %v", by)
	}
	if line := splitLine(by); line != "dev 1, extra 1, test 1, train 2" {
		t.Errorf("splitLine: %q", line)
	}
	// No dev split: no dev pairs.
	if _, dev, _, _ := splitPairs(rows, []string{"train"}, "", nil); len(dev) != 0 {
		t.Errorf("dev pairs without a dev split: %v", pairIDs(dev))
	}
	// Strata: only the pairs sampled as one of them, in both training and
	// dev pairs; the split counts still count every row.
	for i, st := range []string{"near", "random", "mid", "far", "near"} {
		rows[i].Stratum = st
	}
	train, dev, by, skipped := splitPairs(rows, []string{"train", "extra"}, "dev", []string{"mid", "far", "near"})
	if got, want := pairIDs(train), []string{"c/train", "d/extra"}; !slices.Equal(got, want) {
		t.Errorf("training pairs of strata near, mid, far: %v, want %v", got, want)
	}
	if got, want := pairIDs(dev), []string{"a/dev"}; !slices.Equal(got, want) {
		t.Errorf("dev pairs of strata near, mid, far: %v, want %v", got, want)
	}
	if skipped != 1 || by["train"] != 2 {
		t.Errorf("strata: %d pairs skipped (want 1), by split %v", skipped, by)
	}
}

func TestUseLabel(t *testing.T) {
	rows := []schemas.LabeledPair{{Label: 0.5, LabelAlign: 0.7, LabelEmbed: 0.2}, {Label: 0.1, LabelAlign: -0.3}}
	dev := []schemas.LabeledPair{{Label: 0.9, LabelAlign: 0.8}}
	if err := useLabel("align", rows, dev); err != nil {
		t.Fatal(err)
	}
	if rows[0].Label != 0.7 || rows[1].Label != -0.3 || dev[0].Label != 0.8 {
		t.Errorf("--label=align: labels %v %v %v", rows[0].Label, rows[1].Label, dev[0].Label)
	}
	if err := useLabel("context", rows, dev); err == nil || !strings.Contains(err.Error(), "no context part") {
		t.Errorf("--label=context with no context part recorded: %v", err)
	}
	// A weighted mix is the weighted mean of its columns.
	rows = []schemas.LabeledPair{{Label: 0.5, LabelAlign: 0.7, LabelEmbed: 0.3}, {Label: 0.1, LabelAlign: -0.2, LabelEmbed: 0.6}}
	dev = []schemas.LabeledPair{{Label: 0.9, LabelAlign: 0.8, LabelEmbed: 0.4}}
	if err := useLabel("align: 3, embed", rows, dev); err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{(3*0.7 + 0.3) / 4, (3*-0.2 + 0.6) / 4, (3*0.8 + 0.4) / 4} {
		got := rows[min(i, 1)].Label
		if i == 2 {
			got = dev[0].Label
		}
		if math.Abs(float64(got)-want) > 1e-6 {
			t.Errorf("--label=align:3,embed: row %d's target %v, want %v", i, got, want)
		}
	}
	// A negative weight can push a target past 1 or -1: it is clipped.
	rows = []schemas.LabeledPair{{LabelAlign: 1, LabelEmbed: 0.5}, {LabelAlign: -1, LabelEmbed: -0.2}, {LabelAlign: 0.6, LabelEmbed: 0.2}}
	if err := useLabel("align:1.25,embed:-0.25", rows); err != nil {
		t.Fatal(err)
	}
	if rows[0].Label != 1 || rows[1].Label != -1 || math.Abs(float64(rows[2].Label)-0.7) > 1e-6 {
		t.Errorf("--label=align:1.25,embed:-0.25: targets %v %v %v, want 1 -1 0.7", rows[0].Label, rows[1].Label, rows[2].Label)
	}
	if err := useLabel("align:1,context:2", rows, dev); err == nil || !strings.Contains(err.Error(), "no context part") {
		t.Errorf("a mix with a part not recorded: %v", err)
	}
}

func TestParseLabel(t *testing.T) {
	terms, err := parseLabel("align:0.75,embed:0.25")
	if err != nil || len(terms) != 2 || terms[0] != (labelTerm{"align", 0.75}) || terms[1] != (labelTerm{"embed", 0.25}) {
		t.Fatalf("parseLabel: %v %v", terms, err)
	}
	if terms, err := parseLabel("align:1.25,embed:-0.25"); err != nil || len(terms) != 2 || terms[1] != (labelTerm{"embed", -0.25}) {
		t.Errorf("parseLabel with a negative weight: %v %v", terms, err)
	}
	if terms, err := parseLabel("label"); err != nil || len(terms) != 1 || terms[0] != (labelTerm{"label", 1}) {
		t.Errorf("parseLabel(label): %v %v", terms, err)
	}
	for bad, want := range map[string]string{
		"cosine":             "unknown column",
		"align:2,align:1":    "named twice",
		"align:0,embed:1":    "nonzero number",
		"align:-1":           "add up to a positive number",
		"align:1,embed:-1":   "add up to a positive number",
		"align:x":            "nonzero number",
		"align:NaN":          "nonzero number",
		"align:+Inf,embed:1": "nonzero number",
		"align,":             "unknown column",
	} {
		if _, err := parseLabel(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseLabel(%q): %v, want an error with %q", bad, err, want)
		}
	}
}

func TestSizes(t *testing.T) {
	sizes, err := parseSizes("10, 0,3")
	if err != nil || !slices.Equal(sizes, []int{10, 0, 3}) {
		t.Fatalf("parseSizes: %v %v", sizes, err)
	}
	for _, bad := range []string{"x", "-1", "", ","} {
		if _, err := parseSizes(bad); err == nil {
			t.Errorf("parseSizes(%q) accepted", bad)
		}
	}
	// 0 and sizes beyond the 8 available pairs train on all 8, once.
	if got := planSizes([]int{10, 0, 3, 8}, 8); !slices.Equal(got, []int{3, 8}) {
		t.Errorf("planSizes: %v, want [3 8]", got)
	}
	if got := sizeLine([]int{3, 8}); got != "3, 8" {
		t.Errorf("sizeLine: %q", got)
	}
}
