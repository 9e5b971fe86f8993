package surrogate

import (
	"github.com/ctxsim/ctxsim/scoring/bundle"
)

// Format names the saved layout.
const Format = "ctxsim-surrogate/1"

// File names of a saved model inside its directory.
const (
	ConfigFile  = "surrogate.json"
	WeightsFile = "surrogate.safetensors"
)

// Saved describes a saved model.
type Saved = bundle.Saved[Config]

// Save writes the model into dir as ConfigFile (the config, the tokenizer
// fingerprint, the weights' checksum and info, such as the training config
// and learning curve) and WeightsFile (the embedding table as
// safetensors), each through a temporary file and a rename.
func (m *Model) Save(dir, tokenizerFingerprint string, info map[string]any) error {
	return bundle.Save(dir, "surrogate", Format, tokenizerFingerprint, m.Cfg, info, m.Params())
}

// Load reads a model saved by Save. It fails with a clear error when a file
// is missing, corrupt or truncated (checksum), when the config is invalid or
// the weights do not match it, or when the model was trained with another
// tokenizer (an empty tokenizerFingerprint skips that check).
func Load(dir, tokenizerFingerprint string) (*Model, *Saved, error) {
	return bundle.LoadModel(dir, "surrogate", Format, tokenizerFingerprint, newModel)
}
