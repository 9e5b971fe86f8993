package disc

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxsim/ctxsim/scoring/nn"
)

// File names of a saved model inside its directory.
const (
	ConfigFile  = "disc.json"
	WeightsFile = "disc.safetensors"
)

// Saved is the JSON written beside the weights.
type Saved struct {
	Format string `json:"format"`
	Config Config `json:"config"`
	// Tokenizer is the fingerprint of the tokenizer the model was trained
	// with; Load refuses another.
	Tokenizer string `json:"tokenizer"`
	// WeightsSHA256 is the checksum of WeightsFile.
	WeightsSHA256 string `json:"weights_sha256"`
	// Info holds training settings and metrics, for people.
	Info map[string]any `json:"info,omitempty"`
}

// Format names the saved layout.
const Format = "ctxsim-disc/1"

// Save writes the model into dir: the weights as safetensors and the JSON
// config with the weights' checksum. Both are written to temporary names
// and renamed, the config last.
func (m *Model) Save(dir, tokenizerFingerprint string, info map[string]any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := nn.SaveSafetensors(&buf, m.Params(), map[string]string{"format": Format}); err != nil {
		return err
	}
	sum := sha256.Sum256(buf.Bytes())
	if err := writeAtomic(filepath.Join(dir, WeightsFile), buf.Bytes()); err != nil {
		return err
	}
	b, err := json.MarshalIndent(Saved{Format: Format, Config: m.Cfg, Tokenizer: tokenizerFingerprint,
		WeightsSHA256: hex.EncodeToString(sum[:]), Info: info}, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, ConfigFile), append(b, '\n'))
}

// Load reads a model saved by Save. It fails with a clear error when a file
// is missing, corrupt or truncated (checksum), when the weights do not match
// the config, or when the model was trained with another tokenizer.
func Load(dir, tokenizerFingerprint string) (*Model, *Saved, error) {
	b, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		return nil, nil, fmt.Errorf("disc: %w", err)
	}
	var s Saved
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, nil, fmt.Errorf("disc: %s: corrupt config: %w", ConfigFile, err)
	}
	if s.Format != Format {
		return nil, nil, fmt.Errorf("disc: %s: format %q, this build reads %q", ConfigFile, s.Format, Format)
	}
	if tokenizerFingerprint != "" && s.Tokenizer != tokenizerFingerprint {
		return nil, nil, fmt.Errorf("disc: model trained with tokenizer %.12s…, given tokenizer %.12s…",
			s.Tokenizer, tokenizerFingerprint)
	}
	w, err := os.ReadFile(filepath.Join(dir, WeightsFile))
	if err != nil {
		return nil, nil, fmt.Errorf("disc: %w", err)
	}
	if sum := sha256.Sum256(w); hex.EncodeToString(sum[:]) != s.WeightsSHA256 {
		return nil, nil, fmt.Errorf("disc: %s: checksum mismatch: the file is corrupt or truncated", WeightsFile)
	}
	m, err := New(s.Config, 0)
	if err != nil {
		return nil, nil, err
	}
	if _, err := nn.LoadSafetensors(bytes.NewReader(w), m.Params()); err != nil {
		return nil, nil, fmt.Errorf("disc: %s: %w", WeightsFile, err)
	}
	return m, &s, nil
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
