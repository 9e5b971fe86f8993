// Package ctxsimsvc starts Beam's Prism job service in this process on a
// listener of the caller's, instead of the wildcard TCP port Prism opens
// for itself.
//
// Prism (Beam's Go SDK, runners/prism) exposes no setting for the address
// its job service listens on: jobservices.NewServer binds ":PORT" on every
// interface, and the service, which has no authentication, also runs the
// command a submitted pipeline's PROCESS environment names. ctxsim wants
// the service reachable by the user who started the job and nobody else,
// so it serves Prism's gRPC services on a listener it makes itself
// (package pipelines/internal/peerguard).
//
// The package lives in a module of ctxsim's own whose path is under
// .../runners/prism: Go's rule for internal packages is by import path,
// so this package may import Prism's internal packages. It copies none of
// Prism's code. It creates Prism's server with jobservices.NewServer,
// closes the wildcard socket that call opened before anything accepted on
// it, and sets the two fields of the server that name its listener (the
// server's listener, and the address its FnAPI multiplexer gives workers)
// to the caller's listener, by name and type through package reflect. If a
// Beam release renames or retypes them, Serve returns an error and nothing
// is served.
package ctxsimsvc

import (
	"errors"
	"fmt"
	"net"
	"reflect"
	"unsafe"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism/internal"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism/internal/jobservices"
)

// Serve starts Prism's job management, artifact and FnAPI services on lis,
// which must be a TCP listener, and returns a function that stops them.
// Clients and workers reach the service at "localhost:PORT", PORT being
// lis's port, the address Prism itself reports.
func Serve(lis net.Listener) (stop func(), err error) {
	addr, ok := lis.Addr().(*net.TCPAddr)
	if !ok {
		return nil, fmt.Errorf("ctxsimsvc: listener on %v is not TCP", lis.Addr())
	}
	s, err := newServer()
	if err != nil {
		return nil, err
	}
	v := reflect.ValueOf(s).Elem()
	lisField, err := field(v, "lis", reflect.TypeFor[net.Listener]())
	if err != nil {
		return nil, err
	}
	wildcard := lisField.Interface().(net.Listener)
	mw, err := field(v, "mw", nil)
	if err != nil {
		wildcard.Close()
		return nil, err
	}
	if mw.Kind() != reflect.Pointer || mw.IsNil() {
		wildcard.Close()
		return nil, errors.New("ctxsimsvc: Prism's server has no FnAPI multiplexer")
	}
	endpoint, err := field(mw.Elem(), "endpoint", reflect.TypeFor[string]())
	if err != nil {
		wildcard.Close()
		return nil, err
	}
	// Nothing has called Accept on the wildcard socket: closing it resets
	// whatever the kernel queued in the moments it was open.
	if err := wildcard.Close(); err != nil {
		return nil, fmt.Errorf("ctxsimsvc: close Prism's own listener: %w", err)
	}
	lisField.Set(reflect.ValueOf(&lis).Elem())
	endpoint.SetString(fmt.Sprintf("localhost:%d", addr.Port))
	if got := s.Endpoint(); got != endpoint.String() {
		return nil, fmt.Errorf("ctxsimsvc: Prism's server reports endpoint %s, want %s", got, endpoint.String())
	}
	go s.Serve()
	return s.Stop, nil
}

// newServer calls jobservices.NewServer, turning the panic it raises when
// it cannot listen into an error.
func newServer() (s *jobservices.Server, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("ctxsimsvc: start Prism's server: %v", r)
		}
	}()
	return jobservices.NewServer(0, internal.RunPipeline), nil
}

// field returns the settable field name of the struct v, checking its type
// when want is not nil.
func field(v reflect.Value, name string, want reflect.Type) (reflect.Value, error) {
	f := v.FieldByName(name)
	if !f.IsValid() {
		return reflect.Value{}, fmt.Errorf("ctxsimsvc: %s has no field %s: this Beam release's Prism is not one ctxsim knows", v.Type(), name)
	}
	if want != nil && f.Type() != want {
		return reflect.Value{}, fmt.Errorf("ctxsimsvc: %s.%s is a %s, want %s: this Beam release's Prism is not one ctxsim knows", v.Type(), name, f.Type(), want)
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem(), nil
}
