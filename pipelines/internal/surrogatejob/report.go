package surrogatejob

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/ctxsim/ctxsim/pipelines/internal/report"
	"github.com/ctxsim/ctxsim/scoring/surrogate"
)

func printTable(w io.Writer, rs []result) {
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

// htmlReport builds report.html: the table of encoders and baselines, and
// the learning curves (STS Spearman and EvalRank MRR against training
// pairs) per objective with the baselines as horizontal lines.
func htmlReport(title string, out *results, objs []surrogate.ObjectiveConfig, plan []int) (*report.Report, error) {
	r := report.New(title)
	r.Text("Training pairs: %d (of %d read from %v, %d duplicates dropped); STS file: %s, %d pairs.", out.TrainPairs,
		out.PairsRead, out.Pairs, out.DuplicatesDropped, out.STS, out.STSPairs)
	f := func(x *num, format string) string {
		if x == nil || math.IsNaN(float64(*x)) || math.IsInf(float64(*x), 0) {
			return "-"
		}
		return fmt.Sprintf(format, float64(*x))
	}
	var rows [][]string
	for _, x := range out.Results {
		var mrr *num
		if x.EvalRank != nil {
			mrr = &x.EvalRank.MRR
		}
		pairs := "-"
		if x.Kind == "surrogate" {
			pairs = strconv.Itoa(x.TrainPairs)
		}
		rows = append(rows, []string{x.Name, x.Kind, f(x.Spearman100, "%.2f"), f(mrr, "%.3f"), pairs, x.Note})
	}
	r.Table([]string{"encoder", "kind", "STS Spearman ×100", "EvalRank MRR", "training pairs", "note"}, rows)
	if p := out.Positives; p != nil {
		line := fmt.Sprintf("Positives of %v: %d of %d training pairs (rule %s", p.Objectives, p.Positives, p.TrainPairs, p.Rule)
		if p.Threshold != nil {
			line += fmt.Sprintf(", labels at least %.4f", float64(*p.Threshold))
		}
		r.Text("%s; the labels top out at %.4f).", line, float64(p.MaxLabel))
		if p.Warning != "" {
			r.Text("Warning: %s.", p.Warning)
		}
	}
	if err := trainingCurves(r, out); err != nil {
		return nil, err
	}
	if len(out.LearningCurve) == 0 || out.STS == "" {
		return r, nil
	}
	var sp, mrr []report.Series
	for _, oc := range objs {
		s1, s2 := report.Series{Name: oc.Name}, report.Series{Name: oc.Name}
		for _, p := range out.LearningCurve[oc.Name] {
			if p.Spearman100 != nil {
				s1.X, s1.Y = append(s1.X, float64(p.Pairs)), append(s1.Y, float64(*p.Spearman100))
			}
			if p.EvalRank != nil {
				s2.X, s2.Y = append(s2.X, float64(p.Pairs)), append(s2.Y, float64(p.EvalRank.MRR))
			}
		}
		sp, mrr = append(sp, s1), append(mrr, s2)
	}
	var spLevels, mrrLevels []report.Level
	for _, x := range out.Results {
		if x.Kind == "surrogate" {
			continue
		}
		if x.Spearman100 != nil {
			spLevels = append(spLevels, report.Level{Name: x.Name, Y: float64(*x.Spearman100)})
		}
		if x.EvalRank != nil {
			mrrLevels = append(mrrLevels, report.Level{Name: x.Name, Y: float64(x.EvalRank.MRR)})
		}
	}
	p, err := report.Curves("STS Spearman ×100 against training pairs", "training pairs (log scale)", "Spearman ×100", sp, spLevels, true)
	if err != nil {
		return nil, err
	}
	if err := r.Plot(p, 11, 5.5, "Learning curves: STS Spearman ×100 per objective; dashed lines are the baselines and the labels' own Spearman"); err != nil {
		return nil, err
	}
	p, err = report.Curves("EvalRank MRR against training pairs", "training pairs (log scale)", "MRR", mrr, mrrLevels, true)
	if err != nil {
		return nil, err
	}
	if err := r.Plot(p, 11, 5.5, "Learning curves: EvalRank MRR per objective; dashed lines are the baselines"); err != nil {
		return nil, err
	}
	return r, nil
}

// trainingCurves plots each encoder's training curve, epoch by epoch: its
// dev Spearman (with the untrained encoder's at epoch 0) when there are
// dev pairs, and its training loss.
func trainingCurves(r *report.Report, out *results) error {
	var dev, loss []report.Series
	for _, x := range out.Results {
		if x.Kind != "surrogate" || x.Curve == nil || len(x.Curve.Epochs) == 0 {
			continue
		}
		d, l := report.Series{Name: x.Name}, report.Series{Name: x.Name}
		if in := x.Curve.Init; in != nil && finite(in.Spearman) {
			d.X, d.Y = append(d.X, 0), append(d.Y, float64(in.Spearman))
		}
		for _, e := range x.Curve.Epochs {
			if e.Dev != nil && finite(e.Dev.Spearman) {
				d.X, d.Y = append(d.X, float64(e.Epoch)), append(d.Y, float64(e.Dev.Spearman))
			}
			if finite(e.TrainLoss) {
				l.X, l.Y = append(l.X, float64(e.Epoch)), append(l.Y, float64(e.TrainLoss))
			}
		}
		if len(d.X) > 0 {
			dev = append(dev, d)
		}
		if len(l.X) > 0 {
			loss = append(loss, l)
		}
	}
	if len(dev) > 0 {
		p, err := report.Curves("Dev Spearman per epoch", "epoch", "dev Spearman", dev, nil, false)
		if err != nil {
			return err
		}
		if err := r.Plot(p, 8, 5, "Training curves: Spearman of cosine against the label on the dev pairs, after each epoch (0: untrained)"); err != nil {
			return err
		}
	}
	if len(loss) > 0 {
		p, err := report.Curves("Training loss per epoch", "epoch", "training loss", loss, nil, false)
		if err != nil {
			return err
		}
		if err := r.Plot(p, 8, 5, "Training curves: mean training loss per epoch (each objective's loss on its own scale)"); err != nil {
			return err
		}
	}
	return nil
}

func finite(x num) bool { return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) }
