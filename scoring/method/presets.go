package method

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/scoring/gen"
)

// depth sets the retrieval depth, R and |C_s| of s.
func depth(s Settings, topK, rerank, setSize int) Settings {
	s.TopK, s.Rerank, s.SetSize = topK, rerank, setSize
	return s
}

// presets are named starting points for Settings.
var presets = map[string]func() Settings{
	// default: the best measured method (Defaults) at the paper's depth.
	"default": Defaults,
	// paper: the paper's method at its settings (Paper).
	"paper": Paper,
	// small: a tenth of the retrieval depth and a fifth of |C_s|, for
	// evaluations on a few cores.
	"small":       func() Settings { return depth(Defaults(), 2000, 200, 100) },
	"paper_small": func() Settings { return depth(Paper(), 2000, 200, 100) },
	// demo: the README's first command, minutes on two cores.
	"demo":       func() Settings { return depth(Defaults(), 200, 40, 20) },
	"paper_demo": func() Settings { return depth(Paper(), 200, 40, 20) },
}

// PresetNames lists the presets, sorted.
func PresetNames() []string { return slices.Sorted(maps.Keys(presets)) }

// Preset returns the named settings.
func Preset(name string) (Settings, error) {
	p, ok := presets[name]
	if !ok {
		return Settings{}, fmt.Errorf("unknown preset %q (%s)", name, strings.Join(PresetNames(), ", "))
	}
	return p(), nil
}

// Overrides are changes to a preset, as given on a command line; zero
// values keep the preset's setting.
type Overrides struct {
	TopK, Rerank, SetSize int
	RerankBy              string
	// Lambda is "name:weight,name:weight" (ParseLambda); it replaces the
	// preset's weights.
	Lambda      string
	NoDiversity bool
	// Similarity replaces the preset's; when empty, a preset's zwhite is
	// read as zref if the weights are not the contrastive term alone
	// (Settings.WithTermsSimilarity).
	Similarity string
	Labeler    string
	// GenPrecision is "fp32" or "bf16" (Settings.GenPrecision).
	GenPrecision string
}

// ParseLambda reads the weights of Eq. 3 as "name:weight,...", for
// example "disc:1,to_s:1,to_left:1,to_right:1" or "ctx:1". Terms not named
// have weight zero.
func ParseLambda(v string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		name, w, ok := strings.Cut(part, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("lambda: want name:weight pairs separated by commas (e.g. ctx:1 or disc:1,to_s:1,to_left:1,to_right:1), got %q", v)
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("lambda: bad weight %q for %s", w, name)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("lambda: %s given twice", name)
		}
		out[name] = x
	}
	return out, nil
}

// FormatLambda writes weights as ParseLambda reads them, terms sorted.
func FormatLambda(l map[string]float64) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(l)) {
		parts = append(parts, name+":"+strconv.FormatFloat(l[name], 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

// Apply returns s with the overrides applied, validated.
func (o Overrides) Apply(s Settings) (Settings, error) {
	if o.TopK > 0 {
		s.TopK = o.TopK
	}
	if o.Rerank > 0 {
		s.Rerank = o.Rerank
	}
	if o.SetSize > 0 {
		s.SetSize = o.SetSize
	}
	if o.RerankBy != "" {
		s.RerankBy = o.RerankBy
	}
	if o.Lambda != "" {
		l, err := ParseLambda(o.Lambda)
		if err != nil {
			return s, err
		}
		s.Lambda = l
	}
	if o.NoDiversity {
		s.Diversity = false
	}
	if o.Similarity != "" {
		s.Similarity = o.Similarity
	} else {
		s = s.WithTermsSimilarity()
	}
	if o.Labeler != "" {
		s.Labeler = o.Labeler
	}
	switch o.GenPrecision {
	case "":
	case gen.PrecisionFP32:
		s.GenPrecision = ""
	default:
		s.GenPrecision = o.GenPrecision
	}
	return s, s.Validate()
}
