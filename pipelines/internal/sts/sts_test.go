package sts

import (
	"context"
	"math"
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

func TestTFIDF(t *testing.T) {
	var tf TFIDF
	tf.AddDocument("the cat sat", "the mat")
	tf.AddDocument("the dog ran")
	tf.AddDocument("a bird flew")
	if tf.N != 3 || tf.DF["the"] != 2 || tf.DF["cat"] != 1 {
		t.Fatalf("counts %v %v", tf.N, tf.DF)
	}
	if got, want := tf.IDF("cat"), math.Log(3.0/2); math.Abs(got-want) > 1e-12 {
		t.Fatalf("IDF(cat) = %v, want %v", got, want)
	}
	if c := tf.Cosine("The cat.", "the CAT"); math.Abs(c-1) > 1e-12 {
		t.Fatalf("cosine of equal word sets = %v", c)
	}
	if c := tf.Cosine("cat", "dog"); c != 0 {
		t.Fatalf("disjoint cosine = %v", c)
	}
	if c := tf.Cosine("", "dog"); c != 0 {
		t.Fatalf("empty cosine = %v", c)
	}
}

func TestMeanWordVector(t *testing.T) {
	var tf TFIDF
	tf.AddDocument("cat")
	tf.AddDocument("dog")
	tf.AddDocument("bird")
	tf.AddDocument("the cat the dog the bird")
	// Subwords: "cat" -> [1 2], "dog" -> [3], anything else -> [0].
	encode := func(w string) []int32 {
		switch w {
		case "cat":
			return []int32{1, 2}
		case "dog":
			return []int32{3}
		}
		return []int32{0}
	}
	emb := []float32{100, 100, 1, 0, 0, 1, 2, 3}
	got := tf.MeanWordVector(emb, 2, encode, "the cat, a dog")
	// "the" and "a": IDF(the) = log(4/2) > 0 weights row 0; "a" is unseen,
	// IDF log(4/1). cat: IDF log(4/3) on rows 1 and 2; dog likewise on row 3.
	wThe, wA, wCat := math.Log(2), math.Log(4), math.Log(4.0/3)
	want := []float64{wThe*100 + wA*100 + wCat*(1+0) + wCat*2, wThe*100 + wA*100 + wCat*(0+1) + wCat*3}
	for j := range want {
		if math.Abs(got[j]-want[j]) > 1e-9 {
			t.Fatalf("MeanWordVector = %v, want %v", got, want)
		}
	}
	if v := tf.MeanWordVector(emb, 2, encode, "..."); v[0] != 0 || v[1] != 0 {
		t.Fatalf("a sentence without words = %v, want zeros", v)
	}
}
