package nanjson

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

type inner struct {
	Loss float64 `json:"loss"`
}

type Outer struct {
	Z float64 `json:"z"`
}

type result struct {
	Name     string   `json:"name"`
	Spearman float64  `json:"spearman_x100"`
	Other    *float64 `json:"other,omitempty"`
	Skip     float64  `json:"-"`
	Empty    []int    `json:"empty,omitempty"`
	Plain    int
	inner
	*Outer
}

// A document without NaN is what encoding/json writes.
func TestMarshalIndentFinite(t *testing.T) {
	doc := map[string]any{"results": []result{{Name: "a", Spearman: 1.5, inner: inner{2}}}, "n": 3}
	want, _ := json.MarshalIndent(doc, "", "  ")
	got, nulls, err := MarshalIndent(doc, "", "  ")
	if err != nil || !bytes.Equal(got, want) || nulls != nil {
		t.Fatalf("MarshalIndent = %s, %v, %v; want %s", got, nulls, err, want)
	}
}

// NaN and infinite numbers become null, each reported with its path; the
// rest is what encoding/json would write with them replaced by zeros.
func TestMarshalIndentNaN(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	doc := map[string]any{
		"results": []result{
			{Name: "tfidf", Spearman: 40, Skip: nan},
			{Name: "origin", Spearman: nan, Other: &inf, inner: inner{nan}, Outer: &Outer{Z: 1}},
		},
		"seconds": 1.25,
		"curve":   map[string][]float32{"loss": {1, float32(nan)}},
	}
	got, nulls, err := MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	zero := 0.0
	ref := map[string]any{
		"results": []result{
			{Name: "tfidf", Spearman: 40},
			{Name: "origin", Spearman: 0, Other: &zero, inner: inner{0}, Outer: &Outer{Z: 1}},
		},
		"seconds": 1.25,
		"curve":   map[string][]float32{"loss": {1, 0}},
	}
	want, _ := json.MarshalIndent(ref, "", "  ")
	// The zeros that stand for the nulls in the reference: other, loss
	// and spearman of "origin", the curve's second loss.
	w := string(want)
	w = strings.Replace(w, `"loss": [
      1,
      0
    ]`, `"loss": [
      1,
      null
    ]`, 1)
	w = strings.Replace(w, `"spearman_x100": 0,
      "other": 0,`, `"spearman_x100": null,
      "other": null,`, 1)
	w = strings.Replace(w, `"loss": 0,`, `"loss": null,`, 1)
	if string(got) != w {
		t.Errorf("got\n%s\nwant\n%s", got, w)
	}
	var paths []string
	for _, n := range nulls {
		paths = append(paths, n.String())
	}
	wantPaths := []string{
		"curve.loss[1] is NaN",
		`results[1].spearman_x100 (of "origin") is NaN (a correlation of constant scores?)`,
		`results[1].other (of "origin") is +Inf`,
		`results[1].loss (of "origin") is NaN`,
	}
	if strings.Join(paths, "\n") != strings.Join(wantPaths, "\n") {
		t.Errorf("nulls:\n%s\nwant:\n%s", strings.Join(paths, "\n"), strings.Join(wantPaths, "\n"))
	}
}

// Document warns once per null, naming the job and the file.
func TestDocument(t *testing.T) {
	var warn bytes.Buffer
	b, err := Document(&warn, "evaluate", "results.json", map[string]float64{"spearman": math.NaN()})
	if err != nil || string(b) != "{\n  \"spearman\": null\n}\n" {
		t.Fatalf("Document = %q, %v", b, err)
	}
	want := "evaluate: warning: results.json: spearman is NaN (a correlation of constant scores?); written as null\n"
	if warn.String() != want {
		t.Errorf("warning %q, want %q", warn.String(), want)
	}
	if _, err := Document(&warn, "evaluate", "results.json", map[string]any{"f": func() {}}); err == nil ||
		!strings.Contains(err.Error(), "results.json") {
		t.Errorf("an unencodable value: %v", err)
	}
	if !json.Valid(b) {
		t.Error("not valid JSON")
	}
}

type node struct {
	X    float64 `json:"x"`
	Next *node   `json:"next"`
}

// A value encoding/json refuses for another reason (a cycle) is an error,
// not taken apart.
func TestMarshalIndentCycle(t *testing.T) {
	n := &node{X: math.NaN()}
	n.Next = n
	if _, _, err := MarshalIndent(n, "", "  "); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("a cycle: %v", err)
	}
}
