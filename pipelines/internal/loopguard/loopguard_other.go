//go:build !linux

package loopguard

// Listeners returns nothing where sockets cannot be restricted.
func Listeners() ([]Listener, error) { return nil, nil }

// Restrict returns ErrUnsupported: only Linux has socket filters.
func Restrict(Listener) error { return ErrUnsupported }

// Conns returns nothing where sockets cannot be restricted.
func Conns(uint16) ([]Conn, error) { return nil, nil }
