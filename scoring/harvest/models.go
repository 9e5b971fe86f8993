package harvest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxsim/ctxsim/scoring/disc"
	"github.com/ctxsim/ctxsim/scoring/gen"
	"github.com/ctxsim/ctxsim/scoring/tokenizer"
)

// Models are the trained models the method needs, as written by the train
// job into one directory.
type Models struct {
	Tok  *tokenizer.Tokenizer
	Disc *disc.Model
	Gen  *gen.Model
	// Fingerprint identifies the three together: a hash of the tokenizer
	// fingerprint and both weight checksums.
	Fingerprint string
}

// TokenizerFile is the tokenizer's file in a model directory.
const TokenizerFile = "tokenizer.json"

// LoadTokenizer reads the tokenizer of the model directory dir. A missing
// or corrupt file is an error naming it.
func LoadTokenizer(dir string) (*tokenizer.Tokenizer, error) {
	f, err := os.Open(filepath.Join(dir, TokenizerFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tok, err := tokenizer.Load(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, TokenizerFile), err)
	}
	return tok, nil
}

// LoadModels reads tokenizer.json, disc.* and gen.* from dir. A missing,
// corrupt or mismatched file is an error naming it.
func LoadModels(dir string) (*Models, error) {
	tok, err := LoadTokenizer(dir)
	if err != nil {
		return nil, fmt.Errorf("models: %w", err)
	}
	dm, ds, err := disc.Load(dir, tok.Fingerprint())
	if err != nil {
		return nil, fmt.Errorf("models: %w", err)
	}
	gm, gs, err := gen.Load(dir, tok.Fingerprint())
	if err != nil {
		return nil, fmt.Errorf("models: %w", err)
	}
	sum := sha256.Sum256([]byte(tok.Fingerprint() + "\n" + ds.WeightsSHA256 + "\n" + gs.WeightsSHA256))
	return &Models{Tok: tok, Disc: dm, Gen: gm, Fingerprint: hex.EncodeToString(sum[:16])}, nil
}
