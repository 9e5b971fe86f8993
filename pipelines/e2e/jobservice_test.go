package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJobServiceClosedToOtherHosts runs a local harvest (Prism in-process,
// the default runner) in a private network namespace joined by a veth link
// to a second namespace, "another host". While the harvest is stopped
// mid-run (SIGSTOP), the other host tries every TCP port the harvest
// listens on. By default every listener is on a loopback address and none
// accepts; with --expose_job_service Beam's own job service listens on
// every interface and must accept (the control that shows the probe can
// see an open port). Both harvests must succeed.
func TestJobServiceClosedToOtherHosts(t *testing.T) {
	if err := exec.Command("unshare", "-n", "true").Run(); err != nil {
		if os.Getenv("CTXSIM_REQUIRE_NETNS") != "" {
			t.Fatalf("cannot create a network namespace: %v", err)
		}
		t.Skipf("cannot create a network namespace (needs root): %v", err)
	}
	for _, tool := range []string{"ip", "ss", "nsenter", "timeout"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed: %v", tool, err)
		}
	}
	corpusOut, model := harvestFixture(t)
	for _, tc := range []struct {
		name  string
		flags string
		reach bool // whether the other host must reach some port
	}{
		{name: "default", flags: ""},
		{name: "exposed", flags: "--expose_job_service", reach: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "h")
			args := strings.Join(harvestArgs(corpusOut, model, out), " ")
			lines := probeHarvest(t, filepath.Join(binDir, "harvest")+" "+args+" "+tc.flags)
			var listeners, open, closed []string
			rc := ""
			for _, l := range lines {
				f := strings.Fields(l)
				switch {
				case len(f) >= 2 && f[0] == "LISTEN":
					listeners = append(listeners, f[1])
				case len(f) == 3 && f[0] == "PROBE" && f[2] == "open":
					open = append(open, f[1])
				case len(f) == 3 && f[0] == "PROBE" && f[2] == "closed":
					closed = append(closed, f[1])
				case len(f) == 2 && f[0] == "EXIT":
					rc = f[1]
				}
			}
			for _, l := range lines {
				if strings.HasPrefix(l, "LISTEN ") || strings.HasPrefix(l, "PROBE ") || strings.HasPrefix(l, "warning: the job service") {
					t.Log(l)
				}
			}
			if rc != "0" {
				t.Fatalf("harvest exit %q\n%s", rc, strings.Join(lines, "\n"))
			}
			wildcard, loopback := false, 0
			for _, a := range listeners {
				wildcard = wildcard || strings.HasPrefix(a, "*:") || strings.HasPrefix(a, "[::]:") || strings.HasPrefix(a, "0.0.0.0:")
				if strings.HasPrefix(a, "127.0.0.1:") || strings.HasPrefix(a, "[::1]:") {
					loopback++
				}
			}
			if len(open)+len(closed) < 2 {
				t.Fatalf("probed %d ports of listeners %v, want the job service and the worker pool among them\n%s",
					len(open)+len(closed), listeners, strings.Join(lines, "\n"))
			}
			if tc.reach && !wildcard {
				t.Fatalf("with %s no listener on every interface among %v\n%s", tc.flags, listeners, strings.Join(lines, "\n"))
			}
			if !tc.reach && loopback != len(listeners) {
				t.Errorf("listeners %v: want every one on a loopback address", listeners)
			}
			if tc.reach && len(open) == 0 {
				t.Errorf("with %s no port was reachable from the other host: the probe cannot see an open port\n%s", tc.flags, strings.Join(lines, "\n"))
			}
			if !tc.reach && len(open) > 0 {
				t.Errorf("ports %v of a local harvest were reachable from another host\n%s", open, strings.Join(lines, "\n"))
			}
			if n := len(sortedPairs(t, out+"/pairs")); n == 0 {
				t.Error("the harvest wrote no pairs")
			}
		})
	}
}

