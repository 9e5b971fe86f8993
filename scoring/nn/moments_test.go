package nn

import (
	"bytes"
	"testing"
)

func TestMomentParamsCheckpoint(t *testing.T) {
	p := NewParam("w", 2, 3)
	for i := range p.Grad.Data {
		p.Grad.Data[i] = float32(i + 1)
	}
	opt := NewAdam(0.1)
	opt.Step([]*Param{p})
	var buf bytes.Buffer
	if err := SaveSafetensors(&buf, append([]*Param{p}, MomentParams([]*Param{p})...), nil); err != nil {
		t.Fatal(err)
	}
	q := NewParam("w", 2, 3)
	if _, err := LoadSafetensors(bytes.NewReader(buf.Bytes()), append([]*Param{q}, MomentParams([]*Param{q})...)); err != nil {
		t.Fatal(err)
	}
	// One more identical step from both must give identical weights.
	copy(q.Grad.Data, p.Grad.Data)
	opt2 := NewAdam(0.1)
	opt2.Steps = opt.Steps
	opt.Step([]*Param{p})
	opt2.Step([]*Param{q})
	for i := range p.Value.Data {
		if p.Value.Data[i] != q.Value.Data[i] {
			t.Fatalf("resumed step differs at %d: %v vs %v", i, p.Value.Data[i], q.Value.Data[i])
		}
	}
}
