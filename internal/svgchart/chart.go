package svgchart

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strings"
)

// Chart is a line chart: each series is a line through its points with a
// marker at each. Axes are logarithmic unless said linear: log-log axes
// show a power law as a straight line whose slope is the exponent.
type Chart struct {
	Title string
	// Subtitle lines go under the title: what was measured, the verdicts.
	Subtitle       []string
	XLabel, YLabel string
	// LinearX, LinearY make an axis linear, from zero (or the least
	// figure, when negative) to the greatest.
	LinearX, LinearY bool
	Series           []Series
}

// Series is one line of a chart.
type Series struct {
	Label string
	X, Y  []float64
	// XSpan and YSpan, when set, hold for each point a low and a high
	// figure drawn as a whisker through it (NaN: none).
	XSpan, YSpan [][2]float64
}

// Layout of the SVG, in pixels.
const (
	chartWidth  = 900
	plotHeight  = 380
	marginLeft  = 90
	marginRight = 30
	lineHeight  = 18
	// legendLabelWidth is how many characters of a legend label fit in
	// half the plot's width.
	legendLabelWidth = 52
)

// palette holds colours that stay apart for readers with common colour
// blindness (the Okabe–Ito set).
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"}

// axis maps figures to pixels along one direction and lists its ticks.
type axis struct {
	log    bool
	lo, hi float64 // log10 of the ends on a log axis
	ticks  []float64
}

// newAxis fits an axis around figures; a log axis keeps whole decades
// around them, so ticks land on round numbers.
func newAxis(linear bool, figures []float64) axis {
	if linear {
		lo, hi := 0.0, math.Inf(-1)
		for _, v := range figures {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		if math.IsInf(hi, -1) || hi <= lo {
			hi = lo + 1
		}
		step := niceStep((hi - lo) / 5)
		a := axis{lo: math.Floor(lo/step) * step, hi: math.Ceil(hi/step) * step}
		for v := a.lo; v <= a.hi+step/2; v += step {
			a.ticks = append(a.ticks, math.Round(v/step)*step)
		}
		return a
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range figures {
		if v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	a := axis{log: true, lo: math.Floor(math.Log10(lo)), hi: math.Ceil(math.Log10(hi))}
	if a.hi == a.lo {
		a.hi++
	}
	// 1, 2 and 5 times each power of ten.
	for d := a.lo; d <= a.hi; d++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, d)
			if math.Log10(v) > a.hi+1e-9 {
				break
			}
			a.ticks = append(a.ticks, v)
		}
	}
	return a
}

// niceStep is 1, 2 or 5 times a power of ten, at least d.
func niceStep(d float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(d)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= d {
			return m * p
		}
	}
	return 10 * p
}

// frac is where v sits between the ends, 0 to 1.
func (a axis) frac(v float64) float64 {
	if a.log {
		return (math.Log10(v) - a.lo) / (a.hi - a.lo)
	}
	return (v - a.lo) / (a.hi - a.lo)
}

// fits says whether v can be drawn on the axis (a log axis has no place
// for zero or less).
func (a axis) fits(v float64) bool { return !math.IsNaN(v) && (!a.log || v > 0) }

// major says whether a tick gets a darker grid line.
func (a axis) major(v float64) bool {
	if !a.log {
		return v == 0
	}
	m := v / math.Pow(10, math.Floor(math.Log10(v)+1e-9))
	return math.Abs(m-1) < 1e-9
}

