// Package settings is the one set of method flags that the harvest,
// refresh and evaluate jobs share: a preset and the overrides of its
// settings, parsed into scoring/method Settings.
package settings

import (
	"flag"
	"fmt"
	"strings"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/scoring/method"
)

// Flags holds the method flags registered on a flag set.
type Flags struct {
	fs                                            *flag.FlagSet
	preset, rerankBy, lambda, similarity, labeler *string
	genPrecision                                  *string
	topK, rerank, setSize                         *int
	noDiversity                                   *bool
}

// Register adds the method flags to fs, with defaultPreset as --preset's
// default.
func Register(fs *flag.FlagSet, defaultPreset string) *Flags {
	return &Flags{
		fs:       fs,
		preset:   fs.String("preset", defaultPreset, presetHelp(defaultPreset)),
		topK:     fs.Int("top_k", 0, "Override: chunks retrieved per sentence (0: the preset's)."),
		rerank:   fs.Int("rerank", 0, "Override: contexts kept after ranking every candidate by --rerank_by (R; 0: the preset's)."),
		rerankBy: fs.String("rerank_by", "", "Override: the term that ranks candidates down to R: ctx (the contrastive context model) or disc (the coherence model). "+byPreset(func(s method.Settings) string { return s.RerankBy })),
		setSize:  fs.Int("set_size", 0, "Override: |C_s| (0: the preset's)."),
		lambda: fs.String("lambda", "", "Override: the weights of Eq. 3 by term, name:weight,... "+
			"(terms ctx, disc, to_s, to_left, to_right; a term left out is off and its model not run), e.g. ctx:1 or disc:1,to_s:1,to_left:1,to_right:1. "+
			byPreset(func(s method.Settings) string { return method.FormatLambda(s.Lambda) })),
		noDiversity: fs.Bool("no_diversity", false, "Drop the one-per-chunk and Jaccard constraints."),
		similarity: fs.String("similarity", "", "Override: Eq. 4 similarity: zref (the cosine of the scores standardised over the models' reference contexts), "+
			"zwhite (zref with the contrastive model's context vectors whitened over the models' sample of training contexts, white.json; needs --lambda=ctx:1, and a preset's zwhite reads as zref when --lambda names other terms), overlap (the overlap of the two sentences' distributions over the contexts, softmax of zwhite's scores; same needs), cosine (the paper's) or pearson. "+
			byPreset(func(s method.Settings) string { return s.Similarity })),
		genPrecision: fs.String("gen_precision", "", "Override: the arithmetic of the generative model's linear layers, fp32 (the default) or bf16 "+
			"(operands rounded to bfloat16, sums in float32: it needs AVX512_BF16 and pays on some CPUs only: about 1.5x the scoring rate measured on AMD Zen 4, 0.6-0.7x on an Intel Xeon with AMX; the generative terms change by the rounding, and the settings, so no earlier label is reused)."),
		labeler: fs.String("labeler", "", "Override: origin (Eq. 4 alone, the paper's), hybrid (the mean of Eq. 4 and the TF-IDF cosine of Porter stems), ensemble (the mean of Eq. 4, that cosine and the context model's sentence-vector cosine), aligned ((8 x the word alignment of the two sentences under the context model + Eq. 4 + the context model's sentence-vector cosine)/10; under --similarity=overlap, the mean of the alignment and Eq. 4) or lexical (that cosine alone: no context sets and no models, for runs that exercise the data plane). "+
			byPreset(func(s method.Settings) string { return s.Labeler })),
	}
}

// presetHelp is --preset's help: what the presets set, read from the
// presets themselves, and the job's default.
func presetHelp(defaultPreset string) string {
	methods := groupPresets(func(s method.Settings) string {
		return fmt.Sprintf("Eq. 3 %s reranked by %s, Eq. 4 as %s, the %s labeler", method.FormatLambda(s.Lambda), s.RerankBy, s.Similarity, s.Labeler)
	}, ": ")
	depth := groupPresets(func(s method.Settings) string {
		return fmt.Sprintf("%d/%d/%d", s.TopK, s.Rerank, s.SetSize)
	}, " ")
	return fmt.Sprintf("Settings preset; this job's default is %q. Method: %s. Depth (top_k/rerank/set_size, the paper's is 20000/1000/500): %s.",
		defaultPreset, methods, depth)
}

