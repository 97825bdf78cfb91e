// The answer checks of -mode txn (transact, txn.go) without encoding/json's reflection: a scanner that
// validates the whole body's JSON syntax as encoding/json's does (json.Valid: RFC 8259, bytes ≥ 0x80
// taken as they are, at most 10,000 nested arrays and objects) and reads exactly the fields the checks
// need, with the outcome json.Unmarshal into the checks' structs has on every input:
//   - a field's key matches as encoding/json (Go 1.19) matches a struct field: after its string
//     escapes are decoded, exactly or ASCII case-insensitively, with U+017F (ſ) for s and U+212A
//     (Kelvin) for k (fold.go's equalFoldRight; the other names are letters without s or k);
//   - a duplicate key is decoded again into the same value: the last string wins, `null` leaves a
//     string or a struct as it was and makes a slice nil, a second array decodes into the slice's
//     existing elements (merging into element 0) and an empty one makes it empty;
//   - a value of another type than its field's (a number where a string is, an object where an array
//     is) fails, as Unmarshal returns its UnmarshalTypeError; unknown fields are only validated;
//   - strings compare after decoding as encoding/json decodes them (escapes, surrogate pairs, invalid
//     UTF-8 and lone surrogates as U+FFFD).
//
// Why: the three checks through encoding/json were ~58% of the light client's instructions
// (docs/benchmarks.md, txnlight), CPU taken from the servers the row measures on two cores (txn34).
// txncheck_test.go compares every check with the encoding/json one on the servers' recorded answers and
// thousands of mutations of them. No allocation but the transaction id returned and a failure's error.
package main

import (
	"fmt"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth is encoding/json's scanner limit on nested arrays and objects (scanner.go).
const maxJSONDepth = 10000

// jscan reads one JSON text; every method returns false on a syntax error (the position is then
// meaningless) and leaves s.i after what it read, whitespace after a value not skipped.
type jscan struct {
	b []byte
	i int
}

// jstring is a string token's contents between its quotes; plain when they are its decoded bytes (no
// escape, valid UTF-8), ascii when moreover all ASCII.
type jstring struct {
	raw          []byte
	plain, ascii bool
}

func (s *jscan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek is the byte at s.i, 0 at the end (never the first byte of a valid value).
func (s *jscan) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// end: only whitespace left.
func (s *jscan) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// plainByte: the bytes a string token holds as they are and ASCII (not '"', '\\', < 0x20, >= 0x80).
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// str reads a string token at s.i.
func (s *jscan) str() (jstring, bool) {
	b, i := s.b, s.i // locals: the loops below keep them in registers
	if i >= len(b) || b[i] != '"' {
		return jstring{}, false
	}
	i++
	start, esc, high := i, false, false
	for {
		// The common bytes first, in a tight loop: printable ASCII but the quote and the backslash.
		for i < len(b) && plainByte[b[i]] {
			i++
		}
		if i >= len(b) {
			return jstring{}, false
		}
		switch c := b[i]; {
		case c == '"':
			raw := b[start:i]
			s.i = i + 1
			ascii := !esc && !high
			return jstring{raw, ascii || !esc && utf8.Valid(raw), ascii}, true
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return jstring{}, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return jstring{}, false
				}
				i += 6
			default:
				return jstring{}, false
			}
		case c < 0x20:
			return jstring{}, false
		default: // >= 0x80
			high = true
			i++
		}
	}
}

