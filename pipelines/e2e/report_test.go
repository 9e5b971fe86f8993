package e2e

import (
	"image"
	_ "image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// chromium returns the path of a Chromium binary, or "" when none is
// installed (then the browser checks skip, unless CTXSIM_REQUIRE_CHROMIUM
// is set, as in CI).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CTXSIM_REQUIRE_CHROMIUM") != "" {
		t.Fatal("CTXSIM_REQUIRE_CHROMIUM is set but no Chromium is installed (apt-get install chromium)")
	}
	return ""
}

// headless runs Chromium without a display or network, as the probe of
// this machine kind does.
func headless(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=10000"}
	out, err := exec.Command(bin, append(base, args...)...).Output()
	if err != nil {
		t.Fatalf("chromium %v: %v", args, err)
	}
	return out
}

// checkReport checks a report.html: it has at least minImages plots, and,
// rendered in headless Chromium, every image loads and the page is not
// blank.
func checkReport(t *testing.T, path string, minImages int, mustContain ...string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	page := string(b)
	n := strings.Count(page, "<img ")
	if n < minImages {
		t.Fatalf("%s has %d images, want at least %d", path, n, minImages)
	}
	// Plots are SVG (they scale to the page's width without blurring).
	if svg := strings.Count(page, `<img alt="`) - strings.Count(page, "data:image/png"); svg < minImages {
		t.Errorf("%s has %d SVG plots, want at least %d", path, svg, minImages)
	}
	for _, s := range mustContain {
		if !strings.Contains(page, s) {
			t.Errorf("%s lacks %q", path, s)
		}
	}
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Errorf("%s refers to the network; a report must be self-contained", path)
	}
	bin := chromium(t)
	if bin == "" {
		t.Logf("no Chromium: %s not rendered", path)
		return
	}
	abs, _ := filepath.Abs(path)
	dom := string(headless(t, bin, "--dump-dom", "file://"+abs))
	m := regexp.MustCompile(`data-images-loaded="(\d+)/(\d+)"`).FindStringSubmatch(dom)
	if m == nil || m[1] != m[2] || m[2] != strconv.Itoa(n) {
		t.Fatalf("%s in Chromium: images loaded %v, want %d/%d", path, m, n, n)
	}
	if f := regexp.MustCompile(`data-images-fill="(\d+)/(\d+)"`).FindStringSubmatch(dom); f == nil || f[1] != f[2] {
		t.Errorf("%s in Chromium: images filling their figure's width %v, want all %d", path, f, n)
	}
	// CTXSIM_REPORT_SHOTS names a directory to keep the screenshots in,
	// to look at them.
	shot := filepath.Join(t.TempDir(), "shot.png")
	if dir := os.Getenv("CTXSIM_REPORT_SHOTS"); dir != "" {
		shot = filepath.Join(dir, t.Name()+"-"+filepath.Base(filepath.Dir(abs))+".png")
		if err := os.MkdirAll(filepath.Dir(shot), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	headless(t, bin, "--screenshot="+shot, "--window-size=1280,2400", "--hide-scrollbars", "file://"+abs)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	// Not blank: a fair share of the pixels is not background, and there
	// are many colours (text and plots).
	bounds := img.Bounds()
	var ink, total int
	colours := map[uint32]bool{}
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			total++
			if r < 0xe000 || g < 0xe000 || b < 0xe000 {
				ink++
			}
			colours[(r>>11)<<10|(g>>11)<<5|b>>11] = true
		}
	}
	if float64(ink)/float64(total) < 0.02 || len(colours) < 8 {
		t.Fatalf("%s renders (nearly) blank: %d of %d pixels drawn, %d colours", path, ink, total, len(colours))
	}
	t.Logf("%s: %d images loaded in Chromium; %.1f%% of the screenshot drawn, %d colours", path, n,
		100*float64(ink)/float64(total), len(colours))
}
