package periodic

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"time"
	_ "time/tzdata"
)

func mustLoad(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// describe renders the value sets of c as "minute|hour|dom|month|dow", each
// a comma list with runs written a-b, then the day fields' star flags.
func describe(c *Cron) string {
	var parts []string
	for _, set := range []uint64{c.minute, c.hour, c.dom, c.month, c.dow} {
		var runs []string
		for v := 0; v < 64; v++ {
			if !has(set, v) {
				continue
			}
			w := v
			for has(set, w+1) {
				w++
			}
			if w > v {
				runs = append(runs, fmt.Sprintf("%d-%d", v, w))
			} else {
				runs = append(runs, strconv.Itoa(v))
			}
			v = w
		}
		parts = append(parts, strings.Join(runs, ","))
	}
	return strings.Join(parts, "|") + fmt.Sprintf(" star=%t,%t", c.domStar, c.dowStar)
}

func TestParseCron(t *testing.T) {
	tests := []struct {
		expr, want string
	}{
		{"* * * * *", "0-59|0-23|1-31|1-12|0-6 star=true,true"},
		{"  */15 * * * *\t", "0,15,30,45|0-23|1-31|1-12|0-6 star=true,true"},
		{"5 0 * * *", "5|0|1-31|1-12|0-6 star=true,true"},
		{"0-10/3 9-17 * * MON-FRI", "0,3,6,9|9-17|1-31|1-12|1-5 star=true,false"},
		{"30/10 */6 1,15 * *", "30,40,50|0,6,12,18|1,15|1-12|0-6 star=false,true"},
		{"0 0 13 * fri", "0|0|13|1-12|5 star=false,false"},
		{"0 0 * jan,Jul,DEC *", "0|0|1-31|1,7,12|0-6 star=true,true"},
		{"0 0 * FEB-apr/2 *", "0|0|1-31|2,4|0-6 star=true,true"},
		{"0 0 * * 7", "0|0|1-31|1-12|0 star=true,false"},
		{"0 0 * * 5-7", "0|0|1-31|1-12|0,5-6 star=true,false"},
		{"0 0 * * 1/2", "0|0|1-31|1-12|0-1,3,5 star=true,false"},
		{"0 0 * * sun-sat", "0|0|1-31|1-12|0-6 star=true,false"},
		{"0 0 */2 * *", "0|0|1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31|1-12|0-6 star=true,true"},
		{"00 05 01 01 00", "0|5|1|1|0 star=false,false"},
		{"59 23 31 12 6", "59|23|31|12|6 star=false,false"},
		{"*/60 */24 */31 */12 */8", "0|0|1|1|0 star=true,true"},
		{"1,2-3,*/30 * * * *", "0-3,30|0-23|1-31|1-12|0-6 star=true,true"},
		{"@yearly", "0|0|1|1|0-6 star=false,true"},
		{"@annually", "0|0|1|1|0-6 star=false,true"},
		{"@monthly", "0|0|1|1-12|0-6 star=false,true"},
		{"@weekly", "0|0|1-31|1-12|0 star=true,false"},
		{"@daily", "0|0|1-31|1-12|0-6 star=true,true"},
		{"@midnight", "0|0|1-31|1-12|0-6 star=true,true"},
		{" @HOURLY ", "0|0-23|1-31|1-12|0-6 star=true,true"},
	}
	for _, tt := range tests {
		c, err := ParseCron(tt.expr)
		if err != nil {
			t.Errorf("ParseCron(%q): %v", tt.expr, err)
			continue
		}
		if got := describe(c); got != tt.want {
			t.Errorf("ParseCron(%q) = %s, want %s", tt.expr, got, tt.want)
		}
		if got, want := c.String(), strings.TrimSpace(tt.expr); got != want {
			t.Errorf("ParseCron(%q).String() = %q, want %q", tt.expr, got, want)
		}
	}
}

func TestParseCronErrors(t *testing.T) {
	tests := []struct {
		expr, field, want string // field "" for whole-expression errors
	}{
		{"*/0 * * * *", "minute", "step 0 must be at least 1"},
		{"* 24 * * *", "hour", "24 is out of range 0-23"},
		{"60 * * * *", "minute", "60 is out of range 0-59"},
		{"* * 0 * *", "day-of-month", "0 is out of range 1-31"},
		{"* * 32 * *", "day-of-month", "32 is out of range 1-31"},
		{"* * * 13 *", "month", "13 is out of range 1-12"},
		{"* * * * 8", "day-of-week", "8 is out of range 0-7"},
		{"99999999999999999999 * * * *", "minute", "99999999999999999999 is out of range 0-59"},
		{"*/61 * * * *", "minute", "step 61 is out of range 1-60"},
		{"*/99999999999999999999 * * * *", "minute", "step 99999999999999999999 is out of range 1-60"},
		{"*/x * * * *", "minute", `step "x" is not a number`},
		{"*/ * * * *", "minute", `step "" is not a number`},
		{"1,,2 * * * *", "minute", `empty list element in "1,,2"`},
		{"1, * * * *", "minute", `empty list element in "1,"`},
		{",1 * * * *", "minute", `empty list element in ",1"`},
		{"* 5-3 * * *", "hour", `range "5-3" goes backwards: 5 is after 3`},
		{"* * * DEC-JAN *", "month", `range "DEC-JAN" goes backwards: 12 is after 1`},
		{"* * * foo *", "month", `unknown name "foo"`},
		{"* * * * MONDAY", "day-of-week", `unknown name "MONDAY"`},
		{"* mon * * *", "hour", `"mon" is not a number`},
		{"5x * * * *", "minute", `"5x" is not a number`},
		{"*5 * * * *", "minute", `"*5" is not a number`},
		{"1-2-3 * * * *", "minute", `"2-3" is not a number`},
		{"*/5/2 * * * *", "minute", `step "5/2" is not a number`},
		{"-5 * * * *", "minute", `missing value in "-5"`},
		{"5- * * * *", "minute", `missing value in "5-"`},
		{"/5 * * * *", "minute", `missing value in "/5"`},
		{"+5 * * * *", "minute", `"+5" is not a number`},
		{"* * ? * *", "day-of-month", `"?" in "?" is not supported`},
		{"* * * * 5#3", "day-of-week", `"#" in "5#3" is not supported`},
		{"* * L * *", "day-of-month", `"L" is not supported`},
		{"* * 15W * *", "day-of-month", `"15W" is not supported`},
		{"* * LW * *", "day-of-month", `"LW" is not supported`},
		{"* * * * 5L", "day-of-week", `"5L" is not supported`},
		{"", "", "want 5 fields (minute hour day-of-month month day-of-week), got 0"},
		{"* * * *", "", "got 4"},
		{"0 * * * * *", "", "got 6; seconds and year fields are not supported"},
		{"@reboot", "", "unknown or unsupported macro"},
		{"@every 5m", "", "unknown or unsupported macro"},
		{"@daily *", "", "unknown or unsupported macro"},
	}
	for _, tt := range tests {
		c, err := ParseCron(tt.expr)
		if err == nil {
			t.Errorf("ParseCron(%q) = %s, want an error", tt.expr, describe(c))
			continue
		}
		prefix := fmt.Sprintf("cron %q: ", tt.expr)
		if tt.field != "" {
			prefix += tt.field + ": "
		}
		if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseCron(%q) error = %q, want %q...%q", tt.expr, err, prefix, tt.want)
		}
	}
	long := strings.Repeat(" ", 250) + "* * * * *"
	if _, err := ParseCron(long); err == nil || !strings.Contains(err.Error(), "longer than the limit of 256") {
		t.Errorf("ParseCron of %d bytes: error = %v, want the length limit", len(long), err)
	}
	if _, err := ParseCron(long[len(long)-256:]); err != nil {
		t.Errorf("ParseCron of 256 bytes: %v", err)
	}
}

