package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/ctxsim/ctxsim/scoring/surrogate"
)

func report(w io.Writer, rs []result) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "encoder\tSpearman x100\tMRR\tHits@1\tHits@3\ttrain pairs\ttrain s\tdev Spearman\tsentences/s/core")
	f := func(x *num, format string) string {
		if x == nil || math.IsNaN(float64(*x)) || math.IsInf(float64(*x), 0) {
			return "-"
		}
		return fmt.Sprintf(format, float64(*x))
	}
	for _, r := range rs {
		var mrr, h1, h3, dev, enc *num
		if r.EvalRank != nil {
			mrr, h1, h3 = &r.EvalRank.MRR, &r.EvalRank.Hits1, &r.EvalRank.Hits3
		}
		if r.FinalDev != nil {
			dev = &r.FinalDev.Spearman
		}
		if r.Encode != nil {
			enc = &r.Encode.SentencesPerSecPerCore
		}
		pairs, secs := "-", "-"
		if r.Kind == "surrogate" {
			pairs, secs = strconv.Itoa(r.TrainPairs), fmt.Sprintf("%.2f", float64(r.TrainSeconds))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, f(r.Spearman100, "%.2f"), f(mrr, "%.4f"),
			f(h1, "%.4f"), f(h3, "%.4f"), pairs, secs, f(dev, "%.4f"), f(enc, "%.0f"))
	}
	tw.Flush()
}

// reportCurve prints the learning curve: STS Spearman ×100 (and MRR) of
// each objective at each training-set size.
func reportCurve(w io.Writer, objs []surrogate.ObjectiveConfig, plan []int, lc map[string][]curvePoint) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	head := "learning curve: Spearman x100 (MRR)"
	for _, n := range plan {
		head += fmt.Sprintf("\t%d pairs", n)
	}
	fmt.Fprintln(tw, head)
	for _, oc := range objs {
		line := oc.Name
		for _, p := range lc[oc.Name] {
			cell := "-"
			if p.Spearman100 != nil {
				cell = fmt.Sprintf("%.2f", float64(*p.Spearman100))
				if p.EvalRank != nil {
					cell += fmt.Sprintf(" (%.3f)", float64(p.EvalRank.MRR))
				}
			} else if p.DevSpearman != nil {
				cell = fmt.Sprintf("dev %.3f", float64(*p.DevSpearman))
			}
			line += "\t" + cell
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}
