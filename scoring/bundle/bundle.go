// Package bundle saves and loads a trained model as two files in a
// directory: NAME.safetensors (the weights) and NAME.json (the format, the
// architecture config with anything else the model keeps there, such as a
// vocabulary, the fingerprint of the tokenizer the model was trained with,
// the weights' SHA-256, free-form training info, and the SHA-256 of all of
// these, header_sha256).
//
// Both files are checksummed: the weights by weights_sha256, NAME.json by
// header_sha256, so that one byte changed in either is refused on load.
// Files are written to temporary names and renamed, the JSON last, so a
// reader never sees a half-written model. Loading fails with a clear error
// when a file is missing, corrupt, truncated or edited, when the format or
// the tokenizer differs, or when the weights do not match the config.
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
	Tokenizer     string          `json:"tokenizer"`
	WeightsSHA256 string          `json:"weights_sha256"`
	Info          json.RawMessage `json:"info,omitempty"`
	// HeaderSHA256 is the hex SHA-256 of the header's other fields (see
	// digest): the checksum of NAME.json, as WeightsSHA256 is that of
	// NAME.safetensors.
	HeaderSHA256 string `json:"header_sha256"`
}

// digest returns the hex SHA-256 of the compact JSON encoding of h without
// its HeaderSHA256 and, unless withInfo, without its Info. Raw fields are
// hashed as their compact encoding, so the indentation a file is written
// with does not matter, and anything else in them does.
func (h Header) digest(withInfo bool) (string, error) {
	h.HeaderSHA256 = ""
	if !withInfo {
		h.Info = nil
	}
	b, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// seal sets h's HeaderSHA256.
func (h *Header) seal() error {
	sum, err := h.digest(true)
	h.HeaderSHA256 = sum
	return err
}

// Reseal recomputes the header checksum of the model header at path (a
// NAME.json) after a deliberate edit, so that Load accepts the edited
// file; tests use it to reach the checks behind the checksum.
func Reseal(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var h Header
	if err := json.Unmarshal(b, &h); err != nil {
		return fmt.Errorf("%s: corrupt config: %w", path, err)
	}
	if err := h.seal(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return writeHeader(path, h)
}

// writeHeader writes h to path, indented, through a temporary file.
func writeHeader(path string, h Header) error {
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	return WriteAtomic(path, append(b, '\n'))
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
	h := Header{Format: format, Config: cfg, Tokenizer: tokenizerFingerprint, WeightsSHA256: hex.EncodeToString(sum[:])}
	if len(info) > 0 {
		if h.Info, err = json.Marshal(info); err != nil {
			return err
		}
	}
	if err := h.seal(); err != nil {
		return err
	}
	return writeHeader(filepath.Join(dir, name+".json"), h)
}

// Load reads NAME.json from dir, checks it against its header_sha256,
// decodes its config into config (a pointer), calls build to make the
// model's parameters from that config, and loads the checked weights into
// them. An empty tokenizerFingerprint skips the tokenizer check. A file
// without header_sha256 (written by an older build) is refused.
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
	if err := checkHeader(&h, filepath.Join(dir, jsonName)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
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

// checkHeader compares the header read from path with its checksum.
func checkHeader(h *Header, path string) error {
	if h.HeaderSHA256 == "" {
		return fmt.Errorf("%s has no header_sha256: it was written by an older build, whose model files are not checked whole; train the model again with bin/train", path)
	}
	sum, err := h.digest(true)
	if err != nil {
		return fmt.Errorf("%s: corrupt config: %w", path, err)
	}
	if sum != h.HeaderSHA256 {
		return fmt.Errorf("%s: checksum mismatch: the file was edited or is corrupt (its content does not match its header_sha256); train the model again, or restore the file", path)
	}
	return nil
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
	// ModelSHA256 identifies the model by everything that decides what it
	// computes: the hex SHA-256 of its format, config (with any
	// vocabulary), tokenizer fingerprint and weights' SHA-256. The
	// training info is left out, so a model trained again to the same
	// weights keeps its identity.
	ModelSHA256 string
	Info        map[string]any
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
	id, err := h.digest(false)
	if err != nil {
		var zero M
		return zero, nil, fmt.Errorf("%s: %w", name, err)
	}
	var info map[string]any
	if len(h.Info) > 0 {
		if err := json.Unmarshal(h.Info, &info); err != nil {
			var zero M
			return zero, nil, fmt.Errorf("%s: %s.json: corrupt info: %w", name, name, err)
		}
	}
	return m, &Saved[C]{Format: h.Format, Config: cfg, Tokenizer: h.Tokenizer, WeightsSHA256: h.WeightsSHA256,
		ModelSHA256: id, Info: info}, nil
}
