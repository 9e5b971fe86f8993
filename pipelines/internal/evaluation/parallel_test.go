package evaluation

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

func TestParallelFillsEveryIndex(t *testing.T) {
	for _, workers := range []int{0, 1, 3, 50} {
		out := make([]int, 40)
		var calls atomic.Int64
		err := parallel(len(out), workers, func(i int) error {
			calls.Add(1)
			out[i] = i * i
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if calls.Load() != 40 {
			t.Fatalf("%d workers: %d calls, want 40", workers, calls.Load())
		}
		for i, v := range out {
			if v != i*i {
				t.Fatalf("%d workers: out[%d] = %d, want %d", workers, i, v, i*i)
			}
		}
	}
	if err := parallel(0, 4, func(int) error { return errors.New("called") }); err != nil {
		t.Fatalf("no work: %v", err)
	}
}

func TestParallelReturnsTheFirstError(t *testing.T) {
	// One worker takes the indices in order: the error of 2 is the first,
	// and no index after it is started.
	var seen []int
	err := parallel(10, 1, func(i int) error {
		seen = append(seen, i)
		if i == 2 || i == 4 {
			return fmt.Errorf("pair %d", i)
		}
		return nil
	})
	if err == nil || err.Error() != "pair 2" {
		t.Fatalf("error %v, want pair 2", err)
	}
	if fmt.Sprint(seen) != "[0 1 2]" {
		t.Fatalf("called for %v, want [0 1 2]", seen)
	}
	// Many workers: the one failure is returned.
	bad := errors.New("bad")
	if err := parallel(100, 8, func(i int) error {
		if i == 37 {
			return bad
		}
		return nil
	}); !errors.Is(err, bad) {
		t.Fatalf("error %v, want %v", err, bad)
	}
}