// probeHarvest runs the command job in namespace A, stops it twice while it
// runs, and each time tries every port it listens on from namespace B over
// the veth link (A is 192.0.2.1, B 192.0.2.2: documentation addresses that
// exist only inside these namespaces). It returns the script's lines:
// LISTEN addr, PROBE port open|closed, EXIT rc.
func probeHarvest(t *testing.T, job string) []string {
	t.Helper()
	script := fmt.Sprintf(`set -u
ip link set lo up
unshare -n sleep 600 &
B=$!
for i in $(seq 100); do [ "$(readlink /proc/$B/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break; sleep 0.05; done
ip link add va type veth peer name vb
ip link set vb netns $B
ip addr add 192.0.2.1/24 dev va
ip link set va up
nsenter -t $B -n sh -c 'ip link set lo up && ip addr add 192.0.2.2/24 dev vb && ip link set vb up'
probe() {
  kill -STOP $J || return
  for a in $(ss -Hltnp | grep "pid=$J," | awk '{print $4}'); do
    echo "LISTEN $a"
    p=${a##*:}
    if nsenter -t $B -n timeout 3 bash -c "exec 3<>/dev/tcp/192.0.2.1/$p" 2>/dev/null; then echo "PROBE $p open"; else echo "PROBE $p closed"; fi
  done
  kill -CONT $J
}
%s > "$TMPDIR/job.log" 2>&1 &
J=$!
for i in $(seq 1200); do
  [ "$(ss -Hltnp | grep -c "pid=$J,")" -ge 2 ] && break
  kill -0 $J 2>/dev/null || break
  sleep 0.05
done
probe
sleep 1
probe
wait $J
echo "EXIT $?"
kill $B
cat "$TMPDIR/job.log" | tail -20
`, job)
	cmd := exec.Command("unshare", "-n", "bash", "-c", script)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("probe script: %v\n%s", err, out.String())
		}
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("probe script timed out\n%s", out.String())
	}
	return strings.Split(out.String(), "\n")
}

// TestOutputOfAnotherJobRefused points a harvest at the index job's output
// directory: it must fail before writing, and leave the ingest's dead
// letters as they were (a harvest writes dead_letters/ too).
func TestOutputOfAnotherJobRefused(t *testing.T) {
	corpus := smallCorpus(t)
	manifest := filepath.Join(corpus, "dead_letters", "_manifest.json")
	before, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(binDir, "harvest"), "--corpus="+corpus, "--output="+corpus, "--labeler=lexical", "--preset=demo")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "another job's output") {
		t.Fatalf("harvest into the index's output: %v\n%s", err, out)
	}
	after, err := os.ReadFile(manifest)
	if err != nil || !bytes.Equal(before, after) {
		t.Errorf("the index job's dead letters changed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(corpus, "pairs")); !os.IsNotExist(err) {
		t.Errorf("the refused harvest wrote pairs/: %v", err)
	}
}

// TestLocalRunAsOtherUser indexes and harvests a small corpus as uid 65534
// (nobody), a user without privileges, as most users run jobs: the local
// job service must start without any privilege. Starting a process as
// another user needs root.
func TestLocalRunAsOtherUser(t *testing.T) {
	if os.Getuid() != 0 {
		if os.Getenv("CTXSIM_REQUIRE_NETNS") != "" {
			t.Fatal("needs root to start a process as another user")
		}
		t.Skip("needs root to start a process as another user")
	}
	corpusOut, model := harvestFixture(t)
	dir, err := os.MkdirTemp("", "ctxsim-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// nobody needs to reach the binaries and the fixture, and to write dir.
	for _, d := range []string{binDir, dir, filepath.Dir(corpusOut), filepath.Dir(filepath.Dir(corpusOut))} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := exec.Command("chmod", "-R", "a+rX", filepath.Dir(corpusOut)).Run(); err != nil {
		t.Fatal(err)
	}
	asNobody := func(name string, args ...string) (string, error) {
		cmd := exec.Command(filepath.Join(binDir, name), args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir, "TMPDIR="+dir, "CTXSIM_CACHE_DIR="+filepath.Join(dir, "cache"))
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := asNobody("harvest", harvestArgs(corpusOut, model, filepath.Join(dir, "h"))...); err != nil {
		t.Fatalf("harvest as uid 65534: %v\n%s", err, out)
	}
	if n := len(sortedPairs(t, filepath.Join(dir, "h", "pairs"))); n == 0 {
		t.Error("the harvest as uid 65534 wrote no pairs")
	}
}
