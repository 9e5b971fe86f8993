package repocheck

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/ctxsim/ctxsim/"

// above lists, for each floor of the design's layers (pipelines →
// transforms → retrieval | scoring → schemas), the top-level directories
// its packages must not import.
var above = map[string][]string{
	"schemas":    {"storage", "resources", "retrieval", "scoring", "transforms", "pipelines"},
	"scoring":    {"resources", "retrieval", "transforms", "pipelines"},
	"retrieval":  {"resources", "transforms", "pipelines"},
	"transforms": {"pipelines"},
}

// TestNoUpwardImports checks that no package (tests aside) imports a
// package of a layer above its own.
func TestNoUpwardImports(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	checked := 0
	for floor, banned := range above {
		err := filepath.WalkDir(filepath.Join(root, floor), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			checked++
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				rest, ok := strings.CutPrefix(p, module)
				if !ok {
					continue
				}
				top, _, _ := strings.Cut(rest, "/")
				for _, b := range banned {
					if top == b {
						t.Errorf("%s imports %s, a layer above %s", path, p, floor)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 50 {
		t.Fatalf("only %d files checked", checked)
	}
}
