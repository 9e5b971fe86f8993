//go:build linux

package peerguard

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestParseProcAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:1F90":                         "127.0.0.1:8080",
		"00000000:0000":                         "0.0.0.0:0",
		"0200000A:0050":                         "10.0.0.2:80",
		"00000000000000000000000001000000:0016": "[::1]:22",
		"0000000000000000FFFF00000100007F:1F90": "[::ffff:127.0.0.1]:8080",
		"B80D0120000000000000000001000000:01BB": "[2001:db8::1]:443",
	} {
		got, err := parseProcAddr(in)
		if err != nil || got.String() != want {
			t.Errorf("parseProcAddr(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0100007F", "01000:1F90", "zz00007F:1F90", "0100007F:XYZ"} {
		if _, err := parseProcAddr(bad); err == nil {
			t.Errorf("parseProcAddr(%q): no error", bad)
		}
	}
}

// greet serves l: every connection it accepts gets "hi" and is closed.
func greet(t *testing.T, l *Listener) {
	t.Helper()
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hi"))
			c.Close()
		}
	}()
}

// greeted dials addr and reports whether it read the greeting; a
// connection the listener closed reads EOF or a reset instead.
func greeted(addr string) (bool, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return false, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c)
	if string(b) == "hi" {
		return true, nil
	}
	return false, err
}

func TestListenLoopbackOnly(t *testing.T) {
	l, err := Listen()
	if err != nil {
		t.Fatal(err)
	}
	greet(t, l)
	for _, a := range l.Addrs() {
		ip := a.(*net.TCPAddr).AddrPort().Addr()
		if !ip.IsLoopback() {
			t.Errorf("listens on %s, want loopback addresses only", a)
		}
		if a.(*net.TCPAddr).Port != l.Port() {
			t.Errorf("listens on %s, want port %d on every address", a, l.Port())
		}
	}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		ok, err := greeted(net.JoinHostPort(host, strconv.Itoa(l.Port())))
		if !ok {
			t.Errorf("own connection to %s refused: %v", host, err)
		}
	}
	if len(l.Addrs()) == 2 {
		if ok, err := greeted(fmt.Sprintf("[::1]:%d", l.Port())); !ok {
			t.Errorf("own connection to ::1 refused: %v", err)
		}
	}
	if n := l.Refused(); n != 0 {
		t.Errorf("refused %d connections of this process's user", n)
	}
}

// TestOtherUserRefused admits a uid other than this process's: this
// process's own connections are then another user's and must be closed,
// each reported with the uid that made it.
func TestOtherUserRefused(t *testing.T) {
	l, err := listen(os.Getuid()+1, peerOwner)
	if err != nil {
		t.Fatal(err)
	}
	refusals := make(chan Refusal, 4)
	l.OnRefuse = func(r Refusal) { refusals <- r }
	greet(t, l)
	if ok, _ := greeted(l.Addr().String()); ok {
		t.Fatal("a connection by another uid was handed on")
	}
	select {
	case r := <-refusals:
		if r.UID != os.Getuid() || r.Err != nil {
			t.Errorf("refusal %v, want one by uid %d", r, os.Getuid())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no refusal reported")
	}
	if n := l.Refused(); n != 1 {
		t.Errorf("Refused() = %d, want 1", n)
	}
}

// TestPeerNotFound: a peer whose socket is not in the kernel's tables
// (the owner lookup fails) is refused.
func TestPeerNotFound(t *testing.T) {
	l, err := listen(os.Getuid(), func(local, remote netip.AddrPort) (int, error) {
		return -1, fmt.Errorf("not found")
	})
	if err != nil {
		t.Fatal(err)
	}
	greet(t, l)
	if ok, _ := greeted(l.Addr().String()); ok {
		t.Fatal("a connection whose owner is unknown was handed on")
	}
}

// dialEnv makes the test binary, started again with it set to an address,
// dial that address and exit 0 if it was greeted, 3 if not.
const dialEnv = "PEERGUARD_DIAL"

func TestMain(m *testing.M) {
	if addr := os.Getenv(dialEnv); addr != "" {
		ok, err := greeted(addr)
		fmt.Printf("uid %d greeted %v (%v)\n", os.Getuid(), ok, err)
		if !ok {
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestOtherUidProcess dials the listener from another process running as
// uid 65534 (nobody), which needs root to start: it must be refused, and
// the refusal must name that uid, while the same dial from a process of
// this user is greeted.
func TestOtherUidProcess(t *testing.T) {
	if os.Getuid() != 0 {
		if os.Getenv("CTXSIM_REQUIRE_NETNS") != "" {
			t.Fatal("needs root to start a process as another user")
		}
		t.Skip("needs root to start a process as another user")
	}
	// The test binary lives in a directory only root may enter: copy it
	// where nobody can run it.
	dir, err := os.MkdirTemp("", "peerguard-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "peerguard.test")
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := Listen()
	if err != nil {
		t.Fatal(err)
	}
	refusals := make(chan Refusal, 4)
	l.OnRefuse = func(r Refusal) { refusals <- r }
	greet(t, l)
	run := func(uid uint32) (int, string) {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), dialEnv+"="+fmt.Sprintf("localhost:%d", l.Port()))
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		if err != nil {
			t.Fatalf("run as uid %d: %v\n%s", uid, err, out)
		}
		return 0, string(out)
	}
	if rc, out := run(0); rc != 0 {
		t.Fatalf("as root: rc %d, want 0 (greeted)\n%s", rc, out)
	}
	if rc, out := run(65534); rc != 3 {
		t.Fatalf("as uid 65534: rc %d, want 3 (refused)\n%s", rc, out)
	}
	select {
	case r := <-refusals:
		if r.UID != 65534 {
			t.Errorf("refusal %v, want one by uid 65534", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no refusal reported")
	}
}
