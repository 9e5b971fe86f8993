package parquetio

import (
	"context"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/parquet-go/parquet-go"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/transforms/counter"
)

func init() {
	register.DoFn3x1[context.Context, string, func(string), error](&globFn{})
	register.Emitter1[string]()
	register.DoFn3x1[context.Context, string, func(beam.T), error](&readFn{})
	register.Emitter1[beam.T]()
}

// Read reads the Parquet files matching pattern (a glob, local or gs://) as
// records of type t. Every file must carry this project's schema version.
func Read(s beam.Scope, pattern string, t reflect.Type) beam.PCollection {
	s = s.Scope("parquetio.Read")
	files := beam.Reshuffle(s, MatchFiles(s, []string{pattern}))
	return beam.ParDo(s, &readFn{Type: beam.EncodedType{T: t}}, files, beam.TypeDefinition{Var: beam.TType, T: t})
}

// MatchFiles expands globs (local or gs://) into the file names they match,
// with Glob's rules: a glob that matches no file fails the job.
func MatchFiles(s beam.Scope, patterns []string) beam.PCollection {
	return beam.ParDo(s.Scope("MatchFiles"), &globFn{}, beam.CreateList(s, patterns))
}

// globFn expands a glob into file names, sorted. A glob matching no file is
// an error: a misspelt input must not silently produce an empty result.
type globFn struct{}

func (f *globFn) ProcessElement(ctx context.Context, pattern string, emit func(string)) error {
	files, err := Glob(ctx, pattern)
	if err != nil {
		return err
	}
	for _, p := range files {
		emit(p)
	}
	return nil
}

// Glob lists the files matching pattern, sorted, skipping the temporary
// files and manifests that Write leaves beside its output. It fails when
// none match.
func Glob(ctx context.Context, pattern string) ([]string, error) {
	fs, err := filesystem.New(ctx, pattern)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	all, err := fs.List(ctx, pattern)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", pattern, err)
	}
	var files []string
	for _, p := range all {
		base := p[strings.LastIndex(p, "/")+1:]
		if strings.HasPrefix(base, ".tmp-") || base == ManifestName {
			continue
		}
		files = append(files, p)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no files match %s", pattern)
	}
	sort.Strings(files)
	return files, nil
}

type readFn struct {
	Type beam.EncodedType

	rows counter.Counter
}

func (f *readFn) Setup() {
	f.rows = counter.New("parquetio", "rows_read")
}

func (f *readFn) ProcessElement(ctx context.Context, name string, emit func(beam.T)) error {
	n, err := ReadFile(ctx, name, f.Type.T, func(v any) error {
		emit(v)
		return nil
	})
	f.rows.Inc(ctx, n)
	return err
}

// ReadFile reads every row of one Parquet file (local or remote) as values
// of type t and passes them to fn. Remote files are copied to a local
// temporary file first, since Parquet needs random access.
func ReadFile(ctx context.Context, name string, t reflect.Type, fn func(any) error) (int64, error) {
	local := name
	if strings.Contains(name, "://") {
		tmp, err := fetch(ctx, name)
		if err != nil {
			return 0, err
		}
		defer os.Remove(tmp)
		local = tmp
	}
	fh, err := os.Open(local)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return 0, err
	}
	pf, err := parquet.OpenFile(fh, st.Size())
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	if err := schemas.CheckVersion(pf); err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	r := parquet.NewReader(fh, parquet.SchemaOf(reflect.New(t).Interface()))
	defer r.Close()
	var n int64
	for {
		v := reflect.New(t)
		if err := r.Read(v.Interface()); err == io.EOF {
			return n, nil
		} else if err != nil {
			return n, fmt.Errorf("%s: row %d: %w", name, n, err)
		}
		if err := fn(v.Elem().Interface()); err != nil {
			return n, err
		}
		n++
	}
}

func fetch(ctx context.Context, name string) (string, error) {
	fs, err := filesystem.New(ctx, name)
	if err != nil {
		return "", err
	}
	defer fs.Close()
	rc, err := fs.OpenRead(ctx, name)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	tmp, err := os.CreateTemp("", "ctxsim-*.parquet")
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(tmp, rc); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", fmt.Errorf("fetch %s: %w", name, err)
	}
	return tmp.Name(), tmp.Close()
}
