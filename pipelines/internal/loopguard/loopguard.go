// Package loopguard keeps a listening TCP socket that some other code
// opened on every interface to connections from this host.
//
// Beam's Prism runner starts its job management service in-process and
// listens on the wildcard address, with no option to choose another; the
// service is unauthenticated and runs the command a submitted pipeline's
// PROCESS environment names. The job cannot change where Prism binds, so it
// finds the socket Prism opened and attaches a classic BPF socket filter
// (SO_ATTACH_FILTER, no privilege needed) that drops every packet whose
// source address is not a loopback address: a SYN from another host is
// dropped before a connection exists, and the peer's connect times out.
// The filter is locked (SO_LOCK_FILTER) so that nothing in the process can
// take it off. Connections made before the filter was attached are not
// affected by it, so Restrict also refuses a socket that already has a
// connection from elsewhere.
//
// Only Linux has socket filters; elsewhere Restrict returns ErrUnsupported.
package loopguard

import (
	"errors"
	"fmt"
	"net/netip"
)

// ErrUnsupported is returned by Restrict where the operating system has no
// socket filters.
var ErrUnsupported = errors.New("loopguard: restricting a socket to this host is not supported on this system")

// Listener is a listening TCP socket of this process.
type Listener struct {
	FD   int            // file descriptor
	Addr netip.AddrPort // bound address; unspecified for all interfaces
}

// String formats l as "fd N at ADDR".
func (l Listener) String() string { return fmt.Sprintf("fd %d at %s", l.FD, l.Addr) }

// Conn is a TCP connection seen by the kernel.
type Conn struct {
	Local, Remote netip.AddrPort
	State         string // the kernel's name: ESTABLISHED, SYN_RECV, ...
}

// Loopback reports whether a is a loopback address, counting IPv4
// addresses mapped into IPv6 (::ffff:127.0.0.1).
func Loopback(a netip.Addr) bool { return a.Unmap().IsLoopback() }

// NewListeners returns the listening TCP sockets of this process that are
// open now and were not in before (a result of Listeners).
func NewListeners(before []Listener) ([]Listener, error) {
	now, err := Listeners()
	if err != nil {
		return nil, err
	}
	seen := map[Listener]bool{}
	for _, l := range before {
		seen[l] = true
	}
	var out []Listener
	for _, l := range now {
		if !seen[l] {
			out = append(out, l)
		}
	}
	return out, nil
}
