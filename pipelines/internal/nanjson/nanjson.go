// Package nanjson writes the jobs' JSON documents (results.json,
// summary.json, train-results.json), whose numbers may be NaN or infinite:
// a Spearman correlation of constant scores, a mean over nothing, a
// diverged loss. encoding/json refuses such numbers; here they are
// written as null, and each one is reported so that the job can warn.
//
// A document without them is exactly what json.MarshalIndent writes. In
// one with them, only the structs, slices, maps and pointers that hold
// such a number are taken apart (everything else is encoded by
// encoding/json itself), following encoding/json's rules for field names,
// "-", omitempty, omitzero and embedded structs.
package nanjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unsafe"
)

// Null is a number written as null.
type Null struct {
	// Path locates it in the document: member names and [index]es
	// separated by dots, as results[1].spearman_x100.
	Path string
	// Of is the "name" member of the nearest array element holding it,
	// when that element has one (a result's variant name).
	Of    string
	Value float64
}

// String describes n for a warning, as `results[1].spearman_x100 (of
// "origin") is NaN (a correlation of constant scores?)`.
func (n Null) String() string {
	s := n.Path
	if s == "" {
		s = "the document"
	}
	if n.Of != "" {
		s += fmt.Sprintf(" (of %q)", n.Of)
	}
	s += " is " + strconv.FormatFloat(n.Value, 'g', -1, 64)
	last := strings.ToLower(n.Path[strings.LastIndex(n.Path, ".")+1:])
	if math.IsNaN(n.Value) && (strings.Contains(last, "spearman") || strings.Contains(last, "pearson")) {
		s += " (a correlation of constant scores?)"
	}
	return s
}

// MarshalIndent is json.MarshalIndent, except that NaN and infinite
// numbers are written as null; nulls lists them in document order.
func MarshalIndent(v any, prefix, indent string) (b []byte, nulls []Null, err error) {
	b, err = json.MarshalIndent(v, prefix, indent)
	if err == nil || !nonFinite(err) {
		return b, nil, err
	}
	var e encoder
	raw, err := e.value(reflect.ValueOf(v), "", "")
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, prefix, indent); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), e.nulls, nil
}

// Document returns v as an indented JSON document ending in a newline, as
// the job writes it to the file named file. It prints a warning on w for
// each number written as null, as `evaluate: warning: results.json:
// results[1].spearman_x100 (of "origin") is NaN ...; written as null`.
func Document(w io.Writer, job, file string, v any) ([]byte, error) {
	b, nulls, err := MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("%s: encode %s: %w", job, file, err)
	}
	for _, n := range nulls {
		fmt.Fprintf(w, "%s: warning: %s: %s; written as null\n", job, file, n)
	}
	return append(b, '\n'), nil
}

// nonFinite reports whether encoding/json refused a value for a NaN or
// infinite number in it (and not, say, for a cycle).
func nonFinite(err error) bool {
	var unsupported *json.UnsupportedValueError
	if !errors.As(err, &unsupported) {
		return false
	}
	k := unsupported.Value.Kind()
	return k == reflect.Float32 || k == reflect.Float64
}

// encoder encodes a value that encoding/json refused, collecting the
// numbers it writes as null.
type encoder struct {
	nulls []Null
	// onPath holds the pointers, maps and slices being taken apart, to
	// refuse a cycle as encoding/json does.
	onPath map[ref]bool
}

// ref is what a pointer, map or slice refers to.
type ref struct {
	p   uintptr
	len int
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// value encodes v, found at path inside the element named of, compactly.
func (e *encoder) value(v reflect.Value, path, of string) (json.RawMessage, error) {
	if !v.IsValid() {
		return json.RawMessage("null"), nil
	}
	if !v.CanInterface() {
		return nil, fmt.Errorf("nanjson: cannot read %s (%s)", path, v.Type())
	}
	b, err := json.Marshal(v.Interface())
	if err == nil || !nonFinite(err) {
		return b, err
	}
	t := v.Type()
	if t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return nil, err // its own encoding: not ours to take apart
	}
	if !v.CanAddr() && (t.Kind() == reflect.Struct || t.Kind() == reflect.Array) {
		// An addressable copy, so that embedded structs of unexported
		// types can be read (see exported).
		c := reflect.New(t).Elem()
		c.Set(v)
		v = c
	}
	if k := t.Kind(); k == reflect.Pointer || k == reflect.Map || k == reflect.Slice {
		r := ref{v.Pointer(), 0}
		if k == reflect.Slice {
			r.len = v.Len()
		}
		if e.onPath[r] {
			return nil, fmt.Errorf("nanjson: %s: encountered a cycle via %s", path, t)
		}
		if e.onPath == nil {
			e.onPath = map[ref]bool{}
		}
		e.onPath[r] = true
		defer delete(e.onPath, r)
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		e.nulls = append(e.nulls, Null{Path: path, Of: of, Value: v.Float()})
		return json.RawMessage("null"), nil
	case reflect.Pointer, reflect.Interface:
		return e.value(v.Elem(), path, of)
	case reflect.Slice, reflect.Array:
		return e.array(v, path)
	case reflect.Map:
		return e.object(v, path, of, mapMembers(v))
	case reflect.Struct:
		return e.object(v, path, of, structMembers(v))
	}
	return nil, err
}

