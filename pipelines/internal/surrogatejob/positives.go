package surrogatejob

import (
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/ctxsim/ctxsim/scoring/surrogate"
)

// DefaultPositives is the fraction of the training pairs, the best
// labelled, that are the positives of contrastive and multisim unless
// --threshold is given: the labels' scale depends on the labeler and the
// corpus (the demo's top out near 0.64, where an absolute 0.5 keeps 1.4%
// of the pairs), their order does not.
const DefaultPositives = 0.1

// MinPositives is the fewest positives a contrastive or multisim run is
// trained on without a warning.
const MinPositives = 100

// positivesJSON is results.json's account of the positives of contrastive
// and multisim: the rule, the threshold it gave and how many of the
// training pairs it keeps.
type positivesJSON struct {
	// Rule is "quantile" (the top Fraction of the training pairs by
	// label, the default), "threshold" (--threshold) or "batch_quantile"
	// (--top_quantile: the top Fraction of each batch).
	Rule     string `json:"rule"`
	Fraction num    `json:"fraction,omitempty"`
	// Threshold is the label a positive has at least (none under
	// batch_quantile); Positives counts the training pairs labelled at
	// least that (under batch_quantile, ⌈Fraction·TrainPairs⌉ about).
	Threshold  *num     `json:"threshold,omitempty"`
	Positives  int      `json:"positives"`
	TrainPairs int      `json:"train_pairs"`
	MaxLabel   num      `json:"max_label"`
	Warning    string   `json:"warning,omitempty"`
	Objectives []string `json:"objectives"`
}

// choosePositives sets the threshold of the objectives that have
// positives (contrastive, multisim) from the training labels, as c asks
// (see positivesJSON), says on w which pairs are positives, warns on warn
// when they are few, and returns the account for results.json; nil when
// no objective has positives.
func choosePositives(w, warn io.Writer, c Config, objs []surrogate.ObjectiveConfig, labels []float32) (*positivesJSON, error) {
	var names []string
	for _, o := range objs {
		if o.HasPositives() {
			names = append(names, o.Name)
		}
	}
	if len(names) == 0 || len(labels) == 0 {
		return nil, nil
	}
	sorted := append([]float32(nil), labels...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] > sorted[j] })
	p := &positivesJSON{TrainPairs: len(labels), MaxLabel: num(sorted[0]), Objectives: names}
	thr := c.Threshold
	switch {
	case c.TopQuantile > 0:
		p.Rule, p.Fraction = "batch_quantile", num(c.TopQuantile)
		p.Positives = int(math.Ceil(c.TopQuantile * float64(len(labels))))
	case c.ThresholdGiven:
		p.Rule = "threshold"
	default:
		if !(c.Positives > 0 && c.Positives <= 1) {
			return nil, fmt.Errorf("--positives %v: want a fraction in (0, 1]", c.Positives)
		}
		p.Rule, p.Fraction = "quantile", num(c.Positives)
		k := int(math.Ceil(c.Positives * float64(len(sorted))))
		thr = float64(sorted[max(k, 1)-1])
	}
	if p.Rule != "batch_quantile" {
		thr = min(max(thr, -1), 1)
		t := num(thr)
		p.Threshold = &t
		for _, l := range labels {
			if float64(l) >= thr {
				p.Positives++
			}
		}
		for i := range objs {
			if objs[i].HasPositives() {
				objs[i].Threshold = thr
			}
		}
	}
	switch p.Rule {
	case "quantile":
		fmt.Fprintf(w, "surrogate: %v: positives are the %d of %d training pairs labelled at least %.4f (the top %g by label, --positives; the labels top out at %.4f)\n",
			names, p.Positives, len(labels), thr, c.Positives, sorted[0])
	case "threshold":
		fmt.Fprintf(w, "surrogate: %v: positives are the %d of %d training pairs labelled at least --threshold=%g (the labels top out at %.4f)\n",
			names, p.Positives, len(labels), thr, sorted[0])
	default:
		fmt.Fprintf(w, "surrogate: %v: positives are the top %g of each batch by label (--top_quantile), about %d of %d training pairs\n",
			names, c.TopQuantile, p.Positives, len(labels))
	}
	perBatch := float64(p.Positives) * float64(max(c.BatchSize, 1)) / float64(len(labels))
	if p.Positives < MinPositives || perBatch < 1 {
		p.Warning = fmt.Sprintf("only %d positives of %d training pairs (%.2f per batch of %d): %v learn from few pairs; "+
			"lower --threshold, raise --positives, or harvest more pairs", p.Positives, len(labels), perBatch, c.BatchSize, names)
		fmt.Fprintf(warn, "surrogate: warning: %s\n", p.Warning)
	}
	return p, nil
}