// at parses a time written "2006-01-02 15:04 MST" in loc, where the zone
// abbreviation, or the offset in zones without one, picks the occurrence of a
// repeated wall clock.
func at(t *testing.T, loc *time.Location, s string) time.Time {
	t.Helper()
	for _, layout := range []string{"2006-01-02 15:04 MST", "2006-01-02 15:04 -0700", "2006-01-02 15:04 -07"} {
		v, err := time.ParseInLocation(layout, s, loc)
		if err != nil {
			continue
		}
		v = v.In(loc)
		if got := v.Format("2006-01-02 15:04 MST"); got != s {
			t.Fatalf("at(%q) is %s", s, got)
		}
		return v
	}
	t.Fatalf("at(%q): cannot parse", s)
	return time.Time{}
}

// runs returns the n times of c after from, formatted in loc.
func runs(c *Cron, from time.Time, loc *time.Location, n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		from = c.Next(from, loc)
		if from.IsZero() {
			return append(out, "zero")
		}
		out = append(out, from.Format("2006-01-02 15:04 MST Mon"))
	}
	return out
}

func TestNext(t *testing.T) {
	ny := mustLoad(t, "America/New_York")
	lh := mustLoad(t, "Australia/Lord_Howe")
	tests := []struct {
		name, expr string
		loc        *time.Location
		from       string
		want       []string
	}{
		{"every 5 minutes", "*/5 * * * *", time.UTC, "2026-05-10 23:50 UTC", []string{
			"2026-05-10 23:55 UTC Sun", "2026-05-11 00:00 UTC Mon", "2026-05-11 00:05 UTC Mon"}},
		{"strictly after", "0 * * * *", time.UTC, "2026-05-10 10:00 UTC", []string{
			"2026-05-10 11:00 UTC Sun"}},
		{"daily across spring forward", "@daily", ny, "2026-03-07 00:00 EST", []string{
			"2026-03-08 00:00 EST Sun", "2026-03-09 00:00 EDT Mon", "2026-03-10 00:00 EDT Tue"}},
		{"daily across fall back", "@daily", ny, "2026-10-31 00:00 EDT", []string{
			"2026-11-01 00:00 EDT Sun", "2026-11-02 00:00 EST Mon", "2026-11-03 00:00 EST Tue"}},
		{"skipped 2:30 does not run", "30 2 * * *", ny, "2026-03-07 03:00 EST", []string{
			"2026-03-09 02:30 EDT Mon", "2026-03-10 02:30 EDT Tue"}},
		{"repeated 1:30 runs once", "30 1 * * *", ny, "2026-10-31 02:00 EDT", []string{
			"2026-11-01 01:30 EDT Sun", "2026-11-02 01:30 EST Mon"}},
		{"repeated hour from its second half", "*/20 * * * *", ny, "2026-11-01 01:10 EST", []string{
			"2026-11-01 02:00 EST Sun", "2026-11-01 02:20 EST Sun"}},
		{"hourly across fall back", "@hourly", ny, "2026-11-01 00:30 EDT", []string{
			"2026-11-01 01:00 EDT Sun", "2026-11-01 02:00 EST Sun", "2026-11-01 03:00 EST Sun"}},
		{"hourly across spring forward", "@hourly", ny, "2026-03-08 00:30 EST", []string{
			"2026-03-08 01:00 EST Sun", "2026-03-08 03:00 EDT Sun", "2026-03-08 04:00 EDT Sun"}},
		{"half-hour shift forward", "*/15 * * * *", lh, "2026-10-04 01:50 +1030", []string{
			"2026-10-04 02:30 +11 Sun", "2026-10-04 02:45 +11 Sun"}},
		{"half-hour shift back", "45 1 * * *", lh, "2026-04-05 01:50 +11", []string{
			"2026-04-06 01:45 +1030 Mon"}},
		{"either day field (Vixie)", "0 12 13 * FRI", time.UTC, "2026-02-01 00:00 UTC", []string{
			"2026-02-06 12:00 UTC Fri", "2026-02-13 12:00 UTC Fri", "2026-02-20 12:00 UTC Fri",
			"2026-02-27 12:00 UTC Fri", "2026-03-06 12:00 UTC Fri", "2026-03-13 12:00 UTC Fri",
			"2026-03-20 12:00 UTC Fri", "2026-03-27 12:00 UTC Fri", "2026-04-03 12:00 UTC Fri",
			"2026-04-10 12:00 UTC Fri", "2026-04-13 12:00 UTC Mon"}},
		{"both day fields when one is a star", "0 12 */10 * FRI", time.UTC, "2026-01-01 00:00 UTC", []string{
			"2026-05-01 12:00 UTC Fri", "2026-07-31 12:00 UTC Fri", "2026-08-21 12:00 UTC Fri"}},
		{"Feb 29 finds the leap year", "0 0 29 2 *", time.UTC, "2026-03-01 00:00 UTC", []string{
			"2028-02-29 00:00 UTC Tue", "2032-02-29 00:00 UTC Sun"}},
		{"Feb 29 beyond 5 years", "0 0 29 2 *", time.UTC, "2096-03-01 00:00 UTC", []string{"zero"}},
		{"Feb 30 never", "0 0 30 2 *", time.UTC, "2026-01-01 00:00 UTC", []string{"zero"}},
		{"Apr 31 never", "* * 31 4,6,9,11 *", ny, "2026-01-01 00:00 EST", []string{"zero"}},
		{"end of year", "59 23 31 12 *", time.UTC, "2026-12-31 23:59 UTC", []string{
			"2027-12-31 23:59 UTC Fri"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseCron(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			got := runs(c, at(t, tt.loc, tt.from), tt.loc, len(tt.want))
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("%q from %s:\ngot  %q\nwant %q", tt.expr, tt.from, got, tt.want)
			}
		})
	}
}

