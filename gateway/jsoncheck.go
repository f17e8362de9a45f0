package gateway

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// checkJSON reads a request body strictly, against the OpenAPI schema of
// the route's body when there is one, and returns its problems, each with
// the JSON path it is at ("task.env[\"A\"]", "overrides[3].instances"):
//
//   - not JSON (RFC 8259) at all, or nested deeper than maxJSONDepth;
//   - a key given twice in one object (encoding/json and protojson keep
//     the last one silently);
//   - a string that is not valid UTF-8, raw or as escaped surrogates
//     (decoders replace it with U+FFFD silently);
//   - a string where the schema says number or integer: protojson reads
//     "1.5", "NaN" and "Infinity" from strings, the schema does not;
//   - a field the schema does not have (it forbids unknown fields), unless
//     unknownOK: the body's decoder reports those with all its other
//     problems.
//
// It is a pure function of its input.
//
// Top-level keys named in alsoKnown are fields too: a body that is the
// whole request may repeat its path parameters.
func checkJSON(body []byte, root *schema, t *routeTable, unknownOK bool, alsoKnown map[string]bool) []string {
	out, _ := checkJSONBody(body, root, t, unknownOK, alsoKnown)
	return out
}

// checkJSONBody is checkJSON that also tells whether the body could be
// read to its end (it is JSON, however wrong for its schema).
func checkJSONBody(body []byte, root *schema, t *routeTable, unknownOK bool, alsoKnown map[string]bool) (problems []string, readable bool) {
	c := &jsonChecker{buf: body, t: t, unknownOK: unknownOK, alsoKnown: alsoKnown}
	found := c.check(root)
	out := make([]string, len(found))
	for i, p := range found {
		out[i] = p.String()
	}
	return out, c.fatal == nil
}

// SpecJSONProblems reads a JSON job or pool spec file (spec is
// JobSpec's or PoolSpec's descriptor) as the HTTP API reads a request
// body carrying one, so that a key given twice in one object, a string
// that is not UTF-8, or a file that is not JSON is refused with its path
// as the API names it (task.env["A"]). Unknown fields and numbers in
// quotes are left to the spec's decoder: spec files may quote a whole
// number, as YAML writers do.
func SpecJSONProblems(body []byte, spec protoreflect.MessageDescriptor) []pb.FieldError {
	c := &jsonChecker{buf: body, unknownOK: true, quotedNumbersOK: true}
	var root *schema
	if t, err := specSchemas(); err == nil {
		c.t = t
		// grpc-gateway names a definition by the last part of the
		// package and the message: v1JobSpec.
		pkg := spec.ParentFile().Package()
		root = t.defs[string(pkg.Name())+string(spec.Name())]
	}
	return c.check(root)
}

// specSchemas are the schemas of the API's OpenAPI document.
var specSchemas = sync.OnceValues(func() (*routeTable, error) { return loadRoutes(pb.OpenAPI) })

// check reads the whole document, whose schema is root.
func (c *jsonChecker) check(root *schema) []pb.FieldError {
	c.space()
	c.value("", c.t.resolve(root), 0)
	if c.fatal == nil {
		c.space()
		if c.pos < len(c.buf) {
			c.fail("", "unexpected data after the JSON value")
		}
	}
	if c.fatal != nil {
		return append(c.problems, *c.fatal)
	}
	return c.problems
}

// maxJSONDepth bounds how deeply a body may nest; the API's deepest
// messages (constraints nested 16 levels) stay well within it.
const maxJSONDepth = 100

// maxJSONProblems bounds how many problems one answer lists.
const maxJSONProblems = 20

type jsonChecker struct {
	unknownOK bool
	// quotedNumbersOK takes a string where the schema says number.
	quotedNumbersOK bool
	alsoKnown       map[string]bool
	buf             []byte
	pos             int
	t               *routeTable
	problems        []pb.FieldError
	// fatal is set when the body cannot be read further.
	fatal *pb.FieldError
}

func (c *jsonChecker) fail(path, msg string) {
	if c.fatal == nil {
		c.fatal = &pb.FieldError{Path: path, Message: fmt.Sprintf("%s (byte %d)", msg, c.pos)}
	}
}

func (c *jsonChecker) problem(path, msg string) {
	if len(c.problems) < maxJSONProblems {
		c.problems = append(c.problems, pb.FieldError{Path: path, Message: msg})
	}
}

