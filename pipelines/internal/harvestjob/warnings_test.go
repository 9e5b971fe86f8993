package harvestjob

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/pipelines/internal/settings"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/harvest"
)

func harvestSettings(t *testing.T, preset string, sample float64) settings.Harvest {
	t.Helper()
	st, err := method.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	return settings.Harvest{Method: st, Sample: sample, Quota: "near:1,mid:1,far:1,random:1", Neighbours: 200}
}

func TestWarnWholeCorpus(t *testing.T) {
	lexical := harvestSettings(t, "default", 1)
	lexical.Method.Labeler = method.LabelerLexical
	for _, tc := range []struct {
		name string
		h    settings.Harvest
		warn bool
	}{
		{"default preset, whole corpus", harvestSettings(t, "default", 1), true},
		{"paper preset, whole corpus", harvestSettings(t, "paper", 1), true},
		{"a sample", harvestSettings(t, "default", 0.01), false},
		{"small preset", harvestSettings(t, "small", 1), false},
		{"demo preset", harvestSettings(t, "demo", 1), false},
		{"lexical labeler", lexical, false},
	} {
		var b bytes.Buffer
		WarnWholeCorpus(&b, "harvest", tc.h, 12345)
		out := b.String()
		if (out != "") != tc.warn {
			t.Errorf("%s: warning %q, want one: %v", tc.name, out, tc.warn)
		}
		if tc.warn && (!strings.HasPrefix(out, "warning: harvest: ") || !strings.Contains(out, "12345 sentences") || !strings.Contains(out, "--sample")) {
			t.Errorf("%s: warning %q", tc.name, out)
		}
	}
	var b bytes.Buffer
	WarnWholeCorpus(&b, "refresh", harvestSettings(t, "default", 1), -1)
	if !strings.Contains(b.String(), "every sentence of the corpus") {
		t.Errorf("unknown count: %q", b.String())
	}
}

func TestWarnEmptyStrata(t *testing.T) {
	h := harvestSettings(t, "default", 0.01)
	for _, tc := range []struct {
		name    string
		strata  map[string]int64
		quota   string
		labeled int64
		want    string
	}{
		{"all filled", map[string]int64{"near": 3, "mid": 2, "far": 1, "random": 4}, "", 10, ""},
		{"far empty", map[string]int64{"near": 3, "mid": 2, "random": 4}, "", 9, "no pair in the far stratum"},
		{"near and far empty", map[string]int64{"mid": 2, "random": 4}, "", 6, "no pair in the near and far strata"},
		{"far not asked for", map[string]int64{"near": 3, "mid": 2, "random": 4}, "near:1,mid:1,random:1", 9, ""},
		{"nothing labeled", map[string]int64{}, "", 0, ""},
	} {
		hh := h
		if tc.quota != "" {
			hh.Quota = tc.quota
		}
		var b bytes.Buffer
		WarnEmptyStrata(&b, harvest.Summary{Labeled: tc.labeled, ByStratum: tc.strata}, hh)
		out := b.String()
		if tc.want == "" && out != "" || tc.want != "" && !strings.Contains(out, tc.want) {
			t.Errorf("%s: warning %q, want %q", tc.name, out, tc.want)
		}
		if out != "" && (!strings.HasPrefix(out, "warning: harvest: ") || !strings.Contains(out, "--sample") || !strings.Contains(out, "--pair_neighbours")) {
			t.Errorf("%s: warning %q", tc.name, out)
		}
	}
}

func TestWarnEmptyStrataWholeCorpus(t *testing.T) {
	var b bytes.Buffer
	WarnEmptyStrata(&b, harvest.Summary{Labeled: 5, ByStratum: map[string]int64{"near": 3, "mid": 2, "random": 1}}, harvestSettings(t, "default", 1))
	if out := b.String(); !strings.Contains(out, "far stratum") || strings.Contains(out, "--sample") || !strings.Contains(out, "--pair_neighbours") {
		t.Errorf("the whole corpus sampled: %q", out)
	}
}

func TestWarnFewPairsPerSet(t *testing.T) {
	lexical := harvestSettings(t, "default", 0.01)
	lexical.Method.Labeler = method.LabelerLexical
	for _, tc := range []struct {
		name          string
		h             settings.Harvest
		labeled, sets int64
		want          string
	}{
		{"three pairs a set", harvestSettings(t, "default", 0.01), 30, 10, "3.0 pairs per context set"},
		{"179 pairs a set", harvestSettings(t, "default", 0.01), 1790, 10, ""},
		{"just under the bar", harvestSettings(t, "default", 0.01), 199, 10, "19.9 pairs per context set"},
		{"a small preset", harvestSettings(t, "small", 0.01), 30, 10, ""},
		{"no context sets (lexical)", lexical, 30, 0, ""},
		{"nothing labeled", harvestSettings(t, "default", 0.01), 0, 10, ""},
	} {
		var b bytes.Buffer
		WarnFewPairsPerSet(&b, harvest.Summary{Labeled: tc.labeled, ContextSets: tc.sets, CPUSecondsPerPair: 0.04}, tc.h)
		out := b.String()
		if tc.want == "" && out != "" || tc.want != "" && !strings.Contains(out, tc.want) {
			t.Errorf("%s: note %q, want %q", tc.name, out, tc.want)
		}
		if out != "" && (!strings.HasPrefix(out, "note: harvest: ") || !strings.Contains(out, "--pair_quota (now near:1,mid:1,far:1,random:1)") ||
			!strings.Contains(out, "0.04 CPU seconds per pair")) {
			t.Errorf("%s: note %q", tc.name, out)
		}
	}
}

func TestSentenceCount(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "sentences")
	if err := storage.WriteTable(ctx, dir, []schemas.Sentence{{ID: "a"}, {ID: "b"}, {ID: "c"}}); err != nil {
		t.Fatal(err)
	}
	if n := SentenceCount(ctx, dir+"/*.parquet"); n != 3 {
		t.Errorf("%d sentences in the table's manifest, want 3", n)
	}
	if n := SentenceCount(ctx, filepath.Join(t.TempDir(), "none/*.parquet")); n >= 0 {
		t.Errorf("a missing table has %d sentences, want an unknown count", n)
	}
}

func TestWarnUnknownRevision(t *testing.T) {
	var b bytes.Buffer
	WarnUnknownRevision(&b, "refresh", harvest.Tool{Revision: harvest.UnknownRevision})
	if out := b.String(); !strings.HasPrefix(out, "warning: refresh: ") || !strings.Contains(out, "make build") || !strings.Contains(out, `"unknown"`) {
		t.Errorf("warning %q", out)
	}
	b.Reset()
	WarnUnknownRevision(&b, "harvest", harvest.Tool{Revision: "9d6e970"})
	if b.Len() != 0 {
		t.Errorf("a build with a revision was warned: %q", b.String())
	}
}
