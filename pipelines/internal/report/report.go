// Package report writes the self-contained report.html that harvest,
// evaluation, surrogate and refresh runs leave beside their outputs: text,
// tables and plots (drawn with gonum/plot and embedded as SVG data that
// scales to the page's width, in the page's font), in one file a person can
// open in any browser, with nothing to fetch.
package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Report is a page under construction.
type Report struct {
	title  string
	blocks []string
	images int
}

// New starts a report titled title.
func New(title string) *Report { return &Report{title: title} }

// Heading adds a section heading.
func (r *Report) Heading(text string) {
	r.blocks = append(r.blocks, "<h2>"+html.EscapeString(text)+"</h2>")
}

// Text adds a paragraph.
func (r *Report) Text(format string, args ...any) {
	r.blocks = append(r.blocks, "<p>"+html.EscapeString(fmt.Sprintf(format, args...))+"</p>")
}

// Pre adds preformatted text.
func (r *Report) Pre(text string) {
	r.blocks = append(r.blocks, "<pre>"+html.EscapeString(text)+"</pre>")
}

// Table adds a table with a header row.
func (r *Report) Table(header []string, rows [][]string) {
	var b strings.Builder
	b.WriteString("<table><thead><tr>")
	for _, h := range header {
		b.WriteString("<th>" + html.EscapeString(h) + "</th>")
	}
	b.WriteString("</tr></thead><tbody>")
	for _, row := range rows {
		b.WriteString("<tr>")
		for _, c := range row {
			b.WriteString("<td>" + html.EscapeString(c) + "</td>")
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table>")
	r.blocks = append(r.blocks, b.String())
}

// fontFamily is the page's font, and the plots': Liberation Sans, which
// gonum/plot measures its text with, or a font of the same metrics.
const fontFamily = `"Liberation Sans",Arial,Helvetica,sans-serif`

func init() {
	// Plot text in the page's family (gonum/plot's default is the serif).
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
}

// Plot adds p as an image that fills the content width, drawn at w×h
// inches (its text at that scale: draw a plot for the full width at about
// 11 inches wide), described by alt.
func (r *Report) Plot(p *plot.Plot, w, h float64, alt string) error {
	img, err := svgImage(p, w, h, alt)
	if err != nil {
		return err
	}
	r.images++
	r.blocks = append(r.blocks, fmt.Sprintf(`<figure>%s<figcaption>%s</figcaption></figure>`, img, html.EscapeString(alt)))
	return nil
}

// PlotRow adds plots side by side in cols equal columns (len(ps) when
// not positive) across the content width, each drawn at w×h inches and
// described by its alt.
func (r *Report) PlotRow(ps []*plot.Plot, cols int, w, h float64, alts []string) error {
	if cols <= 0 {
		cols = len(ps)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<div class="row" style="grid-template-columns:repeat(%d,minmax(0,1fr))">`, cols)
	for i, p := range ps {
		img, err := svgImage(p, w, h, alts[i])
		if err != nil {
			return err
		}
		r.images++
		fmt.Fprintf(&b, `<figure>%s<figcaption>%s</figcaption></figure>`, img, html.EscapeString(alts[i]))
	}
	b.WriteString(`</div>`)
	r.blocks = append(r.blocks, b.String())
	return nil
}

// svgImage renders p as an <img> of SVG data (which scales without
// blurring), its text in the page's font family.
func svgImage(p *plot.Plot, w, h float64, alt string) (string, error) {
	wt, err := p.WriterTo(vg.Length(w)*vg.Inch, vg.Length(h)*vg.Inch, "svg")
	if err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	svg := strings.ReplaceAll(buf.String(), "font-family:Liberation Sans;", "font-family:"+strings.ReplaceAll(fontFamily, `"`, "'")+";")
	return fmt.Sprintf(`<img alt="%s" src="data:image/svg+xml;base64,%s">`,
		html.EscapeString(alt), base64.StdEncoding.EncodeToString([]byte(svg))), nil
}

// Level of a finding: how a callout is coloured.
const (
	Good = "good"
	Warn = "warn"
	Info = "info"
)

// Finding is one sentence of a callout, at a level.
type Finding struct {
	Level, Text string
}

// Callout adds a boxed list of findings under a title, each marked by its
// level (a warning stands out), for what a reader must see first.
func (r *Report) Callout(title string, findings []Finding) {
	var b strings.Builder
	level := Good
	for _, f := range findings {
		if f.Level == Warn {
			level = Warn
		}
	}
	fmt.Fprintf(&b, `<div class="callout %s"><div class="callout-title">%s</div><ul>`, level, html.EscapeString(title))
	for _, f := range findings {
		mark := map[string]string{Good: "✓", Warn: "⚠", Info: "•"}[f.Level]
		fmt.Fprintf(&b, `<li class="%s"><span class="mark">%s</span> %s</li>`, f.Level, mark, html.EscapeString(f.Text))
	}
	b.WriteString(`</ul></div>`)
	r.blocks = append(r.blocks, b.String())
}

// Code adds a command a reader can copy.
func (r *Report) Code(text string) {
	r.blocks = append(r.blocks, `<pre class="code">`+html.EscapeString(text)+`</pre>`)
}

// Images is the number of plots added.
func (r *Report) Images() int { return r.images }

// HTML returns the page. A script marks on <body> how many of its images
// loaded (data-images-loaded="k/n") and how many fill the width of their
// figure (data-images-fill="k/n"), for browser tests.
func (r *Report) HTML() []byte {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>` + html.EscapeString(r.title) + `</title>
<style>
body{font-family:` + fontFamily + `;margin:2em auto;max-width:1100px;padding:0 1em;color:#222;line-height:1.4}
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.6em 0;font-size:.92em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f0f0f0}td{max-width:60em}
pre{background:#f7f7f7;padding:.6em;white-space:pre-wrap;font-size:.88em}
figure{margin:1em 0}figure img{display:block;width:100%;height:auto}figcaption{font-size:.85em;color:#555}
.row{display:grid;gap:1em}
.callout{border:1px solid #ccc;border-left:6px solid #2c7a2c;background:#f4faf4;padding:.5em 1em;margin:1em 0}
.callout.warn{border-left-color:#c0392b;background:#fdf3f2}
.callout-title{font-weight:bold;margin-bottom:.3em}.callout ul{margin:.2em 0;padding-left:1.2em;list-style:none}
.callout li{margin:.25em 0}.callout .mark{display:inline-block;width:1.2em;margin-left:-1.2em}
li.warn .mark{color:#c0392b}li.good .mark{color:#2c7a2c}li.info .mark{color:#555}
pre.code{background:#272822;color:#f8f8f2;padding:.6em;white-space:pre-wrap;word-break:break-all}
</style></head>
<body data-images-loaded="pending">
<h1>` + html.EscapeString(r.title) + `</h1>
<p class="generated">Generated ` + time.Now().UTC().Format(time.RFC3339) + `.</p>
`)
	for _, blk := range r.blocks {
		b.WriteString(blk)
		b.WriteString("\n")
	}
	b.WriteString(`<script>
window.addEventListener("load", function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  document.body.setAttribute("data-images-loaded", ok + "/" + imgs.length);
  var fill = imgs.filter(function (i) { return i.parentNode.clientWidth > 0 && i.clientWidth >= 0.95 * i.parentNode.clientWidth; }).length;
  document.body.setAttribute("data-images-fill", fill + "/" + imgs.length);
});
</script>
</body></html>
`)
	return []byte(b.String())
}

// Series is a named line of (x, y) points.
type Series struct {
	Name string
	X, Y []float64
}

// Level is a named horizontal line.
type Level struct {
	Name string
	Y    float64
}

var palette = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
	color.RGBA{227, 119, 194, 255}, color.RGBA{127, 127, 127, 255},
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.Legend.Top = true
	p.X.Tick.Marker, p.Y.Tick.Marker = NiceTicks{}, NiceTicks{}
	p.Add(gridLines())
	return p
}

// gridLines is a light grid at the major ticks.
func gridLines() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = color.Gray{225}, color.Gray{225}
	g.Vertical.Width, g.Horizontal.Width = vg.Points(0.5), vg.Points(0.5)
	return g
}

// NiceTicks labels an axis at 5 to 10 round values (steps of 1, 2, 2.5 or
// 5 times a power of ten), with an unlabelled minor tick between them.
type NiceTicks struct{}

// Ticks implements plot.Ticker.
func (NiceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	step := niceStep(lo, hi)
	first := math.Ceil(lo/step - 1e-9)
	prec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	if s := step * math.Pow(10, float64(prec)); math.Abs(s-math.Round(s)) > 1e-9 {
		prec++ // 2.5, 0.25, ...
	}
	var out []plot.Tick
	for k := first; k*step <= hi+step*1e-9; k++ {
		v := k * step
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
		if m := v + step/2; m <= hi {
			out = append(out, plot.Tick{Value: m})
		}
	}
	if m := first*step - step/2; m >= lo {
		out = append(out, plot.Tick{Value: m})
	}
	return out
}

// niceStep is the smallest round step that puts at most 10 ticks in
// [lo, hi] (at least 5 where a round step allows).
func niceStep(lo, hi float64) float64 {
	span := hi - lo
	base := math.Pow(10, math.Floor(math.Log10(span/10)))
	for _, m := range []float64{1, 2, 2.5, 5, 10, 20, 25, 50} {
		step := m * base
		if math.Floor(hi/step+1e-9)-math.Ceil(lo/step-1e-9)+1 <= 10 {
			return step
		}
	}
	return 100 * base
}

// Bars is a bar chart of counts over labelled bins, in their order.
func Bars(title, xLabel, yLabel string, labels []string, counts []float64) (*plot.Plot, error) {
	p := newPlot(title, xLabel, yLabel)
	bars, err := plotter.NewBarChart(plotter.Values(counts), vg.Points(max(4, 360/float64(max(len(counts), 1)))))
	if err != nil {
		return nil, err
	}
	bars.Color = palette[0]
	bars.LineStyle.Width = 0
	p.Add(bars)
	p.NominalX(thin(labels, 10)...)
	// Half a slot of room at each end, so that the first and last bars
	// are drawn whole.
	p.X.Min, p.X.Max = -0.5, float64(len(counts))-0.5
	return p, nil
}

// thin keeps every k-th label (blanking the others) so that at most n show.
func thin(labels []string, n int) []string {
	out := append([]string(nil), labels...)
	if len(out) <= n {
		return out
	}
	k := (len(out) + n - 1) / n
	for i := range out {
		if i%k != 0 {
			out[i] = ""
		}
	}
	return out
}

// Histograms overlays the histograms of several groups of values over
// [lo, hi) in bins bins, as lines of the fraction of each group per bin,
// coloured by their place in names (sorted group names when nil), as Boxes
// colours them.
func Histograms(title, xLabel string, names []string, groups map[string][]float64, lo, hi float64, bins int) (*plot.Plot, error) {
	p := newPlot(title, xLabel, "fraction of the group")
	p.X.Min, p.X.Max = lo, hi
	if names == nil {
		names = sortedKeys(groups)
	}
	entries := 0
	for i, name := range names {
		vs := groups[name]
		if len(vs) == 0 {
			continue
		}
		counts := make([]float64, bins)
		for _, v := range vs {
			k := int(math.Floor((v - lo) / (hi - lo) * float64(bins)))
			counts[min(max(k, 0), bins-1)]++
		}
		pts := make(plotter.XYs, bins)
		for k := range counts {
			pts[k].X = lo + (float64(k)+0.5)*(hi-lo)/float64(bins)
			pts[k].Y = counts[k] / float64(len(vs))
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.Color = palette[i%len(palette)]
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (%d)", name, len(vs)), l)
		entries++
	}
	legendRoom(p, entries)
	return p, nil
}

// legendRoom raises the top of p's y axis so that a legend of n entries,
// drawn in the top corner, sits above the data instead of over it.
func legendRoom(p *plot.Plot, n int) {
	if n == 0 || !(p.Y.Max > p.Y.Min) {
		return
	}
	if _, ok := p.Y.Scale.(plot.LogScale); ok {
		return
	}
	p.Y.Max = p.Y.Min + (p.Y.Max-p.Y.Min)*(1.08+0.07*float64(n))
}

// wrapLabels breaks tick labels into two lines, each at the space nearest
// its middle, when any of them is longer than 8 characters, so that the
// labels of narrow slots do not run into each other and all sit alike.
func wrapLabels(labels []string) []string {
	long := false
	for _, l := range labels {
		long = long || len(l) > 8
	}
	out := make([]string, len(labels))
	for i, l := range labels {
		out[i] = l
		if !long {
			continue
		}
		best := -1
		for j, r := range l {
			if r == ' ' && (best < 0 || abs(j-len(l)/2) < abs(best-len(l)/2)) {
				best = j
			}
		}
		if best >= 0 {
			out[i] = l[:best] + "\n" + l[best+1:]
		}
	}
	return out
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// Boxes is a box plot of each group's values, groups in the given order and
// coloured by their place in names, each labelled with its size when the
// sizes differ.
func Boxes(title, yLabel string, names []string, groups map[string][]float64) (*plot.Plot, error) {
	p := newPlot(title, "", yLabel)
	var shown []string
	// Counts label the boxes when they differ.
	sizes := map[int]bool{}
	for _, name := range names {
		if n := len(groups[name]); n > 0 {
			sizes[n] = true
		}
	}
	for i, name := range names {
		vs := groups[name]
		if len(vs) == 0 {
			continue
		}
		b, err := plotter.NewBoxPlot(vg.Points(30), float64(len(shown)), plotter.Values(vs))
		if err != nil {
			return nil, err
		}
		b.FillColor = palette[i%len(palette)]
		p.Add(b)
		if len(sizes) > 1 {
			name = fmt.Sprintf("%s (%d)", name, len(vs))
		}
		shown = append(shown, name)
	}
	p.NominalX(wrapLabels(shown)...)
	return p, nil
}

// Scatter plots y against x.
func Scatter(title, xLabel, yLabel string, x, y []float64) (*plot.Plot, error) {
	p := newPlot(title, xLabel, yLabel)
	pts := make(plotter.XYs, len(x))
	for i := range x {
		pts[i].X, pts[i].Y = x[i], y[i]
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	s.GlyphStyle.Radius = vg.Points(1.5)
	s.GlyphStyle.Shape = draw.CircleGlyph{}
	// Not premultiplied: color.RGBA with a colour channel above alpha is
	// invalid and draws another colour.
	s.GlyphStyle.Color = color.NRGBA{31, 119, 180, 140}
	p.Add(s)
	return p, nil
}

// Curves draws each series as a line with points, and each level as a
// dashed horizontal line across the series' x range; logX puts x on a
// logarithmic scale.
func Curves(title, xLabel, yLabel string, series []Series, levels []Level, logX bool) (*plot.Plot, error) {
	p := newPlot(title, xLabel, yLabel)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, x := range s.X {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	if logX && lo > 0 {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	for i, s := range series {
		pts := make(plotter.XYs, len(s.X))
		for j := range s.X {
			pts[j].X, pts[j].Y = s.X[j], s.Y[j]
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		l.Color, sc.Color = palette[i%len(palette)], palette[i%len(palette)]
		p.Add(l, sc)
		p.Legend.Add(s.Name, l, sc)
	}
	for i, lv := range levels {
		l, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lv.Y}, {X: hi, Y: lv.Y}})
		if err != nil {
			return nil, err
		}
		l.Color = palette[(len(series)+i)%len(palette)]
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s %.4g", lv.Name, lv.Y), l)
	}
	legendRoom(p, len(series)+len(levels))
	return p, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