func TestPrev(t *testing.T) {
	ny := mustLoad(t, "America/New_York")
	tests := []struct {
		name, expr string
		loc        *time.Location
		at, want   string
	}{
		{"at a match", "*/5 * * * *", time.UTC, "2026-05-11 00:05 UTC", "2026-05-11 00:05 UTC"},
		{"before a match", "*/5 * * * *", time.UTC, "2026-05-11 00:04 UTC", "2026-05-11 00:00 UTC"},
		{"skipped 2:30", "30 2 * * *", ny, "2026-03-08 12:00 EDT", "2026-03-07 02:30 EST"},
		{"repeated 1:30 from its second occurrence", "30 1 * * *", ny, "2026-11-01 01:45 EST", "2026-11-01 01:30 EDT"},
		{"late in the repeated hour", "59 1 * * *", ny, "2026-11-01 01:10 EST", "2026-11-01 01:59 EDT"},
		{"Feb 29", "0 0 29 2 *", time.UTC, "2031-01-01 00:00 UTC", "2028-02-29 00:00 UTC"},
		{"Feb 30 never", "0 0 30 2 *", time.UTC, "2026-01-01 00:00 UTC", "zero"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseCron(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			got := "zero"
			if p := c.Prev(at(t, tt.loc, tt.at), tt.loc); !p.IsZero() {
				got = p.Format("2006-01-02 15:04 MST")
			}
			if got != tt.want {
				t.Errorf("%q at %s: Prev = %s, want %s", tt.expr, tt.at, got, tt.want)
			}
		})
	}
	// Seconds within the minute of a match still find it.
	c, _ := ParseCron("0 * * * *")
	now := time.Date(2026, 5, 11, 7, 0, 59, 999, time.UTC)
	if got, want := c.Prev(now, time.UTC), time.Date(2026, 5, 11, 7, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("Prev(%s) = %s, want %s", now, got, want)
	}
}

