package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/peloton-federated/peloton/internal/svgchart"
)

// Curve is one measured cost curve: a table of figures (the CSV) and the
// columns plotted from it (the SVG), with how each plotted column's growth
// is judged.
type Curve struct {
	// Name is the file stem: NAME.csv and NAME.svg.
	Name  string
	Title string
	// What says exactly what was measured and how, one sentence or two; it
	// heads the chart and the curve's section of the README.
	What   string
	XLabel string
	YLabel string
	// XName is the x quantity in verdicts ("hosts").
	XName string
	// Columns names the CSV columns; the first is x. Rows hold one figure
	// per column.
	Columns []string
	Rows    [][]float64
	Plots   []Plot
	// Notes explain the figures: why a growth is what it is, what bounds
	// it. The measuring code writes them from what it saw.
	Notes []string
}

// subtitleWidth is how many characters of a subtitle fit on one line.
const subtitleWidth = 112

// Plot draws one column of a curve.
type Plot struct {
	Column string
	Label  string
	Growth Growth
	// WhyNotLinear is said when the fitted growth is worse than linear.
	WhyNotLinear string
}

// column returns the figures of the named column.
func (c *Curve) column(name string) []float64 {
	for j, n := range c.Columns {
		if n == name {
			out := make([]float64, len(c.Rows))
			for i, r := range c.Rows {
				out[i] = r[j]
			}
			return out
		}
	}
	return nil
}

// Verdicts are the plotted series' growth statements, one per plot.
func (c *Curve) Verdicts() []string {
	x := c.column(c.Columns[0])
	var out []string
	said := map[string]bool{}
	for _, p := range c.Plots {
		s := Slope(x, c.column(p.Column))
		v := p.Label + ": " + Verdict(p.Growth, s, c.XName)
		switch {
		case !Superlinear(p.Growth, s) || p.WhyNotLinear == "":
		case said[p.WhyNotLinear]:
			v += " (for the same reason)"
		default:
			v += " (" + p.WhyNotLinear + ")"
			said[p.WhyNotLinear] = true
		}
		out = append(out, v)
	}
	return out
}

// Chart builds the curve's chart.
func (c *Curve) Chart(machine string) *svgchart.Chart {
	ch := &svgchart.Chart{Title: c.Title, XLabel: c.XLabel, YLabel: c.YLabel}
	ch.Subtitle = append(ch.Subtitle, wrap(c.What, subtitleWidth)...)
	for _, v := range c.Verdicts() {
		ch.Subtitle = append(ch.Subtitle, wrap("• "+v, subtitleWidth)...)
	}
	ch.Subtitle = append(ch.Subtitle, wrap("Machine: "+machine+". Log-log axes; slopes fitted by least squares on all points.", subtitleWidth)...)
	x := c.column(c.Columns[0])
	for _, p := range c.Plots {
		ch.Series = append(ch.Series, svgchart.Series{Label: p.Label, X: x, Y: c.column(p.Column)})
	}
	return ch
}

// CSV renders the table.
func (c *Curve) CSV() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write(c.Columns)
	for _, r := range c.Rows {
		rec := make([]string, len(r))
		for j, v := range r {
			rec[j] = formatFigure(v)
		}
		_ = w.Write(rec)
	}
	w.Flush()
	return b.Bytes()
}

func formatFigure(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return ""
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// Write puts NAME.csv and NAME.svg in dir.
func (c *Curve) Write(dir, machine string) error {
	if err := os.WriteFile(filepath.Join(dir, c.Name+".csv"), c.CSV(), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, c.Name+".svg"), c.Chart(machine).SVG(), 0o644)
}

// Check reports a curve that cannot be drawn or read: rows of the wrong
// width, x not strictly increasing, plotted figures missing.
func (c *Curve) Check() error {
	if len(c.Columns) < 2 || len(c.Rows) < 2 {
		return fmt.Errorf("%s: %d columns, %d rows", c.Name, len(c.Columns), len(c.Rows))
	}
	for i, r := range c.Rows {
		if len(r) != len(c.Columns) {
			return fmt.Errorf("%s: row %d has %d figures for %d columns", c.Name, i, len(r), len(c.Columns))
		}
		if i > 0 && !(r[0] > c.Rows[i-1][0]) {
			return fmt.Errorf("%s: x %v after %v does not increase", c.Name, r[0], c.Rows[i-1][0])
		}
	}
	for _, p := range c.Plots {
		col := c.column(p.Column)
		if col == nil {
			return fmt.Errorf("%s: plotted column %q is not in the table", c.Name, p.Column)
		}
		for i, v := range col {
			if !(v > 0) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: %s at x=%v is %v", c.Name, p.Column, c.Rows[i][0], v)
			}
		}
	}
	return nil
}

// wrap breaks s into lines of at most width characters at spaces.
func wrap(s string, width int) []string {
	var lines []string
	for len([]rune(s)) > width {
		r := []rune(s)
		cut := strings.LastIndex(string(r[:width]), " ")
		if cut <= 0 {
			cut = len(string(r[:width]))
		}
		lines = append(lines, s[:cut])
		s = "  " + strings.TrimLeft(s[cut:], " ")
	}
	return append(lines, s)
}

// slopeNote states the growth of columns that are not plotted (for
// example wall-clock beside the CPU time plotted), from the figures:
// intro, then "name ∝ x^e" for each {name, column}.
func slopeNote(c *Curve, intro string, g Growth, cols [][2]string) string {
	x := c.column(c.Columns[0])
	var parts []string
	for _, k := range cols {
		parts = append(parts, fmt.Sprintf("%s ∝ %s^%.2f", k[0], c.XName, exponent(g, Slope(x, c.column(k[1])))))
	}
	return intro + strings.Join(parts, ", ") + "."
}
