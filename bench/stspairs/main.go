// Command stspairs writes the gold pairs of an STS file (any layout
// scoring/sts reads) as a pairs table that bin/surrogate reads, labelled with
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
	"context"
	"flag"
	"fmt"
	"log"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/contrast"
	"github.com/ctxsim/ctxsim/scoring/sts"
	"github.com/ctxsim/ctxsim/scoring/surrogate"
	"github.com/ctxsim/ctxsim/storage"
)

func main() {
	file := flag.String("sts", "", "STS file, in any layout bin/evaluate reads (gold scores 0-5)")
	fp := flag.String("fingerprint", "", "model fingerprint the pairs are stamped with (bin/surrogate checks it against --model)")
	out := flag.String("out", "", "output directory: a pairs table (local or gs://)")
	modelDir := flag.String("model", "", "optional model directory: also record the contrastive model's alignment and sentence cosine of each pair")
	flag.Parse()
	if *file == "" || *fp == "" || *out == "" {
		log.Fatal("stspairs: give -sts, -fingerprint and -out")
	}
	ctx := context.Background()
	pairs, err := sts.Read(ctx, *file)
	if err != nil {
		log.Fatal(err)
	}
	var cm *contrast.Model
	if *modelDir != "" {
		if cm, _, err = contrast.Load(*modelDir); err != nil {
			log.Fatal(err)
		}
	}
	rows := make([]schemas.LabeledPair, len(pairs))
	for i, p := range pairs {
		if p.Gold < 0 || p.Gold > 5 {
			log.Fatalf("stspairs: %s pair %d: gold score %v outside [0, 5]", *file, i+1, p.Gold)
		}
		split := "train"
		if i%5 == 4 {
			split = "dev"
		}
		r := schemas.LabeledPair{PairID: fmt.Sprintf("sts%06d", i), Sentence1: p.S1, Sentence2: p.S2,
			Label: float32(p.Gold / 5), Split: split, Stratum: "gold", ModelFingerprint: *fp}
		if cm != nil {
			r.LabelAlign = float32(cm.AlignSimilarity(p.S1, p.S2))
			r.LabelEmbed = float32(surrogate.Cosine(cm.SentenceVec(p.S1), cm.SentenceVec(p.S2)))
		}
		rows[i] = r
	}
	if err := storage.WriteTable(ctx, *out, rows); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("stspairs: %d pairs from %s in %s\n", len(rows), *file, *out)
}