// matchWall reports whether c matches the wall clock of w, by the rules read
// directly from the fields.
func matchWall(c *Cron, w time.Time) bool {
	in := func(set uint64, v int) bool { return set>>v&1 == 1 }
	dom, dow := in(c.dom, w.Day()), in(c.dow, int(w.Weekday()))
	day := dom && dow
	if !c.domStar && !c.dowStar {
		day = dom || dow
	}
	return day && in(c.minute, w.Minute()) && in(c.hour, w.Hour()) && in(c.month, int(w.Month()))
}

// firstShown reports whether no instant in the three hours before t, in
// quarter-hour steps, shows t's wall clock.
func firstShown(t time.Time) bool {
	for d := 15 * time.Minute; d <= 3*time.Hour; d += 15 * time.Minute {
		if e := t.Add(-d); e.Format(time.DateTime) == t.Format(time.DateTime) {
			return false
		}
	}
	return true
}

// bruteNext scans minute by minute from after to limit.
func bruteNext(c *Cron, after, limit time.Time, loc *time.Location) time.Time {
	for t := after.Truncate(time.Minute).Add(time.Minute); !t.After(limit); t = t.Add(time.Minute) {
		if w := t.In(loc); matchWall(c, w) && firstShown(w) {
			return w
		}
	}
	return time.Time{}
}

// brutePrev scans minute by minute back from at to limit.
func brutePrev(c *Cron, at, limit time.Time, loc *time.Location) time.Time {
	for t := at.Truncate(time.Minute); !t.Before(limit); t = t.Add(-time.Minute) {
		if w := t.In(loc); matchWall(c, w) && firstShown(w) {
			return w
		}
	}
	return time.Time{}
}

