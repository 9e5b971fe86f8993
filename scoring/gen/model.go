// Package gen is the generative infilling model of Eq. 2 and the generative
// terms of Eq. 3: one pre-LayerNorm Transformer encoder-decoder that, told
// by a direction tag which segment to generate, gives
//
//	log p(s | c_<i, c_>i), log p(c_<i | s, c_>i), log p(c_>i | c_<i, s).
//
// Scores are length-normalised: the mean log-probability per target token,
// the closing <eos> included.
//
// # Layout
//
// A context side is the concatenation of its sentences' tokens, in document
// order, without separators. With L the left context, S the sentence and R
// the right context, the source and target of each direction are
//
//	ToSentence: source <to_s> L <sep> <mask> <sep> R      target S <eos>
//	ToLeft:     source <to_left> <mask> <sep> S <sep> R    target L <eos>
//	ToRight:    source <to_right> L <sep> S <sep> <mask>   target R <eos>
//
// and the decoder reads <bos> followed by the target without its last
// token (teacher forcing).
//
// Long inputs are cut keeping the tokens nearest the slot being generated:
// the source's two variable segments share MaxSrc-4 tokens (each gets at
// least half when both are long), the segment before the slot-side keeping
// its end and the one after keeping its start (L keeps its end, R its
// start, S its start in ToLeft and its end in ToRight). Targets keep
// MaxTgt-1 tokens before <eos>: the first ones of S and R, the last ones of
// L (the part next to the sentence).
//
// # Embeddings
//
// A source token's input is its token embedding (scaled by sqrt(Dim)) plus
// a learned position embedding (its index in the source) plus a learned
// segment embedding that says which sentence it belongs to: segment 0 is
// the slot (the direction tag, the separators, <mask> and S), the k-th
// left sentence counted from the slot is segment 2k-1 and the k-th right
// sentence is segment 2k, sentences beyond the table sharing its last
// left or right row. Decoder inputs get token and position embeddings.
//
// The token table is shared by the encoder and the decoder and tied with
// the output projection (logits = h·Eᵀ + b), which has its own bias.
package gen

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ctxsim/ctxsim/scoring/nn"
)

// Config is the model's architecture.
type Config struct {
	Vocab     int `json:"vocab"`
	Dim       int `json:"dim"`
	Heads     int `json:"heads"`
	FF        int `json:"ff"`
	EncLayers int `json:"enc_layers"`
	DecLayers int `json:"dec_layers"`
	// MaxSrc is the longest source, in tokens, tags and separators
	// included.
	MaxSrc int `json:"max_src"`
	// MaxTgt is the longest target, in tokens, <eos> included.
	MaxTgt int `json:"max_tgt"`
	// MaxSegments is the number of rows of the segment embedding: the slot
	// and (MaxSegments-1)/2 sentences on each side. It must be odd.
	MaxSegments int `json:"max_segments"`
}

// DefaultConfig is a small Transformer: width 256, 4 heads, 2+2 layers.
func DefaultConfig(vocab int) Config {
	return Config{Vocab: vocab, Dim: 256, Heads: 4, FF: 1024, EncLayers: 2, DecLayers: 2,
		MaxSrc: 96, MaxTgt: 48, MaxSegments: 11}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.Vocab < 10, c.Vocab > math.MaxInt32:
		return fmt.Errorf("gen: vocab %d outside [10, 2^31)", c.Vocab)
	case c.Dim < 1 || c.Heads < 1 || c.Dim%c.Heads != 0:
		return fmt.Errorf("gen: dim %d not a positive multiple of heads %d", c.Dim, c.Heads)
	case c.FF < 1 || c.EncLayers < 1 || c.DecLayers < 1:
		return fmt.Errorf("gen: invalid config %+v", c)
	case c.MaxSrc < 6 || c.MaxTgt < 2:
		return fmt.Errorf("gen: max_src %d (want >= 6) or max_tgt %d (want >= 2) too small", c.MaxSrc, c.MaxTgt)
	case c.MaxSegments < 3 || c.MaxSegments%2 == 0:
		return fmt.Errorf("gen: max_segments %d, want an odd number >= 3", c.MaxSegments)
	}
	return nil
}

// EncoderLayer is a pre-LayerNorm encoder block:
// x += Att(LN1(x)); x += FF(LN2(x)).
type EncoderLayer struct {
	LN1, LN2 *nn.LayerNorm
	Att      *nn.MultiHeadAttention
	FF       *nn.FeedForward
}

// DecoderLayer is a pre-LayerNorm decoder block: y += Self(LN1(y)) with a
// causal mask; y += Cross(LN2(y), memory); y += FF(LN3(y)).
type DecoderLayer struct {
	LN1, LN2, LN3 *nn.LayerNorm
	Self, Cross   *nn.MultiHeadAttention
	FF            *nn.FeedForward
}

