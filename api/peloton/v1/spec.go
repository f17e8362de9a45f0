package pelotonv1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Limits and defaults of a JobSpec, shared by every client and the server.
const (
	MaxJobNameLength              = 128
	MaxPriority                   = 1000
	MaxInstances                  = 1_000_000
	MaxAttemptsLimit              = 100
	DefaultPool                   = "/"
	DefaultMaxAttempts            = 3
	DefaultKillGracePeriodSeconds = 10
	// MaxConstraintDepth bounds how deeply all_of/any_of may nest.
	MaxConstraintDepth = 16
)

// ErrInvalidSpec is what every *SpecError unwraps to.
var ErrInvalidSpec = errors.New("invalid job spec")

// FieldError is one problem with one field of a spec. Path uses the proto
// field names: "task.resources.cpu", "task.constraints[1].any_of[0].key",
// "task.env[\"1X\"]". An empty path means the spec as a whole.
type FieldError struct {
	Path    string
	Message string
}

// String renders the problem as "path: message".
func (e FieldError) String() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

// SpecError carries every problem found in a spec, not only the first.
type SpecError struct {
	Problems []FieldError
}

// Error lists the problems one per line, sorted by path.
func (e *SpecError) Error() string {
	sorted := slices.Clone(e.Problems)
	SortFieldErrors(sorted)
	lines := make([]string, len(sorted))
	for i, p := range sorted {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap makes errors.Is(err, ErrInvalidSpec) hold.
func (e *SpecError) Unwrap() error { return ErrInvalidSpec }

// NewSpecError returns nil when there are no problems, else a *SpecError
// holding them sorted by path with exact duplicates removed.
func NewSpecError(problems []FieldError) error {
	if len(problems) == 0 {
		return nil
	}
	sorted := slices.Clone(problems)
	SortFieldErrors(sorted)
	return &SpecError{Problems: slices.Compact(sorted)}
}

// SortFieldErrors orders problems by path (numbers inside paths compare
// numerically, so [2] sorts before [10]), then by message.
func SortFieldErrors(problems []FieldError) {
	slices.SortStableFunc(problems, func(a, b FieldError) int {
		if c := comparePaths(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
}

// comparePaths compares runs of digits by value and everything else bytewise.
func comparePaths(a, b string) int {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := len(na) - len(nb); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitPrefix(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// DecodeJobSpec decodes a JSON job spec (convert YAML to JSON first) and
// validates it. It reports every problem at once: unknown fields, values of
// the wrong JSON type and the semantic checks of ValidateJobSpec. Enum values
// may be given by full name (JOB_TYPE_BATCH) or by short name, in any case,
// with '-' or '_' (batch, not-in). Fields may use their JSON (camelCase) or
// proto (snake_case) name. Defaults are not applied; see ApplyJobSpecDefaults.
// On failure the error is a *SpecError.
func DecodeJobSpec(data []byte) (*JobSpec, error) {
	// Most specs are well-formed JSON of the message's own shape, which
	// protojson reads directly; everything else (short enum names, unknown
	// fields, a problem to name) takes the walk that reports every problem.
	spec := &JobSpec{}
	if protojson.Unmarshal(data, spec) == nil && acceptedAsIs(spec) {
		return spec, nil
	}
	return decodeJobSpecWalk(data)
}

// acceptedAsIs reports whether a spec protojson read is one the walk would
// read the same: valid, and with every enum value one the API names
// (protojson keeps unknown enum numbers, which the walk refuses).
func acceptedAsIs(spec *JobSpec) bool {
	if len(ValidateJobSpec(spec)) > 0 {
		return false
	}
	known := true
	var visit func(m protoreflect.Message)
	visit = func(m protoreflect.Message) {
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.Kind() == protoreflect.EnumKind && !fd.IsList():
				known = known && fd.Enum().Values().ByNumber(v.Enum()) != nil
			case fd.Kind() == protoreflect.EnumKind:
				for i := 0; i < v.List().Len(); i++ {
					known = known && fd.Enum().Values().ByNumber(v.List().Get(i).Enum()) != nil
				}
			case fd.IsMap():
				if fd.MapValue().Kind() == protoreflect.MessageKind {
					v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool { visit(mv.Message()); return known })
				}
			case fd.Kind() == protoreflect.MessageKind && fd.IsList():
				for i := 0; i < v.List().Len(); i++ {
					visit(v.List().Get(i).Message())
				}
			case fd.Kind() == protoreflect.MessageKind:
				visit(v.Message())
			}
			return known
		})
	}
	visit(spec.ProtoReflect())
	return known
}

// decodeJobSpecWalk is DecodeJobSpec by the walk alone.
func decodeJobSpecWalk(data []byte) (*JobSpec, error) {
	spec := &JobSpec{}
	w, err := decodeMessage(data, spec)
	if err != nil {
		return nil, err
	}
	if err := w.finish(ValidateJobSpec(spec)); err != nil {
		return nil, err
	}
	return spec, nil
}

// decodeMessage decodes generic JSON into m, collecting every structural
// problem in the returned walker. A non-nil error means the document could
// not be read at all.
func decodeMessage(data []byte, m proto.Message) (*jsonWalker, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, NewSpecError([]FieldError{{Message: "the spec is empty"}})
		}
		return nil, NewSpecError([]FieldError{{Message: "not valid JSON: " + err.Error()}})
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, NewSpecError([]FieldError{{Message: "unexpected data after the spec"}})
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		if doc == nil {
			return nil, NewSpecError([]FieldError{{Message: "the spec is empty"}})
		}
		return nil, NewSpecError([]FieldError{{Message: "the spec must be an object"}})
	}
	w := &jsonWalker{}
	clean := w.message("", obj, m.ProtoReflect().Descriptor())
	raw, err := json.Marshal(clean)
	if err == nil {
		err = protojson.Unmarshal(raw, m)
	}
	if err != nil {
		// The walk should have caught everything protojson rejects; this is
		// the safety net for what it did not foresee.
		w.add("", "cannot decode: "+err.Error())
		return nil, NewSpecError(w.problems)
	}
	return w, nil
}

// finish merges semantic problems with the structural ones, leaving out
// those a dropped field already explains, and returns them as one error.
func (w *jsonWalker) finish(semantic []FieldError) error {
	problems := w.problems
	for _, p := range semantic {
		if !w.covers(p.Path) {
			problems = append(problems, p)
		}
	}
	return NewSpecError(problems)
}

// jsonWalker checks generic JSON against a message descriptor. It collects
// problems and returns a cleaned copy (unknown and ill-typed fields dropped,
// enums spelled by full name, integers normalised) that protojson accepts.
type jsonWalker struct {
	problems []FieldError
	// bad holds the paths of fields that were dropped for being ill-typed.
	bad map[string]bool
}

func (w *jsonWalker) add(path, msg string) {
	w.problems = append(w.problems, FieldError{Path: path, Message: msg})
}

func (w *jsonWalker) reject(path, msg string) {
	w.add(path, msg)
	if w.bad == nil {
		w.bad = map[string]bool{}
	}
	w.bad[path] = true
}

// covers reports whether a dropped field explains a problem at path, so that
// "name: must be a string" is not followed by "name: is required": the
// field itself or one of its parents was dropped.
func (w *jsonWalker) covers(path string) bool {
	if len(w.bad) == 0 {
		return false
	}
	if w.bad[path] {
		return true
	}
	for i := 0; i < len(path); i++ {
		if (path[i] == '.' || path[i] == '[') && w.bad[path[:i]] {
			return true
		}
	}
	return false
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func mapEntryPath(parent, key string) string {
	return fmt.Sprintf("%s[%q]", parent, key)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func lookupField(md protoreflect.MessageDescriptor, key string) protoreflect.FieldDescriptor {
	if fd := md.Fields().ByJSONName(key); fd != nil {
		return fd
	}
	return md.Fields().ByTextName(key)
}

func (w *jsonWalker) message(path string, obj map[string]any, md protoreflect.MessageDescriptor) map[string]any {
	out := make(map[string]any, len(obj))
	seen := map[protoreflect.FieldNumber]string{}
	for _, key := range sortedKeys(obj) {
		fd := lookupField(md, key)
		if fd == nil {
			w.add(joinPath(path, key), "unknown field")
			continue
		}
		fpath := joinPath(path, string(fd.Name()))
		if prev, dup := seen[fd.Number()]; dup {
			w.reject(fpath, fmt.Sprintf("set twice (as %q and %q)", prev, key))
			continue
		}
		seen[fd.Number()] = key
		value := obj[key]
		if value == nil {
			continue // null means unset
		}
		if v, ok := w.field(fpath, value, fd); ok {
			out[fd.JSONName()] = v
		}
	}
	return out
}

func (w *jsonWalker) field(path string, value any, fd protoreflect.FieldDescriptor) (any, bool) {
	switch {
	case fd.IsList():
		items, ok := value.([]any)
		if !ok {
			w.reject(path, "must be a list")
			return nil, false
		}
		// A rejected element is replaced by a zero value, so later elements
		// keep their indexes and validation reports the paths the user wrote.
		out := make([]any, len(items))
		for i, item := range items {
			ipath := fmt.Sprintf("%s[%d]", path, i)
			out[i] = zeroJSON(fd.Kind())
			if item == nil {
				w.reject(ipath, "must not be null")
			} else if v, ok := w.single(ipath, item, fd); ok {
				out[i] = v
			}
		}
		return out, true
	case fd.IsMap():
		entries, ok := value.(map[string]any)
		if !ok {
			w.reject(path, "must be an object")
			return nil, false
		}
		out := make(map[string]any, len(entries))
		for _, key := range sortedKeys(entries) {
			// Keys are strings in every map of the API; protojson checks others.
			epath := mapEntryPath(path, key)
			if entries[key] == nil {
				w.reject(epath, "must not be null")
				continue
			}
			if v, ok := w.single(epath, entries[key], fd.MapValue()); ok {
				out[key] = v
			}
		}
		return out, true
	default:
		return w.single(path, value, fd)
	}
}

// zeroJSON is a JSON value protojson reads as the zero value of kind.
func zeroJSON(kind protoreflect.Kind) any {
	switch kind {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return map[string]any{}
	case protoreflect.StringKind, protoreflect.BytesKind:
		return ""
	case protoreflect.BoolKind:
		return false
	}
	return json.Number("0")
}

// single checks one value (not a list or map) of a field's kind.
func (w *jsonWalker) single(path string, value any, fd protoreflect.FieldDescriptor) (any, bool) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		md := fd.Message()
		if md.FullName() == "google.protobuf.Duration" {
			return w.duration(path, value)
		}
		if strings.HasPrefix(string(md.FullName()), "google.protobuf.") {
			return value, true // well-known types have their own JSON forms
		}
		obj, ok := value.(map[string]any)
		if !ok {
			w.reject(path, "must be an object")
			return nil, false
		}
		return w.message(path, obj, md), true
	case protoreflect.EnumKind:
		return w.enum(path, value, fd.Enum())
	case protoreflect.BoolKind:
		if _, ok := value.(bool); !ok {
			w.reject(path, "must be true or false")
			return nil, false
		}
		return value, true
	case protoreflect.StringKind, protoreflect.BytesKind:
		switch v := value.(type) {
		case string:
			return value, true
		case bool, json.Number:
			if n, ok := v.(json.Number); ok && numberAsString[fd.FullName()] {
				// A lone instance number written without quotes.
				if num, ok := w.whole(path, n, 0, math.MaxUint32); ok {
					return string(num.(json.Number)), true
				}
				return nil, false
			}
			// YAML reads yes, true and 123 as non-strings.
			w.reject(path, fmt.Sprintf("must be a string, not %v (quote it in YAML)", v))
		default:
			w.reject(path, "must be a string")
		}
		return nil, false
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return w.whole(path, value, math.MinInt32, math.MaxInt32)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return w.whole(path, value, math.MinInt64, math.MaxInt64)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return w.whole(path, value, 0, math.MaxUint32)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return w.whole(path, value, 0, math.MaxUint64)
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return w.float(path, value, fd.Kind() == protoreflect.FloatKind)
	}
	w.reject(path, "has a type this decoder does not know")
	return nil, false
}

// duration accepts a duration as Go writes it ("500ms", "1m30s") or as a
// number of seconds, and hands it on in the form protojson reads ("0.5s").
func (w *jsonWalker) duration(path string, value any) (any, bool) {
	var d time.Duration
	switch v := value.(type) {
	case string:
		parsed, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			w.reject(path, fmt.Sprintf("%q is not a duration such as 500ms, 10s or 1m30s", v))
			return nil, false
		}
		d = parsed
	case json.Number:
		f, err := v.Float64()
		if err != nil || math.IsNaN(f) || math.Abs(f) > 1e9 {
			w.reject(path, "must be a duration such as 500ms, 10s or 1m30s, or a number of seconds")
			return nil, false
		}
		d = time.Duration(f * float64(time.Second))
	default:
		w.reject(path, "must be a duration such as 500ms, 10s or 1m30s")
		return nil, false
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s", true
}

// numberText returns the text of a JSON number, or of a string holding one
// (protojson accepts both).
func numberText(value any) (string, bool) {
	switch v := value.(type) {
	case json.Number:
		return string(v), true
	case string:
		return strings.TrimSpace(v), true
	}
	return "", false
}

// wholeNumber parses text as an integer, accepting forms such as 1e3.
func wholeNumber(text string) (f float64, msg string) {
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, "must be a number"
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, "is out of range"
	}
	if f != math.Trunc(f) {
		return 0, "must be a whole number"
	}
	return f, ""
}

