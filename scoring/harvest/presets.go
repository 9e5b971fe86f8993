package harvest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// presets are named starting points for Settings.
var presets = map[string]func() Settings{
	// paper: the paper's settings (Defaults).
	"paper": Defaults,
	// small: a tenth of the retrieval depth and a fifth of |C_s|, for
	// evaluations on a few cores.
	"small": func() Settings {
		s := Defaults()
		s.TopK, s.Rerank, s.SetSize = 2000, 200, 100
		return s
	},
	// demo: the README's first command, minutes on two cores.
	"demo": func() Settings {
		s := Defaults()
		s.TopK, s.Rerank, s.SetSize = 200, 40, 20
		return s
	},
}

// Preset returns the named settings.
func Preset(name string) (Settings, error) {
	p, ok := presets[name]
	if !ok {
		var names []string
		for n := range presets {
			names = append(names, n)
		}
		sort.Strings(names)
		return Settings{}, fmt.Errorf("unknown preset %q (%s)", name, strings.Join(names, ", "))
	}
	return p(), nil
}

// Overrides are changes to a preset, as given on a command line; zero
// values keep the preset's setting.
type Overrides struct {
	TopK, Rerank, SetSize int
	// Lambda is "w1,w2,w3,w4".
	Lambda      string
	NoDiversity bool
	Similarity  string
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
	if o.Lambda != "" {
		ls := strings.Split(o.Lambda, ",")
		if len(ls) != NumTerms {
			return s, fmt.Errorf("lambda: want %d comma-separated weights, got %q", NumTerms, o.Lambda)
		}
		for i, x := range ls {
			v, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil {
				return s, fmt.Errorf("lambda: %w", err)
			}
			s.Lambda[i] = v
		}
	}
	if o.NoDiversity {
		s.Diversity = false
	}
	if o.Similarity != "" {
		s.Similarity = o.Similarity
	}
	return s, s.Validate()
}
