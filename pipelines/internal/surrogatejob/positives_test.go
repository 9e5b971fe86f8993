package surrogatejob

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/scoring/surrogate"
)

func objectives(t *testing.T) []surrogate.ObjectiveConfig {
	t.Helper()
	objs, err := parseObjectives("l2,contrastive,multisim", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// Labels that top out at 0.64, as the demo's: 1,000 pairs labelled
// 0.64·i/999.
func demoLabels() []float32 {
	labels := make([]float32, 1000)
	for i := range labels {
		labels[i] = float32(0.64 * float64(i) / 999)
	}
	return labels
}

// By default the positives are the top 10% of the training pairs by label,
// whatever the labels' scale; an explicit --threshold is kept, and a
// threshold that keeps few positives is warned about and recorded.
func TestChoosePositives(t *testing.T) {
	labels := demoLabels()
	var out, warn bytes.Buffer
	objs := objectives(t)
	p, err := choosePositives(&out, &warn, Config{Positives: DefaultPositives, BatchSize: 128}, objs, labels)
	if err != nil {
		t.Fatal(err)
	}
	if p.Rule != "quantile" || p.Positives != 100 || p.Threshold == nil || objs[0].Threshold != objectives(t)[0].Threshold ||
		objs[1].Threshold != float64(*p.Threshold) || objs[2].Threshold != float64(*p.Threshold) || warn.Len() != 0 {
		t.Fatalf("default: %+v, objectives %+v, warning %q", p, objs, warn.String())
	}
	if !strings.Contains(out.String(), "the 100 of 1000 training pairs labelled at least 0.5766") {
		t.Fatalf("printed %q", out.String())
	}

	out.Reset()
	objs = objectives(t)
	p, err = choosePositives(&out, &warn, Config{Threshold: 0.5, ThresholdGiven: true, Positives: DefaultPositives, BatchSize: 128}, objs, labels)
	if err != nil {
		t.Fatal(err)
	}
	if p.Rule != "threshold" || p.Positives != 219 || float64(*p.Threshold) != 0.5 || objs[1].Threshold != 0.5 || warn.Len() != 0 {
		t.Fatalf("--threshold=0.5: %+v, warning %q", p, warn.String())
	}

	p, err = choosePositives(&out, &warn, Config{Threshold: 0.63, ThresholdGiven: true, BatchSize: 128}, objectives(t), labels)
	if err != nil {
		t.Fatal(err)
	}
	if p.Positives != 16 || p.Warning == "" || !strings.Contains(warn.String(), "warning: only 16 positives of 1000") {
		t.Fatalf("--threshold=0.63: %+v, warning %q", p, warn.String())
	}

	warn.Reset()
	objs = objectives(t)
	p, err = choosePositives(&out, &warn, Config{TopQuantile: 0.2, BatchSize: 128}, objs, labels)
	if err != nil || p.Rule != "batch_quantile" || p.Threshold != nil || p.Positives != 200 || objs[1].Threshold != 0 {
		t.Fatalf("--top_quantile: %+v (%v)", p, err)
	}

	if p, err := choosePositives(&out, &warn, Config{Positives: DefaultPositives}, objectives(t)[:1], labels); p != nil || err != nil {
		t.Fatalf("l2 alone: %+v (%v), want no positives", p, err)
	}
	if _, err := choosePositives(&out, &warn, Config{Positives: 1.5}, objectives(t), labels); err == nil {
		t.Fatal("--positives=1.5 accepted")
	}
}

// A run of one size still plots its encoders' training curves.
func TestReportTrainingCurves(t *testing.T) {
	dev := func(s float64) *devJSON { return &devJSON{Spearman: num(s)} }
	out := &results{Results: []result{{Name: "l2", Kind: "surrogate", Curve: &curveJSON{Init: dev(0.1), Epochs: []epochJSON{
		{Epoch: 1, TrainLoss: 0.5, Dev: dev(0.3)}, {Epoch: 2, TrainLoss: 0.4, Dev: dev(0.4)}}}}},
		Positives: &positivesJSON{Rule: "quantile", Positives: 3, TrainPairs: 30, Warning: "only 3 positives"}}
	r, err := htmlReport("t", out, objectives(t), []int{30})
	if err != nil {
		t.Fatal(err)
	}
	html := string(r.HTML())
	if n := strings.Count(html, "<figure>"); n != 2 {
		t.Fatalf("%d plots in the report, want the dev Spearman and the training loss", n)
	}
	if !strings.Contains(html, "only 3 positives") {
		t.Fatal("the report does not carry the positives' warning")
	}
}
