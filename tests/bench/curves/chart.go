package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strings"
)

// Chart is a line chart on logarithmic axes: each series is a line through
// its points with a marker at each. Log-log axes show a power law as a
// straight line whose slope is the exponent, which is what the curves are
// read for.
type Chart struct {
	Title string
	// Subtitle lines go under the title: what was measured, the verdicts.
	Subtitle       []string
	XLabel, YLabel string
	Series         []Series
}

// Series is one line of a chart.
type Series struct {
	Label string
	X, Y  []float64
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

// SVG renders the chart. Points that are not positive cannot sit on a log
// axis and are left out (the CSV keeps them).
func (c *Chart) SVG() []byte {
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for i := range s.X {
			if s.X[i] > 0 && s.Y[i] > 0 {
				xmin, xmax = math.Min(xmin, s.X[i]), math.Max(xmax, s.X[i])
				ymin, ymax = math.Min(ymin, s.Y[i]), math.Max(ymax, s.Y[i])
			}
		}
	}
	if math.IsInf(xmin, 1) {
		xmin, xmax, ymin, ymax = 1, 10, 1, 10
	}
	// Whole decades around the data, so ticks land on round numbers.
	lx0, lx1 := math.Floor(math.Log10(xmin)), math.Ceil(math.Log10(xmax))
	ly0, ly1 := math.Floor(math.Log10(ymin)), math.Ceil(math.Log10(ymax))
	if lx1 == lx0 {
		lx1++
	}
	if ly1 == ly0 {
		ly1++
	}
	top := 40 + lineHeight*(len(c.Subtitle)+1)
	plotWidth := chartWidth - marginLeft - marginRight
	// Two legend columns, or one when a label would not fit in half the
	// width.
	legendColumns := 2
	for _, s := range c.Series {
		if len(s.Label) > legendLabelWidth {
			legendColumns = 1
		}
	}
	legendRows := (len(c.Series) + legendColumns - 1) / legendColumns
	height := top + plotHeight + 60 + lineHeight*legendRows + 10
	px := func(x float64) float64 {
		return marginLeft + (math.Log10(x)-lx0)/(lx1-lx0)*float64(plotWidth)
	}
	py := func(y float64) float64 {
		return float64(top+plotHeight) - (math.Log10(y)-ly0)/(ly1-ly0)*plotHeight
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">`+"\n",
		chartWidth, height, chartWidth, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", chartWidth, height)
	text(&b, 20, 28, "start", `font-size="17" font-weight="bold"`, c.Title)
	for i, line := range c.Subtitle {
		text(&b, 20, float64(28+lineHeight*(i+1)+2), "start", `fill="#333333"`, line)
	}

	// Grid and ticks: 1, 2 and 5 times each power of ten.
	for d := lx0; d <= lx1; d++ {
		for _, m := range []float64{1, 2, 5} {
			x := m * math.Pow(10, d)
			if math.Log10(x) > lx1+1e-9 {
				break
			}
			gx := px(x)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`+"\n", gx, top, gx, top+plotHeight, gridColour(m))
			text(&b, gx, float64(top+plotHeight+18), "middle", "", tickLabel(x))
		}
	}
	for d := ly0; d <= ly1; d++ {
		for _, m := range []float64{1, 2, 5} {
			y := m * math.Pow(10, d)
			if math.Log10(y) > ly1+1e-9 {
				break
			}
			gy := py(y)
			fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s"/>`+"\n", marginLeft, gy, marginLeft+plotWidth, gy, gridColour(m))
			text(&b, marginLeft-8, gy+4, "end", "", tickLabel(y))
		}
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333333"/>`+"\n", marginLeft, top, plotWidth, plotHeight)
	text(&b, float64(marginLeft+plotWidth/2), float64(top+plotHeight+40), "middle", `font-weight="bold"`, c.XLabel)
	ylx, yly := 22.0, float64(top+plotHeight/2)
	text(&b, ylx, yly, "middle", fmt.Sprintf(`font-weight="bold" transform="rotate(-90 %.0f %.0f)"`, ylx, yly), c.YLabel)

	for i, s := range c.Series {
		colour := palette[i%len(palette)]
		var pts []string
		for j := range s.X {
			if s.X[j] > 0 && s.Y[j] > 0 {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(s.X[j]), py(s.Y[j])))
			}
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", colour, strings.Join(pts, " "))
		for _, p := range pts {
			x, y, _ := strings.Cut(p, ",")
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3.5" fill="%s"/>`+"\n", x, y, colour)
		}
		// Legend: under the axis label.
		lx := float64(marginLeft + (i%legendColumns)*(plotWidth/2))
		ly := float64(top + plotHeight + 62 + lineHeight*(i/legendColumns))
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="3"/>`+"\n", lx, ly-4, lx+24, ly-4, colour)
		text(&b, lx+30, ly, "start", "", s.Label)
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func gridColour(m float64) string {
	if m == 1 {
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