func (s *jscan) lit(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

func (s *jscan) digits() bool {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// num reads a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jscan) num() bool {
	if s.peek() == '-' {
		s.i++
	}
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case '1' <= c && c <= '9':
		s.digits()
	default:
		return false
	}
	if s.peek() == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// open reads the `open` byte of an array or object at s.i (the depth'th one open) and the whitespace
// after it; more is false when the `close` byte came next (read too).
func (s *jscan) open(open, close byte, depth int) (more, ok bool) {
	if s.peek() != open || depth > maxJSONDepth {
		return false, false
	}
	s.i++
	s.ws()
	if s.peek() == close {
		s.i++
		return false, true
	}
	return true, true
}

// next reads what follows an element: a comma and the whitespace after it (more), or `close`.
func (s *jscan) next(close byte) (more, ok bool) {
	s.ws()
	switch s.peek() {
	case ',':
		s.i++
		s.ws()
		return true, true
	case close:
		s.i++
		return false, true
	}
	return false, false
}

// key reads a member's key, its colon and the whitespace before the value.
func (s *jscan) key() (jstring, bool) {
	k, ok := s.str()
	if !ok {
		return k, false
	}
	s.ws()
	if s.peek() != ':' {
		return k, false
	}
	s.i++
	s.ws()
	return k, true
}

// skip reads any value inside `depth` open arrays and objects.
func (s *jscan) skip(depth int) bool {
	switch c := s.peek(); {
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '{':
		more, ok := s.open('{', '}', depth+1)
		for ok && more {
			if _, ok = s.key(); !ok || !s.skip(depth+1) {
				return false
			}
			more, ok = s.next('}')
		}
		return ok
	case c == '[':
		more, ok := s.open('[', ']', depth+1)
		for ok && more {
			if !s.skip(depth + 1) {
				return false
			}
			more, ok = s.next(']')
		}
		return ok
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.num()
	}
	return false
}

// jsonValid is json.Valid by this scanner (for the tests).
func jsonValid(b []byte) bool {
	s := jscan{b: b}
	s.ws()
	return s.skip(0) && s.end()
}

// stringField reads a string field's value: set when it is a string, not when `null`; ok false for
// another type (Unmarshal's type error) or bad syntax.
func (s *jscan) stringField() (v jstring, set, ok bool) {
	if s.peek() == 'n' {
		return v, false, s.lit("null")
	}
	v, ok = s.str()
	return v, ok, ok
}

// jrune decodes the rune at raw[i:] of a valid string token's contents as encoding/json's unquote does.
func jrune(raw []byte, i int) (rune, int) {
	c := raw[i]
	if c >= utf8.RuneSelf {
		r, n := utf8.DecodeRune(raw[i:])
		return r, i + n
	}
	if c != '\\' {
		return rune(c), i + 1
	}
	switch raw[i+1] {
	case 'b':
		return '\b', i + 2
	case 'f':
		return '\f', i + 2
	case 'n':
		return '\n', i + 2
	case 'r':
		return '\r', i + 2
	case 't':
		return '\t', i + 2
	case 'u':
		r := hex4(raw[i+2:])
		i += 6
		if !utf16.IsSurrogate(r) {
			return r, i
		}
		if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
			if d := utf16.DecodeRune(r, hex4(raw[i+2:])); d != unicode.ReplacementChar {
				return d, i + 6
			}
		}
		return unicode.ReplacementChar, i
	}
	return rune(raw[i+1]), i + 2 // " \ /
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// is: the decoded string equals s.
func (v jstring) is(s string) bool {
	if v.plain {
		return string(v.raw) == s
	}
	i := 0
	for _, want := range s {
		if i >= len(v.raw) {
			return false
		}
		var r rune
		if r, i = jrune(v.raw, i); r != want {
			return false
		}
	}
	return i == len(v.raw)
}

// names: the decoded key matches the struct field named `field` (ASCII letters) as encoding/json
// matches it when no field has exactly that name.
func (v jstring) names(field string) bool {
	if v.ascii {
		if len(v.raw) != len(field) {
			return false
		}
		for j, c := range v.raw {
			if f := field[j]; c != f && c|0x20 != f|0x20 {
				return false
			}
		}
		return true
	}
	i := 0
	for j := 0; j < len(field); j++ {
		if i >= len(v.raw) {
			return false
		}
		var r rune
		r, i = jrune(v.raw, i)
		f := rune(field[j])
		switch {
		case r == f:
		case r < utf8.RuneSelf && r&^0x20 == f&^0x20:
		case r == 0x17f && (f == 's' || f == 'S'), r == 0x212a && (f == 'k' || f == 'K'):
		default:
			return false
		}
	}
	return i == len(v.raw)
}

// decoded is the decoded string (an allocation).
func (v jstring) decoded() string {
	if v.plain {
		return string(v.raw)
	}
	out := make([]byte, 0, len(v.raw))
	for i := 0; i < len(v.raw); {
		var r rune
		r, i = jrune(v.raw, i)
		out = utf8.AppendRune(out, r)
	}
	return string(out)
}

// stringStruct reads a value decoded into a struct whose one field read is the string `field`, the
// object opened as the depth'th: `null` (the struct left as it was) or an object; v is the field's last
// string value, set when it had one (`null` leaves the field as it was).
func (s *jscan) stringStruct(field string, depth int) (v jstring, set, ok bool) {
	if s.peek() == 'n' {
		return v, false, s.lit("null")
	}
	more, ok := s.open('{', '}', depth)
	for ok && more {
		var k jstring
		if k, ok = s.key(); !ok {
			return v, false, false
		}
		if k.names(field) {
			w, wset, ok := s.stringField()
			if !ok {
				return v, false, false
			}
			if wset {
				v, set = w, true
			}
		} else if !s.skip(depth) {
			return v, false, false
		}
		more, ok = s.next('}')
	}
	return v, set, ok
}

// scanBegin: beginTransaction's answer, {"transaction": string}; the id, or "" for any other answer.
func scanBegin(body []byte) string {
	s := jscan{b: body}
	s.ws()
	txn, _, ok := s.stringStruct("transaction", 1)
	if !ok || !s.end() || len(txn.raw) == 0 {
		return ""
	}
	return txn.decoded()
}

// scanRead: batchGet's answer is [{"found": {"name": name}}], exactly one element.
func scanRead(body []byte, name string) bool {
	s := jscan{b: body}
	s.ws()
	if s.peek() == 'n' {
		return false // a nil slice
	}
	elements, found := 0, false
	more, ok := s.open('[', ']', 1)
	for ok && more {
		// An element: null (a zero struct) or an object whose "found" is null or {"name": …}.
		if s.peek() == 'n' {
			if !s.lit("null") {
				return false
			}
		} else {
			more, ok := s.open('{', '}', 2)
			for ok && more {
				var k jstring
				if k, ok = s.key(); !ok {
					return false
				}
				if !k.names("found") {
					if !s.skip(2) {
						return false
					}
				} else {
					v, set, ok := s.stringStruct("name", 3)
					if !ok {
						return false
					}
					if set && elements == 0 {
						found = v.is(name)
					}
				}
				more, ok = s.next('}')
			}
			if !ok {
				return false
			}
		}
		elements++
		more, ok = s.next(']')
	}
	return ok && s.end() && elements == 1 && found
}

// scanCommit: commit's answer has one write result with an update time, and a commit time.
func scanCommit(body []byte) bool {
	s := jscan{b: body}
	s.ws()
	if s.peek() == 'n' {
		return false // a zero struct
	}
	results, updated, committed := 0, false, false
	more, ok := s.open('{', '}', 1)
	for ok && more {
		var k jstring
		if k, ok = s.key(); !ok {
			return false
		}
		switch {
		case k.names("writeResults"):
			if s.peek() == 'n' {
				if !s.lit("null") {
					return false
				}
				results, updated = 0, false // the slice made nil
				break
			}
			// Decoded into the slice as it is: element 0 merged into, the length set to the count,
			// a new empty slice for none.
			n := 0
			more, ok := s.open('[', ']', 2)
			for ok && more {
				v, set, ok := s.stringStruct("updateTime", 3)
				if !ok {
					return false
				}
				if set && n == 0 {
					updated = len(v.raw) > 0
				}
				n++
				more, ok = s.next(']')
			}
			if !ok {
				return false
			}
			if results = n; n == 0 {
				updated = false
			}
		case k.names("commitTime"):
			v, set, ok := s.stringField()
			if !ok {
				return false
			}
			if set {
				committed = len(v.raw) > 0
			}
		default:
			if !s.skip(1) {
				return false
			}
		}
		more, ok = s.next('}')
	}
	return ok && s.end() && results == 1 && updated && committed
}

func beginID(body []byte) (string, error) {
	if txn := scanBegin(body); txn != "" {
		return txn, nil
	}
	return "", &badAnswer{"beginTransaction answered no transaction", body}
}

func checkRead(body []byte, name string) error {
	if !scanRead(body, name) {
		return &badAnswer{fmt.Sprintf("batchGet did not find %q", name), body}
	}
	return nil
}

func checkCommit(body []byte) error {
	if !scanCommit(body) {
		return &badAnswer{"commit answered no write result", body}
	}
	return nil
}
