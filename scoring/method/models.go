package method

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ctxsim/ctxsim/scoring/bundle"
	"github.com/ctxsim/ctxsim/scoring/contrast"
	"github.com/ctxsim/ctxsim/scoring/disc"
	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/gen"
	"github.com/ctxsim/ctxsim/scoring/tokenizer"
)

// Models are the trained models of a model directory, as written by the
// train job: any of the contrastive context model (ctx.*), the coherence
// model (disc.*) and the infilling model (gen.*), the last two with the
// subword tokenizer they read (tokenizer.json). A model that was not
// trained is nil.
type Models struct {
	Tok  *tokenizer.Tokenizer
	Disc *disc.Model
	Gen  *gen.Model
	Ctx  *contrast.Model
	// Fingerprint identifies the models together: a hash of each one's
	// name and model checksum (bundle.Saved.ModelSHA256: its config and
	// any vocabulary, its tokenizer's fingerprint and its weights), of the
	// tokenizer's fingerprint and of the reference contexts. Every file of
	// a model directory that decides a label is in it.
	Fingerprint string
	// Window is the most context sentences on each side the models read.
	Window int
	// Reference are the reference contexts of the models (reference.json):
	// a fixed sample of training contexts against which the "zref" reading
	// of Eq. 4 standardises a sentence's scores. Nil when absent.
	Reference []examples.Context
	// White are the whitening contexts of the models (white.json): a fixed
	// sample of training contexts over which the "zwhite" reading of Eq. 4
	// whitens the contrastive model's context vectors. Nil when absent.
	White []examples.Context

	// vectorKeys are the keys of the models' sentence vectors, by term
	// (see VectorScorer); empty for models not loaded from files.
	vectorKeys map[string]string
}

// ReferenceFile holds a model directory's reference contexts.
const ReferenceFile = "reference.json"

// WhiteFile holds a model directory's whitening contexts: a fixed sample
// of training contexts over which zwhite measures the covariance of the
// contrastive model's context vectors, so that zwhite depends on the
// models alone, not on the corpus harvested or the order it is read in.
const WhiteFile = "white.json"

// WhiteContexts is the number of whitening contexts bin/train draws.
const WhiteContexts = 4096

// SaveReference writes the reference contexts into dir.
func SaveReference(dir string, ctxs []examples.Context) error {
	return saveContexts(dir, ReferenceFile, ctxs)
}

// SaveWhite writes the whitening contexts into dir.
func SaveWhite(dir string, ctxs []examples.Context) error {
	return saveContexts(dir, WhiteFile, ctxs)
}

func saveContexts(dir, file string, ctxs []examples.Context) error {
	b, err := json.Marshal(map[string]any{"contexts": ctxs})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return bundle.WriteAtomic(filepath.Join(dir, file), append(b, '\n'))
}

