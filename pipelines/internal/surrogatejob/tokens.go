package surrogatejob

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/ctxsim/ctxsim/scoring/contrast"
	"github.com/ctxsim/ctxsim/scoring/method"
)

// textVocab turns text into the token IDs a surrogate reads: the subword
// tokenizer, or the contrastive model's vocabulary.
type textVocab interface {
	Encode(string) []int32
	EncodeBatch([]string) [][]int32
	Fingerprint() string
	VocabSize() int
}

// ctxVocab is the contrastive context model's vocabulary (words or Porter
// stems, the rest hashed into buckets) as a textVocab; its IDF weights
// weigh a surrogate's mean.
type ctxVocab struct {
	v  *contrast.Vocab
	fp string
}

// newCtxVocab is m's vocabulary, fingerprinted by a digest of its JSON
// (which fails for a NaN weight rather than digest to the empty one's).
func newCtxVocab(m *contrast.Model) (*ctxVocab, error) {
	v := m.Vocabulary()
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("the contrastive model's vocabulary: %w", err)
	}
	h := sha256.Sum256(b)
	return &ctxVocab{v: v, fp: "ctx-vocab:" + hex.EncodeToString(h[:16])}, nil
}

func (c *ctxVocab) Encode(s string) []int32 {
	rows, _ := c.v.Bag(s, nil, nil)
	return rows
}

func (c *ctxVocab) EncodeBatch(ss []string) [][]int32 {
	out := make([][]int32, len(ss))
	for i, s := range ss {
		out[i] = c.Encode(s)
	}
	return out
}

func (c *ctxVocab) Fingerprint() string { return c.fp }
func (c *ctxVocab) VocabSize() int      { return c.v.Rows() }

// Weights are the vocabulary's IDF weights, one per token ID.
func (c *ctxVocab) Weights() []float32 { return c.v.Weights }

// chooseTokens returns the vocabulary --tokens names in the model directory:
// subword (the tokenizer), ctx (the contrastive model's), or auto (ctx when
// the directory has a contrastive model).
func chooseTokens(name string, models *method.Models) (textVocab, string, error) {
	if name == "auto" {
		name = "subword"
		if models.Ctx != nil {
			name = "ctx"
		}
	}
	switch name {
	case "ctx":
		if models.Ctx == nil {
			return nil, "", fmt.Errorf("--tokens=ctx: the model directory has no contrastive model (ctx.json)")
		}
		v, err := newCtxVocab(models.Ctx)
		if err != nil {
			return nil, "", err
		}
		return v, name, nil
	case "subword":
		if models.Tok == nil {
			return nil, "", fmt.Errorf("--tokens=subword: the model directory has no tokenizer (tokenizer.json); train disc or gen, or use --tokens=ctx")
		}
		return models.Tok, name, nil
	}
	return nil, "", fmt.Errorf("--tokens: unknown vocabulary %q (auto, subword, ctx)", name)
}
