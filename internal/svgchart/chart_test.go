package svgchart

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
)

// parse reads an SVG back: its text elements and how many points each
// polyline and how many whiskers it has.
func parse(t *testing.T, svg []byte) (texts []string, lines []int, whiskers int) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	inText := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return texts, lines, whiskers
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, svg)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			inText = el.Name.Local == "text"
			for _, a := range el.Attr {
				switch {
				case el.Name.Local == "polyline" && a.Name.Local == "points":
					lines = append(lines, len(strings.Fields(a.Value)))
				case el.Name.Local == "line" && a.Name.Local == "class" && a.Value == "whisker":
					whiskers++
				}
			}
		case xml.CharData:
			if inText {
				texts = append(texts, string(el))
			}
		case xml.EndElement:
			inText = false
		}
	}
}

// On log axes a point at zero cannot be drawn and is left out; text is
// escaped.
func TestLogAxesLeaveOutZero(t *testing.T) {
	c := &Chart{Title: `a < b & "c"`, XLabel: "x", YLabel: "y",
		Series: []Series{{Label: "<s>", X: []float64{1, 10, 100}, Y: []float64{0, 5, 50}}}}
	texts, lines, _ := parse(t, c.SVG())
	if texts[0] != c.Title || !slices.Equal(lines, []int{2}) || !slices.Contains(texts, "<s>") {
		t.Fatalf("title %q, lines of %v points, texts %q", texts[0], lines, texts)
	}
	if !slices.Contains(texts, "1k") && !slices.Contains(texts, "100") {
		t.Fatalf("no decade tick: %q", texts)
	}
}

// Linear axes start at zero and keep points at zero; whiskers are drawn
// where a point has a span, and count toward the axis' range.
func TestLinearAxesAndWhiskers(t *testing.T) {
	nan := math.NaN()
	c := &Chart{Title: "trade-off", XLabel: "seconds", YLabel: "per day", LinearX: true, LinearY: true,
		Series: []Series{
			{Label: "one", X: []float64{6}, Y: []float64{0}, XSpan: [][2]float64{{5.5, 6.4}}, YSpan: [][2]float64{{0, 288}}},
			{Label: "two", X: []float64{8.5, 9}, Y: []float64{0, 3}, XSpan: [][2]float64{{8.1, 9.9}, {nan, nan}}},
		}}
	texts, lines, whiskers := parse(t, c.SVG())
	if !slices.Equal(lines, []int{1, 2}) {
		t.Fatalf("lines of %v points, want 1 and 2 (zero kept on linear axes)", lines)
	}
	if whiskers != 3 {
		t.Fatalf("%d whiskers, want 3 (two on the first point, one on the second series' first)", whiskers)
	}
	// Ticks: x from 0 past 9.9, y from 0 to 300 (the whisker's top).
	for _, want := range []string{"0", "10", "300"} {
		if !slices.Contains(texts, want) {
			t.Errorf("no tick %q in %q", want, texts)
		}
	}
}

func TestNiceStep(t *testing.T) {
	for _, tc := range []struct{ d, want float64 }{{0.3, 0.5}, {1, 1}, {1.2, 2}, {3, 5}, {6, 10}, {57.6, 100}, {250, 500}} {
		if got := niceStep(tc.d); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("niceStep(%v) = %v, want %v", tc.d, got, tc.want)
		}
	}
}

// The axes fit the points that can be drawn on both of them, and every
// span; a long legend label takes a row of its own.
func TestLayout(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name           string
		chart          Chart
		xs, ys         []float64
		legendColumns  int
		heightOverBase int // the legend's rows and the subtitle's lines
	}{
		{"log axes leave out zero and less", Chart{Series: []Series{{X: []float64{0, 1, 2}, Y: []float64{5, -1, 7}}}},
			[]float64{2}, []float64{7}, 2, lineHeight},
		{"a linear axis keeps them", Chart{LinearY: true, Series: []Series{{X: []float64{1, 2}, Y: []float64{-1, 0}}}},
			[]float64{1, 2}, []float64{-1, 0}, 2, lineHeight},
		{"spans count, NaN ones do not", Chart{Series: []Series{{X: []float64{1, 2}, Y: []float64{1, 2},
			XSpan: [][2]float64{{0.5, 1.5}}, YSpan: [][2]float64{{nan, 3}, {1, 4}}}}},
			[]float64{1, 0.5, 1.5, 2}, []float64{1, 2, 1, 4}, 2, lineHeight},
		{"three series in two columns", Chart{Subtitle: []string{"a"}, Series: []Series{{}, {}, {}}},
			nil, nil, 2, 3 * lineHeight},
		{"a long label", Chart{Series: []Series{{Label: strings.Repeat("l", legendLabelWidth+1)}, {}}},
			nil, nil, 1, 2 * lineHeight},
	}
	for _, c := range cases {
		xs, ys := c.chart.figures()
		if !slices.Equal(xs, c.xs) || !slices.Equal(ys, c.ys) {
			t.Errorf("%s: figures %v %v, want %v %v", c.name, xs, ys, c.xs, c.ys)
		}
		l := c.chart.layout()
		base := 40 + lineHeight + plotHeight + 60 + 10
		if l.legendColumns != c.legendColumns || l.height != base+c.heightOverBase {
			t.Errorf("%s: %d legend columns, height %d; want %d and %d", c.name, l.legendColumns, l.height, c.legendColumns, base+c.heightOverBase)
		}
	}
}
