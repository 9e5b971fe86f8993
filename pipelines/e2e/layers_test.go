package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// The jobs that build no pipeline, and the floors below the Beam layer,
// must not link Beam at all: not directly, not through a helper package.
func TestBeamStaysInThePipelineLayer(t *testing.T) {
	for _, pkg := range []string{
		"./pipelines/train", "./pipelines/evaluate", "./pipelines/surrogate",
		"./storage/...", "./schemas/...", "./retrieval/...", "./scoring/...", "./resources/...",
		"./pipelines/internal/jobrun", "./pipelines/internal/settings",
	} {
		out, err := goList(pkg)
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		var beam []string
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "github.com/apache/beam/") {
				beam = append(beam, dep)
			}
		}
		if len(beam) > 0 {
			t.Errorf("%s imports Beam (%d packages, e.g. %s)", pkg, len(beam), beam[0])
		}
		if strings.HasPrefix(pkg, "./pipelines/") && strings.Contains(string(out), "github.com/ctxsim/ctxsim/transforms/") {
			t.Errorf("%s imports the Beam layer (transforms/)", pkg)
		}
		if !strings.Contains(string(out), "github.com/ctxsim/ctxsim/") {
			t.Errorf("go list -deps %s listed none of the project's packages:\n%s", pkg, out)
		}
	}
	// The check can fail: the harvest job does link Beam.
	out, err := goList("./pipelines/harvest")
	if err != nil || !strings.Contains(string(out), "github.com/apache/beam/sdks/v2/go/pkg/beam\n") {
		t.Fatalf("go list -deps ./pipelines/harvest does not list Beam (%v):\n%.500s", err, out)
	}
}

// goList lists the packages pkg imports, directly or not, from the
// repository's root.
func goList(pkg string) ([]byte, error) {
	cmd := exec.Command("go", "list", "-deps", pkg)
	cmd.Dir = "../.."
	return cmd.CombinedOutput()
}
