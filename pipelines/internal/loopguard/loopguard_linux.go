//go:build linux

package loopguard

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Listeners returns the listening TCP sockets (IPv4 and IPv6) that this
// process holds open.
func Listeners() ([]Listener, error) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil, fmt.Errorf("loopguard: list open files: %w", err)
	}
	var out []Listener
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, ok := listener(fd); ok {
			out = append(out, l)
		}
	}
	return out, nil
}

// listener returns fd as a Listener when it is a listening TCP socket.
func listener(fd int) (Listener, bool) {
	if v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || v != 1 {
		return Listener{}, false
	}
	if v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE); err != nil || v != unix.SOCK_STREAM {
		return Listener{}, false
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return Listener{}, false
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return Listener{FD: fd, Addr: netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))}, true
	case *unix.SockaddrInet6:
		return Listener{FD: fd, Addr: netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port))}, true
	}
	return Listener{}, false
}

// skfNetOff is SKF_NET_OFF: a load at skfNetOff+k reads byte k of the
// packet's network (IP) header, wherever the filter's data starts.
const skfNetOff = -0x100000

// loopbackOnly is the filter: accept a packet whose IPv4 source is in
// 127.0.0.0/8 or whose IPv6 source is ::1, drop every other.
func loopbackOnly() []unix.SockFilter {
	const (
		ldb  = unix.BPF_LD | unix.BPF_B | unix.BPF_ABS
		ldw  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		rsh  = unix.BPF_ALU | unix.BPF_RSH | unix.BPF_K
		and  = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		net  = uint32(skfNetOff & 0xffffffff)
		drop = 15 // index of the drop instruction
		keep = 16 // index of the accept instruction
	)
	// jump builds a conditional jump at index i: to t when A == k, else to f.
	jump := func(i int, k uint32, t, f int) unix.SockFilter {
		return unix.SockFilter{Code: jeq, K: k, Jt: uint8(t - i - 1), Jf: uint8(f - i - 1)}
	}
	return []unix.SockFilter{
		0:  {Code: ldb, K: net + 0}, // version and header length
		1:  {Code: rsh, K: 4},
		2:  jump(2, 4, 3, 6),
		3:  {Code: ldw, K: net + 12}, // IPv4 source
		4:  {Code: and, K: 0xff000000},
		5:  jump(5, 0x7f000000, keep, drop),
		6:  jump(6, 6, 7, drop),
		7:  {Code: ldw, K: net + 8}, // IPv6 source, four words
		8:  jump(8, 0, 9, drop),
		9:  {Code: ldw, K: net + 12},
		10: jump(10, 0, 11, drop),
		11: {Code: ldw, K: net + 16},
		12: jump(12, 0, 13, drop),
		13: {Code: ldw, K: net + 20},
		14: jump(14, 1, keep, drop),
		15: {Code: ret, K: 0},
		16: {Code: ret, K: 0xffffffff},
	}
}

// Restrict attaches the loopback-only filter to the listening socket l and
// locks it there, then checks that no connection from another host reached
// the socket before the filter did. It returns an error, and the socket
// should not be used, when either fails.
func Restrict(l Listener) error {
	// The descriptor could have been closed and its number reused since
	// Listeners saw it: check it is still the same socket.
	if now, ok := listener(l.FD); !ok || now != l {
		return fmt.Errorf("loopguard: %s is no longer that listening socket", l)
	}
	prog := loopbackOnly()
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.SetsockoptSockFprog(l.FD, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fprog); err != nil {
		if p, _ := unix.GetsockoptInt(l.FD, unix.SOL_SOCKET, unix.SO_PROTOCOL); p == unix.IPPROTO_MPTCP {
			return fmt.Errorf("loopguard: %s is a Multipath TCP socket, which takes no socket filter (run with GODEBUG=multipathtcp=0, as go.mod sets for this module's binaries): %w", l, err)
		}
		return fmt.Errorf("loopguard: attach the filter to %s: %w", l, err)
	}
	if err := unix.SetsockoptInt(l.FD, unix.SOL_SOCKET, unix.SO_LOCK_FILTER, 1); err != nil {
		return fmt.Errorf("loopguard: lock the filter on %s: %w", l, err)
	}
	conns, err := Conns(l.Addr.Port())
	if err != nil {
		return err
	}
	for _, c := range conns {
		if !Loopback(c.Remote.Addr()) {
			return fmt.Errorf("loopguard: %s already has a connection from %s (%s), made before it was restricted to this host", l, c.Remote, c.State)
		}
	}
	return nil
}

// tcpStates names the kernel's TCP states as /proc/net/tcp numbers them.
var tcpStates = map[string]string{
	"01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1",
	"05": "FIN_WAIT2", "06": "TIME_WAIT", "07": "CLOSE", "08": "CLOSE_WAIT",
	"09": "LAST_ACK", "0A": "LISTEN", "0B": "CLOSING", "0C": "NEW_SYN_RECV",
}

// Conns returns the TCP connections in this process's network namespace
// whose local port is port, listening sockets left out (from
// /proc/self/net/tcp and tcp6).
func Conns(port uint16) ([]Conn, error) {
	var out []Conn
	for _, f := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		cs, err := readConns(f)
		if os.IsNotExist(err) { // no IPv6 in this kernel
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			if c.Local.Port() == port && c.State != "LISTEN" {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// readConns parses one of the kernel's TCP tables.
func readConns(path string) ([]Conn, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Conn
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 4 {
			continue
		}
		local, err1 := parseProcAddr(fs[1])
		remote, err2 := parseProcAddr(fs[2])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("loopguard: %s: unreadable line %q", path, sc.Text())
		}
		state := tcpStates[fs[3]]
		if state == "" {
			state = fs[3]
		}
		out = append(out, Conn{Local: local, Remote: remote, State: state})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("loopguard: read %s: %w", path, err)
	}
	return out, nil
}

// parseProcAddr parses "0100007F:1F90" (IPv4) or 32 hex digits and a port
// (IPv6): the address is printed as 32-bit words in host byte order.
func parseProcAddr(s string) (netip.AddrPort, error) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("no port in %q", s)
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, err
	}
	raw, err := hex.DecodeString(h)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", h)
	}
	ip := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		// The hex digits are the word's value; its bytes in memory, in
		// the host's order, are the address's bytes in network order.
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:i+4]))
	}
	a, _ := netip.AddrFromSlice(ip)
	return netip.AddrPortFrom(a, uint16(port)), nil
}
