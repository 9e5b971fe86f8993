package evaluation

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/scoring/method"
)

func TestSplitVariants(t *testing.T) {
	got := SplitVariants(" origin, lambda(ctx:1,disc:0.5),set_20,rerank_by(disc) ,")
	if fmt.Sprint(got) != "[origin lambda(ctx:1,disc:0.5) set_20 rerank_by(disc)]" {
		t.Fatalf("%q", got)
	}
}

func TestMakeVariants(t *testing.T) {
	base := method.Defaults()
	vs, err := MakeVariants(base, []string{"origin", "paper", "lambda(ctx:1,disc:0.5)", "rerank_by(disc)", "set_600",
		"cosine", "random_contexts", "no_diversity", "signal_30", "ensemble"})
	if err != nil {
		t.Fatal(err)
	}
	if vs[0].Settings.JSON() != base.JSON() {
		t.Fatalf("origin %s", vs[0].Settings.JSON())
	}
	p := vs[1].Settings
	if p.RerankBy != "disc" || p.Similarity != "cosine" || p.Labeler != "origin" || len(p.Lambda) != 4 || p.TopK != base.TopK {
		t.Fatalf("paper %+v", p)
	}
	if l := vs[2].Settings.Lambda; l["disc"] != 0.5 || l["ctx"] != 1 || len(l) != 2 {
		t.Fatalf("lambda %v", l)
	}
	// zwhite is defined for the ctx term alone: a variant that adds others
	// reads the base's zwhite as zref, and one that keeps ctx alone keeps it.
	if base.Similarity != method.SimilarityZWhite || vs[2].Settings.Similarity != method.SimilarityZRef ||
		vs[3].Settings.Similarity != method.SimilarityZWhite {
		t.Fatalf("similarities: base %s, lambda(ctx:1,disc:0.5) %s, rerank_by(disc) %s", base.Similarity,
			vs[2].Settings.Similarity, vs[3].Settings.Similarity)
	}
	if z, err := MakeVariants(base, []string{"zref", "zwhite", "overlap"}); err != nil || z[0].Settings.Similarity != method.SimilarityZRef ||
		z[1].Settings.Similarity != method.SimilarityZWhite || z[2].Settings.Similarity != method.SimilarityOverlap {
		t.Fatalf("zref, zwhite, overlap: %+v %v", z, err)
	}
	// overlap, like zwhite, is read as zref when the terms are others.
	ov := base
	ov.Similarity = method.SimilarityOverlap
	if z, err := MakeVariants(ov, []string{"lambda(ctx:1,disc:0.5)", "origin"}); err != nil ||
		z[0].Settings.Similarity != method.SimilarityZRef || z[1].Settings.Similarity != method.SimilarityOverlap {
		t.Fatalf("variants of an overlap base: %+v %v", z, err)
	}
	if vs[3].Settings.RerankBy != "disc" || vs[4].Settings.SetSize != 600 || vs[4].Settings.Rerank != 1200 ||
		vs[5].Settings.Similarity != "cosine" || !vs[6].Settings.RandomContexts || vs[7].Settings.Diversity ||
		vs[8].Settings.SetSize != 30 {
		t.Fatalf("variants %+v", vs)
	}
	// Variants do not share the base's weights.
	if len(base.Lambda) != 1 {
		t.Fatalf("the base weights changed: %v", base.Lambda)
	}
	for _, bad := range []string{"nope", "set_x", "lambda(ctx)", "lambda(ctx:0)", "signal_0", "disc_only"} {
		b := base
		if bad == "disc_only" {
			// Valid on its own; the engine rejects it when no model
			// computes the term, not here.
			if _, err := MakeVariants(b, []string{bad}); err != nil {
				t.Fatalf("%s: %v", bad, err)
			}
			continue
		}
		if _, err := MakeVariants(b, []string{bad}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if e := vs[9].Settings; e.Labeler != method.LabelerEnsemble || e.Similarity != base.Similarity || e.SetSize != base.SetSize {
		t.Fatalf("ensemble %+v", e)
	}
}

func TestVerdictAndReport(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	n := 150
	o := &Output{Gold: make([]float64, n), Columns: []string{"tfidf", "tfidf_stem", "ctx_cosine", "origin", "origin:eq4"}}
	for i := range o.Gold {
		o.Gold[i] = float64(i % 6)
	}
	for range o.Columns {
		o.Pred = append(o.Pred, o.Gold)
	}
	o.Results = []Result{{Name: "tfidf", Spearman100: 75.2, Pairs: n}, {Name: "tfidf_stem", Spearman100: 77.1, Pairs: n},
		{Name: "ctx_cosine", Spearman100: 77.6, Pairs: n},
		{Name: "origin", Labeler: "hybrid", Spearman100: 74.7, Eq4Spearman100: f(60.2), Eq4OtherSpearman100: f(59), OtherSimilarity: "pearson", Pairs: n}}
	v := o.Verdict()
	if len(v) != 3 || v[0].Level != "warn" || !strings.Contains(v[0].Text,
		"The harvested label (the configured settings, hybrid labeler) scores 74.7 Spearman ×100 on these 150 pairs: below the context "+
			"model's own cosine (77.6), the stemmed TF-IDF baseline (77.1) and the unigram TF-IDF baseline (75.2). It does not clear the bar: "+
			"ctx_cosine scores higher") {
		t.Fatalf("verdict %+v", v)
	}
	if !strings.Contains(v[1].Text, "Eq. 4 alone") || !strings.Contains(v[2].Text, "On 150 pairs") {
		t.Fatalf("verdict %+v", v)
	}
	if strings.Contains(v[1].Text, "clear the bar") {
		t.Fatalf("Eq. 4 alone judged as the label: %s", v[1].Text)
	}
	o.Results[3].Spearman100 = 76
	if v := o.Verdict(); !strings.Contains(v[0].Text, "below the context model's own cosine (77.6) and the stemmed TF-IDF baseline (77.1); above the unigram TF-IDF baseline (75.2).") {
		t.Fatalf("verdict between the baselines: %+v", v[0])
	}
	o.Results[3].Spearman100 = 80
	if v := o.Verdict(); v[0].Level != "good" || !strings.Contains(v[0].Text, "above the context model's own cosine (77.6), the stemmed TF-IDF baseline (77.1)") {
		t.Fatalf("verdict above the baselines: %+v", v[0])
	}
	// A baseline the verdict has no name for, and that beats the label,
	// still decides it: the strongest baseline is the bar.
	o.Results = append(o.Results[:3:3], Result{Name: "ctx_align", Spearman100: 80.3, Pairs: n}, Result{Name: "other_baseline", Spearman100: 79, Pairs: n}, o.Results[3])
	if v := o.Verdict(); v[0].Level != "warn" || !strings.Contains(v[0].Text, "below the context model's word alignment (80.3); above other_baseline (79.0), the context model's own cosine (77.6)") ||
		!strings.Contains(v[0].Text, "ctx_align scores higher") {
		t.Fatalf("verdict below ctx_align: %+v", v[0])
	}
	o.Results = append(o.Results[:3:3], o.Results[5])
	r, err := o.Report("t", "sts.tsv")
	if err != nil {
		t.Fatal(err)
	}
	page := string(r.HTML())
	if strings.Index(page, "Verdict") > strings.Index(page, "<table>") || strings.Contains(page, "Hybrid (origin)") ||
		!strings.Contains(page, "Label, hybrid (configured)") || !strings.Contains(page, "Eq. 4 alone (configured)") || r.Images() != 4 {
		t.Fatalf("report: verdict not first, or panels misnamed (%d images)", r.Images())
	}
	var b strings.Builder
	Table(&b, o.Results)
	if !strings.Contains(b.String(), "configured (hybrid)") {
		t.Fatalf("table:\n%s", b.String())
	}
}
