package gen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/scoring/bundle"
)

func TestSaveLoad(t *testing.T) {
	m, err := New(tinyConfig(), 8)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := m.Save(dir, "tokfp", map[string]any{"steps": 3}); err != nil {
		t.Fatal(err)
	}
	got, saved, err := Load(dir, "tokfp")
	if err != nil {
		t.Fatal(err)
	}
	if saved.Config != m.Cfg || saved.Info["steps"] != 3.0 {
		t.Errorf("saved %+v", saved)
	}
	tok := wordTok{m.Cfg.Vocab}
	var reqs []Request
	for _, e := range tinyExamples() {
		reqs = append(reqs, NewRequest(tok, e.Context, e.S, e.Dir))
	}
	want, have := m.Score(reqs), got.Score(reqs)
	for i := range want {
		if want[i] != have[i] {
			t.Errorf("request %d: score %v before saving, %v after loading", i, want[i], have[i])
		}
	}
	// The loaded model's output projection is still tied to its
	// embeddings.
	if got.out.W != got.Tok.Weight {
		t.Error("loaded model's output projection is not tied")
	}
}

func TestLoadErrors(t *testing.T) {
	m, _ := New(tinyConfig(), 9)
	fresh := func(t *testing.T) string {
		dir := t.TempDir()
		if err := m.Save(dir, "tokfp", nil); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	editJSON := func(dir string, f func(map[string]any)) {
		p := filepath.Join(dir, ConfigFile)
		b, _ := os.ReadFile(p)
		var v map[string]any
		json.Unmarshal(b, &v)
		f(v)
		b, _ = json.Marshal(v)
		os.WriteFile(p, b, 0o644)
		// The checksum made to match, to reach the checks behind it.
		if err := bundle.Reseal(p); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		breakIt func(dir string)
		tok     string
		want    string
	}{
		{"missing config", func(dir string) { os.Remove(filepath.Join(dir, ConfigFile)) }, "tokfp", "no such file"},
		{"missing weights", func(dir string) { os.Remove(filepath.Join(dir, WeightsFile)) }, "tokfp", "no such file"},
		{"corrupt config", func(dir string) { os.WriteFile(filepath.Join(dir, ConfigFile), []byte("{not json"), 0o644) }, "tokfp", "corrupt config"},
		{"truncated weights", func(dir string) {
			p := filepath.Join(dir, WeightsFile)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o644)
		}, "tokfp", "checksum mismatch"},
		{"flipped byte", func(dir string) {
			p := filepath.Join(dir, WeightsFile)
			b, _ := os.ReadFile(p)
			b[len(b)-3] ^= 0x40
			os.WriteFile(p, b, 0o644)
		}, "tokfp", "checksum mismatch"},
		{"edited config", func(dir string) {
			p := filepath.Join(dir, ConfigFile)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), `"heads": 2`, `"heads": 1`, 1)), 0o644)
		}, "tokfp", "gen.json: checksum mismatch"},
		{"other tokenizer", func(string) {}, "otherfp", "tokenizer"},
		{"other format", func(dir string) { editJSON(dir, func(v map[string]any) { v["format"] = "ctxsim-gen/0" }) }, "tokfp", "format"},
		{"invalid config", func(dir string) {
			editJSON(dir, func(v map[string]any) { v["config"].(map[string]any)["heads"] = 3 })
		}, "tokfp", "heads"},
		{"config not matching weights", func(dir string) {
			editJSON(dir, func(v map[string]any) { v["config"].(map[string]any)["ff"] = 32 })
		}, "tokfp", WeightsFile},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := fresh(t)
			tc.breakIt(dir)
			_, _, err := Load(dir, tc.tok)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load: error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}
