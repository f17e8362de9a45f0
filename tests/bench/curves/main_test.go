package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/internal/svgchart"
)

// The generator at its quick sizes writes, for every curve, a well-formed
// SVG with one line per plotted series and a CSV whose x increases and
// whose plotted figures are all measured, and a README that states each
// curve's growth.
func TestQuickCurves(t *testing.T) {
	dir := t.TempDir()
	var out, errs bytes.Buffer
	if err := run(context.Background(), []string{"-quick", "-out", dir}, &out, &errs); err != nil {
		t.Fatalf("%v\n%s", err, errs.String())
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	plotted := map[string]int{
		"decisions-vs-hosts": 4, "bytes-per-task": 3, "placed-vs-clients": 1, "relocation-vs-tasks": 2, "entitlement-vs-pools": 3,
	}
	for _, name := range curveNames {
		t.Run(name, func(t *testing.T) {
			title, lines := checkSVG(t, filepath.Join(dir, name+".svg"))
			if len(lines) != plotted[name] {
				t.Errorf("%d lines drawn, want %d", len(lines), plotted[name])
			}
			for _, n := range lines {
				if n != 3 {
					t.Errorf("a line of %d points, want one per size (3)", n)
				}
			}
			if !strings.Contains(string(readme), "## "+title) || !strings.Contains(string(readme), "]("+name+".svg)") ||
				!strings.Contains(string(readme), "]("+name+".csv)") {
				t.Errorf("README lacks the section, chart or data of %q", title)
			}
			checkCSV(t, filepath.Join(dir, name+".csv"))
		})
	}
	if n := strings.Count(out.String(), "\n"); n != 13 {
		t.Errorf("%d growth statements printed, want 13:\n%s", n, out.String())
	}
}

// checkSVG parses the file as XML to its end and returns the chart's title
// (the first text) and the number of points of each polyline.
func checkSVG(t *testing.T, path string) (title string, lines []int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	depth, root := 0, ""
	inText := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", path, err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				root = e.Name.Local
			}
			depth++
			if e.Name.Local == "polyline" {
				for _, a := range e.Attr {
					if a.Name.Local == "points" {
						lines = append(lines, len(strings.Fields(a.Value)))
					}
				}
			}
			inText = e.Name.Local == "text"
		case xml.EndElement:
			depth--
			inText = false
		case xml.CharData:
			if inText && title == "" {
				title = string(e)
			}
		}
	}
	if root != "svg" || depth != 0 || title == "" {
		t.Fatalf("%s: root %q, depth %d at the end, title %q", path, root, depth, title)
	}
	return title, lines
}

// checkCSV reads the table: a header, a row per point, x strictly
// increasing, every figure a number, the plotted ones positive.
func checkCSV(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(recs) < 4 {
		t.Fatalf("%s: %d records, want a header and 3 points", path, len(recs))
	}
	prev := math.Inf(-1)
	for i, rec := range recs[1:] {
		if len(rec) != len(recs[0]) {
			t.Fatalf("%s: row %d has %d fields for %d columns", path, i+1, len(rec), len(recs[0]))
		}
		for j, v := range rec {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(x) || x < 0 {
				t.Fatalf("%s: row %d, %s = %q", path, i+1, recs[0][j], v)
			}
			if j == 0 {
				if x <= prev {
					t.Fatalf("%s: x %v after %v", path, x, prev)
				}
				prev = x
			}
		}
	}
}

func TestSlope(t *testing.T) {
	x := []float64{1, 10, 100, 1000}
	for _, c := range []struct {
		y    []float64
		want float64
	}{
		{[]float64{3, 300, 30000, 3e6}, 2},
		{[]float64{5, 5, 5, 5}, 0},
		{[]float64{1000, 100, 10, 1}, -1},
	} {
		if got := Slope(x, c.y); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Slope(%v) = %v, want %v", c.y, got, c.want)
		}
	}
	if got := Slope([]float64{1, 2}, []float64{0, 4}); !math.IsNaN(got) {
		t.Errorf("one usable point gave slope %v", got)
	}
}

