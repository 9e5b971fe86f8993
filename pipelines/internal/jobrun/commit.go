package jobrun

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxsim/ctxsim/storage"
)

// SummaryName is the file that commits a harvest's output directory: it is
// written last, and names the run whose tables it describes.
const SummaryName = "summary.json"

// Uncommit removes the summary and report of an earlier run from dir,
// before a new run rewrites its tables. A job only built or submitted here
// (NotRun) leaves them: it rewrites nothing from this process.
func Uncommit(ctx context.Context, dir string) error {
	if NotRun() {
		return nil
	}
	for _, name := range []string{SummaryName, "report.html"} {
		p := storage.Join(dir, name)
		if ok, err := storage.Exists(ctx, p); err != nil {
			return err
		} else if ok {
			if err := storage.RemoveAll(ctx, p); err != nil {
				return fmt.Errorf("remove the earlier run's %s: %w", p, err)
			}
		}
	}
	return nil
}

// CheckCommitted checks that the table in dir belongs to a finished run
// when dir sits in a harvest's output (beside context_sets/ or a
// summary.json): the summary must be there and name the run that wrote the
// table. Other tables are left to their manifests.
func CheckCommitted(ctx context.Context, dir string) error {
	dir = strings.TrimSuffix(dir, "/")
	parent := dir[:max(strings.LastIndex(dir, "/"), 0)]
	if parent == "" {
		parent = "."
	}
	summary := storage.Join(parent, SummaryName)
	b, err := storage.ReadFile(ctx, summary)
	if err != nil {
		if ok, _ := storage.Exists(ctx, storage.Join(parent, "context_sets/"+storage.ManifestName)); ok {
			return fmt.Errorf("%s: the harvest in %s has no %s: it did not finish (run it again)", dir, parent, SummaryName)
		}
		return nil
	}
	var sum struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		return fmt.Errorf("%s: %w", summary, err)
	}
	if sum.RunID == "" {
		return nil // written before summaries named their run
	}
	m, err := storage.CheckTable(ctx, dir)
	if err != nil {
		return err
	}
	if m.RunID != sum.RunID {
		return fmt.Errorf("%s: written by run %s, but %s describes run %s: the harvest in %s did not finish (run it again)",
			dir, m.RunID, summary, sum.RunID, parent)
	}
	return nil
}