// array encodes the elements of a slice or an array.
func (e *encoder) array(v reflect.Value, path string) (json.RawMessage, error) {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i := range v.Len() {
		if i > 0 {
			buf.WriteByte(',')
		}
		el := v.Index(i)
		b, err := e.value(el, fmt.Sprintf("%s[%d]", path, i), nameOf(el))
		if err != nil {
			return nil, err
		}
		buf.Write(b)
	}
	buf.WriteByte(']')
	return buf.Bytes(), nil
}

// member is one member of an object: its JSON key and value.
type member struct {
	key string
	v   reflect.Value
}

// object encodes members as a JSON object, in their order.
func (e *encoder) object(v reflect.Value, path, of string, ms []member) (json.RawMessage, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		p := m.key
		if path != "" {
			p = path + "." + m.key
		}
		b, err := e.value(m.v, p, of)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(b)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// mapMembers are the entries of a map, sorted by key as encoding/json
// sorts them.
func mapMembers(v reflect.Value) []member {
	var ms []member
	for it := v.MapRange(); it.Next(); {
		ms = append(ms, member{keyString(it.Key()), it.Value()})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].key < ms[j].key })
	return ms
}

// keyString is a map key as encoding/json writes it.
func keyString(k reflect.Value) string {
	if k.Kind() == reflect.String {
		return k.String()
	}
	if tm, ok := k.Interface().(encoding.TextMarshaler); ok {
		b, _ := tm.MarshalText() // encoding/json has already accepted it
		return string(b)
	}
	switch k.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10)
	}
	return fmt.Sprint(k.Interface())
}

// structMembers are the fields of a struct that encoding/json writes, in
// its order: exported fields under their tag names, minus "-" and empty
// omitempty or zero omitzero fields, with the fields of untagged embedded
// structs in their place. Of fields with one name, the shallowest wins,
// then the tagged one; a tie leaves the name out, as in encoding/json.
func structMembers(v reflect.Value) []member {
	type field struct {
		member
		depth  int
		tagged bool
	}
	var fs []field
	var walk func(v reflect.Value, depth int)
	walk = func(v reflect.Value, depth int) {
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			fv := v.Field(i)
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					if fv.Kind() == reflect.Pointer {
						if fv.IsNil() {
							continue
						}
						fv = fv.Elem()
					}
					walk(exported(fv), depth+1)
					continue
				}
			}
			if !f.IsExported() || omitted(fv, opts) {
				continue
			}
			tagged := name != ""
			if !tagged {
				name = f.Name
			}
			fs = append(fs, field{member{name, fv}, depth, tagged})
		}
	}
	walk(v, 0)
	var ms []member
	for i, f := range fs {
		wins := true
		for j, g := range fs {
			if i == j || g.key != f.key {
				continue
			}
			if g.depth < f.depth || (g.depth == f.depth && (g.tagged || !f.tagged)) {
				wins = false
				break
			}
		}
		if wins {
			ms = append(ms, f.member)
		}
	}
	return ms
}

// exported is v, the value of an embedded struct field, made readable
// when its type is unexported (encoding/json writes its exported fields):
// reflect forbids reading values reached through an unexported field.
func exported(v reflect.Value) reflect.Value {
	if v.CanInterface() || !v.CanAddr() {
		return v
	}
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

// omitted reports whether a field with the tag options opts is left out.
func omitted(v reflect.Value, opts string) bool {
	for _, o := range strings.Split(opts, ",") {
		switch o {
		case "omitempty":
			if isEmpty(v) {
				return true
			}
		case "omitzero":
			if !v.CanInterface() {
				return v.IsZero()
			}
			if z, ok := v.Interface().(interface{ IsZero() bool }); ok {
				if z.IsZero() {
					return true
				}
			} else if v.IsZero() {
				return true
			}
		}
	}
	return false
}

// isEmpty is encoding/json's empty value for omitempty.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// nameOf is the "name" member of an array element (a struct field or map
// entry), or "".
func nameOf(v reflect.Value) string {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	var ms []member
	switch {
	case v.Kind() == reflect.Struct:
		ms = structMembers(v)
	case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String:
		ms = mapMembers(v)
	}
	for _, m := range ms {
		if m.key == "name" {
			for m.v.Kind() == reflect.Interface && !m.v.IsNil() {
				m.v = m.v.Elem()
			}
			if m.v.Kind() == reflect.String {
				return m.v.String()
			}
		}
	}
	return ""
}
