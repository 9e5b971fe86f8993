// Package settings is the one set of method flags that the harvest,
// refresh and evaluate jobs share: a preset and the overrides of its
// settings, parsed into scoring/method Settings.
package settings

import (
	"flag"
	"fmt"
	"strings"

	"github.com/ctxsim/ctxsim/scoring/method"
)

// Flags holds the method flags registered on a flag set.
type Flags struct {
	fs                                            *flag.FlagSet
	preset, rerankBy, lambda, similarity, labeler *string
	topK, rerank, setSize                         *int
	noDiversity                                   *bool
}

// Register adds the method flags to fs, with defaultPreset as --preset's
// default.
func Register(fs *flag.FlagSet, defaultPreset string) *Flags {
	return &Flags{
		fs: fs,
		preset: fs.String("preset", defaultPreset, "Settings preset: "+strings.Join(method.PresetNames(), ", ")+
			" (default: the contrastive scorer with the hybrid labeler at the paper's depth; paper: the paper's four terms and cosine; small and demo are shallower)."),
		topK:     fs.Int("top_k", 0, "Override: chunks retrieved per sentence."),
		rerank:   fs.Int("rerank", 0, "Override: contexts kept after ranking every candidate by --rerank_by (R)."),
		rerankBy: fs.String("rerank_by", "", "Override: the term that ranks candidates down to R (ctx or disc)."),
		setSize:  fs.Int("set_size", 0, "Override: |C_s|."),
		lambda: fs.String("lambda", "", "Override: the weights of Eq. 3 by term, name:weight,... "+
			"(terms ctx, disc, to_s, to_left, to_right; a term left out is off and its model not run), e.g. ctx:1 or disc:1,to_s:1,to_left:1,to_right:1."),
		noDiversity: fs.Bool("no_diversity", false, "Drop the one-per-chunk and Jaccard constraints."),
		similarity:  fs.String("similarity", "", "Override: Eq. 4 similarity, cosine (the paper's) or pearson."),
		labeler:     fs.String("labeler", "", "Override: origin (Eq. 4 alone, the paper's), hybrid (the mean of Eq. 4 and the TF-IDF cosine of Porter stems) or ensemble (the mean of Eq. 4, that cosine and the context model's sentence-vector cosine)."),
	}
}

// Settings returns the preset with the overrides applied, validated. Errors
// name the flag.
func (f *Flags) Settings() (method.Settings, error) {
	// An override left out keeps the preset's value; one given must be
	// positive (0 is not "the default").
	given := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	for _, o := range []struct {
		name string
		v    int
	}{{"top_k", *f.topK}, {"rerank", *f.rerank}, {"set_size", *f.setSize}} {
		if o.v < 0 || (o.v == 0 && given[o.name]) {
			return method.Settings{}, fmt.Errorf("--%s must be at least 1, got %d", o.name, o.v)
		}
	}
	st, err := method.Preset(*f.preset)
	if err != nil {
		return st, fmt.Errorf("--preset: %w", err)
	}
	st, err = method.Overrides{TopK: *f.topK, Rerank: *f.rerank, RerankBy: *f.rerankBy, SetSize: *f.setSize,
		Lambda: *f.lambda, NoDiversity: *f.noDiversity, Similarity: *f.similarity, Labeler: *f.labeler}.Apply(st)
	if err != nil {
		return st, fmt.Errorf("settings: %w", err)
	}
	return st, nil
}

// Preset is the preset named on the command line.
func (f *Flags) Preset() string { return *f.preset }