// Model is the encoder-decoder.
type Model struct {
	Cfg Config
	// Tok is the token table, shared by encoder, decoder and output.
	Tok *nn.Embedding
	// SrcPos, TgtPos and Seg are the source position, target position and
	// source segment tables.
	SrcPos, TgtPos, Seg *nn.Embedding
	Enc                 []*EncoderLayer
	Dec                 []*DecoderLayer
	// EncNorm and DecNorm are the final LayerNorms of the two stacks.
	EncNorm, DecNorm *nn.LayerNorm
	// OutBias is the bias of the output projection.
	OutBias *nn.Param

	out *nn.Linear // the output projection: Tok.Weight and OutBias.

	// packing packs the linear layers' weights for inference (see pack).
	packing nn.Packing
}

// linears returns every linear layer of the model, the output projection
// included.
func (m *Model) linears() []*nn.Linear {
	var ls []*nn.Linear
	att := func(a *nn.MultiHeadAttention) { ls = append(ls, a.Q, a.K, a.V, a.O) }
	for _, l := range m.Enc {
		att(l.Att)
		ls = append(ls, l.FF.L1, l.FF.L2)
	}
	for _, l := range m.Dec {
		att(l.Self)
		att(l.Cross)
		ls = append(ls, l.FF.L1, l.FF.L2)
	}
	return append(ls, m.out)
}

// pack readies the linear layers for inference (nn.Linear.Pack) once;
// Score and Evaluate call it, and Trainer.Step undoes it (unpack) before
// it changes the weights. Code that writes the weights in any other way
// after scoring must call unpack first.
func (m *Model) pack() { m.packing.Pack(m.linears) }

// unpack drops the packed weights made by pack.
func (m *Model) unpack() { m.packing.Unpack(m.linears) }

// New returns a model with weights drawn from seed.
func New(cfg Config, seed uint64) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x67656e)) // "gen"
	d := cfg.Dim
	m := &Model{
		Cfg:     cfg,
		Tok:     nn.NewEmbedding("tok", cfg.Vocab, d, int(padID), rng),
		SrcPos:  nn.NewEmbedding("src_pos", cfg.MaxSrc, d, -1, rng),
		TgtPos:  nn.NewEmbedding("tgt_pos", cfg.MaxTgt, d, -1, rng),
		Seg:     nn.NewEmbedding("seg", cfg.MaxSegments, d, -1, rng),
		EncNorm: nn.NewLayerNorm("enc.norm", d),
		DecNorm: nn.NewLayerNorm("dec.norm", d),
		OutBias: nn.NewParam("out.bias", cfg.Vocab),
	}
	// Token rows of norm about one after the sqrt(d) input scaling, which
	// also keeps the tied output logits of order one; small positions and
	// segments.
	scaleData(m.Tok.Weight.Value.Data, float32(1/math.Sqrt(float64(d))))
	for _, e := range []*nn.Embedding{m.SrcPos, m.TgtPos, m.Seg} {
		scaleData(e.Weight.Value.Data, 0.1)
	}
	for i := 0; i < cfg.EncLayers; i++ {
		p := fmt.Sprintf("enc.%d", i)
		m.Enc = append(m.Enc, &EncoderLayer{
			LN1: nn.NewLayerNorm(p+".ln1", d),
			LN2: nn.NewLayerNorm(p+".ln2", d),
			Att: nn.NewMultiHeadAttention(p+".att", d, cfg.Heads, rng),
			FF:  nn.NewFeedForward(p+".ff", d, cfg.FF, nn.GELU, rng),
		})
	}
	for i := 0; i < cfg.DecLayers; i++ {
		p := fmt.Sprintf("dec.%d", i)
		m.Dec = append(m.Dec, &DecoderLayer{
			LN1:   nn.NewLayerNorm(p+".ln1", d),
			LN2:   nn.NewLayerNorm(p+".ln2", d),
			LN3:   nn.NewLayerNorm(p+".ln3", d),
			Self:  nn.NewMultiHeadAttention(p+".self", d, cfg.Heads, rng),
			Cross: nn.NewMultiHeadAttention(p+".cross", d, cfg.Heads, rng),
			FF:    nn.NewFeedForward(p+".ff", d, cfg.FF, nn.GELU, rng),
		})
	}
	m.out = &nn.Linear{W: m.Tok.Weight, B: m.OutBias}
	return m, nil
}

func scaleData(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

// Params returns every trainable parameter once, in a fixed order (the
// tied output weight is Tok's).
func (m *Model) Params() []*nn.Param {
	var ps []*nn.Param
	for _, e := range []*nn.Embedding{m.Tok, m.SrcPos, m.TgtPos, m.Seg} {
		ps = append(ps, e.Params()...)
	}
	for _, l := range m.Enc {
		ps = append(ps, l.LN1.Params()...)
		ps = append(ps, l.Att.Params()...)
		ps = append(ps, l.LN2.Params()...)
		ps = append(ps, l.FF.Params()...)
	}
	ps = append(ps, m.EncNorm.Params()...)
	for _, l := range m.Dec {
		ps = append(ps, l.LN1.Params()...)
		ps = append(ps, l.Self.Params()...)
		ps = append(ps, l.LN2.Params()...)
		ps = append(ps, l.Cross.Params()...)
		ps = append(ps, l.LN3.Params()...)
		ps = append(ps, l.FF.Params()...)
	}
	ps = append(ps, m.DecNorm.Params()...)
	return append(ps, m.OutBias)
}
