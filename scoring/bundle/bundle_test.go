package bundle

import (
	"errors"
	"os"
	"path/filepath"
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

// vocabCfg is a config with a vocabulary in it, as the context model's is.
type vocabCfg struct {
	Width int      `json:"width"`
	Words []string `json:"words"`
}

// TestLoadRefusesEditedHeader changes one byte of NAME.json (a word of the
// vocabulary, the training info) and checks Load refuses the file, naming
// it, as it refuses edited weights; a header without a checksum (an older
// build's) is refused too.
func TestLoadRefusesEditedHeader(t *testing.T) {
	load := func(dir string) (*Saved[vocabCfg], error) {
		_, s, err := LoadModel(dir, "m", "fmt", "tok", func(vocabCfg) (paramsModel, error) { return paramsModel(params()), nil })
		return s, err
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"vocabulary word", `"the"`, `"xhe"`, "m.json: checksum mismatch"},
		{"training info", `"seed": 7`, `"seed": 8`, "m.json: checksum mismatch"},
		{"tokenizer fingerprint", `"tokenizer": "tok"`, `"tokenizer": "tol"`, "m.json: checksum mismatch"},
		{"no checksum", `"header_sha256"`, `"header_sha256_was"`, "older build"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := Save(dir, "m", "fmt", "tok", vocabCfg{2, []string{"the", "a"}}, map[string]any{"seed": 7}, params()); err != nil {
				t.Fatal(err)
			}
			if _, err := load(dir); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "m.json")
			b, _ := os.ReadFile(p)
			edited := strings.Replace(string(b), tc.from, tc.to, 1)
			if edited == string(b) {
				t.Fatalf("%s is not in %s", tc.from, b)
			}
			os.WriteFile(p, []byte(edited), 0o644)
			if _, err := load(dir); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("edited %s: %v, want an error naming %s and saying %q", tc.name, err, p, tc.want)
			}
		})
	}
}

// paramsModel is a model that is only its parameters.
type paramsModel []*nn.Param

func (m paramsModel) Params() []*nn.Param { return m }

// TestModelSHA256 checks that a model's identity covers its config (a
// vocabulary word) beside its weights, and not its training info.
func TestModelSHA256(t *testing.T) {
	id := func(cfg vocabCfg, info map[string]any) string {
		t.Helper()
		dir := t.TempDir()
		if err := Save(dir, "m", "fmt", "tok", cfg, info, params()); err != nil {
			t.Fatal(err)
		}
		_, s, err := LoadModel(dir, "m", "fmt", "tok", func(vocabCfg) (paramsModel, error) { return paramsModel(params()), nil })
		if err != nil {
			t.Fatal(err)
		}
		if s.Info["seed"] != info["seed"] {
			t.Fatalf("info %v, saved %v", s.Info, info)
		}
		return s.ModelSHA256
	}
	a := id(vocabCfg{2, []string{"the", "a"}}, map[string]any{"seed": 7.0})
	if b := id(vocabCfg{2, []string{"xhe", "a"}}, map[string]any{"seed": 7.0}); a == b {
		t.Error("two vocabularies with the same weights have one model checksum")
	}
	if b := id(vocabCfg{2, []string{"the", "a"}}, map[string]any{"seed": 8.0}); a != b {
		t.Error("the training info changed the model checksum")
	}
	if len(a) != 64 {
		t.Errorf("model checksum %q", a)
	}
}
