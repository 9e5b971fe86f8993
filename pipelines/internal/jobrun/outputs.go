package jobrun

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/ctxsim/ctxsim/storage"
)

// indexMetaName is the file that marks a directory as a chunk index
// (retrieval.MetaFile; jobrun does not import retrieval).
const indexMetaName = "ctxsim-index.json"

// CheckOutput refuses an output directory that holds a table or an index
// which job does not write itself (own names the directories it writes):
// such a directory is another job's output, and this run would replace
// the tables whose names the two jobs share (both write dead_letters/)
// and leave the rest beside its own. A harvest pointed at the index job's
// directory, for example, would replace the ingest's dead letters.
func CheckOutput(ctx context.Context, job, dir string, own ...string) error {
	if NotRun() {
		return nil
	}
	mine := map[string]bool{}
	for _, o := range own {
		mine[o] = true
	}
	fs, err := storage.New(ctx, dir)
	if err != nil {
		return fmt.Errorf("check --output=%s: %w", dir, err)
	}
	defer fs.Close()
	var foreign []string
	for _, pat := range []string{"*/" + storage.ManifestName, "*/" + indexMetaName} {
		marks, err := fs.List(ctx, storage.Join(dir, pat))
		if err != nil {
			return fmt.Errorf("check --output=%s: %w", dir, err)
		}
		for _, m := range marks {
			name := path.Base(path.Dir(strings.ReplaceAll(m, "\\", "/")))
			if !mine[name] {
				foreign = append(foreign, name+"/")
			}
		}
	}
	if len(foreign) == 0 {
		return nil
	}
	sort.Strings(foreign)
	return fmt.Errorf("--output=%s holds %s, which %s does not write: it is another job's output, and this run would replace "+
		"or sit beside its tables; give %s a directory of its own", dir, strings.Join(foreign, ", "), job, job)
}
