// Package beamreg registers ctxsim's structural DoFns with Beam at a small
// fraction of the compile cost of Beam's generic register.DoFnNxM.
//
// register.DoFnNxM instantiates, for every DoFn it is given, generic
// wrappers for each StartBundle and FinishBundle signature Beam accepts,
// over ten type parameters: about 5,000 functions per DoFn. The 25 DoFns
// of transforms/harvest made the compiler build 132,731 functions into a
// 769 MB object and peak at 7.2 GB of memory (bench/results.txt). Register
// records what Beam needs to run a DoFn on any runner (the DoFn's type and
// the struct types its ProcessElement takes and returns, for serialisation
// and schema coders) and leaves the method calls to Beam's reflection path
// (graph.NewFn wraps each lifecycle method with reflectx.MakeFunc): the
// demo's harvest took the same CPU time before and after. Emitters and
// iterators stay registered with register.EmitterN and register.IterN,
// which are cheap to compile.
package beamreg

import (
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// DoFn registers a structural DoFn, given as a pointer to its struct, and
// the struct types of its ProcessElement's parameters and results. It
// panics, as Beam's registrations do, when fn is not a pointer to a struct
// with a ProcessElement method. Call it from init.
func DoFn(fn any) {
	t := reflect.TypeOf(fn)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("beamreg.DoFn: %T is not a pointer to a struct", fn))
	}
	m, ok := t.MethodByName("ProcessElement")
	if !ok {
		panic(fmt.Sprintf("beamreg.DoFn: %v has no ProcessElement method", t))
	}
	beam.RegisterType(t.Elem())
	mt := m.Type // the receiver is its first parameter
	for i := 1; i < mt.NumIn(); i++ {
		registerStruct(mt.In(i))
	}
	for i := 0; i < mt.NumOut(); i++ {
		registerStruct(mt.Out(i))
	}
}

func registerStruct(t reflect.Type) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		beam.RegisterType(t)
	}
}
