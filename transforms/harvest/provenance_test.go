package harvest

import (
	"runtime/debug"
	"testing"
)

func TestToolOfRevision(t *testing.T) {
	withVCS := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/ctxsim/ctxsim", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "aaaa"}, {Key: "vcs.time", Value: "2026-12-01T00:00:00Z"}, {Key: "vcs.modified", Value: "false"}}}
	noVCS := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/ctxsim/ctxsim", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "-buildvcs", Value: "false"}}}
	for _, c := range []struct {
		name               string
		bi                 *debug.BuildInfo
		revision, modified string
		want               string
		wantModified       string // "", "true" or "false"
	}{
		{"build information first", withVCS, "bbbb", "true", "aaaa", "false"},
		{"stamp without VCS information", noVCS, "bbbb", "true", "bbbb", "true"},
		{"stamp of a clean tree", noVCS, "bbbb", "false", "bbbb", "false"},
		{"stamp without its state", noVCS, "bbbb", "", "bbbb", ""},
		{"neither", noVCS, "", "", UnknownRevision, ""},
		{"no build information", nil, "", "", UnknownRevision, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tool := toolOf(c.bi, c.revision, c.modified)
			if tool.Revision != c.want {
				t.Errorf("Revision %q, want %q", tool.Revision, c.want)
			}
			got := ""
			if tool.Modified != nil {
				got = "false"
				if *tool.Modified {
					got = "true"
				}
			}
			if got != c.wantModified {
				t.Errorf("Modified %q, want %q", got, c.wantModified)
			}
			if c.bi != nil && (tool.GoVersion != c.bi.GoVersion || tool.Module != c.bi.Main.Path) {
				t.Errorf("tool %+v lost the build information's module or Go version", tool)
			}
		})
	}
}
