package disc

import (
	"github.com/ctxsim/ctxsim/scoring/bundle"
	"github.com/ctxsim/ctxsim/scoring/nn"
)

// Format names the saved layout.
const Format = "ctxsim-disc/1"

// File names of a saved model inside its directory.
const (
	ConfigFile  = "disc.json"
	WeightsFile = "disc.safetensors"
)

// Saved describes a saved model.
type Saved struct {
	Format        string
	Config        Config
	Tokenizer     string
	WeightsSHA256 string
	Info          map[string]any
}

// Save writes the model into dir (see package bundle).
func (m *Model) Save(dir, tokenizerFingerprint string, info map[string]any) error {
	return bundle.Save(dir, "disc", Format, tokenizerFingerprint, m.Cfg, info, m.Params())
}

// Load reads a model saved by Save. It fails with a clear error when a file
// is missing, corrupt or truncated (checksum), when the weights do not match
// the config, or when the model was trained with another tokenizer.
func Load(dir, tokenizerFingerprint string) (*Model, *Saved, error) {
	var cfg Config
	var m *Model
	h, err := bundle.Load(dir, "disc", Format, tokenizerFingerprint, &cfg, func() ([]*nn.Param, error) {
		var err error
		m, err = New(cfg, 0)
		if err != nil {
			return nil, err
		}
		return m.Params(), nil
	})
	if err != nil {
		return nil, nil, err
	}
	return m, &Saved{Format: h.Format, Config: cfg, Tokenizer: h.Tokenizer, WeightsSHA256: h.WeightsSHA256, Info: h.Info}, nil
}
