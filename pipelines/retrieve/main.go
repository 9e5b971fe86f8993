// Command retrieve writes the top-K chunk hits of sentences; see package
// retrievejob.
//
//	go run ./pipelines/retrieve --index=out/corpus/index --queries=sts.tsv --output=out/hits
package main

import (
	"context"
	"flag"

	"github.com/ctxsim/ctxsim/pipelines/internal/beamjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/pipelines/internal/retrievejob"
	"github.com/ctxsim/ctxsim/transforms/progress"
)

func main() {
	var cfg retrievejob.Config
	cfg.Register(flag.CommandLine)
	beamjob.Init(retrievejob.Usage)
	jobrun.Require("index", "output")
	jobrun.CheckRanges(retrievejob.Ranges()...)
	if err := jobrun.CheckOutput(context.Background(), "retrieve", cfg.Output, "hits", "dead_letters"); err != nil {
		jobrun.Fail(err)
	}
	jobrun.Lease("retrieve", cfg.Output)
	defer jobrun.Release()
	// A progress line whenever none has been printed for a while, also in
	// the phases outside Beam pipelines (beamjob.Run has its own, with counters).
	defer progress.Heartbeat("retrieve", nil)()
	if err := retrievejob.Run(context.Background(), cfg); err != nil {
		jobrun.Fail(err)
	}
}
