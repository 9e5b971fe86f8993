package lexical

import (
	"math"
	"testing"
)

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

func TestStemmedTFIDF(t *testing.T) {
	tf := TFIDF{Stem: true}
	tf.AddDocument("dogs running")
	tf.AddDocument("a dog runs")
	for range 6 {
		tf.AddDocument("cats")
	}
	if tf.DF["dog"] != 2 || tf.DF["run"] != 2 {
		t.Fatalf("stem counts %v", tf.DF)
	}
	if c := tf.Cosine("Dogs running!", "dog runs"); math.Abs(c-1) > 1e-12 {
		t.Fatalf("inflections do not match: %v", c)
	}
	plain := TFIDF{}
	plain.AddDocument("dogs running")
	if c := plain.Cosine("dogs", "dog"); c != 0 {
		t.Fatalf("unstemmed cosine of dogs/dog = %v", c)
	}
}
