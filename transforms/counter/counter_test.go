package counter

import (
	"context"
	"sync"
	"testing"
)

func TestTally(t *testing.T) {
	Reset()
	ctx := context.Background() // no Beam metrics store: only the tally counts
	a, a2, b, z := New("t", "a"), New("t", "a"), New("t", "b"), New("t", "zero")
	if got := Tally(); len(got) != 0 {
		t.Fatalf("tally after Reset = %v, want empty", got)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				a.Inc(ctx, 1)
				a2.Inc(ctx, 2)
			}
		}()
	}
	wg.Wait()
	b.Inc(ctx, 5)
	b.Inc(ctx, -2)
	z.Inc(ctx, 0)
	want := map[string]int64{"t/a": 24000, "t/b": 3, "t/zero": 0}
	got := Tally()
	if len(got) != len(want) {
		t.Fatalf("tally = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
	Reset()
	if got := Tally(); len(got) != 0 {
		t.Fatalf("tally after the second Reset = %v, want empty", got)
	}
	a.Inc(ctx, 7) // a Counter made before Reset still counts after it
	if got := Tally(); got["t/a"] != 7 || len(got) != 1 {
		t.Fatalf("tally = %v, want t/a = 7 alone", got)
	}
}
