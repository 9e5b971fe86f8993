// Package bundle saves and loads a trained model as two files in a
// directory: NAME.safetensors (the weights) and NAME.json (the format, the
// architecture config, the fingerprint of the tokenizer the model was
// trained with, the weights' SHA-256, and free-form training info).
//
// Files are written to temporary names and renamed, the JSON last, so a
// reader never sees a half-written model. Loading fails with a clear error
// when a file is missing, corrupt or truncated, when the format or the
// tokenizer differs, or when the weights do not match the config.
package bundle

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

// Header is the JSON written beside the weights.
type Header struct {
	Format string          `json:"format"`
	Config json.RawMessage `json:"config"`
	// Tokenizer is the fingerprint of the tokenizer the model was trained
	// with.
	Tokenizer     string         `json:"tokenizer"`
	WeightsSHA256 string         `json:"weights_sha256"`
	Info          map[string]any `json:"info,omitempty"`
}

// Save writes params and config into dir as NAME.safetensors and NAME.json.
func Save(dir, name, format, tokenizerFingerprint string, config any, info map[string]any, params []*nn.Param) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := nn.SaveSafetensors(&buf, params, map[string]string{"format": format}); err != nil {
		return err
	}
	sum := sha256.Sum256(buf.Bytes())
	if err := WriteAtomic(filepath.Join(dir, name+".safetensors"), buf.Bytes()); err != nil {
		return err
	}
	cfg, err := json.Marshal(config)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(Header{Format: format, Config: cfg, Tokenizer: tokenizerFingerprint,
		WeightsSHA256: hex.EncodeToString(sum[:]), Info: info}, "", "  ")
	if err != nil {
		return err
	}
	return WriteAtomic(filepath.Join(dir, name+".json"), append(b, '\n'))
}

// Load reads NAME.json from dir, decodes its config into config (a
// pointer), calls build to make the model's parameters from that config,
// and loads the checked weights into them. An empty tokenizerFingerprint
// skips the tokenizer check.
func Load(dir, name, format, tokenizerFingerprint string, config any, build func() ([]*nn.Param, error)) (*Header, error) {
	jsonName, weightsName := name+".json", name+".safetensors"
	b, err := os.ReadFile(filepath.Join(dir, jsonName))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var h Header
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("%s: %s: corrupt config: %w", name, jsonName, err)
	}
	if h.Format != format {
		return nil, fmt.Errorf("%s: %s: format %q, this build reads %q", name, jsonName, h.Format, format)
	}
	if tokenizerFingerprint != "" && h.Tokenizer != tokenizerFingerprint {
		return nil, fmt.Errorf("%s: model trained with tokenizer %.12s…, given tokenizer %.12s…",
			name, h.Tokenizer, tokenizerFingerprint)
	}
	if err := json.Unmarshal(h.Config, config); err != nil {
		return nil, fmt.Errorf("%s: %s: corrupt config: %w", name, jsonName, err)
	}
	w, err := os.ReadFile(filepath.Join(dir, weightsName))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if sum := sha256.Sum256(w); hex.EncodeToString(sum[:]) != h.WeightsSHA256 {
		return nil, fmt.Errorf("%s: %s: checksum mismatch: the file is corrupt or truncated", name, weightsName)
	}
	params, err := build()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if _, err := nn.LoadSafetensors(bytes.NewReader(w), params); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", name, weightsName, err)
	}
	return &h, nil
}

// WriteAtomic writes data to path through a temporary file and a rename.
func WriteAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Saved describes a saved model whose config has type C.
type Saved[C any] struct {
	Format        string
	Config        C
	Tokenizer     string
	WeightsSHA256 string
	Info          map[string]any
}

// LoadModel loads the model NAME from dir: it decodes the config, builds
// the model with build and loads the checked weights into its parameters.
func LoadModel[M interface{ Params() []*nn.Param }, C any](dir, name, format, tokenizerFingerprint string,
	build func(C) (M, error)) (M, *Saved[C], error) {
	var cfg C
	var m M
	h, err := Load(dir, name, format, tokenizerFingerprint, &cfg, func() ([]*nn.Param, error) {
		var err error
		if m, err = build(cfg); err != nil {
			return nil, err
		}
		return m.Params(), nil
	})
	if err != nil {
		var zero M
		return zero, nil, err
	}
	return m, &Saved[C]{Format: h.Format, Config: cfg, Tokenizer: h.Tokenizer, WeightsSHA256: h.WeightsSHA256, Info: h.Info}, nil
}
