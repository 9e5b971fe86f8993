// Package peerguard makes TCP listeners that only the user running this
// process can connect to.
//
// A local run serves Beam's job, artifact and FnAPI services and the
// workers' pool in the job's own process. None of them has
// authentication, and the job service runs the command that a submitted
// pipeline's PROCESS environment names, so whoever can connect can run
// commands as the job's user. A listener from Listen binds the loopback
// addresses only (127.0.0.1 and, where the host has it, ::1), so other
// hosts cannot connect, and its Accept hands on a connection only when the
// socket at the other end belongs to this process's user: it looks the
// peer up in the kernel's table of TCP sockets (/proc/net/tcp and tcp6,
// which list every socket of the network namespace with its owner's uid)
// and closes any connection whose peer is another user's, or cannot be
// found. Neither step needs a privilege.
//
// It needs Linux's /proc; elsewhere Listen returns ErrUnsupported.
package peerguard

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
)

// ErrUnsupported is returned by Listen where the owner of a connection's
// peer cannot be found.
var ErrUnsupported = errors.New("peerguard: finding the user at the other end of a connection is not supported on this system")

// Refusal describes a connection a Listener closed.
type Refusal struct {
	Peer netip.AddrPort
	UID  int // the peer socket's owner; -1 if it could not be found
	Err  error
}

func (r Refusal) String() string {
	if r.UID < 0 {
		return fmt.Sprintf("a connection from %s whose owner could not be found (%v)", r.Peer, r.Err)
	}
	return fmt.Sprintf("a connection from %s by uid %d", r.Peer, r.UID)
}

// Listener accepts the connections of one user on the loopback addresses.
// It is a net.Listener.
type Listener struct {
	lns     []net.Listener // IPv4 first
	uid     int
	owner   func(local, remote netip.AddrPort) (int, error)
	conns   chan net.Conn
	done    chan struct{}
	close   sync.Once
	wg      sync.WaitGroup
	refused atomic.Int64
	// OnRefuse, when set before the first connection, is called with every
	// connection the listener closes.
	OnRefuse func(Refusal)
}

// Listen listens on 127.0.0.1 and, where the host has an IPv6 loopback,
// on ::1 at the same port, the kernel choosing the port. Clients may dial
// "localhost:PORT" whichever address the name resolves to first. Only
// connections whose peer socket is owned by this process's uid are
// accepted.
func Listen() (*Listener, error) {
	return listen(os.Getuid(), peerOwner)
}

// listen is Listen with the uid to admit and the way to find a peer's
// owner given: tests use them to act as another user.
func listen(uid int, owner func(local, remote netip.AddrPort) (int, error)) (*Listener, error) {
	if err := supported(); err != nil {
		return nil, err
	}
	v4, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("peerguard: listen on 127.0.0.1: %w", err)
	}
	l := &Listener{lns: []net.Listener{v4}, uid: uid, owner: owner,
		conns: make(chan net.Conn), done: make(chan struct{})}
	port := v4.Addr().(*net.TCPAddr).Port
	// A host without IPv6 on lo cannot bind ::1; clients there resolve
	// localhost to 127.0.0.1 only.
	if v6, err := net.Listen("tcp6", fmt.Sprintf("[::1]:%d", port)); err == nil {
		l.lns = append(l.lns, v6)
	}
	for _, ln := range l.lns {
		l.wg.Add(1)
		go l.serve(ln)
	}
	return l, nil
}

// serve accepts on ln, hands on the connections of l's user and closes
// the others.
func (l *Listener) serve(ln net.Listener) {
	defer l.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			select {
			case <-l.done:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		local := c.LocalAddr().(*net.TCPAddr).AddrPort()
		remote := c.RemoteAddr().(*net.TCPAddr).AddrPort()
		uid, err := l.owner(local, remote)
		if err != nil || uid != l.uid {
			c.Close()
			l.refused.Add(1)
			if err != nil {
				uid = -1
			}
			if f := l.OnRefuse; f != nil {
				f(Refusal{Peer: remote, UID: uid, Err: err})
			}
			continue
		}
		select {
		case l.conns <- c:
		case <-l.done:
			c.Close()
			return
		}
	}
}

// Accept waits for and returns the next connection of l's user.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops listening on every address.
func (l *Listener) Close() error {
	var err error
	l.close.Do(func() {
		close(l.done)
		for _, ln := range l.lns {
			if e := ln.Close(); e != nil && err == nil {
				err = e
			}
		}
	})
	l.wg.Wait()
	return err
}

// Addr returns the IPv4 address listened on.
func (l *Listener) Addr() net.Addr { return l.lns[0].Addr() }

// Port returns the port listened on.
func (l *Listener) Port() int { return l.lns[0].Addr().(*net.TCPAddr).Port }

// Addrs returns every address listened on.
func (l *Listener) Addrs() []net.Addr {
	out := make([]net.Addr, len(l.lns))
	for i, ln := range l.lns {
		out[i] = ln.Addr()
	}
	return out
}

// Refused returns how many connections l has closed.
func (l *Listener) Refused() int64 { return l.refused.Load() }
