package harvest

import (
	"fmt"
	"math"
	"strings"
	"syscall"

	"github.com/ctxsim/ctxsim/scoring/method"
)

// Summary is the summary.json of a harvest, written by bin/harvest and by
// each bin/refresh version: what was labeled, how the labels spread, and
// what it cost.
type Summary struct {
	// RunID is the run that wrote the summary and every table it
	// describes (their manifests carry the same ID).
	RunID string `json:"run_id,omitempty"`
	// Version is the refresh version the harvest belongs to (refresh only).
	Version          string          `json:"version,omitempty"`
	Settings         method.Settings `json:"settings"`
	Pairs            PairConfig      `json:"pair_sampler"`
	ModelFingerprint string          `json:"model_fingerprint"`
	IndexFingerprint string          `json:"index_fingerprint"`
	Runner           string          `json:"runner"`
	// Waves is the number of pipelines the harvest ran in (bin/harvest
	// --waves); 0 or 1 is one.
	Waves int `json:"waves,omitempty"`
	// WavesResumed is the number of those waves an earlier, unfinished run
	// of the same harvest had completed, which this one took over: their
	// time is counted in Seconds and CPUSeconds.
	WavesResumed int `json:"waves_resumed,omitempty"`
	// CorpusParts is the number of parts the corpus was split into
	// (--corpus_parts; 1 for none).
	CorpusParts int     `json:"corpus_parts,omitempty"`
	Seconds     float64 `json:"seconds"`
	// CPUSeconds is the job process's CPU time (user and system), which
	// holds the workers' when they run in the process (Prism's loopback).
	CPUSeconds float64 `json:"cpu_seconds"`

	SentencesKept    int64   `json:"sentences_kept"`
	SentencesShort   int64   `json:"sentences_too_short"`
	Queries          int64   `json:"sentences_retrieved"`
	ContextSets      int64   `json:"context_sets"`
	ContextSetsEmpty int64   `json:"context_sets_empty"`
	SetsReused       int64   `json:"context_sets_reused"`
	MeanSetSize      float64 `json:"mean_set_size"`
	// Labeled pairs were computed, Copied ones kept from the parent version
	// (refresh); Pairs is their sum.
	Labeled   int64            `json:"pairs_labeled"`
	Copied    int64            `json:"labels_copied"`
	Total     int64            `json:"pairs"`
	ByStratum map[string]int64 `json:"pairs_by_stratum"`
	// ByStratum and LabelHistogram count every pair of the output, labeled
	// or copied; the histogram has 20 bins of width 0.1 over [-1, 1], in
	// increasing order.
	LabelHistogram []HistogramBin `json:"label_histogram"`

	// StageSeconds are worker-seconds per stage: the wall time each DoFn
	// spent in its elements, summed over every worker, including those
	// running at once. They say how the work splits between the stages,
	// not how long a stage took: a runner with more workers than cores
	// (Prism runs many bundles at once) makes them exceed the run's wall
	// time × cores. CPUSeconds is the run's cost.
	StageSeconds map[string]float64 `json:"stage_seconds"`
	// GenEvals counts the infilling model's evaluations and CtxPairs the
	// contrastive model's (sentence, context) scores, per stage.
	GenEvals        map[string]int64 `json:"gen_evals"`
	GenEvalsPerPair float64          `json:"gen_evals_per_pair"`
	CtxPairs        map[string]int64 `json:"ctx_pairs"`
	// CPUSecondsPerPair is CPUSeconds over the pairs labeled (not those
	// copied), and CoreHours100M its projection to 100M labeled pairs.
	CPUSecondsPerPair float64 `json:"cpu_seconds_per_pair"`
	CoreHours100M     float64 `json:"core_hours_per_100m_pairs"`
	// Export describes the training-ready export of the pairs.
	Export ExportSummary `json:"export"`
	// Provenance is what the harvest was made from and by what; the
	// files of its tables carry the same in their metadata.
	Provenance *Provenance      `json:"provenance,omitempty"`
	Counters   map[string]int64 `json:"counters"`
}

