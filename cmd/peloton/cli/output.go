package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"
	"sigs.k8s.io/yaml"

	pelotonv1 "github.com/peloton-federated/peloton/api/peloton/v1"
)

// MarshalJSON renders an API message as indented JSON with camelCase names
// and unset fields included. The layout is stable (protojson's is not).
func MarshalJSON(m proto.Message) ([]byte, error) {
	raw, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(m)
	if err != nil {
		return nil, err
	}
	return indentJSON(raw)
}

func indentJSON(raw []byte) ([]byte, error) {
	var compact, out bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, err
	}
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// MarshalYAML renders an API message as YAML, converted from MarshalJSON.
func MarshalYAML(m proto.Message) ([]byte, error) {
	js, err := MarshalJSON(m)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(js)
}

// writeStructured writes m as JSON or YAML according to format.
func writeStructured(w io.Writer, format string, m proto.Message) error {
	var out []byte
	var err error
	if format == "yaml" {
		out, err = MarshalYAML(m)
	} else {
		out, err = MarshalJSON(m)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// writeValue writes a plain Go value (not an API message) as JSON or YAML.
func writeValue(w io.Writer, format string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	out, err := indentJSON(raw)
	if err == nil && format == "yaml" {
		out, err = yaml.JSONToYAML(out)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// table writes aligned columns.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	if len(header) > 0 {
		t.row(header...)
	}
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		if c == "" {
			cells[i] = "-"
		}
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

// fields writes "Key:  value" lines, aligned, skipping empty values.
func fields(w io.Writer, pairs ...string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			continue
		}
		fmt.Fprintf(tw, "%s:\t%s\n", pairs[i], pairs[i+1])
	}
	return tw.Flush()
}

// shortState renders a state enum without its type prefix: RUNNING.
func shortState(s protoreflect.Enum) string { return pelotonv1.ShortEnumName(s) }

// number renders a float without trailing zeros: 1, 0.25, 1.5.
func number(v float64) string {
	if math.IsInf(v, 1) {
		return "unlimited"
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprint(v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// cores renders decimal cores to the millicore the scheduler counts in:
// "1.5", "0.001", "12", never float residue. (The shortest decimal of the
// double nearest k/1000 is k/1000 itself.)
func cores(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return number(v)
	}
	return strconv.FormatFloat(math.Round(v*1000)/1000+0, 'f', -1, 64)
}

// mebibytes renders an amount in whole MiB, in the largest unit that shows
// it exactly with at most two decimals: 128MiB, 2GiB, 1.5TiB, but 1500MiB
// (1.46GiB would round it).
func mebibytes(mib float64) string {
	if math.IsNaN(mib) || math.IsInf(mib, 0) {
		return number(mib)
	}
	n := int64(math.Round(mib))
	units := []string{"MiB", "GiB", "TiB", "PiB"}
	i, scale := 0, int64(1)
	for i < len(units)-1 && abs64(n) >= scale*1024 && (n*100)%(scale*1024) == 0 {
		i++
		scale *= 1024
	}
	return strconv.FormatFloat(float64(n)/float64(scale), 'f', -1, 64) + units[i]
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// whole renders a count of whole units (GPUs): "2", never residue.
func whole(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return number(v)
	}
	return strconv.FormatFloat(math.Round(v)+0, 'f', -1, 64)
}

// weight renders a share weight with at most three decimals.
func weight(v float64) string { return cores(v) }

// formatResources renders resources compactly: "cpu=1 mem=128MiB disk=1GiB
// gpu=1"; disk and gpu only when set.
func formatResources(r *pelotonv1.Resources) string {
	if r == nil {
		return ""
	}
	parts := []string{"cpu=" + cores(r.GetCpu()), "mem=" + mebibytes(r.GetMemMb())}
	if r.GetDiskMb() != 0 {
		parts = append(parts, "disk="+mebibytes(r.GetDiskMb()))
	}
	if r.GetGpu() != 0 {
		parts = append(parts, "gpu="+whole(r.GetGpu()))
	}
	return strings.Join(parts, " ")
}

// formatPoolResource renders one amount of a pool resource by its name.
func formatPoolResource(name string, v float64) string {
	if math.IsInf(v, 1) {
		return "unlimited"
	}
	switch strings.ToLower(name) {
	case "mem", "mem_mb", "memory", "disk", "disk_mb":
		return mebibytes(v)
	case "cpu":
		return cores(v)
	case "gpu":
		return whole(v)
	}
	return number(v)
}

// ago renders how long before now t was: "12s ago", "5m ago", "3h ago",
// "2d ago"; "-" for an unset time. Future times read "in 5s".
func ago(t *timestamppb.Timestamp, now time.Time) string {
	if t == nil || !t.IsValid() || (t.GetSeconds() == 0 && t.GetNanos() == 0) {
		return "-"
	}
	d := now.Sub(t.AsTime())
	if d < 0 {
		return "in " + roughDuration(-d)
	}
	return roughDuration(d) + " ago"
}

// roughDuration keeps the most significant unit: 45s, 12m, 3h, 2d.
func roughDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// timestamp renders an absolute time with its age: "2026-01-02 15:04:05 (3m ago)".
func timestamp(t *timestamppb.Timestamp, now time.Time) string {
	if ago(t, now) == "-" {
		return ""
	}
	return t.AsTime().Local().Format("2006-01-02 15:04:05") + " (" + ago(t, now) + ")"
}

// taskStateOf reads a key of JobStatus.task_states, which may be the full
// or the short state name.
func taskStateOf(key string) pelotonv1.TaskState {
	n, err := pelotonv1.ParseEnumName(pelotonv1.TaskState(0).Descriptor(), key)
	if err != nil {
		return pelotonv1.TaskState_TASK_STATE_UNSPECIFIED
	}
	return pelotonv1.TaskState(n)
}

// taskCounts renders task counts in lifecycle order: "running=2 succeeded=8".
func taskCounts(counts map[string]uint32) string {
	type entry struct {
		state pelotonv1.TaskState
		name  string
		n     uint32
	}
	var entries []entry
	for key, n := range counts {
		if n == 0 {
			continue
		}
		st := taskStateOf(key)
		name := strings.ToLower(key)
		if st != pelotonv1.TaskState_TASK_STATE_UNSPECIFIED {
			name = strings.ToLower(shortState(st))
		}
		entries = append(entries, entry{st, name, n})
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if a.state != b.state {
			return int(a.state) - int(b.state)
		}
		return strings.Compare(a.name, b.name)
	})
	parts := make([]string, len(entries))
	for i, e := range entries {
		parts[i] = fmt.Sprintf("%s=%d", e.name, e.n)
	}
	return strings.Join(parts, " ")
}

// commandLine renders a command and its arguments, quoting where a shell would need it.
func commandLine(command string, args []string) string {
	parts := make([]string, 0, len(args)+1)
	for _, s := range append([]string{command}, args...) {
		if s == "" || strings.ContainsAny(s, " \t\n'\"\\$`*?;&|<>()[]{}#~") {
			s = strconv.Quote(s)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// constraintText renders a constraint tree: zone in (a, b) && (ssd exists || gpu = 1).
func constraintText(c *pelotonv1.Constraint) string {
	join := func(subs []*pelotonv1.Constraint, sep string) string {
		parts := make([]string, len(subs))
		for i, s := range subs {
			parts[i] = constraintText(s)
			if len(s.GetAllOf())+len(s.GetAnyOf()) > 0 {
				parts[i] = "(" + parts[i] + ")"
			}
		}
		return strings.Join(parts, sep)
	}
	switch {
	case len(c.GetAllOf()) > 0:
		return join(c.GetAllOf(), " && ")
	case len(c.GetAnyOf()) > 0:
		return join(c.GetAnyOf(), " || ")
	}
	op := strings.ToLower(pelotonv1.ShortEnumName(c.GetOp()))
	switch c.GetOp() {
	case pelotonv1.ConstraintOp_CONSTRAINT_OP_EQUALS:
		op = "="
	case pelotonv1.ConstraintOp_CONSTRAINT_OP_NOT_EQUALS:
		op = "!="
	case pelotonv1.ConstraintOp_CONSTRAINT_OP_NOT_IN:
		op = "not in"
	case pelotonv1.ConstraintOp_CONSTRAINT_OP_NOT_EXISTS:
		op = "not exists"
	}
	switch len(c.GetValues()) {
	case 0:
		return c.GetKey() + " " + op
	case 1:
		if c.GetOp() != pelotonv1.ConstraintOp_CONSTRAINT_OP_IN && c.GetOp() != pelotonv1.ConstraintOp_CONSTRAINT_OP_NOT_IN {
			return c.GetKey() + " " + op + " " + c.GetValues()[0]
		}
	}
	return c.GetKey() + " " + op + " (" + strings.Join(c.GetValues(), ", ") + ")"
}

// labelsText renders a map as sorted "k=v" pairs.
func labelsText(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, " ")
}

// poolRow is a pool placed in the tree: its depth below the roots.
type poolRow struct {
	pool  *pelotonv1.Pool
	depth int
}

// poolTree orders pools depth-first by path, children after their parent.
// A pool whose parent is not listed starts a tree of its own.
func poolTree(pools []*pelotonv1.Pool) []poolRow {
	byPath := make(map[string]*pelotonv1.Pool, len(pools))
	for _, p := range pools {
		byPath[p.GetPath()] = p
	}
	children := map[string][]string{}
	var roots []string
	for path := range byPath {
		parent := parentPool(path)
		if _, ok := byPath[parent]; ok && parent != path {
			children[parent] = append(children[parent], path)
		} else {
			roots = append(roots, path)
		}
	}
	var rows []poolRow
	var visit func(path string, depth int)
	visit = func(path string, depth int) {
		rows = append(rows, poolRow{byPath[path], depth})
		kids := children[path]
		slices.Sort(kids)
		for _, k := range kids {
			visit(k, depth+1)
		}
	}
	slices.Sort(roots)
	for _, r := range roots {
		visit(r, 0)
	}
	return rows
}

// parentPool is the path of a pool's parent: /a/b → /a, /a → /, / → /.
func parentPool(path string) string {
	i := strings.LastIndexByte(strings.TrimSuffix(path, "/"), '/')
	if i <= 0 {
		return "/"
	}
	return path[:i]
}

// poolName is how a pool shows in the tree: its last path segment, "/" for the root.
func poolName(path string) string {
	trimmed := strings.TrimSuffix(path, "/")
	if trimmed == "" {
		return "/"
	}
	return trimmed[strings.LastIndexByte(trimmed, '/')+1:]
}