// SVG renders the chart. Points that cannot sit on an axis (zero or less
// on a log axis) are left out.
func (c *Chart) SVG() []byte {
	l := c.layout()
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">`+"\n",
		chartWidth, l.height, chartWidth, l.height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", chartWidth, l.height)
	text(&b, 20, 28, "start", `font-size="17" font-weight="bold"`, c.Title)
	for i, line := range c.Subtitle {
		text(&b, 20, float64(28+lineHeight*(i+1)+2), "start", `fill="#333333"`, line)
	}
	l.axes(&b, c.XLabel, c.YLabel)
	for i, s := range c.Series {
		l.series(&b, i, s)
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// layout is where a chart's parts go.
type layout struct {
	x, y axis
	// top is the plot's top edge, under the title and subtitle.
	top, plotWidth, height int
	// legendColumns is 2, or 1 when a label would not fit in half the
	// width.
	legendColumns int
}

func (c *Chart) layout() layout {
	xs, ys := c.figures()
	l := layout{x: newAxis(c.LinearX, xs), y: newAxis(c.LinearY, ys), top: 40 + lineHeight*(len(c.Subtitle)+1),
		plotWidth: chartWidth - marginLeft - marginRight, legendColumns: 2}
	for _, s := range c.Series {
		if len(s.Label) > legendLabelWidth {
			l.legendColumns = 1
		}
	}
	legendRows := (len(c.Series) + l.legendColumns - 1) / l.legendColumns
	l.height = l.top + plotHeight + 60 + lineHeight*legendRows + 10
	return l
}

// figures are the figures the axes must show: the points that can be
// drawn on both axes, and every span.
func (c *Chart) figures() (xs, ys []float64) {
	for _, s := range c.Series {
		for i := range s.X {
			if (c.LinearX || s.X[i] > 0) && (c.LinearY || s.Y[i] > 0) {
				xs, ys = append(xs, s.X[i]), append(ys, s.Y[i])
			}
			xs = append(xs, spanAt(s.XSpan, i)...)
			ys = append(ys, spanAt(s.YSpan, i)...)
		}
	}
	return xs, ys
}

func (l layout) px(x float64) float64 { return marginLeft + l.x.frac(x)*float64(l.plotWidth) }

func (l layout) py(y float64) float64 { return float64(l.top+plotHeight) - l.y.frac(y)*plotHeight }

// axes draws the grid with its tick labels, the plot's frame and the axis
// labels.
func (l layout) axes(b *bytes.Buffer, xLabel, yLabel string) {
	bottom := l.top + plotHeight
	for _, x := range l.x.ticks {
		gx := l.px(x)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`+"\n", gx, l.top, gx, bottom, gridColour(l.x.major(x)))
		text(b, gx, float64(bottom+18), "middle", "", tickLabel(x))
	}
	for _, y := range l.y.ticks {
		gy := l.py(y)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s"/>`+"\n", marginLeft, gy, marginLeft+l.plotWidth, gy, gridColour(l.y.major(y)))
		text(b, marginLeft-8, gy+4, "end", "", tickLabel(y))
	}
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333333"/>`+"\n", marginLeft, l.top, l.plotWidth, plotHeight)
	text(b, float64(marginLeft+l.plotWidth/2), float64(bottom+40), "middle", `font-weight="bold"`, xLabel)
	ylx, yly := 22.0, float64(l.top+plotHeight/2)
	text(b, ylx, yly, "middle", fmt.Sprintf(`font-weight="bold" transform="rotate(-90 %.0f %.0f)"`, ylx, yly), yLabel)
}

// series draws the i-th series: its whiskers, its line with a marker at
// each point, and its legend entry under the axis label.
func (l layout) series(b *bytes.Buffer, i int, s Series) {
	colour := palette[i%len(palette)]
	pts := l.points(b, colour, s)
	fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", colour, strings.Join(pts, " "))
	for _, p := range pts {
		x, y, _ := strings.Cut(p, ",")
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3.5" fill="%s"/>`+"\n", x, y, colour)
	}
	lx := float64(marginLeft + (i%l.legendColumns)*(l.plotWidth/2))
	ly := float64(l.top + plotHeight + 62 + lineHeight*(i/l.legendColumns))
	fmt.Fprintf(b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="3"/>`+"\n", lx, ly-4, lx+24, ly-4, colour)
	text(b, lx+30, ly, "start", "", s.Label)
}

// points draws the whiskers of a series' points that fit on both axes
// and returns those points in pixels, "x,y".
func (l layout) points(b *bytes.Buffer, colour string, s Series) []string {
	var pts []string
	for j := range s.X {
		if !l.x.fits(s.X[j]) || !l.y.fits(s.Y[j]) {
			continue
		}
		x, y := l.px(s.X[j]), l.py(s.Y[j])
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
		if span := spanAt(s.XSpan, j); l.x.fitsSpan(span) {
			whisker(b, colour, l.px(span[0]), y, l.px(span[1]), y)
		}
		if span := spanAt(s.YSpan, j); l.y.fitsSpan(span) {
			whisker(b, colour, x, l.py(span[0]), x, l.py(span[1]))
		}
	}
	return pts
}

// fitsSpan says whether both ends of a span (none: no) can be drawn.
func (a axis) fitsSpan(span []float64) bool {
	return len(span) == 2 && a.fits(span[0]) && a.fits(span[1])
}

// spanAt is point i's low and high figures, or none.
func spanAt(spans [][2]float64, i int) []float64 {
	if i >= len(spans) || math.IsNaN(spans[i][0]) || math.IsNaN(spans[i][1]) {
		return nil
	}
	return spans[i][:]
}

// whisker draws a thin line between two points with a cap at each end.
func whisker(b *bytes.Buffer, colour string, x1, y1, x2, y2 float64) {
	fmt.Fprintf(b, `<line class="whisker" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"/>`+"\n", x1, y1, x2, y2, colour)
	for _, end := range [][2]float64{{x1, y1}, {x2, y2}} {
		if x1 == x2 {
			fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"/>`+"\n", end[0]-5, end[1], end[0]+5, end[1], colour)
		} else {
			fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"/>`+"\n", end[0], end[1]-5, end[0], end[1]+5, colour)
		}
	}
}

func gridColour(major bool) string {
	if major {
		return "#bbbbbb"
	}
	return "#e8e8e8"
}

// text writes one escaped text element.
func text(b *bytes.Buffer, x, y float64, anchor, attrs, s string) {
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="%s" %s>`, x, y, anchor, attrs)
	_ = xml.EscapeText(b, []byte(s))
	b.WriteString("</text>\n")
}

// tickLabel writes 1, 20, 500, 1k, 20k, 1M, 0.5, 0.01 ...
func tickLabel(v float64) string {
	switch {
	case v >= 1e9:
		return trimZero(v/1e9) + "G"
	case v >= 1e6:
		return trimZero(v/1e6) + "M"
	case v >= 1e3:
		return trimZero(v/1e3) + "k"
	}
	return trimZero(v)
}

func trimZero(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.6f", v), "0"), ".")
}
