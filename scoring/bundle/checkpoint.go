package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ctxsim/ctxsim/scoring/nn"
)

// checkpoint is the config part of a training checkpoint.
type checkpoint struct {
	Model     json.RawMessage `json:"model"`
	Step      int             `json:"step"`
	AdamSteps int             `json:"adam_steps"`
	State     json.RawMessage `json:"state"`
}

// SaveCheckpoint writes a training checkpoint into dir as NAME.json and
// NAME.safetensors: the parameters with their Adam moments, the optimiser's
// step count, the model config, and the caller's state (JSON-encodable:
// data position, learning curve), so that training can resume after step.
func SaveCheckpoint(dir, name, format, tokenizerFingerprint string, config any, step int,
	opt *nn.Adam, params []*nn.Param, state any) error {
	cfg, err := json.Marshal(config)
	if err != nil {
		return err
	}
	st, err := json.Marshal(state)
	if err != nil {
		return err
	}
	return Save(dir, name, format+"-checkpoint", tokenizerFingerprint,
		checkpoint{Model: cfg, Step: step, AdamSteps: opt.Steps, State: st}, nil,
		append(params, nn.MomentParams(params)...))
}

// LoadCheckpoint restores a checkpoint written by SaveCheckpoint into params
// and opt, decodes the caller's state into state, and returns the step it was
// taken after. The error wraps os.ErrNotExist when there is no checkpoint;
// it is a clear error when the checkpoint is corrupt or was made with
// another model config or tokenizer.
func LoadCheckpoint(dir, name, format, tokenizerFingerprint string, config any,
	opt *nn.Adam, params []*nn.Param, state any) (int, error) {
	want, err := json.Marshal(config)
	if err != nil {
		return 0, err
	}
	var c checkpoint
	_, err = Load(dir, name, format+"-checkpoint", tokenizerFingerprint, &c, func() ([]*nn.Param, error) {
		var got bytes.Buffer
		if err := json.Compact(&got, c.Model); err != nil || !bytes.Equal(got.Bytes(), want) {
			return nil, fmt.Errorf("checkpoint made with model config %s, this run uses %s", got.Bytes(), want)
		}
		return append(params, nn.MomentParams(params)...), nil
	})
	if err != nil {
		return 0, err
	}
	if err := json.Unmarshal(c.State, state); err != nil {
		return 0, fmt.Errorf("%s: corrupt trainer state: %w", name, err)
	}
	opt.Steps = c.AdamSteps
	return c.Step, nil
}
