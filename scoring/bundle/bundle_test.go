package bundle

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/scoring/nn"
)

type cfg struct {
	Width int `json:"width"`
}

func params() []*nn.Param {
	p := nn.NewParam("w", 2, 2)
	copy(p.Value.Data, []float32{1, 2, 3, 4})
	return []*nn.Param{p}
}

func TestCheckpointRoundTripAndMismatch(t *testing.T) {
	dir := t.TempDir()
	ps := params()
	opt := nn.NewAdam(0.1)
	opt.Steps = 7
	if err := SaveCheckpoint(dir, "m", "fmt", "tok", cfg{2}, 40, opt, ps, map[string]int{"pos": 3}); err != nil {
		t.Fatal(err)
	}
	ps2 := []*nn.Param{nn.NewParam("w", 2, 2)}
	opt2 := nn.NewAdam(0.1)
	var st map[string]int
	step, err := LoadCheckpoint(dir, "m", "fmt", "tok", cfg{2}, opt2, ps2, &st)
	if err != nil || step != 40 || opt2.Steps != 7 || st["pos"] != 3 || ps2[0].Value.Data[3] != 4 {
		t.Fatalf("step %d, adam %d, state %v, weights %v, err %v", step, opt2.Steps, st, ps2[0].Value.Data, err)
	}
	if _, err := LoadCheckpoint(dir, "m", "fmt", "tok", cfg{3}, opt2, ps2, &st); err == nil || !strings.Contains(err.Error(), "model config") {
		t.Fatalf("config mismatch: %v", err)
	}
	if _, err := LoadCheckpoint(dir, "m", "fmt", "other", cfg{2}, opt2, ps2, &st); err == nil || !strings.Contains(err.Error(), "tokenizer") {
		t.Fatalf("tokenizer mismatch: %v", err)
	}
	if _, err := LoadCheckpoint(t.TempDir(), "m", "fmt", "tok", cfg{2}, opt2, ps2, &st); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing checkpoint: %v", err)
	}
}