// randomField returns a random valid text for field i, mostly simple forms,
// with month and day-of-month left "*" more often so that schedules match
// within days.
func randomField(r *rand.Rand, i int) string {
	s := specs[i]
	if (i == 2 || i == 3) && r.Intn(2) == 0 {
		return "*"
	}
	val := func() int { return s.min + r.Intn(s.max-s.min+1) }
	text := func(v int) string {
		if v-s.min < len(s.names) && r.Intn(3) == 0 {
			return strings.ToUpper(s.names[v-s.min])
		}
		return strconv.Itoa(v)
	}
	step := func() string { return "/" + strconv.Itoa(1+r.Intn((s.max-s.min)/2+1)) }
	rng := func() string {
		a, b := val(), val()
		if a > b {
			a, b = b, a
		}
		return text(a) + "-" + text(b)
	}
	switch r.Intn(8) {
	case 0:
		return "*"
	case 1:
		return "*" + step()
	case 2:
		return rng()
	case 3:
		return rng() + step()
	case 4:
		return text(val()) + step()
	case 5:
		return text(val()) + "," + rng() + "," + text(val())
	}
	return text(val())
}

// clockChanges returns each zone's clock changes from 2025 to 2027.
func clockChanges(zones []*time.Location) map[*time.Location][]time.Time {
	changes := map[*time.Location][]time.Time{}
	for _, loc := range zones {
		for tr := time.Date(2025, 1, 1, 0, 0, 0, 0, loc); tr.Year() < 2028; {
			_, end := tr.ZoneBounds()
			if end.IsZero() {
				break
			}
			changes[loc] = append(changes[loc], end)
			tr = end
		}
	}
	return changes
}

// A bruteCase is a random schedule, zone and start time. Three in four
// starts in zones that change their clocks lie near a change; half of those
// are within three hours of it, with a schedule that runs around it.
type bruteCase struct {
	expr string
	c    *Cron
	loc  *time.Location
	from time.Time
	// change is the clock change the start is near, when near is set.
	change time.Time
	near   bool
}

const bruteWindow = 3 * 24 * time.Hour

func newBruteCase(t *testing.T, r *rand.Rand, zones []*time.Location, changes map[*time.Location][]time.Time) bruteCase {
	bc := bruteCase{loc: zones[r.Intn(len(zones))]}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.Int63n(int64(365 * 24 * time.Hour))))
	spread := bruteWindow
	if ch := changes[bc.loc]; len(ch) > 0 && r.Intn(4) != 0 {
		base = ch[r.Intn(len(ch))]
		if bc.near = r.Intn(2) == 0; bc.near {
			bc.change, spread = base, 3*time.Hour
		}
	}
	bc.from = base.Add(time.Duration(r.Int63n(int64(2*spread))) - spread)
	if r.Intn(2) == 0 {
		bc.from = bc.from.Truncate(time.Minute) // exactly on a minute, often a match
	}
	bc.from = bc.from.In(zones[r.Intn(len(zones))]) // the zone of the argument does not matter
	var fields []string
	for f := range specs {
		fields = append(fields, randomField(r, f))
	}
	if bc.near { // so that the schedule runs in the hours around the change, at 1 or 2 am
		hours := []string{"*", "*", "1-3", "1", "2", "0-2/2", "*/3"}
		fields[1], fields[2], fields[3], fields[4] = hours[r.Intn(len(hours))], "*", "*", "*"
	}
	bc.expr = strings.Join(fields, " ")
	var err error
	if bc.c, err = ParseCron(bc.expr); err != nil {
		t.Fatalf("ParseCron(%q): %v", bc.expr, err)
	}
	return bc
}

// agrees reports whether got is the brute-force result want, in loc, or,
// when the scan found none, zero or beyond the scan.
func agrees(got, want time.Time, beyond bool, loc *time.Location) bool {
	if want.IsZero() {
		return got.IsZero() || beyond
	}
	return got.Equal(want) && got.Location() == loc
}

