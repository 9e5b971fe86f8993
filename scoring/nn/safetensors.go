package nn

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
)

// MaxSafetensorsHeader bounds the JSON header size accepted by
// LoadSafetensors (100 MiB, as in the reference implementation).
const MaxSafetensorsHeader = 100 << 20

// ErrSafetensors is wrapped by every error LoadSafetensors returns for a
// malformed or mismatched file.
var ErrSafetensors = errors.New("safetensors")

type tensorInfo struct {
	DType   string   `json:"dtype"`
	Shape   []int64  `json:"shape"`
	Offsets []uint64 `json:"data_offsets"`
}

// SaveSafetensors writes params in the safetensors format: an 8-byte
// little-endian header length, a JSON header mapping each parameter name
// to its dtype ("F32"), shape and data offsets (plus "__metadata__" when
// metadata is non-empty), padded with spaces to a multiple of 8 bytes, then
// the raw little-endian values in the order of params. Names must be
// unique and non-empty and must not be "__metadata__".
func SaveSafetensors(w io.Writer, params []*Param, metadata map[string]string) error {
	header := make(map[string]any, len(params)+1)
	var off uint64
	for _, p := range params {
		if p.Name == "" || p.Name == "__metadata__" {
			return fmt.Errorf("%w: invalid tensor name %q", ErrSafetensors, p.Name)
		}
		if _, dup := header[p.Name]; dup {
			return fmt.Errorf("%w: duplicate tensor name %q", ErrSafetensors, p.Name)
		}
		shape := make([]int64, len(p.Value.Shape))
		for i, d := range p.Value.Shape {
			shape[i] = int64(d)
		}
		size := uint64(4 * len(p.Value.Data))
		header[p.Name] = tensorInfo{DType: "F32", Shape: shape, Offsets: []uint64{off, off + size}}
		off += size
	}
	if len(metadata) > 0 {
		header["__metadata__"] = metadata
	}
	js, err := json.Marshal(header)
	if err != nil {
		return fmt.Errorf("%w: encoding header: %v", ErrSafetensors, err)
	}
	if pad := (8 - len(js)%8) % 8; pad > 0 {
		js = append(js, bytes.Repeat([]byte{' '}, pad)...)
	}
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(js)))
	if _, err := w.Write(lenBuf[:]); err != nil {
		return err
	}
	if _, err := w.Write(js); err != nil {
		return err
	}
	buf := make([]byte, 0, 1<<16)
	for _, p := range params {
		for _, v := range p.Value.Data {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			if len(buf) == cap(buf) {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	if len(buf) > 0 {
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// LoadSafetensors reads a safetensors file written by SaveSafetensors (or
// any safetensors writer) into the values of params, matched by name, and
// returns the file's metadata. The file must hold exactly the tensors named
// by params, each F32 with exactly the parameter's shape; the data offsets
// must lie within the data section, must not overlap and must cover it
// entirely, and nothing may follow the data. Every violation yields an
// error wrapping ErrSafetensors; params are left unchanged on error.
func LoadSafetensors(r io.Reader, params []*Param) (map[string]string, error) {
	var lenBuf [8]byte
	if _, err := io.ReadFull(r, lenBuf[:]); err != nil {
		return nil, fmt.Errorf("%w: truncated file: reading header length: %v", ErrSafetensors, err)
	}
	hlen := binary.LittleEndian.Uint64(lenBuf[:])
	if hlen > MaxSafetensorsHeader {
		return nil, fmt.Errorf("%w: header length %d exceeds limit %d", ErrSafetensors, hlen, MaxSafetensorsHeader)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, fmt.Errorf("%w: truncated file: header of %d bytes: %v", ErrSafetensors, hlen, err)
	}
	infos, metadata, err := parseSafetensorsHeader(hdr)
	if err != nil {
		return nil, err
	}

	want := make(map[string]*Param, len(params))
	for _, p := range params {
		want[p.Name] = p
	}
	type span struct {
		name       string
		start, end uint64
	}
	spans := make([]span, 0, len(infos))
	for name, info := range infos {
		p, ok := want[name]
		if !ok {
			return nil, fmt.Errorf("%w: unexpected tensor %q", ErrSafetensors, name)
		}
		if info.DType != "F32" {
			return nil, fmt.Errorf("%w: tensor %q has dtype %q, want F32", ErrSafetensors, name, info.DType)
		}
		if !sameDims(info.Shape, p.Value.Shape) {
			return nil, fmt.Errorf("%w: tensor %q has shape %v, want %v", ErrSafetensors, name, info.Shape, p.Value.Shape)
		}
		if len(info.Offsets) != 2 {
			return nil, fmt.Errorf("%w: tensor %q: data_offsets must have 2 entries, got %d", ErrSafetensors, name, len(info.Offsets))
		}
		start, end := info.Offsets[0], info.Offsets[1]
		if start > end || end-start != uint64(4*len(p.Value.Data)) {
			return nil, fmt.Errorf("%w: tensor %q: data_offsets [%d, %d] do not span %d bytes", ErrSafetensors, name, start, end, 4*len(p.Value.Data))
		}
		spans = append(spans, span{name, start, end})
	}
	for _, p := range params {
		if _, ok := infos[p.Name]; !ok {
			return nil, fmt.Errorf("%w: missing tensor %q", ErrSafetensors, p.Name)
		}
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].end < spans[j].end
	})
	var pos uint64
	for _, s := range spans {
		if s.start < pos {
			return nil, fmt.Errorf("%w: tensor %q overlaps the previous tensor", ErrSafetensors, s.name)
		}
		if s.start > pos {
			return nil, fmt.Errorf("%w: unused bytes [%d, %d) before tensor %q", ErrSafetensors, pos, s.start, s.name)
		}
		pos = s.end
	}
	dataLen := pos

	// Read exactly the data section, then require end of file.
	data := make([]byte, 0, min(dataLen, 1<<26))
	data, err = readN(r, data, dataLen)
	if err != nil {
		return nil, fmt.Errorf("%w: truncated file: data section of %d bytes: %v", ErrSafetensors, dataLen, err)
	}
	var extra [1]byte
	if n, _ := io.ReadFull(r, extra[:]); n != 0 {
		return nil, fmt.Errorf("%w: trailing bytes after the data section", ErrSafetensors)
	}
	for _, s := range spans {
		p := want[s.name]
		raw := data[s.start:s.end]
		for i := range p.Value.Data {
			p.Value.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	}
	return metadata, nil
}

// readN appends exactly n bytes from r to buf, growing it in bounded steps
// so that a lying header cannot force a huge allocation up front.
func readN(r io.Reader, buf []byte, n uint64) ([]byte, error) {
	for uint64(len(buf)) < n {
		chunk := min(n-uint64(len(buf)), 1<<24)
		start := len(buf)
		buf = append(buf, make([]byte, chunk)...)
		if _, err := io.ReadFull(r, buf[start:]); err != nil {
			return nil, err
		}
	}
	return buf, nil
}

func sameDims(got []int64, want []int) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != int64(want[i]) {
			return false
		}
	}
	return true
}

// parseSafetensorsHeader decodes the JSON header, rejecting duplicate keys,
// non-object values and unknown fields.
func parseSafetensorsHeader(hdr []byte) (map[string]tensorInfo, map[string]string, error) {
	dec := json.NewDecoder(bytes.NewReader(hdr))
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: corrupt header JSON: %s", ErrSafetensors, fmt.Sprintf(format, args...))
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, bad("%v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, bad("top level is not an object")
	}
	infos := make(map[string]tensorInfo)
	var metadata map[string]string
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, bad("%v", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, nil, bad("non-string key")
		}
		if seen[key] {
			return nil, nil, bad("duplicate key %q", key)
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, bad("value of %q: %v", key, err)
		}
		if key == "__metadata__" {
			if err := strictUnmarshal(raw, &metadata); err != nil || metadata == nil {
				return nil, nil, bad("__metadata__ is not a map of strings")
			}
			continue
		}
		var info tensorInfo
		if len(raw) == 0 || raw[0] != '{' {
			return nil, nil, bad("entry %q is not an object", key)
		}
		if err := strictUnmarshal(raw, &info); err != nil {
			return nil, nil, bad("entry %q: %v", key, err)
		}
		if info.DType == "" || info.Shape == nil || info.Offsets == nil {
			return nil, nil, bad("entry %q lacks dtype, shape or data_offsets", key)
		}
		for _, d := range info.Shape {
			if d < 0 {
				return nil, nil, bad("entry %q has a negative dimension", key)
			}
		}
		infos[key] = info
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, bad("%v", err)
	}
	// Only padding may follow the object.
	if len(bytes.TrimRight(hdr[dec.InputOffset():], " \t\r\n")) != 0 {
		return nil, nil, bad("data after the header object")
	}
	return infos, metadata, nil
}

func strictUnmarshal(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