// ExportSummary describes a harvest's export of its pairs for training
// (Export): where its tables are, their columns, how the score is made
// from the label, and the pairs of each split.
type ExportSummary struct {
	// Dirs are the tables' directories under the output, by split:
	// "train", "dev", "test".
	Dirs    map[string]string `json:"dirs"`
	Columns []string          `json:"columns"`
	Score   string            `json:"score"`
	Pairs   map[string]int64  `json:"pairs"`
}

// HistogramBin is one bin of the label histogram: labels in [Lo, Hi).
type HistogramBin struct {
	Bin   string  `json:"bin"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Pairs int64   `json:"pairs"`
}

// Summarize builds the summary of a harvest from its counters (as
// "namespace/name"), its settings and provenance, and its wall time.
func Summarize(c map[string]int64, st method.Settings, pc PairConfig, modelFP, indexFP, runner string, seconds, cpu float64) Summary {
	s := Summary{Settings: st, Pairs: pc, ModelFingerprint: modelFP, IndexFingerprint: indexFP,
		Runner: runner, Seconds: seconds, CPUSeconds: cpu,
		SentencesKept: c["harvest/sentences_kept"], SentencesShort: c["harvest/sentences_too_short"],
		Queries: c["retrieve/queries"], ContextSets: c["harvest/context_sets"],
		ContextSetsEmpty: c["harvest/context_sets_empty"], SetsReused: c["refresh/context_sets_reused"],
		Labeled: c["harvest/pairs_labeled"], Copied: c["refresh/labels_copied"],
		ByStratum: map[string]int64{},
		StageSeconds: map[string]float64{
			"context_sets": float64(c["harvest/stage_ms_context_sets"]) / 1000,
			"labels":       float64(c["harvest/stage_ms_labels"]) / 1000,
		},
		GenEvals: map[string]int64{
			"context_sets": c["harvest/gen_evals_context_sets"],
			"labels":       c["harvest/gen_evals_labels"],
		},
		CtxPairs: map[string]int64{
			"context_sets": c["harvest/ctx_pairs_context_sets"],
			"labels":       c["harvest/ctx_pairs_labels"],
		},
		Export: ExportSummary{Dirs: map[string]string{}, Columns: []string{"sentence1", "sentence2", "score"},
			Score: ScoreMapping, Pairs: map[string]int64{}},
		Counters: c,
	}
	for _, sp := range Splits {
		s.Export.Dirs[sp] = exportTable(sp)
		s.Export.Pairs[sp] = c["export/pairs_"+sp]
	}
	s.Total = s.Labeled + s.Copied
	if s.ContextSets > 0 {
		s.MeanSetSize = float64(c["harvest/selected_contexts"]) / float64(s.ContextSets)
	}
	for _, name := range Strata {
		s.ByStratum[name] = c["harvest/pairs_"+name]
	}
	for i := range 20 {
		lo := -1 + float64(i)/10
		s.LabelHistogram = append(s.LabelHistogram, HistogramBin{Bin: HistBin(i), Lo: math.Round(lo*10) / 10,
			Hi: math.Round((lo+0.1)*10) / 10, Pairs: c["harvest_label_hist/"+HistBin(i)]})
	}
	if s.Labeled > 0 {
		s.GenEvalsPerPair = float64(s.GenEvals["context_sets"]+s.GenEvals["labels"]) / float64(s.Labeled)
		s.CPUSecondsPerPair = cpu / float64(s.Labeled)
		s.CoreHours100M = s.CPUSecondsPerPair * 1e8 / 3600
	}
	return s
}

// StrataLine lists the pairs per stratum, "near 12, mid 30, ...".
func (s Summary) StrataLine() string {
	out := ""
	for i, name := range Strata {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%s %d", name, s.ByStratum[name])
	}
	return out
}

// ProcessCPUSeconds is the CPU time this process has used so far.
func ProcessCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// PerSentenceCounter reports whether the counter name ("namespace/name")
// counts per sentence, not per pair: every wave of a harvest (see Wave)
// counts it again in full.
func PerSentenceCounter(name string) bool {
	return strings.HasPrefix(name, "retrieve/") || strings.HasPrefix(name, "harvest/sentences_") ||
		name == "parquetio/rows_read"
}
