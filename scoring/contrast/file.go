package contrast

import (
	"github.com/ctxsim/ctxsim/scoring/bundle"
	"github.com/ctxsim/ctxsim/scoring/nn"
)

// Format names the saved layout.
const Format = "ctxsim-contrast/1"

// Name is the model's file stem in a model directory: ctx.json (config and
// vocabulary) and ctx.safetensors (the two tables).
const Name = "ctx"

// fileConfig is what ctx.json holds besides the checksum and info.
type fileConfig struct {
	Model Config `json:"model"`
	Vocab *Vocab `json:"vocab"`
}

// Params returns the two tables as parameters (sharing the model's memory).
func (m *Model) Params() []*nn.Param {
	rows := m.Vocab.Rows()
	return []*nn.Param{
		{Name: "sent.weight", Value: nn.FromData(m.Sent, rows, m.Cfg.Dim)},
		{Name: "ctx.weight", Value: nn.FromData(m.Ctx, rows, m.Cfg.Dim)},
	}
}

// Save writes the model into dir as ctx.json and ctx.safetensors, each
// through a temporary file and a rename.
func (m *Model) Save(dir string, info map[string]any) error {
	return bundle.Save(dir, Name, Format, "", fileConfig{m.Cfg, m.Vocab}, info, m.Params())
}

// Saved describes a saved model.
type Saved = bundle.Saved[fileConfig]

// Load reads a model saved by Save. A missing, corrupt or truncated file,
// or weights that do not match the config, is an error naming the file.
func Load(dir string) (*Model, *Saved, error) {
	return bundle.LoadModel(dir, Name, Format, "", func(fc fileConfig) (*Model, error) {
		if fc.Vocab == nil {
			fc.Vocab = &Vocab{}
		}
		if err := fc.Vocab.init(); err != nil {
			return nil, err
		}
		if err := fc.Model.Validate(); err != nil {
			return nil, err
		}
		n := fc.Vocab.Rows() * fc.Model.Dim
		return &Model{Cfg: fc.Model, Vocab: fc.Vocab, Sent: make([]float32, n), Ctx: make([]float32, n)}, nil
	})
}