// whole checks an integer in [lo, hi] and returns it in plain decimal form
// (protojson rejects forms such as 1e3 that JSON and YAML writers produce).
func (w *jsonWalker) whole(path string, value any, lo int64, hi uint64) (any, bool) {
	text, ok := numberText(value)
	if !ok {
		w.reject(path, "must be a number")
		return nil, false
	}
	var neg, over bool
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		neg, over, text = n < lo, n > 0 && uint64(n) > hi, strconv.FormatInt(n, 10)
	} else if u, err := strconv.ParseUint(text, 10, 64); err == nil {
		over, text = u > hi, strconv.FormatUint(u, 10)
	} else {
		f, msg := wholeNumber(text)
		if msg != "" {
			w.reject(path, msg)
			return nil, false
		}
		neg, over, text = f < float64(lo), f >= float64(hi)+1, strconv.FormatFloat(f, 'f', 0, 64)
	}
	switch {
	case neg && lo == 0:
		w.reject(path, "must not be negative")
	case neg || over:
		w.reject(path, "is out of range")
	default:
		return json.Number(text), true
	}
	return nil, false
}

func (w *jsonWalker) float(path string, value any, single bool) (any, bool) {
	text, ok := numberText(value)
	if !ok {
		w.reject(path, "must be a number")
		return nil, false
	}
	switch text {
	case "NaN", "Infinity", "-Infinity":
		// Valid protojson; ValidateJobSpec says where they are not allowed.
		return text, true
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		w.reject(path, "must be a number")
		return nil, false
	}
	if math.IsInf(f, 0) || (single && math.Abs(f) > math.MaxFloat32) {
		w.reject(path, "is out of range")
		return nil, false
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), true
}

