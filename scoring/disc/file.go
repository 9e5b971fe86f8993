package disc

import (
	"encoding/json"
	"fmt"

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

// checkpointFormat names the checkpoint layout.
const checkpointFormat = Format + "-checkpoint"

// checkpoint is the config part of a training checkpoint.
type checkpoint struct {
	Model     Config          `json:"model"`
	Step      int             `json:"step"`
	AdamSteps int             `json:"adam_steps"`
	State     json.RawMessage `json:"state"`
}

// SaveCheckpoint writes the model, the optimiser's moments and step count,
// and the caller's state (JSON-encodable: data position, learning curve)
// into dir as checkpoint.json and checkpoint.safetensors, atomically, so
// training can resume after step.
func (t *Trainer) SaveCheckpoint(dir, tokenizerFingerprint string, step int, state any) error {
	st, err := json.Marshal(state)
	if err != nil {
		return err
	}
	ps := t.M.Params()
	return bundle.Save(dir, "checkpoint", checkpointFormat, tokenizerFingerprint,
		checkpoint{Model: t.M.Cfg, Step: step, AdamSteps: t.Opt.Steps, State: st}, nil,
		append(ps, nn.MomentParams(ps)...))
}

// LoadCheckpoint restores a checkpoint written by SaveCheckpoint into the
// trainer's model and optimiser, decodes the caller's state into state, and
// returns the step it was taken after. The error wraps os.ErrNotExist when
// dir holds no checkpoint; it is a clear error when the checkpoint is
// corrupt or was made with another configuration or tokenizer.
func (t *Trainer) LoadCheckpoint(dir, tokenizerFingerprint string, state any) (int, error) {
	var c checkpoint
	_, err := bundle.Load(dir, "checkpoint", checkpointFormat, tokenizerFingerprint, &c, func() ([]*nn.Param, error) {
		if c.Model != t.M.Cfg {
			return nil, fmt.Errorf("checkpoint made with model config %+v, this run uses %+v", c.Model, t.M.Cfg)
		}
		ps := t.M.Params()
		return append(ps, nn.MomentParams(ps)...), nil
	})
	if err != nil {
		return 0, err
	}
	if err := json.Unmarshal(c.State, state); err != nil {
		return 0, fmt.Errorf("checkpoint: corrupt trainer state: %w", err)
	}
	t.Opt.Steps = c.AdamSteps
	return c.Step, nil
}