func (c *jsonChecker) space() {
	for c.pos < len(c.buf) {
		switch c.buf[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

// value reads one value at path; s is its schema (resolved), nil when
// unknown.
func (c *jsonChecker) value(path string, s *schema, depth int) {
	if c.fatal != nil {
		return
	}
	if depth > maxJSONDepth {
		c.fail(path, fmt.Sprintf("nested more than %d levels deep", maxJSONDepth))
		return
	}
	if c.pos >= len(c.buf) {
		c.fail(path, "unexpected end of JSON")
		return
	}
	switch b := c.buf[c.pos]; {
	case b == '{':
		c.object(path, s, depth)
	case b == '[':
		c.array(path, s, depth)
	case b == '"':
		if _, ok := c.str(path); ok && !c.quotedNumbersOK && s != nil && (s.Type == "number" || s.Type == "integer") {
			c.problem(path, "must be a number, not a string")
		}
	case b == '-' || (b >= '0' && b <= '9'):
		c.number(path)
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if strings.HasPrefix(string(c.buf[c.pos:min(len(c.buf), c.pos+5)]), lit) {
				c.pos += len(lit)
				return
			}
		}
		c.fail(path, fmt.Sprintf("invalid character %q: not JSON", rune(b)))
	}
}

func (c *jsonChecker) object(path string, s *schema, depth int) {
	c.pos++ // {
	seen := map[string]bool{}
	c.space()
	if c.pos < len(c.buf) && c.buf[c.pos] == '}' {
		c.pos++
		return
	}
	for c.fatal == nil {
		c.space()
		if c.pos >= len(c.buf) || c.buf[c.pos] != '"' {
			c.fail(path, "expected a quoted key")
			return
		}
		key, ok := c.str(path)
		if !ok {
			return
		}
		kpath, field, known := c.member(path, key, s)
		if seen[key] {
			c.problem(kpath, "given twice in one object")
		}
		seen[key] = true
		if !known && path == "" && (c.alsoKnown[key] || c.alsoKnown[lowerCamel(key)]) {
			known = true
		}
		if !known && !c.unknownOK {
			c.problem(kpath, "unknown field")
		}
		c.space()
		if c.pos >= len(c.buf) || c.buf[c.pos] != ':' {
			c.fail(kpath, "expected ':' after a key")
			return
		}
		c.pos++
		c.space()
		c.value(kpath, field, depth+1)
		c.space()
		if c.pos >= len(c.buf) {
			c.fail(path, "unexpected end of JSON in an object")
			return
		}
		switch c.buf[c.pos] {
		case ',':
			c.pos++
		case '}':
			c.pos++
			return
		default:
			c.fail(path, "expected ',' or '}' in an object")
			return
		}
	}
}

// member is the path and schema of an object's member; known is false
// when the schema is a message that has no such field.
func (c *jsonChecker) member(path, key string, s *schema) (kpath string, field *schema, known bool) {
	if s == nil {
		return joinKey(path, key, false), nil, true
	}
	if m := s.additional(); m != nil {
		return joinKey(path, key, true), c.t.resolve(m), true
	}
	if s.Properties == nil {
		// No schema to check against, or a message without fields.
		return joinKey(path, key, false), nil, s.Type != "object"
	}
	kpath = joinKey(path, key, false)
	if f, ok := s.Properties[key]; ok {
		return kpath, c.t.resolve(f), true
	}
	// protojson also takes the proto name (max_running for maxRunning).
	if f, ok := s.Properties[lowerCamel(key)]; ok {
		return kpath, c.t.resolve(f), true
	}
	return kpath, nil, false
}

func joinKey(path, key string, mapKey bool) string {
	if mapKey {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// lowerCamel is protojson's JSON name of a proto field name.
func lowerCamel(s string) string {
	var b strings.Builder
	upper := false
	for _, r := range s {
		switch {
		case r == '_':
			upper = true
		case upper && r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
			upper = false
		default:
			b.WriteRune(r)
			upper = false
		}
	}
	return b.String()
}

func (c *jsonChecker) array(path string, s *schema, depth int) {
	c.pos++ // [
	var item *schema
	if s != nil {
		item = c.t.resolve(s.Items)
	}
	c.space()
	if c.pos < len(c.buf) && c.buf[c.pos] == ']' {
		c.pos++
		return
	}
	for i := 0; c.fatal == nil; i++ {
		c.space()
		c.value(fmt.Sprintf("%s[%d]", path, i), item, depth+1)
		c.space()
		if c.pos >= len(c.buf) {
			c.fail(path, "unexpected end of JSON in a list")
			return
		}
		switch c.buf[c.pos] {
		case ',':
			c.pos++
		case ']':
			c.pos++
			return
		default:
			c.fail(path, "expected ',' or ']' in a list")
			return
		}
	}
}

// str reads a string and returns it decoded; ok is false when the body
// cannot be read on. Invalid UTF-8 is a problem at path.
func (c *jsonChecker) str(path string) (string, bool) {
	c.pos++ // "
	var b strings.Builder
	bad := false
	for {
		if c.pos >= len(c.buf) {
			c.fail(path, "unexpected end of JSON in a string")
			return "", false
		}
		ch := c.buf[c.pos]
		switch {
		case ch == '"':
			c.pos++
			if bad {
				c.problem(path, "is not valid UTF-8")
			}
			return b.String(), true
		case ch < 0x20:
			c.fail(path, "control character in a string (escape it)")
			return "", false
		case ch == '\\':
			r, ok := c.escape(path)
			if !ok {
				return "", false
			}
			if r == utf8.RuneError {
				bad = true
			}
			b.WriteRune(r)
		case ch < utf8.RuneSelf:
			b.WriteByte(ch)
			c.pos++
		default:
			r, n := utf8.DecodeRune(c.buf[c.pos:])
			if r == utf8.RuneError && n <= 1 {
				bad = true
				n = 1
			}
			b.WriteRune(r)
			c.pos += n
		}
	}
}

// escape reads one escape sequence; a lone surrogate reads as RuneError.
func (c *jsonChecker) escape(path string) (rune, bool) {
	if c.pos+1 >= len(c.buf) {
		c.fail(path, "unexpected end of JSON in an escape")
		return 0, false
	}
	e := c.buf[c.pos+1]
	c.pos += 2
	switch e {
	case '"', '\\', '/':
		return rune(e), true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	case 'u':
		r, ok := c.hex4(path)
		if !ok {
			return 0, false
		}
		if !utf16.IsSurrogate(r) {
			return r, true
		}
		if r >= 0xDC00 || c.pos+1 >= len(c.buf) || c.buf[c.pos] != '\\' || c.buf[c.pos+1] != 'u' {
			return utf8.RuneError, true
		}
		c.pos += 2
		lo, ok := c.hex4(path)
		if !ok {
			return 0, false
		}
		if d := utf16.DecodeRune(r, lo); d != utf8.RuneError {
			return d, true
		}
		return utf8.RuneError, true
	}
	c.fail(path, fmt.Sprintf("invalid escape \\%c in a string", e))
	return 0, false
}

func (c *jsonChecker) hex4(path string) (rune, bool) {
	if c.pos+4 > len(c.buf) {
		c.fail(path, "unexpected end of JSON in a \\u escape")
		return 0, false
	}
	n, err := strconv.ParseUint(string(c.buf[c.pos:c.pos+4]), 16, 32)
	if err != nil {
		c.fail(path, "invalid \\u escape in a string")
		return 0, false
	}
	c.pos += 4
	return rune(n), true
}

// number reads a number as RFC 8259 writes it.
func (c *jsonChecker) number(path string) {
	start := c.pos
	digits := func() int {
		n := 0
		for c.pos < len(c.buf) && c.buf[c.pos] >= '0' && c.buf[c.pos] <= '9' {
			c.pos++
			n++
		}
		return n
	}
	if c.buf[c.pos] == '-' {
		c.pos++
	}
	if c.pos < len(c.buf) && c.buf[c.pos] == '0' {
		c.pos++
	} else if digits() == 0 {
		c.fail(path, "invalid number")
		return
	}
	if c.pos < len(c.buf) && c.buf[c.pos] == '.' {
		c.pos++
		if digits() == 0 {
			c.fail(path, "invalid number "+string(c.buf[start:c.pos]))
			return
		}
	}
	if c.pos < len(c.buf) && (c.buf[c.pos] == 'e' || c.buf[c.pos] == 'E') {
		c.pos++
		if c.pos < len(c.buf) && (c.buf[c.pos] == '+' || c.buf[c.pos] == '-') {
			c.pos++
		}
		if digits() == 0 {
			c.fail(path, "invalid number "+string(c.buf[start:c.pos]))
		}
	}
}