func (w *jsonWalker) enum(path string, value any, ed protoreflect.EnumDescriptor) (any, bool) {
	switch v := value.(type) {
	case string:
		if n, err := ParseEnumName(ed, v); err == nil {
			return string(ed.Values().ByNumber(n).Name()), true
		}
		w.reject(path, fmt.Sprintf("unknown value %q (want one of %s)", v, enumChoices(ed)))
		return nil, false
	case json.Number:
		n, err := strconv.ParseInt(string(v), 10, 32)
		if err != nil || ed.Values().ByNumber(protoreflect.EnumNumber(n)) == nil {
			w.reject(path, fmt.Sprintf("unknown value %s (want one of %s)", v, enumChoices(ed)))
			return nil, false
		}
		return string(ed.Values().ByNumber(protoreflect.EnumNumber(n)).Name()), true
	}
	w.reject(path, fmt.Sprintf("must be a string, one of %s", enumChoices(ed)))
	return nil, false
}

// enumPrefix is the upper snake case of the enum's name plus "_", the prefix
// its value names share by convention: JobType → "JOB_TYPE_".
func enumPrefix(ed protoreflect.EnumDescriptor) string {
	name := string(ed.Name())
	var b strings.Builder
	for i, r := range name {
		upper := r >= 'A' && r <= 'Z'
		if upper && i > 0 {
			prev := name[i-1]
			nextLower := i+1 < len(name) && name[i+1] >= 'a' && name[i+1] <= 'z'
			if (prev >= 'a' && prev <= 'z') || (prev >= '0' && prev <= '9') || (prev >= 'A' && prev <= 'Z' && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteString(strings.ToUpper(string(r)))
	}
	return b.String() + "_"
}

// ShortEnumName is the name of an enum value without its type's prefix:
// JOB_STATE_RUNNING → RUNNING. Unknown numbers are rendered as digits.
func ShortEnumName(v protoreflect.Enum) string {
	ed := v.Descriptor()
	vd := ed.Values().ByNumber(v.Number())
	if vd == nil {
		return strconv.Itoa(int(v.Number()))
	}
	return strings.TrimPrefix(string(vd.Name()), enumPrefix(ed))
}

// ParseEnumName finds an enum value by its full name or by its short name,
// ignoring case and treating '-' as '_': "JOB_TYPE_BATCH", "batch", "not-in".
func ParseEnumName(ed protoreflect.EnumDescriptor, name string) (protoreflect.EnumNumber, error) {
	if vd := ed.Values().ByName(protoreflect.Name(name)); vd != nil {
		return vd.Number(), nil
	}
	norm := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(name), "-", "_"))
	for _, candidate := range []string{norm, enumPrefix(ed) + norm} {
		if vd := ed.Values().ByName(protoreflect.Name(candidate)); vd != nil {
			return vd.Number(), nil
		}
	}
	return 0, fmt.Errorf("unknown value %q (want one of %s)", name, enumChoices(ed))
}

