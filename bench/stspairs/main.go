// Command stspairs writes the gold pairs of an STS file (score, s1, s2
// under a header) as a pairs table that bin/surrogate reads, labelled with
// the gold score divided by 5: a supervised control that says how far a
// mean encoder can move on STS when its labels are the human scores
// themselves. Every fifth pair goes to the dev split, the rest to train.
// With -model, each pair also records the contrastive model's word
// alignment and sentence cosine (label_align, label_embed) as a harvest
// does, so that --label=align (or a mix with embed) trains the student on
// the labeler's target for the file's own pairs: the same pairs under
// machine labels, to tell the labels' worth from the pairs' kind.
//
//	go run ./bench/stspairs -sts=../shared/data/eval/stsb-train.tsv \
//	  -fingerprint=<the models' fingerprint, as bin/surrogate prints it> -out=DIR
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/contrast"
)

// cosine is the cosine of a and b, 0 when either is zero.
func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i, x := range a {
		ab += float64(x) * float64(b[i])
		aa += float64(x) * float64(x)
		bb += float64(b[i]) * float64(b[i])
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

func main() {
	sts := flag.String("sts", "", "STS file: a header, then score (0-5), s1, s2 tab-separated")
	fp := flag.String("fingerprint", "", "model fingerprint the pairs are stamped with (bin/surrogate checks it against --model)")
	out := flag.String("out", "", "output directory")
	modelDir := flag.String("model", "", "optional model directory: also record the contrastive model's alignment and sentence cosine of each pair")
	flag.Parse()
	var cm *contrast.Model
	if *modelDir != "" {
		m, _, err := contrast.Load(*modelDir)
		if err != nil {
			log.Fatal(err)
		}
		cm = m
	}
	if *sts == "" || *fp == "" || *out == "" {
		log.Fatal("stspairs: give -sts, -fingerprint and -out")
	}
	f, err := os.Open(*sts)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	var rows []schemas.LabeledPair
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 0; sc.Scan(); line++ {
		if line == 0 {
			continue
		}
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 3 {
			log.Fatalf("stspairs: %s line %d: %d columns", *sts, line+1, len(cols))
		}
		score, err := strconv.ParseFloat(cols[0], 64)
		if err != nil || score < 0 || score > 5 {
			log.Fatalf("stspairs: %s line %d: score %q", *sts, line+1, cols[0])
		}
		split := "train"
		if len(rows)%5 == 4 {
			split = "dev"
		}
		r := schemas.LabeledPair{PairID: fmt.Sprintf("sts%06d", len(rows)), Sentence1: cols[1], Sentence2: cols[2],
			Label: float32(score / 5), Split: split, Stratum: "gold", ModelFingerprint: *fp}
		if cm != nil {
			r.LabelAlign = float32(cm.AlignSimilarity(cols[1], cols[2]))
			r.LabelEmbed = float32(cosine(cm.SentenceVec(cols[1]), cm.SentenceVec(cols[2])))
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	w, err := os.Create(filepath.Join(*out, "pairs.parquet"))
	if err != nil {
		log.Fatal(err)
	}
	pw := schemas.NewWriter(w, reflect.TypeOf(schemas.LabeledPair{}), schemas.WriterOptions{})
	for _, r := range rows {
		if err := pw.Write(r); err != nil {
			log.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("stspairs: %d pairs from %s in %s\n", len(rows), *sts, *out)
}