func TestVerdicts(t *testing.T) {
	for _, c := range []struct {
		g     Growth
		slope float64
		want  string
	}{
		{Cost, 1.02, "∝ n^1.02: linear"},
		{Cost, 0.5, "∝ n^0.50: sublinear: better than linear"},
		{Cost, 1.4, "∝ n^1.40: superlinear: worse than linear"},
		{RatePerUnit, -0.05, "time per decision ∝ n^0.05: flat: better than linear"},
		{RatePerUnit, -1, "time per decision ∝ n^1.00: linear"},
		{CostPerUnit, 0.02, "per unit ∝ n^0.02, total ∝ n^1.02: linear"},
		{Scaling, 0.4, "∝ n^0.40 (1.00 would be perfect scaling)"},
	} {
		if got := Verdict(c.g, c.slope, "n"); got != c.want {
			t.Errorf("Verdict(%v, %v) = %q, want %q", c.g, c.slope, got, c.want)
		}
	}
	if !Superlinear(CostPerUnit, 0.3) || Superlinear(RatePerUnit, -1.05) || !Superlinear(RatePerUnit, -1.3) {
		t.Error("Superlinear judges the wrong quantity")
	}
}

// A curve whose x does not increase, or whose plotted figure is missing,
// is refused before anything is written.
func TestCurveCheck(t *testing.T) {
	good := func() *Curve {
		return &Curve{Name: "c", Columns: []string{"x", "y"}, Rows: [][]float64{{1, 2}, {2, 3}, {4, 5}},
			Plots: []Plot{{Column: "y", Growth: Cost}}}
	}
	if err := good().Check(); err != nil {
		t.Fatal(err)
	}
	for name, spoil := range map[string]func(c *Curve){
		"x repeats":        func(c *Curve) { c.Rows[2][0] = 2 },
		"zero figure":      func(c *Curve) { c.Rows[1][1] = 0 },
		"short row":        func(c *Curve) { c.Rows[1] = c.Rows[1][:1] },
		"unknown column":   func(c *Curve) { c.Plots[0].Column = "z" },
		"one point":        func(c *Curve) { c.Rows = c.Rows[:1] },
		"infinite figure":  func(c *Curve) { c.Rows[0][1] = math.Inf(1) },
		"not-a-number fig": func(c *Curve) { c.Rows[0][1] = math.NaN() },
	} {
		c := good()
		spoil(c)
		if err := c.Check(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{{"-only", "no-such-curve"}, {"stray"}, {"-quick=maybe"}} {
		var out, errs bytes.Buffer
		if err := run(context.Background(), args, &out, &errs); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestChartEscapesText(t *testing.T) {
	c := &svgchart.Chart{Title: `a < b & "c"`, XLabel: "x", YLabel: "y",
		Series: []svgchart.Series{{Label: "<s>", X: []float64{1, 10, 100}, Y: []float64{0, 5, 50}}}}
	path := filepath.Join(t.TempDir(), "c.svg")
	if err := os.WriteFile(path, c.SVG(), 0o644); err != nil {
		t.Fatal(err)
	}
	// The point at y = 0 cannot sit on a log axis and is left out.
	title, lines := checkSVG(t, path)
	if title != c.Title || len(lines) != 1 || lines[0] != 2 {
		t.Fatalf("title %q, lines of %v points", title, lines)
	}
}

// A reason for a growth worse than linear is said once per curve, and only
// for series that grow worse than linearly.
func TestVerdictsSayAReasonOnce(t *testing.T) {
	c := &Curve{XName: "n", Columns: []string{"n", "a", "b", "c"},
		Rows: [][]float64{{10, 1, 1, 1}, {100, 100, 100, 10}, {1000, 10000, 10000, 100}},
		Plots: []Plot{{Column: "a", Label: "A", Growth: Cost, WhyNotLinear: "why"},
			{Column: "b", Label: "B", Growth: Cost, WhyNotLinear: "why"},
			{Column: "c", Label: "C", Growth: Cost, WhyNotLinear: "why"}}}
	got := c.Verdicts()
	want := []string{"A: ∝ n^2.00: superlinear: worse than linear (why)",
		"B: ∝ n^2.00: superlinear: worse than linear (for the same reason)", "C: ∝ n^1.00: linear"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("verdict %d: %q, want %q", i, got[i], want[i])
		}
	}
}
