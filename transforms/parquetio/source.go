package parquetio

import (
	"context"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/beamreg"
	"github.com/ctxsim/ctxsim/transforms/counter"
)

func init() {
	beamreg.DoFn(&globFn{})
	register.Emitter1[string]()
	beamreg.DoFn(&readFn{})
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
	files, err := storage.Glob(ctx, pattern)
	if err != nil {
		return err
	}
	for _, p := range files {
		emit(p)
	}
	return nil
}

type readFn struct {
	Type beam.EncodedType

	rows counter.Counter
}

func (f *readFn) Setup() {
	f.rows = counter.New("parquetio", "rows_read")
}

func (f *readFn) ProcessElement(ctx context.Context, name string, emit func(beam.T)) error {
	n, err := storage.ReadRows(ctx, name, f.Type.T, func(v any) error {
		emit(v)
		return nil
	})
	f.rows.Inc(ctx, n)
	return err
}