// groupPresets lists the presets by the value each sets, as "a, b<sep>value;
// c, d<sep>value".
func groupPresets(value func(method.Settings) string, sep string) string {
	var order []string
	names := map[string][]string{}
	for _, name := range method.PresetNames() {
		st, _ := method.Preset(name)
		v := value(st)
		if names[v] == nil {
			order = append(order, v)
		}
		names[v] = append(names[v], name)
	}
	parts := make([]string, len(order))
	for i, v := range order {
		parts[i] = strings.Join(names[v], ", ") + sep + v
	}
	return strings.Join(parts, "; ")
}

// byPreset says, for an override's help, the value each preset sets.
func byPreset(value func(method.Settings) string) string {
	return "Empty: the preset's (" + groupPresets(value, ": ") + ")."
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
		Lambda: *f.lambda, NoDiversity: *f.noDiversity, Similarity: *f.similarity, Labeler: *f.labeler,
		GenPrecision: *f.genPrecision}.Apply(st)
	if err != nil {
		return st, fmt.Errorf("settings: %w", err)
	}
	return st, nil
}

// Preset is the preset named on the command line.
func (f *Flags) Preset() string { return *f.preset }

// HarvestFlags are the flags of a harvest's whole method, shared by the
// harvest and refresh jobs: the method flags (Flags) and which sentences
// are labeled, how pairs are sampled, the seed and the matrix multiply.
type HarvestFlags struct {
	*Flags
	sample, sampleFrom *float64
	minWords           *int
	quota              *string
	neighbours         *int
	seed               *uint64
	blas               *string
}

// Harvest is what HarvestFlags parse into.
type Harvest struct {
	// Preset names the preset Method was made from (--preset), before the
	// overrides.
	Preset string
	Method method.Settings
	// Sample is the fraction of corpus sentences labeled: those whose ID
	// hash, as a fraction, lies in [SampleFrom, SampleFrom+Sample).
	Sample, SampleFrom float64
	MinWords           int
	// Quota is the pairs each sentence owns per stratum, as
	// "near:1,mid:1,far:1,random:1".
	Quota      string
	Neighbours int
	Seed       uint64
	BLAS       string
}

// RegisterHarvest adds the harvest flags to fs.
func RegisterHarvest(fs *flag.FlagSet) *HarvestFlags {
	return &HarvestFlags{
		Flags: Register(fs, "default"),
		sample: fs.Float64("sample", 1, "Fraction of corpus sentences to label, chosen by a hash of their IDs. "+
			"The default, 1, labels every sentence, at the default preset's depth the slowest run: try --sample=0.01 or --preset=small or demo first."),
		sampleFrom: fs.Float64("sample_from", 0, "Start of the sample's window of ID hashes: the sentences whose hash, as a fraction, lies in [sample_from, sample_from+sample). "+
			"Runs with windows that do not overlap label disjoint sentences."),
		minWords:   fs.Int("min_words", 4, "Sentences with fewer words are not labelled."),
		quota:      fs.String("pair_quota", "near:1,mid:1,far:1,random:1", "Pairs each sentence owns per stratum."),
		neighbours: fs.Int("pair_neighbours", 200, "Top hits of a sentence that link it to other sentences."),
		seed:       fs.Uint64("seed", 1, "Seed of the pair sampler and the random-context ablation."),
		blas:       fs.String("blas", "go", "Matrix multiply: go (batch-invariant, so runs are reproducible bit for bit) or openblas."),
	}
}

// Harvest returns the parsed harvest settings, validated (see Settings).
func (f *HarvestFlags) Harvest() (Harvest, error) {
	st, err := f.Settings()
	if err != nil {
		return Harvest{}, err
	}
	return Harvest{Preset: f.Preset(), Method: st, Sample: *f.sample, SampleFrom: *f.sampleFrom, MinWords: *f.minWords,
		Quota: *f.quota, Neighbours: *f.neighbours, Seed: *f.seed, BLAS: *f.blas}, nil
}

// Ranges are the bounds of the numeric harvest flags, for
// jobrun.CheckRanges.
func (f *HarvestFlags) Ranges() []jobrun.Range {
	return []jobrun.Range{{Name: "sample", Lo: 0, Hi: 1, Open: true}, {Name: "sample_from", Lo: 0, Hi: 1 - *f.sample},
		{Name: "min_words", Lo: 0, Hi: 1000}, {Name: "pair_neighbours", Lo: 1, Hi: 1e6}}
}
