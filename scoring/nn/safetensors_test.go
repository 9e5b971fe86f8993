package nn

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

func testParams(seed uint64) []*Param {
	rng := rand.New(rand.NewPCG(seed, 1))
	ps := []*Param{NewParam("enc.weight", 3, 4), NewParam("enc.bias", 4), NewParam("scalar"), NewParam("empty", 0, 2)}
	for _, p := range ps {
		fillNormal(rng, p.Value.Data, 1)
	}
	return ps
}

func saved(t testing.TB, ps []*Param, meta map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := SaveSafetensors(&buf, ps, meta); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rawFile assembles a safetensors file from a header value and data bytes.
func rawFile(t *testing.T, header any, data []byte) []byte {
	t.Helper()
	js, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	return rawFileJSON(js, data)
}

func rawFileJSON(js, data []byte) []byte {
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(js)))
	out = append(out, js...)
	return append(out, data...)
}

func TestSafetensorsRoundTrip(t *testing.T) {
	src := testParams(1)
	meta := map[string]string{"model": "bilstm", "vocab": "12000"}
	file := saved(t, src, meta)
	if hlen := binary.LittleEndian.Uint64(file); hlen%8 != 0 {
		t.Errorf("header length %d is not 8-aligned", hlen)
	}
	dst := testParams(2)
	gotMeta, err := LoadSafetensors(bytes.NewReader(file), dst)
	if err != nil {
		t.Fatal(err)
	}
	if len(gotMeta) != 2 || gotMeta["model"] != "bilstm" || gotMeta["vocab"] != "12000" {
		t.Fatalf("metadata = %v", gotMeta)
	}
	for i := range src {
		for j := range src[i].Value.Data {
			if src[i].Value.Data[j] != dst[i].Value.Data[j] {
				t.Fatalf("%s[%d] = %v, want %v", dst[i].Name, j, dst[i].Value.Data[j], src[i].Value.Data[j])
			}
		}
	}
	// The parameters may be given in any order, and metadata may be absent.
	rev := testParams(3)
	rev[0], rev[1] = rev[1], rev[0]
	if m, err := LoadSafetensors(bytes.NewReader(saved(t, src, nil)), rev); err != nil || m != nil {
		t.Fatalf("load without metadata: %v, %v", m, err)
	}
	if rev[1].Value.Data[5] != src[0].Value.Data[5] {
		t.Fatal("load by name put data in the wrong tensor")
	}
}

