// Command train trains the contextual models on a corpus: the contrastive
// context model, and the paper's discriminative coherence model (Eq. 1) and
// generative infilling model (Eq. 2) with their subword tokenizer. It
// reports held-out metrics and learning curves (with, for every scorer, how
// well it finds a sentence's true context among others), and saves
// everything under --output. The job is package trainjob.
//
//	go run ./pipelines/train --input=corpus.jsonl.gz --output=out/model --preset=tiny
package main

import (
	"context"
	"flag"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/pipelines/internal/trainjob"
)

func main() {
	var cfg trainjob.Config
	cfg.Register(flag.CommandLine)
	jobrun.Init(trainjob.Usage)
	jobrun.Require("input", "output")
	jobrun.Lease("train", cfg.Output)
	defer jobrun.Release()
	if err := trainjob.Run(context.Background(), cfg); err != nil {
		jobrun.Fail(err)
	}
}