// check compares Next and Prev with the brute-force scans over the window
// on either side of the start and returns what the forward scan found.
func (bc bruteCase) check(t *testing.T) time.Time {
	t.Helper()
	c, loc, from := bc.c, bc.loc, bc.from
	next, want := c.Next(from, loc), bruteNext(c, from, from.Add(bruteWindow), loc)
	if !agrees(next, want, next.After(from.Add(bruteWindow)), loc) {
		t.Errorf("%q in %s: Next(%s) = %s, brute force %s (zero: none within %s)", bc.expr, loc, from, next, want, bruteWindow)
	}
	prev, wantPrev := c.Prev(from, loc), brutePrev(c, from, from.Add(-bruteWindow), loc)
	if !agrees(prev, wantPrev, prev.Before(from.Add(-bruteWindow)), loc) {
		t.Errorf("%q in %s: Prev(%s) = %s, brute force %s (zero: none within %s)", bc.expr, loc, from, prev, wantPrev, bruteWindow)
	}
	// Beyond the window too, Next and Prev step onto each other's results.
	if back := c.Prev(next, loc); !next.IsZero() && !back.Equal(next) {
		t.Errorf("%q in %s: Prev(Next(%s) = %s) = %s", bc.expr, loc, from, next, back)
	}
	if fwd := c.Next(prev.Add(-time.Nanosecond), loc); !prev.IsZero() && !fwd.Equal(prev) {
		t.Errorf("%q in %s: Next(Prev(%s) = %s, less 1ns) = %s", bc.expr, loc, from, prev, fwd)
	}
	return want
}

func TestNextPrevMatchBruteForce(t *testing.T) {
	var zones []*time.Location
	for _, name := range []string{"America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kolkata", "UTC"} {
		zones = append(zones, mustLoad(t, name))
	}
	changes := clockChanges(zones)
	const cases = 400
	r := rand.New(rand.NewSource(1))
	found, nearChange := 0, 0
	for i := 0; i < cases; i++ {
		bc := newBruteCase(t, r, zones, changes)
		if want := bc.check(t); !want.IsZero() {
			found++
			if d := want.Sub(bc.change); bc.near && d > -3*time.Hour && d < 3*time.Hour {
				nearChange++
			}
		}
	}
	if found < cases/2 {
		t.Errorf("only %d of %d cases matched within %s: the comparison is too weak", found, cases, bruteWindow)
	}
	t.Logf("%d of %d cases matched within %s, %d of them within 3h of a clock change", found, cases, bruteWindow, nearChange)
}

// runsOK reports whether got is zero or a minute in loc that c matches, on
// the right side of from.
func runsOK(c *Cron, got, from time.Time, loc *time.Location, after bool) bool {
	if got.IsZero() {
		return true
	}
	side := got.After(from)
	if !after {
		side = !side
	}
	return side && matchWall(c, got) && got.Second() == 0 && got.Nanosecond() == 0 && got.Location() == loc
}

func FuzzParseCron(f *testing.F) {
	for _, s := range []string{
		"* * * * *", "*/5 1-3 */2 JAN-mar 1,3,5", "0 12 13 * FRI", "@daily", "@weekly",
		"0 0 29 2 *", "0 0 30 2 *", "59 23 31 12 7", "30 2 * * *", "1/7 * 5-6/9 * 0",
		"1,,2 * * * *", "*/0 * * * *", "* * L * *", "0 * * * * *",
	} {
		f.Add(s, int64(1772953200)) // 2026-03-08 07:00 UTC, just before New York's clocks go forward
	}
	zones := []*time.Location{time.UTC, mustLoad(f, "America/New_York"), mustLoad(f, "Australia/Lord_Howe")}
	f.Fuzz(func(t *testing.T, expr string, sec int64) {
		c, err := ParseCron(expr)
		if err != nil {
			if c != nil || !strings.HasPrefix(err.Error(), "cron ") {
				t.Fatalf("ParseCron(%q) = %v, %v", expr, c, err)
			}
			return
		}
		if _, err := ParseCron(c.String()); err != nil {
			t.Fatalf("ParseCron(%q).String() = %q does not parse: %v", expr, c, err)
		}
		from := time.Unix(sec%(300*365*86400), 0) // within about 300 years of 1970
		for _, loc := range zones {
			if n := c.Next(from, loc); !runsOK(c, n, from, loc, true) {
				t.Fatalf("%q in %s: Next(%s) = %s", expr, loc, from, n)
			}
			if p := c.Prev(from, loc); !runsOK(c, p, from, loc, false) {
				t.Fatalf("%q in %s: Prev(%s) = %s", expr, loc, from, p)
			}
		}
	})
}

func BenchmarkNext(b *testing.B) {
	ny := mustLoad(b, "America/New_York")
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, ny)
	for _, expr := range []string{"*/5 * * * *", "30 2 * * *", "0 9 * * MON-FRI", "0 0 29 2 *", "0 0 30 2 *"} {
		c, err := ParseCron(expr)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(expr, func(b *testing.B) {
			for b.Loop() {
				c.Next(from, ny)
			}
		})
	}
}
