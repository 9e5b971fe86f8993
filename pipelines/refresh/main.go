// Command refresh keeps a harvest up to date with a corpus that gains,
// changes and loses documents; see package refreshjob.
//
//	go run ./pipelines/refresh --input='corpus/*.jsonl.gz' --model=out/model --root=out/labels
package main

import (
	"context"
	"flag"

	"github.com/ctxsim/ctxsim/pipelines/internal/beamjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/pipelines/internal/refreshjob"
	"github.com/ctxsim/ctxsim/transforms/progress"
)

func main() {
	var cfg refreshjob.Config
	cfg.Register(flag.CommandLine)
	beamjob.Init(refreshjob.Usage)
	jobrun.Require("input", "root", "model")
	jobrun.CheckRanges(cfg.Ranges()...)
	jobrun.Lease("refresh", cfg.Root)
	defer jobrun.Release()
	if err := cfg.Resolve(); err != nil {
		jobrun.Fail(err)
	}
	// A progress line whenever none has been printed for a while, also in
	// the phases outside Beam pipelines (beamjob.Run has its own, with counters).
	defer progress.Heartbeat("refresh", nil)()
	if err := refreshjob.Run(context.Background(), cfg); err != nil {
		jobrun.Fail(err)
	}
}