// loadContexts reads dir's contexts file (ReferenceFile, WhiteFile); a
// missing file gives nil.
func loadContexts(dir, file string) ([]examples.Context, error) {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f struct {
		Contexts []examples.Context `json:"contexts"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, file), err)
	}
	for i, c := range f.Contexts {
		if len(c.Left) == 0 || len(c.Right) == 0 {
			return nil, fmt.Errorf("%s: context %d lacks a side", filepath.Join(dir, file), i)
		}
	}
	return f.Contexts, nil
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

// LoadModels reads the models in dir: ctx.* when present; tokenizer.json
// with disc.* and gen.* when present. A directory with none of them, or a
// missing, corrupt or mismatched file, is an error naming it.
func LoadModels(dir string) (*Models, error) {
	m := &Models{vectorKeys: map[string]string{}}
	var parts []string
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	if exists(contrast.Name + ".json") {
		cm, saved, err := contrast.Load(dir)
		if err != nil {
			return nil, fmt.Errorf("models: %w", err)
		}
		m.Ctx = cm
		parts = append(parts, "ctx:"+saved.ModelSHA256)
		m.vectorKeys[TermCtx] = vectorKey(TermCtx, saved.ModelSHA256)
	}
	if exists("disc.json") || exists("gen.json") || exists(TokenizerFile) {
		tok, err := LoadTokenizer(dir)
		if err != nil {
			return nil, fmt.Errorf("models: %w", err)
		}
		m.Tok = tok
		parts = append(parts, "tokenizer:"+tok.Fingerprint())
		if exists("disc.json") {
			dm, ds, err := disc.Load(dir, tok.Fingerprint())
			if err != nil {
				return nil, fmt.Errorf("models: %w", err)
			}
			m.Disc = dm
			parts = append(parts, "disc:"+ds.ModelSHA256)
			m.vectorKeys[TermDisc] = vectorKey(TermDisc, ds.ModelSHA256, tok.Fingerprint())
		}
		if exists("gen.json") {
			gm, gs, err := gen.Load(dir, tok.Fingerprint())
			if err != nil {
				return nil, fmt.Errorf("models: %w", err)
			}
			m.Gen = gm
			parts = append(parts, "gen:"+gs.ModelSHA256)
		}
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("models: %s holds no trained model (ctx.json, disc.json or gen.json); train them with bin/train", dir)
	}
	for _, f := range []struct {
		file, part string
		dst        *[]examples.Context
	}{{ReferenceFile, "reference", &m.Reference}, {WhiteFile, "white", &m.White}} {
		ctxs, err := loadContexts(dir, f.file)
		if err != nil {
			return nil, fmt.Errorf("models: %w", err)
		}
		if ctxs != nil {
			*f.dst = ctxs
			rb, err := json.Marshal(ctxs)
			if err != nil {
				return nil, fmt.Errorf("models: %s: %w", f.file, err)
			}
			rs := sha256.Sum256(rb)
			parts = append(parts, f.part+":"+hex.EncodeToString(rs[:]))
		}
	}
	windows := map[int]bool{}
	if m.Ctx != nil {
		windows[m.Ctx.Cfg.Window] = true
	}
	if m.Disc != nil {
		windows[m.Disc.Cfg.Window] = true
	}
	m.Window = 2
	for w := range windows {
		m.Window = w
	}
	if len(windows) > 1 {
		return nil, fmt.Errorf("models: %s holds models trained with different context windows %v", dir, slices.Sorted(maps.Keys(windows)))
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\n")))
	m.Fingerprint = hex.EncodeToString(sum[:16])
	return m, nil
}

// SentenceCosine returns the cosine of the contrastive model's unit
// sentence vectors f(a) and f(b), or nil when that model is not loaded.
func (m *Models) SentenceCosine() func(a, b string) float64 {
	if m.Ctx == nil {
		return nil
	}
	return func(a, b string) float64 { return float64(contrast.Dot(m.Ctx.SentenceVec(a), m.Ctx.SentenceVec(b))) }
}

// AlignSimilarity returns the contrastive model's word alignment of two
// sentences (contrast.Model.AlignSimilarity), or nil when that model is
// not loaded.
func (m *Models) AlignSimilarity() func(a, b string) float64 {
	if m.Ctx == nil {
		return nil
	}
	return m.Ctx.AlignSimilarity
}

// SubwordEmbeddings returns the coherence model's subword embedding table
// (row-major, one row per token ID; callers must not change it) and its
// width, or a nil table when that model is not loaded.
func (m *Models) SubwordEmbeddings() (table []float32, dim int) {
	if m.Disc == nil {
		return nil, 0
	}
	return m.Disc.SubwordEmbeddings()
}

// Encode returns the token IDs of text under the subword tokenizer, which
// is loaded with the coherence and infilling models.
func (m *Models) Encode(text string) []int32 { return m.Tok.Encode(text) }

// Scorers returns a scorer for each loaded model, over the stored chunks.
func (m *Models) Scorers(st *Store) []Scorer {
	var out []Scorer
	if m.Ctx != nil {
		c := NewCtxScorer(m.Ctx, st)
		c.Key = m.vectorKeys[TermCtx]
		out = append(out, c)
	}
	if m.Disc != nil || m.Gen != nil {
		tc := NewTokenCache(m.Tok, st)
		if m.Disc != nil {
			d := NewDiscScorer(m.Disc, tc)
			d.Key = m.vectorKeys[TermDisc]
			out = append(out, d)
		}
		if m.Gen != nil {
			out = append(out, NewGenScorer(m.Gen, tc))
		}
	}
	return out
}

// Engine returns an engine over the stored chunks scoring with every
// loaded model, with the models' reference and whitening contexts (which
// it adds to the store, apart from the corpus chunks).
func (m *Models) Engine(st *Store) (*Engine, error) {
	// The contexts go into the store before the scorers are made, which
	// size their caches by its slots.
	ref := st.addModelContexts("ref", m.Reference)
	white := st.addModelContexts("white", m.White)
	e, err := NewEngine(st, m.Window, m.Scorers(st)...)
	if err != nil {
		return nil, err
	}
	e.reference, e.whiteSample = e.modelCands(ref), e.modelCands(white)
	return e, nil
}

// modelCands returns the candidates of the models' contexts mc.
func (e *Engine) modelCands(mc modelContexts) []Cand {
	var out []Cand
	for i, id := range mc.ids {
		c, _ := e.Store.chunk(id)
		out = append(out, e.cand(id, int32(i), c, int(mc.slots[i])))
	}
	return out
}

// Check reports settings that use a term no loaded model computes.
func (m *Models) Check(st Settings) error {
	e, err := m.Engine(NewStore())
	if err != nil {
		return err
	}
	return e.Check(st)
}