// enumChoices lists the short names of an enum's values, zero value left out.
func enumChoices(ed protoreflect.EnumDescriptor) string {
	prefix := enumPrefix(ed)
	var names []string
	for i := 0; i < ed.Values().Len(); i++ {
		vd := ed.Values().Get(i)
		if vd.Number() == 0 {
			continue
		}
		names = append(names, strings.ToLower(strings.TrimPrefix(string(vd.Name()), prefix)))
	}
	return strings.Join(names, ", ")
}

// UnknownFieldProblems reports fields of a received protobuf message that
// this build does not know (kept by the decoder as unknown bytes), anywhere
// in the message tree. The path names the field number: "task.#42".
func UnknownFieldProblems(m proto.Message) []FieldError {
	if m == nil {
		return nil
	}
	var problems []FieldError
	collectUnknown("", m.ProtoReflect(), &problems)
	SortFieldErrors(problems)
	return problems
}

func collectUnknown(path string, m protoreflect.Message, problems *[]FieldError) {
	if !m.IsValid() {
		return
	}
	raw := m.GetUnknown()
	reported := map[protowire.Number]bool{}
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 {
			*problems = append(*problems, FieldError{Path: path, Message: "malformed unknown data"})
			break
		}
		raw = raw[n:]
		n = protowire.ConsumeFieldValue(num, typ, raw)
		if n < 0 {
			*problems = append(*problems, FieldError{Path: path, Message: "malformed unknown data"})
			break
		}
		raw = raw[n:]
		if !reported[num] {
			reported[num] = true
			*problems = append(*problems, FieldError{Path: joinPath(path, fmt.Sprintf("#%d", num)), Message: "unknown field"})
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		fpath := joinPath(path, string(fd.Name()))
		switch {
		case fd.IsList():
			if fd.Message() == nil {
				return true
			}
			list := v.List()
			for i := 0; i < list.Len(); i++ {
				collectUnknown(fmt.Sprintf("%s[%d]", fpath, i), list.Get(i).Message(), problems)
			}
		case fd.IsMap():
			if fd.MapValue().Message() == nil {
				return true
			}
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				collectUnknown(mapEntryPath(fpath, k.String()), mv.Message(), problems)
				return true
			})
		case fd.Message() != nil:
			collectUnknown(fpath, v.Message(), problems)
		}
		return true
	})
}
