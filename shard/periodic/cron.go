package periodic

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// Cron is a parsed standard cron expression: the minutes, hours, days of the
// month, months and days of the week it runs, one bit per value.
type Cron struct {
	expr                          string
	minute, hour, dom, month, dow uint64 // bit v set: value v matches; Sunday is 0
	// domStar and dowStar record that a day field begins with "*". Only when
	// neither does is a day one that matches either field (Vixie cron).
	domStar, dowStar bool
}

const (
	maxExprLen = 256 // the longest expression ParseCron accepts, in bytes
	spanYears  = 5   // how far Next and Prev look for a match before giving up
)

type fieldSpec struct {
	name     string
	min, max int
	names    []string // names[i] is the value min+i
}

var specs = [5]fieldSpec{
	{name: "minute", max: 59},
	{name: "hour", max: 23},
	{name: "day-of-month", min: 1, max: 31},
	{name: "month", min: 1, max: 12, names: []string{
		"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	{name: "day-of-week", max: 7, names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
}

var macros = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// ParseCron parses a standard five-field cron expression:
// minute (0-59) hour (0-23) day-of-month (1-31) month (1-12 or JAN-DEC)
// day-of-week (0-7 or SUN-SAT, 0 and 7 both Sunday).
//
// Each field is a comma list of `*`, a number, a name (case-insensitive), a
// range `a-b`, or one of those with a step: `*/n`, `a-b/n`, or `a/n`, which
// runs from a to the field's maximum (7 for day-of-week, folded into Sunday).
// The macros @yearly (= @annually), @monthly, @weekly, @daily (= @midnight)
// and @hourly stand for their usual expressions.
//
// Day-of-month and day-of-week follow Vixie cron: when neither field begins
// with `*`, a day matches if either field does; otherwise both must.
//
// Seconds, years, `?`, `L`, `W` and `#` are not supported. An expression is at
// most 256 bytes long. Errors name the field and the offending text.
func ParseCron(expr string) (*Cron, error) {
	if len(expr) > maxExprLen {
		return nil, fmt.Errorf("cron expression of %d bytes is longer than the limit of %d", len(expr), maxExprLen)
	}
	expr = strings.TrimSpace(expr)
	text := expr
	if strings.HasPrefix(text, "@") {
		m, ok := macros[strings.ToLower(text)]
		if !ok {
			return nil, fmt.Errorf("cron %q: unknown or unsupported macro (want @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)", expr)
		}
		text = m
	}
	f := strings.Fields(text)
	if len(f) != len(specs) {
		hint := ""
		if len(f) > len(specs) {
			hint = "; seconds and year fields are not supported"
		}
		return nil, fmt.Errorf("cron %q: want 5 fields (minute hour day-of-month month day-of-week), got %d%s", expr, len(f), hint)
	}
	c := &Cron{expr: expr, domStar: strings.HasPrefix(f[2], "*"), dowStar: strings.HasPrefix(f[4], "*")}
	sets := [5]*uint64{&c.minute, &c.hour, &c.dom, &c.month, &c.dow}
	for i, spec := range specs {
		set, err := spec.parse(f[i])
		if err != nil {
			return nil, fmt.Errorf("cron %q: %s: %w", expr, spec.name, err)
		}
		*sets[i] = set
	}
	if c.dow&(1<<7) != 0 {
		c.dow = c.dow&^(1<<7) | 1 // 7 is Sunday too
	}
	return c, nil
}

// parse returns the set of values one field's text selects.
func (s fieldSpec) parse(text string) (uint64, error) {
	if i := strings.IndexAny(text, "?#"); i >= 0 {
		return 0, fmt.Errorf("%q in %q is not supported", text[i:i+1], text)
	}
	var set uint64
	for _, el := range strings.Split(text, ",") {
		if el == "" {
			return 0, fmt.Errorf("empty list element in %q", text)
		}
		vals, err := s.element(el)
		if err != nil {
			return 0, err
		}
		set |= vals
	}
	return set, nil
}

// element returns the set of values one list element selects.
func (s fieldSpec) element(el string) (uint64, error) {
	base, stepText, hasStep := strings.Cut(el, "/")
	loText, hiText, isRange := strings.Cut(base, "-")
	if loText == "" || isRange && hiText == "" {
		return 0, fmt.Errorf("missing value in %q", el)
	}
	lo, hi, step := s.min, s.max, 1
	var err error
	if hasStep {
		if step, err = s.step(stepText); err != nil {
			return 0, err
		}
	}
	if base != "*" {
		if lo, err = s.value(loText); err != nil {
			return 0, err
		}
		switch {
		case isRange:
			if hi, err = s.value(hiText); err != nil {
				return 0, err
			}
		case !hasStep:
			hi = lo
		}
	}
	if lo > hi {
		return 0, fmt.Errorf("range %q goes backwards: %d is after %d", base, lo, hi)
	}
	var set uint64
	for v := lo; v <= hi; v += step {
		set |= 1 << v
	}
	return set, nil
}

// step parses the n of a step "/n": at least 1, at most the field's size.
func (s fieldSpec) step(text string) (int, error) {
	if !isDigits(text) {
		return 0, fmt.Errorf("step %q is not a number", text)
	}
	n, err := strconv.Atoi(text)
	if err == nil && n == 0 {
		return 0, fmt.Errorf("step %s must be at least 1", text)
	}
	if size := s.max - s.min + 1; err != nil || n > size {
		return 0, fmt.Errorf("step %s is out of range 1-%d", text, size)
	}
	return n, nil
}

// value parses a number or a name within the field's range.
func (s fieldSpec) value(text string) (int, error) {
	if isDigits(text) {
		n, err := strconv.Atoi(text)
		if err != nil || n < s.min || n > s.max {
			return 0, fmt.Errorf("%s is out of range %d-%d", text, s.min, s.max)
		}
		return n, nil
	}
	for i, name := range s.names {
		if strings.EqualFold(text, name) {
			return s.min + i, nil
		}
	}
	switch strings.ToUpper(strings.TrimLeft(text, "0123456789")) {
	case "L", "W", "LW":
		return 0, fmt.Errorf("%q is not supported (no L, W, ? or #)", text)
	}
	if s.names != nil {
		return 0, fmt.Errorf("unknown name %q", text)
	}
	return 0, fmt.Errorf("%q is not a number", text)
}

func isDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// String returns the expression as given (trimmed).
func (c *Cron) String() string { return c.expr }

// Next returns the earliest time strictly after `after` whose wall clock in
// loc matches, truncated to the minute, in loc (nil means UTC). Wall-clock
// times that do not exist in loc (the hour skipped when clocks go forward) are
// not run; a wall-clock time that occurs twice (clocks go back) runs once, at
// its first occurrence. It returns the zero time when no time matches within
// 5 years, e.g. for "0 0 30 2 *".
func (c *Cron) Next(after time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	// Every wall clock after reach has its first occurrence after `after`.
	w := reach(after.In(loc)).Add(time.Minute)
	end := w.AddDate(spanYears, 0, 0)
	for {
		var ok bool
		if w, ok = c.forward(w, end); !ok {
			return time.Time{}
		}
		if t, ok := firstAt(w, loc); ok && t.After(after) {
			return t
		}
		w = w.Add(time.Minute)
	}
}

// Prev returns the latest time at or before `at` that matches, by the rules of
// Next, or the zero time when none does in the 5 years before `at`.
func (c *Cron) Prev(at time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	w := reach(at.In(loc))
	end := w.AddDate(-spanYears, 0, 0)
	for {
		var ok bool
		if w, ok = c.backward(w, end); !ok {
			return time.Time{}
		}
		if t, ok := firstAt(w, loc); ok && !t.After(at) {
			return t
		}
		w = w.Add(-time.Minute)
	}
}

// Wall clocks are handled as civil times: time.Time values in UTC, which has
// no daylight saving, so their arithmetic is the calendar's.

// forward returns the first matching wall-clock minute at or after w, a
// minute boundary, or false when there is none before end.
func (c *Cron) forward(w, end time.Time) (time.Time, bool) {
	for w.Before(end) {
		y, mo, d := w.Date()
		h, m := w.Hour(), w.Minute()
		switch {
		case !has(c.month, int(mo)):
			w = time.Date(y, time.Month(nextBit(c.month, int(mo), 13)), 1, 0, 0, 0, 0, time.UTC)
		case !c.day(d, w.Weekday()):
			w = time.Date(y, mo, d+1, 0, 0, 0, 0, time.UTC)
		case !has(c.hour, h):
			w = time.Date(y, mo, d, nextBit(c.hour, h, 24), 0, 0, 0, time.UTC)
		case !has(c.minute, m):
			w = time.Date(y, mo, d, h, nextBit(c.minute, m, 60), 0, 0, time.UTC)
		default:
			return w, true
		}
	}
	return time.Time{}, false
}

// backward returns the last matching wall-clock minute at or before w, a
// minute boundary, or false when there is none at or after end.
func (c *Cron) backward(w, end time.Time) (time.Time, bool) {
	for !w.Before(end) {
		y, mo, d := w.Date()
		h, m := w.Hour(), w.Minute()
		// Each case moves to the last minute of the previous candidate.
		switch {
		case !has(c.month, int(mo)):
			w = time.Date(y, time.Month(prevBit(c.month, int(mo), 0)+1), 1, 0, 0, 0, 0, time.UTC)
		case !c.day(d, w.Weekday()):
			w = time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
		case !has(c.hour, h):
			w = time.Date(y, mo, d, prevBit(c.hour, h, -1)+1, 0, 0, 0, time.UTC)
		case !has(c.minute, m):
			w = time.Date(y, mo, d, h, prevBit(c.minute, m, -1)+1, 0, 0, time.UTC)
		default:
			return w, true
		}
		w = w.Add(-time.Minute)
	}
	return time.Time{}, false
}

func (c *Cron) day(d int, wd time.Weekday) bool {
	dom, dow := has(c.dom, d), has(c.dow, int(wd))
	if c.domStar || c.dowStar {
		return dom && dow
	}
	return dom || dow
}

func has(set uint64, v int) bool { return set&(1<<v) != 0 }

// nextBit returns the lowest value in set above from, or none if there is none.
func nextBit(set uint64, from, none int) int {
	if m := set & (^uint64(0) << from); m != 0 {
		return bits.TrailingZeros64(m)
	}
	return none
}

// prevBit returns the highest value in set below from, or none if there is none.
func prevBit(set uint64, from, none int) int {
	if m := set & (1<<from - 1); m != 0 {
		return 63 - bits.LeadingZeros64(m)
	}
	return none
}

// wall returns t's wall clock as a civil time.
func wall(t time.Time) time.Time {
	y, mo, d := t.Date()
	h, m, s := t.Clock()
	return time.Date(y, mo, d, h, m, s, t.Nanosecond(), time.UTC)
}

// reach returns the latest wall-clock minute t's location shows at or before
// t: t's own, except in the repeated hour after clocks go back, when the clock
// showed later times before the change.
func reach(t time.Time) time.Time {
	w := wall(t)
	if start, _ := t.ZoneBounds(); !start.IsZero() {
		if b := wall(start.Add(-time.Nanosecond)); b.After(w) {
			w = b
		}
	}
	return w.Truncate(time.Minute)
}

// firstAt returns the first instant at which loc's clock shows the civil
// minute w, or false when the clock skips it.
func firstAt(w time.Time, loc *time.Location) (time.Time, bool) {
	y, mo, d := w.Date()
	t := time.Date(y, mo, d, w.Hour(), w.Minute(), 0, 0, loc)
	if !wall(t).Equal(w) {
		return time.Time{}, false
	}
	// time.Date may pick either occurrence of a repeated time: look for one
	// in the zone period before t's.
	if start, _ := t.ZoneBounds(); !start.IsZero() {
		_, off := t.Zone()
		_, before := start.Add(-time.Nanosecond).Zone()
		if e := t.Add(time.Duration(off-before) * time.Second); before > off && wall(e).Equal(w) {
			return e, true
		}
	}
	return t, true
}
