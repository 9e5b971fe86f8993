package jobrun

import (
	"context"
	"fmt"

	"github.com/ctxsim/ctxsim/pipelines/internal/report"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

// Limits on what a harvest report reads back: a large harvest is shown
// through a sample of its tables.
const (
	reportPairs = 200000
	reportSets  = 5000
)

// WriteHarvestReport writes dir/report.html for the harvest in dir (its
// pairs/, context_sets/ and summary.json), with context text from the
// chunks table (chunksGlob: its Parquet files), and returns the report's
// path.
func WriteHarvestReport(ctx context.Context, title, dir, chunksGlob string, summary []byte, reuse *report.ReuseInput) (string, error) {
	return WriteHarvestReportOf(ctx, title, dir, HarvestInputs{Chunks: chunksGlob}, summary, reuse)
}

// HarvestInputs are the inputs of a harvest that its report names (in the
// command that evaluates its labels); Chunks is also read for the text of
// the contexts shown.
type HarvestInputs struct {
	Index, Chunks, Model string
}

// WriteHarvestReportOf is WriteHarvestReport for a harvest whose inputs
// are known.
func WriteHarvestReportOf(ctx context.Context, title, dir string, inputs HarvestInputs, summary []byte, reuse *report.ReuseInput) (string, error) {
	chunksGlob := inputs.Chunks
	in := report.HarvestInput{Title: title, Output: dir, Summary: summary, Reuse: reuse, ShowSets: 3,
		Index: inputs.Index, Chunks: inputs.Chunks, Model: inputs.Model}
	if err := storage.ScanTable(ctx, storage.Join(dir, "pairs"), func(p schemas.LabeledPair) bool {
		in.Pairs = append(in.Pairs, p)
		return len(in.Pairs) < reportPairs
	}); err != nil {
		return "", err
	}
	if err := storage.ScanTable(ctx, storage.Join(dir, "context_sets"), func(c schemas.ContextSet) bool {
		in.Sets = append(in.Sets, c)
		return len(in.Sets) < reportSets
	}); err != nil {
		return "", err
	}
	if len(in.Pairs) == reportPairs || len(in.Sets) == reportSets {
		in.SampleNote = fmt.Sprintf("The quality panel, plots and examples use the first %d pairs and %d context sets of the tables (in file order), a sample of a larger harvest.",
			len(in.Pairs), len(in.Sets))
	}
	// The text of the contexts shown: the chunks they come from.
	need := map[string]bool{}
	for _, cs := range report.ShownSets(in.Sets, in.ShowSets) {
		for _, c := range cs.Contexts {
			need[c.ChunkID] = true
		}
	}
	chunks := map[string]schemas.Chunk{}
	if len(need) > 0 {
		if err := storage.ScanGlob(ctx, chunksGlob, func(c schemas.Chunk) bool {
			if need[c.ID] {
				chunks[c.ID] = c
			}
			return len(chunks) < len(need)
		}); err != nil {
			return "", err
		}
	}
	in.Context = func(id string, slot int32) (left, right []string, ok bool) {
		c, ok := chunks[id]
		if !ok || int(slot) >= len(c.Sentences) {
			return nil, nil, false
		}
		return c.Sentences[max(0, int(slot)-2):slot], c.Sentences[slot+1 : min(len(c.Sentences), int(slot)+3)], true
	}
	r, err := report.Harvest(in)
	if err != nil {
		return "", err
	}
	path := storage.Join(dir, "report.html")
	return path, storage.WriteFile(ctx, path, r.HTML())
}
