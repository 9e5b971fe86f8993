package ingest

import (
	"fmt"
	"testing"
)

func TestInSampleWindows(t *testing.T) {
	const n = 20000
	var first, second, both, whole int
	for i := range n {
		id := fmt.Sprintf("sentence-%d", i)
		a, b := InSample(id, 0, 0.1), InSample(id, 0.1, 0.1)
		if a && b {
			both++
		}
		if a {
			first++
		}
		if b {
			second++
		}
		// Two consecutive windows keep what one window of the summed rate
		// keeps, and the window at 0 is the plain sample.
		if u := InSample(id, 0, 0.2); u != (a || b) {
			t.Fatalf("%s: window [0, 0.2) = %v, [0, 0.1) = %v, [0.1, 0.2) = %v", id, u, a, b)
		}
		if InSample(id, 0, 1) {
			whole++
		}
	}
	if both != 0 {
		t.Errorf("%d sentences are in both [0, 0.1) and [0.1, 0.2)", both)
	}
	if whole != n {
		t.Errorf("rate 1 kept %d of %d", whole, n)
	}
	for _, c := range []int{first, second} {
		if c < n/10-300 || c > n/10+300 {
			t.Errorf("a window of 0.1 kept %d of %d sentences", c, n)
		}
	}
}
