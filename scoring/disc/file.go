package disc

import (
	"github.com/ctxsim/ctxsim/scoring/bundle"
)

// Format names the saved layout.
const Format = "ctxsim-disc/1"

// File names of a saved model inside its directory.
const (
	ConfigFile  = "disc.json"
	WeightsFile = "disc.safetensors"
)

// Saved describes a saved model.
type Saved = bundle.Saved[Config]

// Save writes the model into dir (see package bundle).
func (m *Model) Save(dir, tokenizerFingerprint string, info map[string]any) error {
	return bundle.Save(dir, "disc", Format, tokenizerFingerprint, m.Cfg, info, m.Params())
}

// Load reads a model saved by Save. It fails with a clear error when a file
// is missing, corrupt or truncated (checksum), when the weights do not match
// the config, or when the model was trained with another tokenizer.
func Load(dir, tokenizerFingerprint string) (*Model, *Saved, error) {
	return bundle.LoadModel(dir, "disc", Format, tokenizerFingerprint,
		func(c Config) (*Model, error) { return New(c, 0) })
}
