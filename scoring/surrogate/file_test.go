package surrogate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/scoring/bundle"
)

func savedModel(t *testing.T) (*Model, string) {
	t.Helper()
	m := testModel(t, 40, 6, 9)
	dir := t.TempDir()
	if err := m.Save(dir, "tok-v1", map[string]any{"objective": "l2"}); err != nil {
		t.Fatal(err)
	}
	return m, dir
}

func TestSaveLoadRoundTrip(t *testing.T) {
	m, dir := savedModel(t)
	got, saved, err := Load(dir, "tok-v1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Cfg != m.Cfg || !slices.Equal(got.Emb.Value.Data, m.Emb.Value.Data) {
		t.Fatal("loaded model differs")
	}
	if saved.Format != Format || saved.Config != m.Cfg || saved.Tokenizer != "tok-v1" || saved.Info["objective"] != "l2" {
		t.Errorf("saved = %+v", saved)
	}
	if a, b := m.Encode([]int{1, 5, 39}), got.Encode([]int{1, 5, 39}); !slices.Equal(a, b) {
		t.Errorf("encodings differ: %v, %v", a, b)
	}
	// An empty fingerprint skips the tokenizer check.
	if _, _, err := Load(dir, ""); err != nil {
		t.Error(err)
	}
	for _, name := range []string{ConfigFile, WeightsFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}

func TestLoadRefusesCorruptFiles(t *testing.T) {
	cases := []struct {
		name   string
		damage func(dir string) error
		tok    string
		want   string
	}{
		{"flipped weight byte", func(dir string) error {
			return edit(filepath.Join(dir, WeightsFile), func(b []byte) []byte { b[len(b)-5] ^= 0x40; return b })
		}, "tok-v1", "checksum mismatch"},
		{"truncated weights", func(dir string) error {
			return edit(filepath.Join(dir, WeightsFile), func(b []byte) []byte { return b[:len(b)/2] })
		}, "tok-v1", "checksum mismatch"},
		{"corrupt config JSON", func(dir string) error {
			return edit(filepath.Join(dir, ConfigFile), func(b []byte) []byte { return b[:len(b)/2] })
		}, "tok-v1", "corrupt config"},
		{"config and weights disagree", func(dir string) error {
			return editSealed(filepath.Join(dir, ConfigFile), func(b []byte) []byte {
				return []byte(strings.Replace(string(b), `"dim": 6`, `"dim": 7`, 1))
			})
		}, "tok-v1", `tensor "emb.weight" has shape [40 6], want [40 7]`},
		{"edited config", func(dir string) error {
			return edit(filepath.Join(dir, ConfigFile), func(b []byte) []byte {
				return []byte(strings.Replace(string(b), `"dim": 6`, `"dim": 7`, 1))
			})
		}, "tok-v1", "surrogate.json: checksum mismatch"},
		{"edited info", func(dir string) error {
			return edit(filepath.Join(dir, ConfigFile), func(b []byte) []byte {
				return []byte(strings.Replace(string(b), `"l2"`, `"l1"`, 1))
			})
		}, "tok-v1", "surrogate.json: checksum mismatch"},
		{"invalid config", func(dir string) error {
			return editSealed(filepath.Join(dir, ConfigFile), func(b []byte) []byte {
				return []byte(strings.Replace(string(b), `"vocab": 40`, `"vocab": 1000000000`, 1))
			})
		}, "tok-v1", "vocab 1000000000 outside"},
		{"other format", func(dir string) error {
			return edit(filepath.Join(dir, ConfigFile), func(b []byte) []byte {
				return []byte(strings.Replace(string(b), Format, "ctxsim-disc/1", 1))
			})
		}, "tok-v1", "format"},
		{"garbage weights with a matching checksum", func(dir string) error {
			garbage := []byte("\x10\x00\x00\x00\x00\x00\x00\x00{not safetensors}")
			sum := sha256.Sum256(garbage)
			if err := os.WriteFile(filepath.Join(dir, WeightsFile), garbage, 0o644); err != nil {
				return err
			}
			return editSealed(filepath.Join(dir, ConfigFile), func(b []byte) []byte {
				var h map[string]any
				if err := json.Unmarshal(b, &h); err != nil {
					return nil
				}
				h["weights_sha256"] = hex.EncodeToString(sum[:])
				out, _ := json.Marshal(h)
				return out
			})
		}, "tok-v1", "safetensors: corrupt header JSON"},
		{"other tokenizer", func(string) error { return nil }, "tok-v2", "tokenizer"},
		{"missing weights", func(dir string) error { return os.Remove(filepath.Join(dir, WeightsFile)) }, "tok-v1", "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, dir := savedModel(t)
			if err := c.damage(dir); err != nil {
				t.Fatal(err)
			}
			m, _, err := Load(dir, c.tok)
			if err == nil || !strings.Contains(err.Error(), c.want) || m != nil {
				t.Errorf("Load: %v, want an error containing %q", err, c.want)
			}
		})
	}
	if _, _, err := Load(t.TempDir(), ""); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty directory: %v", err)
	}
}

func edit(path string, f func([]byte) []byte) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, f(b), 0o644)
}

// editSealed is edit with the header's checksum made to match the edit, to
// reach the checks behind it.
func editSealed(path string, f func([]byte) []byte) error {
	if err := edit(path, f); err != nil {
		return err
	}
	return bundle.Reseal(path)
}
