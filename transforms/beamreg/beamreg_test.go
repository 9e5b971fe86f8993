package beamreg

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime"
)

type inRecord struct{ A string }
type outRecord struct{ B int }
type emittedRecord struct{ C string }
type sideRecord struct{ D string }

type testFn struct{ Shards int }

func (f *testFn) ProcessElement(_ context.Context, in inRecord, side *sideRecord, _ func(emittedRecord)) (outRecord, error) {
	return outRecord{B: len(in.A) + len(side.D)}, nil
}

type notADoFn struct{}

func registered(t reflect.Type) bool {
	key, ok := runtime.TypeKey(t)
	if !ok {
		return false
	}
	got, ok := runtime.LookupType(key)
	return ok && got == t
}

func TestDoFnRegistersTheDoFnAndItsStructParameters(t *testing.T) {
	DoFn(&testFn{})
	for _, typ := range []reflect.Type{
		reflect.TypeOf(testFn{}),
		reflect.TypeOf(inRecord{}),
		reflect.TypeOf(sideRecord{}), // given as a pointer
		reflect.TypeOf(outRecord{}),
	} {
		if !registered(typ) {
			t.Errorf("%v is not registered", typ)
		}
	}
	// As with Beam's register.DoFnNxM, the records of emitters and
	// iterators are registered by their own calls (register.EmitterN).
	if registered(reflect.TypeOf(emittedRecord{})) {
		t.Errorf("%v is registered, but only ProcessElement's direct parameters should be", reflect.TypeOf(emittedRecord{}))
	}
}

func TestDoFnPanicsOnWhatIsNotAStructuralDoFn(t *testing.T) {
	for name, fn := range map[string]any{
		"struct value":          testFn{},
		"no ProcessElement":     &notADoFn{},
		"function":              func(int) int { return 0 },
		"pointer to non-struct": new(int),
		"nil":                   nil,
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("DoFn(%T) did not panic", fn)
				}
			}()
			DoFn(fn)
		})
	}
}

// TestNoGenericDoFnRegistration keeps Beam's register.DoFnNxM out of the
// module: each call makes the compiler build about 5,000 generic wrappers,
// and 25 of them in transforms/harvest took 7.2 GB and three minutes to
// compile. Use DoFn instead.
func TestNoGenericDoFnRegistration(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", ".git", "out", "bin", "tmp":
				if path != root {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "register" && strings.HasPrefix(sel.Sel.Name, "DoFn") {
				found = append(found, fset.Position(sel.Pos()).String()+": register."+sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Errorf("Beam's generic DoFn registration is used; register with beamreg.DoFn instead:\n%s", strings.Join(found, "\n"))
	}
}
