//go:build linux

package peerguard

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// tables are the kernel's TCP socket tables of this process's network
// namespace.
var tables = []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"}

func supported() error {
	if _, err := os.Stat(tables[0]); err != nil {
		return fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return nil
}

// peerOwner returns the uid that owns the socket at the other end of the
// connection accepted at local from remote: the socket in the kernel's
// tables whose own address is remote and whose peer is local. Such a
// socket exists while the peer holds the connection open; an IPv4 peer
// may also appear as an IPv4-mapped IPv6 socket.
func peerOwner(local, remote netip.AddrPort) (int, error) {
	same := func(a, b netip.AddrPort) bool {
		return a.Port() == b.Port() && a.Addr().Unmap() == b.Addr().Unmap()
	}
	for _, path := range tables {
		cs, err := readConns(path)
		if os.IsNotExist(err) { // no IPv6 in this kernel
			continue
		}
		if err != nil {
			return -1, err
		}
		for _, c := range cs {
			if same(c.Local, remote) && same(c.Remote, local) {
				return c.UID, nil
			}
		}
	}
	return -1, fmt.Errorf("peerguard: no socket at %s connected to %s in the kernel's TCP tables", remote, local)
}

// Conn is a TCP socket as the kernel's tables list it.
type Conn struct {
	Local, Remote netip.AddrPort
	State         string // the kernel's name: ESTABLISHED, LISTEN, ...
	UID           int    // the socket's owner
}

// tcpStates names the kernel's TCP states as /proc/net/tcp numbers them.
var tcpStates = map[string]string{
	"01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1",
	"05": "FIN_WAIT2", "06": "TIME_WAIT", "07": "CLOSE", "08": "CLOSE_WAIT",
	"09": "LAST_ACK", "0A": "LISTEN", "0B": "CLOSING", "0C": "NEW_SYN_RECV",
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
		if len(fs) < 8 {
			continue
		}
		local, err1 := parseProcAddr(fs[1])
		remote, err2 := parseProcAddr(fs[2])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("peerguard: %s: unreadable line %q", path, sc.Text())
		}
		state := tcpStates[fs[3]]
		if state == "" {
			state = fs[3]
		}
		uid, err := strconv.Atoi(fs[7])
		if err != nil {
			return nil, fmt.Errorf("peerguard: %s: unreadable uid in line %q", path, sc.Text())
		}
		out = append(out, Conn{Local: local, Remote: remote, State: state, UID: uid})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("peerguard: read %s: %w", path, err)
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
