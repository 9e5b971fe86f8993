package sts

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.tsv")
	os.WriteFile(good, []byte("score\ts1\ts2\tgenre\n4.5\tA cat sat.\tA cat sits.\tx\n\n0.5\tDogs bark.\tRain falls.\tx\n"), 0o644)
	ps, err := Read(context.Background(), good)
	if err != nil || len(ps) != 2 || ps[0].Gold != 4.5 || ps[1].S2 != "Rain falls." {
		t.Fatalf("Read = %+v, %v", ps, err)
	}
	for name, body := range map[string]string{
		"cols":  "score\ts1\ts2\n1\tonly one\n2\ta\tb\n",
		"score": "score\ts1\ts2\nx\ta\tb\n2\ta\tb\n",
		"empty": "score\ts1\ts2\n1\t \tb\n2\ta\tb\n",
		"short": "score\ts1\ts2\n1\ta\tb\n",
	} {
		p := filepath.Join(dir, name+".tsv")
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := Read(context.Background(), p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v", name, err)
		}
	}
}

func TestSpread(t *testing.T) {
	ps := make([]Pair, 10)
	for i := range ps {
		ps[i].Gold = float64(i)
	}
	got := Spread(ps, 3)
	if len(got) != 3 || got[0].Gold != 0 || got[1].Gold != 3 || got[2].Gold != 6 {
		t.Fatalf("Spread = %+v", got)
	}
	if len(Spread(ps, 0)) != 10 || len(Spread(ps, 20)) != 10 {
		t.Fatal("Spread should keep all pairs for n = 0 or n >= len")
	}
}
