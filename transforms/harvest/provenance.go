package harvest

import (
	"encoding/json"
	"runtime/debug"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
)

// Provenance is what a harvest's tables were made from and by what: its
// inputs as given (local paths made absolute), its settings, its sample,
// the tool's build and the command line. The harvest records it in
// summary.json and, as JSON, in the key/value metadata of every file of
// its tables (schemas.MetaProvenanceKey), so that a file copied away from
// its summary still says where it came from.
type Provenance struct {
	// RunID is the run that wrote the tables (their manifests name it).
	RunID string `json:"run_id"`
	// Tool is the build of the program that ran the harvest.
	Tool Tool `json:"tool"`
	// Command is the command line, the program first.
	Command []string `json:"command"`
	// Inputs are bin/refresh's corpus globs (refresh only), Version the
	// refresh version.
	Inputs  []string `json:"inputs,omitempty"`
	Version string   `json:"version,omitempty"`
	// Corpus is --corpus, the index job's output, when given; Sentences,
	// Index and Chunks the tables and index read (from Corpus unless given
	// apart); Vectors the stored sentence vectors loaded, if any; Model
	// the models (empty under the lexical labeler); Output the harvest's
	// output.
	Corpus    string `json:"corpus,omitempty"`
	Sentences string `json:"sentences"`
	Index     string `json:"index"`
	Chunks    string `json:"chunks"`
	Vectors   string `json:"vectors,omitempty"`
	Model     string `json:"model,omitempty"`
	Output    string `json:"output"`
	// ModelFingerprint and IndexFingerprint identify the models and the
	// index by their contents.
	ModelFingerprint string `json:"model_fingerprint,omitempty"`
	IndexFingerprint string `json:"index_fingerprint"`
	// Preset is --preset; Labeler the labeler of the effective Settings
	// (the preset with the command line's overrides).
	Preset   string          `json:"preset"`
	Labeler  string          `json:"labeler"`
	Settings method.Settings `json:"settings"`
	Pairs    PairConfig      `json:"pair_sampler"`
	// Sample and SampleFrom are the sample's window of sentence-ID hashes,
	// [SampleFrom, SampleFrom+Sample) (--sample, --sample_from); Seed
	// seeds the pair sampler (--seed); MinWords is --min_words.
	Sample     float64 `json:"sample"`
	SampleFrom float64 `json:"sample_from"`
	Seed       uint64  `json:"seed"`
	MinWords   int     `json:"min_words"`
	BLAS       string  `json:"blas,omitempty"`
	// Schema is the schema version of the tables (schemas.Version).
	Schema string `json:"schema_version"`
}

// Tool is a program's build, from its build information
// (runtime/debug.ReadBuildInfo): the main module's path and version
// ("(devel)" for a build from a work tree) and the VCS revision and
// whether the work tree had local changes. A build with -buildvcs=false
// (GOFLAGS in many CI images) records no revision in its build
// information; `make build` then stamps it (see stampedRevision), and
// Revision is UnknownRevision when neither did.
type Tool struct {
	Module    string `json:"module,omitempty"`
	Version   string `json:"version,omitempty"`
	Revision  string `json:"vcs_revision,omitempty"`
	Time      string `json:"vcs_time,omitempty"`
	Modified  *bool  `json:"vcs_modified,omitempty"`
	GoVersion string `json:"go_version,omitempty"`
}

// UnknownRevision is Tool.Revision for a build that recorded no revision.
const UnknownRevision = "unknown"

// stampedRevision and stampedModified are set by the Makefile's build
// (-ldflags -X) to `git rev-parse HEAD` and to "true" or "false" for local
// changes, so that a build with -buildvcs=false still names its source.
// The build information's own revision, when there is one, comes first.
var stampedRevision, stampedModified string

// ThisTool is the build of the running program.
func ThisTool() Tool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return toolOf(bi, stampedRevision, stampedModified)
}

// toolOf is the Tool of build information bi (nil when there is none)
// and of the Makefile's stamp.
func toolOf(bi *debug.BuildInfo, revision, modified string) Tool {
	var t Tool
	if bi != nil {
		t = Tool{Module: bi.Main.Path, Version: bi.Main.Version, GoVersion: bi.GoVersion}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				t.Revision = s.Value
			case "vcs.time":
				t.Time = s.Value
			case "vcs.modified":
				m := s.Value == "true"
				t.Modified = &m
			}
		}
	}
	if t.Revision == "" && revision != "" {
		t.Revision = revision
		if modified == "true" || modified == "false" {
			m := modified == "true"
			t.Modified = &m
		}
	}
	if t.Revision == "" {
		t.Revision = UnknownRevision
	}
	return t
}

// NewProvenance is the provenance of the harvest of spec with the given
// preset, filled from the spec: the caller adds the inputs as given, the
// run, the command line and the output.
func NewProvenance(spec Spec, preset string) Provenance {
	return Provenance{
		Tool: ThisTool(), Schema: schemas.Version,
		Index: spec.Paths.Index, Chunks: spec.Paths.Chunks, Vectors: spec.Paths.Vectors,
		Model: spec.Paths.Models, ModelFingerprint: spec.ModelFingerprint, IndexFingerprint: spec.IndexFingerprint,
		Preset: preset, Labeler: spec.Settings.Labeler, Settings: spec.Settings, Pairs: spec.Pairs,
		Sample: spec.Sample, SampleFrom: spec.SampleFrom, Seed: spec.Seed, MinWords: spec.MinWords, BLAS: spec.BLAS,
	}
}

// Metadata is the key/value metadata of the harvest's files: the
// provenance as JSON.
func (p Provenance) Metadata() (map[string]string, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return map[string]string{schemas.MetaProvenanceKey: string(b)}, nil
}
