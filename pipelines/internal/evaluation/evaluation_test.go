package evaluation

import (
	"fmt"
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
