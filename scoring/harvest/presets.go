package harvest

import (
	"fmt"
	"sort"
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