func TestSafetensorsErrors(t *testing.T) {
	good := saved(t, testParams(1), map[string]string{"k": "v"})
	one := func() []*Param { return []*Param{NewParam("w", 2, 2)} }
	data16 := make([]byte, 16)
	entry := func(dtype string, shape []int, start, end int) map[string]any {
		return map[string]any{"dtype": dtype, "shape": shape, "data_offsets": []int{start, end}}
	}
	cases := []struct {
		name   string
		file   []byte
		params []*Param
		want   string
	}{
		{"empty file", nil, testParams(1), "truncated file"},
		{"short length", good[:5], testParams(1), "truncated file"},
		{"truncated header", good[:20], testParams(1), "truncated file"},
		{"truncated data", good[:len(good)-3], testParams(1), "truncated file"},
		{"trailing garbage", append(append([]byte(nil), good...), 0), testParams(1), "trailing bytes"},
		{"huge header length", binary.LittleEndian.AppendUint64(nil, 1<<40), testParams(1), "exceeds limit"},
		{"corrupt JSON", rawFileJSON([]byte(`{"w": {"dtype": "F32",`), data16), one(), "corrupt header JSON"},
		{"not an object", rawFileJSON([]byte(`[1, 2]`), data16), one(), "corrupt header JSON"},
		{"junk after object", rawFileJSON([]byte(`{} x`), nil), nil, "corrupt header JSON"},
		{"duplicate key", rawFileJSON([]byte(`{"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}`), data16), one(), "duplicate key"},
		{"unknown field", rawFileJSON([]byte(`{"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16],"x":1}}`), data16), one(), "corrupt header JSON"},
		{"entry not object", rawFileJSON([]byte(`{"w":[0,16]}`), data16), one(), "not an object"},
		{"bad metadata", rawFile(t, map[string]any{"__metadata__": map[string]int{"a": 1}, "w": entry("F32", []int{2, 2}, 0, 16)}, data16), one(), "__metadata__"},
		{"negative dim", rawFile(t, map[string]any{"w": entry("F32", []int{-2, -2}, 0, 16)}, data16), one(), "negative dimension"},
		{"negative offset", rawFileJSON([]byte(`{"w":{"dtype":"F32","shape":[2,2],"data_offsets":[-16,0]}}`), data16), one(), "corrupt header JSON"},
		{"missing tensor", rawFile(t, map[string]any{"w": entry("F32", []int{2, 2}, 0, 16)}, data16), []*Param{NewParam("w", 2, 2), NewParam("b", 2)}, `missing tensor "b"`},
		{"unexpected tensor", rawFile(t, map[string]any{"w": entry("F32", []int{2, 2}, 0, 16), "z": entry("F32", []int{0}, 16, 16)}, data16), one(), `unexpected tensor "z"`},
		{"shape mismatch", rawFile(t, map[string]any{"w": entry("F32", []int{4}, 0, 16)}, data16), one(), "has shape [4], want [2 2]"},
		{"dtype mismatch", rawFile(t, map[string]any{"w": entry("F16", []int{2, 2}, 0, 8)}, data16[:8]), one(), `dtype "F16"`},
		{"offsets wrong size", rawFile(t, map[string]any{"w": entry("F32", []int{2, 2}, 0, 12)}, data16[:12]), one(), "do not span"},
		{"offsets reversed", rawFile(t, map[string]any{"w": entry("F32", []int{2, 2}, 16, 0)}, data16), one(), "do not span"},
		{"three offsets", rawFileJSON([]byte(`{"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16,32]}}`), data16), one(), "2 entries"},
		{"offsets out of range", rawFile(t, map[string]any{"w": entry("F32", []int{2, 2}, 0, 16)}, data16[:8]), one(), "truncated file"},
		{"hole in data", rawFile(t, map[string]any{"w": entry("F32", []int{2, 2}, 4, 20)}, make([]byte, 20)), one(), "unused bytes"},
		{"overlap", rawFile(t, map[string]any{"w": entry("F32", []int{2, 2}, 0, 16), "v": entry("F32", []int{2}, 8, 16)}, data16), []*Param{NewParam("w", 2, 2), NewParam("v", 2)}, "overlaps"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := make([][]float32, len(c.params))
			for i, p := range c.params {
				before[i] = append([]float32(nil), p.Value.Data...)
			}
			_, err := LoadSafetensors(bytes.NewReader(c.file), c.params)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrSafetensors) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want one wrapping ErrSafetensors containing %q", err, c.want)
			}
			for i, p := range c.params {
				for j, v := range p.Value.Data {
					if v != before[i][j] {
						t.Fatal("failed load modified a parameter")
					}
				}
			}
		})
	}
}

func TestSaveSafetensorsRejectsBadNames(t *testing.T) {
	for _, ps := range [][]*Param{
		{NewParam("a", 1), NewParam("a", 1)},
		{NewParam("", 1)},
		{NewParam("__metadata__", 1)},
	} {
		if err := SaveSafetensors(&bytes.Buffer{}, ps, nil); !errors.Is(err, ErrSafetensors) {
			t.Errorf("saving %q: error %v", ps[0].Name, err)
		}
	}
}

func FuzzLoadSafetensors(f *testing.F) {
	good := saved(f, testParams(1), map[string]string{"k": "v"})
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(good[:12])
	f.Add([]byte{})
	f.Add(rawFileJSON([]byte(`{"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}`), make([]byte, 16)))
	f.Add(rawFileJSON([]byte(`{"enc.weight":{"dtype":"F32","shape":[3,4],"data_offsets":[18446744073709551615,0]}}`), nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		ps := testParams(5)
		if _, err := LoadSafetensors(bytes.NewReader(data), ps); err != nil {
			if !errors.Is(err, ErrSafetensors) {
				t.Fatalf("error does not wrap ErrSafetensors: %v", err)
			}
			return
		}
		// Whatever loads must save and load back to the same values.
		again := testParams(6)
		if _, err := LoadSafetensors(bytes.NewReader(saved(t, ps, nil)), again); err != nil {
			t.Fatalf("reloading a loaded file: %v", err)
		}
	})
}
