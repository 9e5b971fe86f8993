// Command surrogate trains fast sentence encoders on harvested labels and
// evaluates them beside a TF-IDF baseline on an STS file, or applies a
// trained one (package surrogatejob; -help describes the flags).
//
//	go run ./pipelines/surrogate --pairs='out/harvest/pairs/*.parquet' --model=out/model \
//	  --output=out/surrogate --objective=l2,contrastive,multisim --sts=../shared/data/eval/stsb-dev.tsv \
//	  --chunks='out/corpus/chunks/*.parquet'
package main

import (
	"context"
	"flag"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/pipelines/internal/surrogatejob"
)

func main() {
	var cfg surrogatejob.Config
	cfg.Register(flag.CommandLine)
	jobrun.Init(surrogatejob.Usage)
	cfg.DimGiven, cfg.InitGiven = jobrun.FlagSet("dim"), jobrun.FlagSet("init")
	cfg.ThresholdGiven = jobrun.FlagSet("threshold")
	if err := cfg.CheckMode(); err != nil {
		jobrun.Fail(err)
	}
	if !cfg.ApplyMode() {
		jobrun.Require("pairs", "model", "output")
		jobrun.CheckRanges(jobrun.Range{Name: "epochs", Lo: 1, Hi: 1000})
		jobrun.Lease("surrogate", cfg.Output)
		defer jobrun.Release()
	}
	if err := surrogatejob.Run(context.Background(), cfg); err != nil {
		jobrun.Fail(err)
	}
}
