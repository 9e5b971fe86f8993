// Command evaluate measures label quality directly ("Origin"): for each
// pair of an STS file it builds C_s1 and C_s2 against the corpus index with
// the harvest's stages, labels the pair with Eq. 4 (alone, and with the
// hybrid labeler), and reports the Spearman correlation (×100) with the
// gold scores, beside baselines and ablations computed in the same run on
// the same pairs. The job is package evaluatejob.
//
//	go run ./pipelines/evaluate --sts=../shared/data/eval/stsb-dev.tsv \
//	  --index=out/index/index --chunks='out/index/chunks/*.parquet' --model=out/model
package main

import (
	"context"
	"flag"

	"github.com/ctxsim/ctxsim/pipelines/internal/evaluatejob"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
)

func main() {
	var cfg evaluatejob.Config
	cfg.Register(flag.CommandLine)
	jobrun.Init(evaluatejob.Usage)
	jobrun.Require("sts", "index", "chunks", "model", "output")
	jobrun.Lease("evaluate", cfg.Output)
	defer jobrun.Release()
	if err := evaluatejob.Run(context.Background(), cfg); err != nil {
		jobrun.Fail(err)
	}
}
