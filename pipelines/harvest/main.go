// Command harvest labels sentence pairs by the similarity of the contexts
// they fit (Sun et al., TACL 2022); see package harvestjob.
//
//	go run ./pipelines/harvest --corpus=out/corpus --model=out/model --output=out/harvest
package main

import (
	"context"
	"flag"

	"github.com/ctxsim/ctxsim/pipelines/internal/beamjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/harvestjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/transforms/progress"
)

func main() {
	var cfg harvestjob.Config
	cfg.Register(flag.CommandLine)
	beamjob.Init(harvestjob.Usage)
	jobrun.Require("output")
	jobrun.CheckRanges(cfg.Ranges()...)
	if err := jobrun.CheckOutput(context.Background(), "harvest", cfg.Output, "pairs", "context_sets", "dead_letters", "export", "_waves"); err != nil {
		jobrun.Fail(err)
	}
	jobrun.Lease("harvest", cfg.Output)
	defer jobrun.Release()
	if err := cfg.Resolve(); err != nil {
		jobrun.Fail(err)
	}
	// A progress line whenever none has been printed for a while, also in
	// the phases outside Beam pipelines (beamjob.Run has its own, with counters).
	defer progress.Heartbeat("harvest", nil)()
	if err := harvestjob.Run(context.Background(), cfg); err != nil {
		jobrun.Fail(err)
	}
}
